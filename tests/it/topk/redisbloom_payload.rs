//! RedisBloom's top-k (`TopK-TYPE`, made by RedisBloom's names under
//! `aliases redisbloom`) in the corrupt-payload tests (the payload fuzzer
//! and its controls in `tests/it/module/`, `redisbloom_layout.rs` here):
//! real DUMPs of several shapes, forgeries field by field of the RDB layout
//! `src/topk/redisbloom/data_type.rs` reads (k, width, depth, the decay, the
//! buckets as one string of little-endian 32-bit fingerprint and count
//! pairs, the heap as one string of 24-byte records: fingerprint, item
//! length, 8 bytes of a pointer, count, 4 of padding; then each entry's item
//! ending in NUL; RedisBloom has one encoding version), the forgeries its
//! loader must refuse, and what a top-k a payload made must answer.
//! RedisBloom's error texts carry no `ERR` code: `CODES`.

use crate::common::kit::{foreign, of_type};
use crate::common::payload::*;
use crate::common::payload_bases::*;
use crate::common::payload_checks::{labelled_ints, run_coded, Findings};
use crate::common::payload_forgeries::Forged;
use crate::common::*;
use crate::topk::kit::{KIT, RB_TOPK, TOPK};
use crate::topk::payload;
use crate::topk::support::{odd_items, uneven_adds};

/// The code RedisBloom's top-k errors start with.
pub const CODES: &[&str] = &["TopK:"];

/// Fields before the items: k, width, depth, decay, buckets, heap.
pub const ITEMS: usize = 6;

/// Bytes of a heap record.
pub const RECORD: usize = 24;

/// The words of a heap record, by their offset in it.
const FP: usize = 0;
const LEN: usize = 4;
const POINTER: usize = 8;
const COUNT: usize = 16;
const PADDING: usize = 20;

/// The largest count.
const MAX_COUNT: i64 = u32::MAX as i64;

/// The base keys, in the order `bases` returns them.
pub const BASES: [&str; 9] = [
    "rtb:plain",
    "rtb:one",
    "rtb:bigk",
    "rtb:default",
    "rtb:fresh",
    "rtb:items",
    "rtb:heavy",
    "rtb:faint",
    "rtb:sparse",
];

/// Whether a payload's fields are a top-k's: three numbers, the decay, the
/// buckets, k heap records and k items.
pub fn is_topk(d: &Dump) -> bool {
    let f = &d.fields;
    let [Field::U(k), Field::U(_), Field::U(_), Field::D(_), Field::S(_), Field::S(heap), items @ ..] =
        &f[..]
    else {
        return false;
    };
    *k >= 1
        && items.len() as u64 == *k
        && heap.len() as u64 == k * RECORD as u64
        && items.iter().all(|x| matches!(x, Field::S(_)))
}

/// The heap records of a top-k's payload.
fn heap(d: &mut Dump) -> &mut Vec<u8> {
    let Field::S(h) = &mut d.fields[5] else {
        unreachable!()
    };
    h
}

/// The word at `at` of heap record `e`.
pub fn record_word(d: &Dump, e: usize, at: usize) -> u32 {
    let Field::S(h) = &d.fields[5] else {
        unreachable!()
    };
    let p = e * RECORD + at;
    u32::from_le_bytes([h[p], h[p + 1], h[p + 2], h[p + 3]])
}

/// Sets the word at `at` of heap record `e`.
fn set_word(d: &mut Dump, e: usize, at: usize, v: u32) {
    let p = e * RECORD + at;
    heap(d)[p..p + 4].copy_from_slice(&v.to_le_bytes());
}

/// The item of entry `e`, as stored (ending in NUL).
fn item(d: &Dump, e: usize) -> &[u8] {
    match &d.fields[ITEMS + e] {
        Field::S(s) => s,
        _ => unreachable!(),
    }
}

/// Whether entry `e` was never filled: no item, fingerprint and count 0.
fn is_empty_entry(d: &Dump, e: usize) -> bool {
    item(d, e) == [0] && record_word(d, e, FP) == 0 && record_word(d, e, COUNT) == 0
}

/// The entries that hold an item.
fn held(d: &Dump) -> Vec<usize> {
    (0..d.uint(0) as usize)
        .filter(|&e| !is_empty_entry(d, e))
        .collect()
}

