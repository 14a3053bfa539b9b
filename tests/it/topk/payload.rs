//! Top-k (`warden-tk`) in the corrupt-payload tests (the payload fuzzer and its
//! controls in `tests/it/module/`, and `persistence.rs` here): real DUMPs of
//! several shapes, forgeries field by field of the RDB layout
//! `src/topk/data_type.rs` writes (kind, k, width, depth, decay, window, the
//! start of the newest slot, the decays' generator; per sketch its buckets as
//! one string of little-endian 32-bit fingerprint and count pairs; the `k` heap
//! slots, each 0, or 1 with its count and item), the forgeries its loader must
//! refuse, and what a top-k a payload made must answer.

use crate::common::kit::foreign;
use crate::common::payload::*;
use crate::common::payload_bases::*;
use crate::common::payload_checks::{labelled_ints, run, Check, Findings};
use crate::common::payload_forgeries::Forged;
use crate::common::*;
use crate::topk::kit::{KIT, TOPK};
use crate::topk::support::{odd_items, uneven_adds};

/// Fields before the first sketch: kind, k, width, depth, decay, window, head,
/// generator.
pub const HEADER: usize = 8;

/// Sketches of a top-k over a window (`common::sketch::RING`).
pub const RING: usize = 5;

/// Where a payload's heap slots are: the index of each slot's first field
/// (`None` when the fields are not a top-k's layout, k slots after the header
/// and the sketches).
pub fn slots_of(d: &Dump) -> Option<Vec<usize>> {
    let f = &d.fields;
    let header = f.len() > HEADER
        && f[..HEADER]
            .iter()
            .enumerate()
            .all(|(i, x)| matches!((i, x), (4, Field::D(_)) | (0..=3 | 5.., Field::U(_))));
    if !header {
        return None;
    }
    let mut at = HEADER + if f[5] == Field::U(0) { 1 } else { RING };
    if f.len() < at || !f[HEADER..at].iter().all(|x| matches!(x, Field::S(_))) {
        return None;
    }
    let mut slots = Vec::new();
    while at < f.len() {
        slots.push(at);
        match (&f[at], f.get(at + 1), f.get(at + 2)) {
            (Field::U(0), _, _) => at += 1,
            (Field::U(1), Some(Field::U(_)), Some(Field::S(_))) => at += 3,
            _ => return None,
        }
    }
    (!slots.is_empty() && f[1] == Field::U(slots.len() as u64)).then_some(slots)
}

/// The base keys, in the order `bases` returns them.
pub const BASES: [&str; 7] = [
    "tkb:plain",
    "tkb:win",
    "tkb:default",
    "tkb:fresh",
    "tkb:items",
    "tkb:one",
    "tkb:sparse",
];

/// Top-k: plain with decays at work, over a window, of the default sizes, over
/// a window never written (every slot empty), with binary, empty and long items,
/// of one bucket and one slot, sparse (LZF).
pub fn bases(con: &mut Connection) -> Vec<Base> {
    for c in [
        cmd_of!("TOPK.RESERVEX", "tkb:plain", 5, 20, 4, 0.9),
        cmd_of!("TOPK.RESERVEX", "tkb:win", 4, 16, 3, 0.9, "WINDOW", "1h"),
        cmd_of!("TOPK.RESERVEX", "tkb:default", 3),
        cmd_of!("TOPK.RESERVEX", "tkb:fresh", 2, 10, 2, 0.5, "WINDOW", 1000),
        cmd_of!("TOPK.RESERVEX", "tkb:items", 4, 30, 3, 0.95),
        cmd_of!("TOPK.RESERVEX", "tkb:one", 1, 1, 1, 1),
        cmd_of!("TOPK.RESERVEX", "tkb:sparse", 10, 5000, 2, 0.9),
    ] {
        must(con, &c);
    }
    for key in ["tkb:plain", "tkb:win", "tkb:default"] {
        must(con, &uneven_adds("TOPK.ADDX", key));
    }
    must(con, &odd_items("TOPK.INCRBYX", "tkb:items"));
    must(con, &cmd_of!("TOPK.ADDX", "tkb:one", "a", "b", "a"));
    must(con, &cmd_of!("TOPK.ADDX", "tkb:sparse", "a", "b", "c"));
    let bases = bases_of(con, &BASES, &TOPK);
    for b in &bases {
        let slots = slots_of(&b.dump);
        assert!(
            slots.is_some(),
            "{}: top-k layout {:?}",
            b.key,
            b.dump.fields
        );
        let filled = slots
            .iter()
            .flatten()
            .filter(|&&s| b.dump.fields[s] == Field::U(1));
        let want = match b.key.as_str() {
            "tkb:fresh" => 0,
            "tkb:sparse" | "tkb:items" => 3,
            "tkb:one" => 1,
            _ => b.dump.uint(1) as usize,
        };
        assert_eq!(filled.count(), want, "{}: slots held", b.key);
    }
    bases
}