/// Top-k: counted with decays at work, of one bucket and one entry (decay
/// 1), of a large k mostly empty, of RedisBloom's default sizes, never
/// written, with binary, empty and long items, contested by the largest
/// increments, of a decay near 0, sparse (LZF).
pub fn bases(con: &mut Connection) -> Vec<Base> {
    for c in [
        cmd_of!("TOPK.RESERVE", "rtb:plain", 5, 20, 4, 0.9),
        cmd_of!("TOPK.RESERVE", "rtb:one", 1, 1, 1, 1),
        cmd_of!("TOPK.RESERVE", "rtb:bigk", 1000, 60, 3, 0.9),
        cmd_of!("TOPK.RESERVE", "rtb:default", 3),
        cmd_of!("TOPK.RESERVE", "rtb:fresh", 4, 10, 2, 0.5),
        cmd_of!("TOPK.RESERVE", "rtb:items", 4, 30, 3, 0.95),
        cmd_of!("TOPK.RESERVE", "rtb:heavy", 3, 4, 2, 0.8),
        cmd_of!("TOPK.RESERVE", "rtb:faint", 3, 6, 2, "1e-9"),
        cmd_of!("TOPK.RESERVE", "rtb:sparse", 10, 5000, 2, 0.9),
    ] {
        must(con, &c);
    }
    for key in ["rtb:plain", "rtb:default", "rtb:faint"] {
        must(con, &uneven_adds("TOPK.ADD", key));
    }
    must(con, &cmd_of!("TOPK.ADD", "rtb:one", "a", "b", "a", "c"));
    let mut c = cmd_of!("TOPK.INCRBY", "rtb:bigk");
    for i in 0..120u64 {
        c.arg(format!("k{i}")).arg(1 + i % 9);
    }
    must(con, &c);
    must(con, &odd_items("TOPK.INCRBY", "rtb:items"));
    must(con, &cmd_of!("TOPK.ADD", "rtb:items", "", "x"));
    for i in 0..12u64 {
        let c = cmd_of!(
            "TOPK.INCRBY",
            "rtb:heavy",
            format!("h{}", i % 5),
            100_000,
            format!("g{i}"),
            99_999 - i
        );
        must(con, &c);
    }
    must(con, &cmd_of!("TOPK.ADD", "rtb:sparse", "a", "b", "c"));
    let bases = bases_of(con, &BASES, &RB_TOPK);
    for b in &bases {
        assert!(is_topk(&b.dump), "{}: top-k layout {:?}", b.key, b.dump);
        let held = held(&b.dump).len();
        let k = b.dump.uint(0) as usize;
        let want = match b.key.as_str() {
            "rtb:fresh" => 0..=0,
            // Items that share buckets decay each other: most are held.
            "rtb:bigk" => 100..=120,
            "rtb:sparse" => 3..=3,
            _ => k..=k,
        };
        assert!(want.contains(&held), "{}: {held} entries held", b.key);
        for e in 0..b.dump.uint(0) as usize {
            let (len, it) = (record_word(&b.dump, e, LEN), item(&b.dump, e));
            assert_eq!(it.last(), Some(&0), "{}: item {e} ends in NUL", b.key);
            assert_eq!(len as usize, it.len() - 1, "{}: item {e}'s length", b.key);
        }
    }
    bases
}