/// Forgeries of a top-k: the kind; k against its slots, or with a slot more or
/// fewer (taken); sizes out of range or swapped (taken); the decay; a window out
/// of range or another (with the sketches it takes, or not); the newest slot; the
/// generator; buckets cut, grown or plausible (random); a slot's marker, count or
/// item (empty, long, another slot's); the slots out of heap order, or all held
/// (taken).
pub fn forge(rng: &mut Rng, d: &mut Dump) {
    let Some(slots) = slots_of(d) else {
        d.fields[0] = Field::U(rng.pick(&[0, 1, 2, u64::MAX]));
        return;
    };
    let (k, subs) = (slots.len(), slots[0] - HEADER);
    let s = slots[rng.below(k)];
    match rng.below(11) {
        0 => d.fields[0] = Field::U(rng.pick(&[0, 2, u64::MAX])),
        1 => d.fields[1] = Field::U(rng.pick(&[0, k as u64 - 1, k as u64 + 1, 1 << 32])),
        2 if rng.chance(1, 2) || k == 1 => {
            d.fields.push(Field::U(0));
            d.fields[1] = Field::U(k as u64 + 1);
        }
        2 => {
            d.fields.truncate(slots[k - 1]);
            d.fields[1] = Field::U(k as u64 - 1);
        }
        3 if rng.chance(1, 3) => d.fields.swap(2, 3),
        3 => {
            let i = rng.pick(&[2usize, 3]);
            let v = d.uint(i);
            let w = rng.pick(&[0, 1, v.wrapping_add(1), v.wrapping_sub(1), 1 << 32]);
            d.fields[i] = Field::U(w);
        }
        4 => {
            let Field::D(x) = d.fields[4] else {
                unreachable!()
            };
            d.fields[4] = Field::D(odd_double(rng, x));
        }
        5 => {
            let w = odd_window(rng);
            d.fields[5] = Field::U(w);
            let want = if w == 0 { 1 } else { RING };
            if rng.chance(1, 2) && want != subs {
                let sketch = d.fields[HEADER].clone();
                let at = HEADER + subs.min(want);
                let n = subs.abs_diff(want);
                if want > subs {
                    d.fields.splice(at..at, vec![sketch; n]);
                } else {
                    d.fields.drain(at..at + n);
                }
            }
        }
        6 => d.fields[6] = Field::U(odd_head(rng, d.uint(5), d.uint(6))),
        7 => {
            let r = rng.next();
            d.fields[7] = Field::U(rng.pick(&[0, 1, u64::MAX, r]));
        }
        8 => {
            let i = HEADER + rng.below(subs);
            forge_buckets(rng, d, i)
        }
        9 => forge_slot(rng, d, s, &slots),
        _ if rng.chance(1, 2) => {
            // Out of heap order.
            let ends = slots.iter().skip(1).copied().chain([d.fields.len()]);
            let mut parts: Vec<Vec<Field>> = slots
                .iter()
                .zip(ends)
                .map(|(&a, b)| d.fields[a..b].to_vec())
                .collect();
            parts.rotate_left(rng.below(k));
            parts.swap(0, k - 1);
            d.fields.truncate(slots[0]);
            d.fields.extend(parts.into_iter().flatten());
        }
        _ => {
            // Every slot held, by distinct items of random counts.
            d.fields.truncate(slots[0]);
            for n in 0..k {
                let count = rng.pick(&[0, 1, 2, 1000, u64::from(u32::MAX)]);
                d.fields.push(Field::U(1));
                d.fields.push(Field::U(count));
                d.fields.push(Field::S(format!("item{n}").into_bytes()));
            }
        }
    }
}