/// Forgeries of a top-k: k alone, or with an entry more or fewer (taken);
/// sizes out of range, swapped or refolded (taken); the decay; buckets cut,
/// grown, emptied, plausible (random) or a row more or fewer with the depth
/// to match; a heap record's fingerprint, item length, pointer, count or
/// padding; the entries out of heap order (taken); an item without its NUL,
/// emptied, another entry's, long or binary; every count (taken); the heap
/// cut or grown, an item missing or extra; fields swapped.
pub fn forge(rng: &mut Rng, d: &mut Dump) {
    if !is_topk(d) {
        // Another type's fields: a k over them.
        if !d.fields.is_empty() {
            d.fields[0] = Field::U(rng.pick(&[0, 1, 2, u64::MAX]));
        }
        return;
    }
    let k = d.uint(0) as usize;
    let e = rng.below(k);
    match rng.below(11) {
        0 => {
            let odd = odd_uint(rng, k as u64);
            let v = rng.pick(&[0, k as u64 - 1, k as u64 + 1, 1 << 32, u64::MAX, odd]);
            d.fields[0] = Field::U(v);
        }
        1 if rng.chance(1, 2) || k == 1 => {
            heap(d).extend([0; RECORD]);
            d.fields.push(Field::S(vec![0]));
            d.fields[0] = Field::U(k as u64 + 1);
        }
        1 => {
            let h = heap(d);
            h.truncate(h.len() - RECORD);
            d.fields.pop();
            d.fields[0] = Field::U(k as u64 - 1);
        }
        2 => {
            let (w, depth) = (d.uint(1), d.uint(2));
            match rng.below(3) {
                0 => d.fields.swap(1, 2),
                1 => {
                    // The same buckets as one row.
                    d.fields[1] = Field::U(w.wrapping_mul(depth));
                    d.fields[2] = Field::U(1);
                }
                _ => {
                    let i = rng.pick(&[1usize, 2]);
                    let v = d.uint(i);
                    let odd = odd_uint(rng, v);
                    let (up, down, twice) =
                        (v.wrapping_add(1), v.wrapping_sub(1), v.wrapping_mul(2));
                    let x = rng.pick(&[0, 1, up, down, twice, 1 << 32, u64::MAX, odd]);
                    d.fields[i] = Field::U(x);
                }
            }
        }
        3 => {
            let Field::D(x) = d.fields[3] else {
                unreachable!()
            };
            let odd = odd_double(rng, x);
            let v = rng.pick(&[odd, 1.0, 1e-300, 5e-324, 0.0, f64::NAN, 1.0 + f64::EPSILON]);
            d.fields[3] = Field::D(v);
        }
        4 => forge_buckets(rng, d),
        5 => {
            let at = rng.pick(&[FP, LEN, POINTER, POINTER + 4, COUNT, PADDING]);
            let v = record_word(d, e, at);
            let r = rng.next() as u32;
            let x = rng.pick(&[0, 1, v.wrapping_add(1), v.wrapping_sub(1), u32::MAX, r]);
            set_word(d, e, at, x);
        }
        6 => {
            // Out of heap order: records and items moved together.
            let mut entries: Vec<([u8; RECORD], Field)> = (0..k)
                .map(|i| {
                    let Field::S(h) = &d.fields[5] else {
                        unreachable!()
                    };
                    let r = h[i * RECORD..(i + 1) * RECORD]
                        .try_into()
                        .expect("a record");
                    (r, d.fields[ITEMS + i].clone())
                })
                .collect();
            entries.rotate_left(rng.below(k));
            entries.swap(0, k - 1);
            d.fields.truncate(ITEMS);
            let h: Vec<u8> = entries.iter().flat_map(|(r, _)| *r).collect();
            *heap(d) = h;
            d.fields.extend(entries.into_iter().map(|(_, f)| f));
        }
        7 => forge_item(rng, d, e),
        8 => {
            // Every count plausible (some saturated, some 0).
            for i in 0..k {
                let r = rng.next() as u32;
                let c = rng.pick(&[0, 1, 2, 1000, u32::MAX, r]);
                set_word(d, i, COUNT, c);
            }
        }
        9 => match rng.below(4) {
            0 => {
                let h = heap(d);
                h.truncate(h.len() - rng.pick(&[1, RECORD]));
            }
            1 => heap(d).extend([0; RECORD]),
            2 => {
                d.fields.remove(ITEMS + e);
            }
            _ => d.fields.insert(ITEMS + e, Field::S(b"extra\0".to_vec())),
        },
        _ => {
            let (a, b) = (rng.below(ITEMS), rng.below(ITEMS));
            d.fields.swap(a, b);
        }
    }
}