/// Sketch field `i`: cut, grown, emptied, or plausible buckets (random
/// fingerprints and counts, some saturated).
pub fn forge_buckets(rng: &mut Rng, d: &mut Dump, i: usize) {
    let Field::S(s) = &mut d.fields[i] else {
        unreachable!()
    };
    match rng.below(4) {
        0 => s.truncate(s.len().saturating_sub(rng.pick(&[1, 4, 8]))),
        1 => s.extend([0; 8]),
        2 => s.clear(),
        _ => {
            let n = s.len() / 8;
            let mut buckets = Vec::with_capacity(8 * n);
            for _ in 0..n {
                let (fp, c) = (rng.next() as u32, rng.next() as u32);
                buckets.extend(rng.pick(&[0, fp]).to_le_bytes());
                buckets.extend(rng.pick(&[0, 1, 9, c, u32::MAX]).to_le_bytes());
            }
            d.fields[i] = Field::S(buckets);
        }
    }
}

/// Heap slot at `s` (of `slots`): its marker, its count or item (empty, long,
/// another slot's), or held when empty.
fn forge_slot(rng: &mut Rng, d: &mut Dump, s: usize, slots: &[usize]) {
    if d.fields[s] == Field::U(0) {
        let (count, item) = (rng.pick(&[0, 1, 70]), rng.pick(&[&b"x"[..], b"", b"item3"]));
        let held = [Field::U(1), Field::U(count), Field::S(item.to_vec())];
        d.fields.splice(s..s + 1, held);
        return;
    }
    match rng.below(3) {
        0 => d.fields[s] = Field::U(rng.pick(&[0, 2, u64::MAX])),
        1 => d.fields[s + 1] = Field::U(rng.pick(&[0, u64::from(u32::MAX), 1 << 32, u64::MAX])),
        _ => {
            let other = slots
                .iter()
                .map(|&o| &d.fields[o + 2])
                .find(|f| matches!(f, Field::S(_)));
            let item = match (rng.below(3), other) {
                (0, Some(Field::S(o))) => o.clone(),
                (1, _) => vec![b'i'; 64 * 1024],
                _ => Vec::new(),
            };
            d.fields[s + 2] = Field::S(item);
        }
    }
}

/// Forgeries of `bases` (as `bases` returns them) that break an invariant the
/// loader checks, each to be refused: the kind, k and sizes out of range or past
/// the cap, k against the slots, a decay outside (0, 1], a window out of range or
/// without its sketches, a newest slot that is no slot start or past a signed
/// 64-bit ms, generator 0, buckets of the wrong length or kind, a slot's marker,
/// a count past 32 bits, an item twice, another encoding version, no EOF; and
/// another type's fields under the top-k id, and back.
pub fn refusals(bases: &[Base], others: &[&Base]) -> Forged {
    let other = foreign(others, &KIT);
    let (plain, win) = (&bases[0], &bases[1]);
    let mut f = Forged::default();
    let k = plain.dump.uint(1);
    let max = u64::from(u32::MAX);
    f.uint("kind 0", plain, 0, 0);
    f.uint("kind 2", plain, 0, 2);
    f.uint("k 0", plain, 1, 0);
    f.uint("k past 2^32", plain, 1, 1 << 32);
    f.uint("k one more: a slot missing", plain, 1, k + 1);
    f.uint("k one fewer: a slot too many", plain, 1, k - 1);
    f.uint("width 0", plain, 2, 0);
    f.uint("depth 0", plain, 3, 0);
    f.uint("depth past the cap", plain, 3, max);
    f.with("width and depth past the cap", plain, |d| {
        d.fields[2] = Field::U(max);
        d.fields[3] = Field::U(max);
    });
    for decay in [0.0, -0.5, 1.000_000_1, 2.0, f64::NAN, f64::INFINITY] {
        f.set(&format!("decay {decay}"), plain, 4, Field::D(decay));
    }
    f.uint("decay as an integer", plain, 4, 1);
    f.window(plain, win, 5);
    f.uint("generator 0", plain, 7, 0);
    f.string("buckets a byte short", plain, HEADER, |s| {
        s.truncate(s.len() - 1)
    });
    f.string("buckets a bucket long", plain, HEADER, |s| s.extend([0; 8]));
    f.string("buckets a bucket short", win, HEADER, |s| {
        s.truncate(s.len() - 8)
    });
    f.uint("buckets as a number", plain, HEADER, 0);
    let slots = slots_of(&plain.dump).expect("layout");
    let (first, last) = (slots[0], slots[slots.len() - 1]);
    f.uint("slot marker 2", plain, first, 2);
    f.uint("count past 2^32", plain, first + 1, 1 << 32);
    f.uint("an item as a number", plain, first + 2, 7);
    f.with("an item twice", plain, |d| {
        d.fields[last + 2] = d.fields[first + 2].clone()
    });
    f.with("the last slot cut", plain, |d| d.fields.truncate(last + 2));
    f.framing(plain, other);
    f
}