/// The buckets (laid out as warden's top-k's): cut, grown, emptied,
/// plausible (`payload::forge_buckets`), or a row more or fewer with the
/// depth to match.
fn forge_buckets(rng: &mut Rng, d: &mut Dump) {
    if rng.chance(4, 5) {
        return payload::forge_buckets(rng, d, 4);
    }
    let (width, depth) = (d.uint(1), d.uint(2));
    let Field::S(s) = &mut d.fields[4] else {
        unreachable!()
    };
    // A row of a forged width capped at 1 MiB.
    let row = width.saturating_mul(8).min(1 << 20) as usize;
    if rng.chance(1, 2) || depth <= 1 || row > s.len() {
        s.extend(vec![7; row]);
        d.fields[2] = Field::U(depth.wrapping_add(1));
    } else {
        s.truncate(s.len() - row);
        d.fields[2] = Field::U(depth - 1);
    }
}

/// Entry `e`'s item: without its NUL, emptied, a lone NUL, another entry's
/// (with its fingerprint or not), long (64 KiB), binary with a NUL inside.
fn forge_item(rng: &mut Rng, d: &mut Dump, e: usize) {
    let k = d.uint(0) as usize;
    let other = rng.below(k);
    let theirs = item(d, other).to_vec();
    let with_fp = rng.chance(1, 2);
    let mut s = item(d, e).to_vec();
    match rng.below(6) {
        0 => {
            s.pop();
        }
        1 => s.clear(),
        2 => s = vec![0],
        3 => {
            s = theirs;
            if with_fp {
                let fp = record_word(d, other, FP);
                set_word(d, e, FP, fp);
            }
        }
        4 => {
            s = vec![b'i'; 64 * 1024];
            s.push(0);
        }
        _ => s = b"bin\x00ary\xff\0".to_vec(),
    }
    if rng.chance(1, 2) {
        set_word(d, e, LEN, s.len().saturating_sub(1) as u32);
    }
    d.fields[ITEMS + e] = Field::S(s);
}

/// Forgeries of `bases` (as `bases` returns them) that break an invariant the
/// loader checks, each to be refused: k, width or depth 0 or past 32 bits,
/// sizes apart from the buckets or heap (one more, one fewer, a product
/// whose bytes wrap to the buckets' length), a decay outside (0, 1] or not a
/// double, buckets or heap of the wrong length or kind, an item without its
/// NUL, missing or extra, the next encoding version, no EOF;
/// another family's fields and warden's own top-k's under the type's id,
/// and back.
pub fn refusals(bases: &[Base], others: &[&Base]) -> Forged {
    let plain = &bases[0];
    let mut f = Forged::default();
    let (k, w, depth) = (plain.dump.uint(0), plain.dump.uint(1), plain.dump.uint(2));
    for (i, name) in [(0, "k"), (1, "width"), (2, "depth")] {
        f.uint(&format!("{name} 0"), plain, i, 0);
        f.uint(&format!("{name} past 32 bits"), plain, i, 1 << 32);
        f.uint(&format!("{name} u64::MAX"), plain, i, u64::MAX);
    }
    f.uint("k one more: an item missing", plain, 0, k + 1);
    f.uint("k one fewer: an item too many", plain, 0, k - 1);
    f.uint("width one more", plain, 1, w + 1);
    f.uint("width one fewer", plain, 1, w - 1);
    f.uint("depth one more", plain, 2, depth + 1);
    f.uint("depth one fewer", plain, 2, depth - 1);
    // 583550761 × 3951400912 = 2^61 + 80: its bytes (× 8) wrap to 640,
    // the bytes of 20 × 4 buckets.
    assert_eq!((w, depth), (20, 4), "rtb:plain's sizes");
    f.with(
        "sizes whose bytes wrap to the buckets' length",
        plain,
        |d| {
            d.fields[1] = Field::U(583_550_761);
            d.fields[2] = Field::U(3_951_400_912);
        },
    );
    for decay in [0.0, -0.0, -0.5, 1.000_000_1, 2.0, f64::NAN, f64::INFINITY] {
        f.set(&format!("decay {decay}"), plain, 3, Field::D(decay));
    }
    f.uint("decay as an integer", plain, 3, 1);
    f.set("decay as a float", plain, 3, Field::F(0.9));
    f.string("buckets a byte short", plain, 4, |s| {
        s.truncate(s.len() - 1)
    });
    f.string("buckets a bucket long", plain, 4, |s| s.extend([0; 8]));
    f.string("buckets a bucket short", plain, 4, |s| {
        s.truncate(s.len() - 8)
    });
    f.uint("buckets as a number", plain, 4, 0);
    f.string("heap a byte short", plain, 5, |s| s.truncate(s.len() - 1));
    f.string("heap a record long", plain, 5, |s| s.extend([0; RECORD]));
    f.string("heap a record short", plain, 5, |s| {
        s.truncate(s.len() - RECORD)
    });
    f.uint("heap as a number", plain, 5, 0);
    f.string("an item without its NUL", plain, ITEMS, |s| {
        s.pop();
    });
    f.string("an item with no bytes", plain, ITEMS, Vec::clear);
    f.string("an item ending in another byte", plain, ITEMS, |s| {
        *s.last_mut().expect("an item") = b'x'
    });
    f.uint("an item as a number", plain, ITEMS, 0);
    f.with("the last item missing", plain, |d| {
        d.fields.pop();
    });
    f.with("an item extra", plain, |d| {
        d.fields.push(Field::S(b"x\0".to_vec()))
    });
    f.with("next encoding version", plain, |d| {
        d.module_id = (d.module_id & !1023) | 1
    });
    f.with("no EOF", plain, |d| d.eof = false);
    f.confused(plain, foreign(others, &KIT));
    f.confused(plain, of_type(others, TOPK.name));
    f
}