/// TOPK.INFOX: k, width and depth of at least 1, a decay in (0, 1] and, over a
/// window, a window of at least 100 ms.
pub fn info_ok(v: &Value) -> bool {
    let (Some(n), Value::Array(a)) = (labelled_ints(v), v) else {
        return false;
    };
    let decay = a.get(7).and_then(text_of).and_then(|t| t.parse().ok());
    matches!(n.len(), 4 | 5)
        && n[..3].iter().all(|x| *x >= 1)
        && decay.is_some_and(|d: f64| d > 0.0 && d <= 1.0)
        && n.get(4).is_none_or(|w| *w >= 100)
}

/// TOPK.LISTX WITHCOUNT: items, each with a count of at least 1, largest first,
/// none twice.
pub fn list_ok(v: &Value) -> bool {
    let Value::Array(a) = v else {
        return false;
    };
    let Some(counts) = labelled_ints(v) else {
        return false;
    };
    let items: std::collections::BTreeSet<&[u8]> = a
        .iter()
        .step_by(2)
        .filter_map(|i| match i {
            Value::BulkString(b) => Some(&b[..]),
            _ => None,
        })
        .collect();
    counts.iter().all(|c| *c >= 1)
        && counts.windows(2).all(|w| w[0] >= w[1])
        && items.len() == counts.len()
}

/// The reads of a top-k and what they must answer; they change nothing.
pub fn reads(key: &str) -> Vec<(redis::Cmd, Check)> {
    vec![
        (cmd_of!("TOPK.INFOX", key), info_ok),
        (cmd_of!("TOPK.LISTX", key, "WITHCOUNT"), list_ok),
        (cmd_of!("TOPK.LISTX", key), |v| matches!(v, Value::Array(_))),
        (
            cmd_of!("TOPK.QUERYX", key, "item3", "absent-item"),
            |v| matches!(ints(v).as_deref(), Some([a, b]) if (0..=1).contains(a) && (0..=1).contains(b)),
        ),
        (
            cmd_of!("TOPK.COUNTX", key, "item3", "absent-item"),
            |v| matches!(ints(v).as_deref(), Some([a, b]) if *a >= 0 && *b >= 0),
        ),
    ]
}

/// The writes on a top-k a payload made (call `i`): adds, the largest
/// increments, a long item, and a creation it refuses.
pub fn writes(key: &str, i: usize) -> Vec<redis::Cmd> {
    vec![
        cmd_of!("TOPK.ADDX", key, "a", "b", format!("item{i}")),
        cmd_of!("TOPK.INCRBYX", key, "a", 100_000, "z", 3, "item3", 0),
        cmd_of!("TOPK.INCRBYX", key, "long-".repeat(40), 5),
        cmd_of!("TOPK.RESERVEX", key, 3),
        cmd_of!("TOPK.LISTX", key, "WITHCOUNT"),
    ]
}

/// A top-k without a window lists at most k items, each of which it says is in
/// its top k (TOPK.QUERYX).
pub fn lists_its_own(con: &mut Connection, key: &str, found: &mut Findings, ctx: &str) {
    let info = run(con, &cmd_of!("TOPK.INFOX", key), found, ctx);
    let (Value::Array(info), Value::Array(list)) =
        (&info, run(con, &cmd_of!("TOPK.LISTX", key), found, ctx))
    else {
        return;
    };
    if info.len() != 8 {
        return;
    }
    let k = int_of(&info[1]).unwrap_or(0);
    let mut q = cmd_of!("TOPK.QUERYX", key);
    for item in &list {
        if let Value::BulkString(b) = item {
            q.arg(&b[..]);
        }
    }
    let ok = list.is_empty()
        || ints(&run(con, &q, found, ctx)).is_some_and(|v| v.iter().all(|x| *x == 1));
    if !ok || list.len() as i64 > k {
        Findings::push(
            &mut found.read_failures,
            format!("{ctx}: {key} (k {k}) lists {list:?}, not all of them in its top k"),
        );
    }
}