/// Runs `c`, RedisBloom's texts known.
fn run(con: &mut Connection, c: &redis::Cmd, found: &mut Findings, ctx: &str) -> Value {
    run_coded(con, c, found, ctx, CODES)
}

/// `TOPK.INFO`'s k, width and depth, if it tells them and its decay is in
/// (0, 1].
fn info(v: &Value) -> Option<(i64, i64, i64)> {
    let (Some(n), Value::Array(a)) = (labelled_ints(v), v) else {
        return None;
    };
    let decay: f64 = a.get(7).and_then(text_of)?.parse().ok()?;
    match n[..] {
        [k, w, d, _] if k >= 1 && w >= 1 && d >= 1 && decay > 0.0 && decay <= 1.0 => {
            Some((k, w, d))
        }
        _ => None,
    }
}

/// `TOPK.LIST key WITHCOUNT` as items and counts, if it is pairs of an item
/// (a bulk string, or nil for the empty item once loaded, as RedisBloom
/// answers it) and a count.
fn listed(v: &Value) -> Option<Vec<(Value, i64)>> {
    let Value::Array(a) = v else {
        return None;
    };
    a.chunks(2)
        .map(|p| match p {
            [i @ (Value::BulkString(_) | Value::Nil), c] => Some((i.clone(), int_of(c)?)),
            _ => None,
        })
        .collect()
}

/// The reads of a top-k, each answer in range (they change nothing):
/// `TOPK.INFO` (k, width and depth of at least 1, a decay in (0, 1]);
/// `TOPK.LIST` at most k items, with `WITHCOUNT` the same items, each
/// counted at least 1 and at most 2^32 - 1, most counted first;
/// `TOPK.QUERY` 0 or 1, `TOPK.COUNT` a count.
pub fn reads(con: &mut Connection, key: &str, found: &mut Findings, ctx: &str) {
    let info_c = cmd_of!("TOPK.INFO", key);
    let i = run(con, &info_c, found, ctx);
    let k = info(&i).map(|(k, _, _)| k);
    let with_c = cmd_of!("TOPK.LIST", key, "WITHCOUNT");
    let with = run(con, &with_c, found, ctx);
    let plain_c = cmd_of!("TOPK.LIST", key);
    let plain = run(con, &plain_c, found, ctx);
    let pairs = listed(&with);
    let with_ok = pairs.as_ref().is_some_and(|p| {
        p.iter().all(|(_, c)| (1..=MAX_COUNT).contains(c))
            && p.windows(2).all(|w| w[0].1 >= w[1].1)
            && k.is_none_or(|k| p.len() as i64 <= k)
    });
    let names = pairs.map(|p| p.into_iter().map(|(i, _)| i).collect());
    let plain_ok = names.is_none_or(|n| Value::Array(n) == plain);
    let query_c = cmd_of!("TOPK.QUERY", key, "item3", "absent-item", "");
    let q = run(con, &query_c, found, ctx);
    let query_ok = matches!(ints(&q).as_deref(), Some(v) if v.len() == 3 && v.iter().all(|x| (0..=1).contains(x)));
    let count_c = cmd_of!("TOPK.COUNT", key, "item3", "absent-item", "");
    let c = run(con, &count_c, found, ctx);
    let count_ok = matches!(ints(&c).as_deref(), Some(v) if v.len() == 3 && v.iter().all(|x| (0..=MAX_COUNT).contains(x)));
    for (c, v, ok) in [
        (info_c, i, k.is_some()),
        (with_c, with, with_ok),
        (plain_c, plain, plain_ok),
        (query_c, q, query_ok),
        (count_c, c, count_ok),
    ] {
        if !ok {
            let what = format!("{ctx}: {} -> {v:?}", show(&c));
            Findings::push(&mut found.read_failures, what);
        }
    }
}

/// The writes on a top-k a payload made (call `i`): an item counted by the
/// largest increments, three times, is listed once at most, and then
/// `TOPK.QUERY` finds it; the list keeps at most k items, most counted
/// first; a refused increment or creation changes nothing; adds of items of
/// every kind.
pub fn writes(con: &mut Connection, key: &str, i: usize, found: &mut Findings, ctx: &str) {
    let probe = format!("probe{i}");
    for c in [
        cmd_of!("TOPK.INCRBY", key, &probe, 5_000, "z", 3),
        cmd_of!("TOPK.INCRBY", key, &probe, 5_000),
        cmd_of!("TOPK.ADD", key, &probe, "a", "b", "", &b"\x00bin"[..]),
        cmd_of!("TOPK.INCRBY", key, "long-".repeat(60), 5, "a", 0),
    ] {
        run(con, &c, found, ctx);
    }
    let k = info(&run(con, &cmd_of!("TOPK.INFO", key), found, ctx)).map(|(k, _, _)| k);
    let list = run(con, &cmd_of!("TOPK.LIST", key, "WITHCOUNT"), found, ctx);
    let q = run(con, &cmd_of!("TOPK.QUERY", key, &probe), found, ctx);
    if let (Some(k), Some(pairs)) = (k, listed(&list)) {
        let times = pairs
            .iter()
            .filter(|(it, _)| *it == Value::BulkString(probe.clone().into_bytes()))
            .count();
        let queried = ints(&q).and_then(|v| v.first().copied());
        let sorted = pairs.windows(2).all(|w| w[0].1 >= w[1].1);
        // (In the top k but not listed: counted 0 there, where its buckets
        // held others' saturated counts.)
        let found_it = queried == Some(1) || (times == 0 && queried == Some(0));
        if times > 1 || !found_it || pairs.len() as i64 > k || !sorted {
            let what = format!(
                "{ctx}: {probe} counted 10,001, then TOPK.QUERY {q:?} and TOPK.LIST {list:?} (k {k})"
            );
            Findings::push(&mut found.read_failures, what);
        }
    }
    for refused in [
        cmd_of!("TOPK.INCRBY", key, "a", 100_001),
        cmd_of!("TOPK.INCRBY", key, "a", -1),
        cmd_of!("TOPK.RESERVE", key, 3),
    ] {
        let before = digest_value(con, key.as_bytes());
        let v = run(con, &refused, found, ctx);
        let refused_all = match &v {
            Value::Array(a) => a.iter().all(|x| err_of(x).is_some()),
            v => err_of(v).is_some(),
        };
        if !refused_all || digest_value(con, key.as_bytes()) != before {
            let what = format!(
                "{ctx}: {} -> {v:?}, or it changed the top-k",
                show(&refused)
            );
            Findings::push(&mut found.read_failures, what);
        }
    }
}

/// A top-k's bytes as `topk_bytes` counts them: RedisBloom's record (2,088
/// bytes, with its table of decays), 8 a bucket and 24 a heap entry.
pub fn size(con: &mut Connection, key: &[u8]) -> i64 {
    let v = raw(con, &cmd_of!("TOPK.INFO", key));
    match info(&v) {
        Some((k, w, d)) => 2088 + w * d * 8 + k * 24,
        None => panic!("TOPK.INFO: {v:?}"),
    }
}
