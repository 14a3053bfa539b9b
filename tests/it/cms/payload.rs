//! Count-min sketches (`warden-cm`) in the corrupt-payload tests (the payload
//! fuzzer and its controls in `tests/it/module/`, and `persistence.rs` here):
//! real DUMPs of several shapes, forgeries field by field of the RDB layout
//! `src/cms/data_type.rs` writes (kind, width, depth, window, the start of the
//! newest slot; per sub-sketch its total and its counters as one string of
//! little-endian 32-bit values), the forgeries its loader must refuse, and what
//! a sketch a payload made must answer.

use crate::cms::kit::{KIT, SKETCH};
use crate::common::kit::foreign;
use crate::common::payload::*;
use crate::common::payload_bases::*;
use crate::common::payload_checks::{labelled_ints, run, Check, Findings};
use crate::common::payload_forgeries::Forged;
use crate::common::*;

/// Fields before the first sub-sketch: kind, width, depth, window, head.
pub const HEADER: usize = 5;

/// Sub-sketches of a sketch over a window (`common::sketch::RING`).
pub const RING: usize = 5;

/// Largest total a sub-sketch stores (a signed 64-bit integer's).
const MAX_COUNT: u64 = i64::MAX as u64;

/// Index of sub-sketch `k`'s total (its counters are the field after).
pub fn sub_field(k: usize) -> usize {
    HEADER + 2 * k
}

/// The number of sub-sketches of a payload's fields (`None` when they are not a
/// sketch's layout).
pub fn sub_count(d: &Dump) -> Option<usize> {
    let n = d.fields.len().checked_sub(HEADER)?;
    let ok = n > 0
        && n.is_multiple_of(2)
        && d.fields[..HEADER].iter().all(|f| matches!(f, Field::U(_)))
        && d.fields[HEADER..]
            .chunks(2)
            .all(|p| matches!(p, [Field::U(_), Field::S(_)]));
    ok.then_some(n / 2)
}

/// The base keys, in the order `bases` returns them.
pub const BASES: [&str; 7] = [
    "cmb:plain",
    "cmb:win",
    "cmb:prob",
    "cmb:sparse",
    "cmb:full",
    "cmb:merged",
    "cmb:fresh",
];

/// Sketches: plain, over a window, sized by probability, sparse (LZF), with a
/// saturated counter, merged with weights, and over a window never written.
pub fn bases(con: &mut Connection) -> Vec<Base> {
    let counted = |key: &str| {
        let mut c = cmd_of!("CMS.INCRBYX", key);
        for i in 0..40 {
            c.arg(format!("item{i}")).arg(1 + i % 7);
        }
        c
    };
    let (plain, merged) = ("cmb:plain", "cmb:merged");
    for c in [
        cmd_of!("CMS.INITBYDIMX", plain, 50, 4),
        counted(plain),
        cmd_of!("CMS.INITBYDIMX", "cmb:win", 30, 3, "WINDOW", "1h"),
        counted("cmb:win"),
        cmd_of!("CMS.INITBYPROBX", "cmb:prob", 0.05, 0.01),
        counted("cmb:prob"),
        cmd_of!("CMS.INITBYDIMX", "cmb:sparse", 20_000, 2),
        cmd_of!("CMS.INCRBYX", "cmb:sparse", "a", 3, "b", 9),
        cmd_of!("CMS.INITBYDIMX", "cmb:full", 8, 2),
        cmd_of!("CMS.INCRBYX", "cmb:full", "a", u32::MAX, "b", 5),
        cmd_of!("CMS.INITBYDIMX", merged, 50, 4),
        cmd_of!("CMS.MERGEX", merged, 2, plain, plain, "WEIGHTS", 3, 1),
        cmd_of!("CMS.INITBYDIMX", "cmb:fresh", 10, 2, "WINDOW", 1000),
    ] {
        must(con, &c);
    }
    let bases = bases_of(con, &BASES, &SKETCH);
    for b in &bases {
        let d = &b.dump;
        let subs = if d.uint(3) == 0 { 1 } else { RING };
        assert_eq!(sub_count(d), Some(subs), "{}: sketch layout", b.key);
        let lens: Vec<usize> = (0..subs)
            .map(|k| match &d.fields[sub_field(k) + 1] {
                Field::S(s) => s.len(),
                _ => 0,
            })
            .collect();
        let cells = (d.uint(1) * d.uint(2) * 4) as usize;
        assert_eq!(lens, vec![cells; subs], "{}: counters", b.key);
    }
    bases
}

/// Forgeries of a sketch: the kind, a size out of range or the same counters read
/// as other sizes, a window out of range or another (with the sub-sketches it
/// takes, or not), the newest slot, a total, counters cut, grown or plausible
/// (random, saturated), sub-sketches swapped, missing or repeated.
pub fn forge(rng: &mut Rng, d: &mut Dump) {
    let Some(subs) = sub_count(d) else {
        d.fields[0] = Field::U(rng.pick(&[0, 1, 2, u64::MAX]));
        return;
    };
    let (width, depth, window) = (d.uint(1), d.uint(2), d.uint(3));
    let k = rng.below(subs);
    match rng.below(9) {
        0 => d.fields[0] = Field::U(rng.pick(&[0, 2, 3, u64::MAX])),
        1 => {
            let i = rng.pick(&[1usize, 2]);
            let v = d.uint(i);
            let odd = odd_uint(rng, v);
            let w = rng.pick(&[
                0,
                1,
                v.wrapping_add(1),
                v.wrapping_sub(1),
                v.wrapping_mul(2),
                1 << 32,
                u64::from(u32::MAX),
                odd,
            ]);
            d.fields[i] = Field::U(w);
        }
        2 => {
            // The same counters as other sizes: taken.
            let cells = width.wrapping_mul(depth);
            let w = rng.pick(&[1, depth, cells]).max(1);
            d.fields[1] = Field::U(w);
            d.fields[2] = Field::U(cells / w);
        }
        3 => {
            let w = odd_window(rng);
            d.fields[3] = Field::U(w);
            if rng.chance(1, 2) {
                resize_ring(d, if w == 0 { 1 } else { RING });
            }
        }
        4 => d.fields[4] = Field::U(odd_head(rng, window, d.uint(4))),
        5 => {
            let t = d.uint(sub_field(k));
            let odd = odd_uint(rng, t);
            let v = rng.pick(&[
                0,
                t.wrapping_add(1),
                MAX_COUNT,
                MAX_COUNT + 1,
                u64::MAX,
                odd,
            ]);
            d.fields[sub_field(k)] = Field::U(v);
        }
        6 => {
            let Field::S(s) = &mut d.fields[sub_field(k) + 1] else {
                unreachable!()
            };
            match rng.below(3) {
                0 => s.truncate(s.len().saturating_sub(rng.pick(&[1, 4]))),
                1 => s.extend([0; 4]),
                _ => s.clear(),
            }
        }
        7 => {
            // Plausible counters: random, some saturated; any totals.
            for k in 0..subs {
                let Field::S(s) = &d.fields[sub_field(k) + 1] else {
                    unreachable!()
                };
                let n = s.len() / 4;
                let mut cells = Vec::with_capacity(4 * n);
                for _ in 0..n {
                    let r = rng.next() as u32;
                    cells.extend(
                        rng.pick(&[0, 0, 1, 7, r, u32::MAX - 1, u32::MAX])
                            .to_le_bytes(),
                    );
                }
                d.fields[sub_field(k) + 1] = Field::S(cells);
                d.fields[sub_field(k)] = Field::U(rng.pick(&[0, 1, 1000, MAX_COUNT]));
            }
        }
        _ => {
            let (a, b) = (sub_field(k), sub_field(rng.below(subs)));
            match rng.below(3) {
                0 => {
                    d.fields.swap(a, b);
                    d.fields.swap(a + 1, b + 1);
                }
                1 => {
                    d.fields.drain(a..a + 2);
                }
                _ => {
                    let pair = d.fields[a..a + 2].to_vec();
                    d.fields.splice(b..b, pair);
                }
            }
        }
    }
}

/// Makes a sketch's fields hold `subs` sub-sketches: the last ones dropped, or
/// empty ones added.
fn resize_ring(d: &mut Dump, subs: usize) {
    d.fields
        .truncate(sub_field(subs.min(sub_count(d).unwrap_or(0))));
    let cells = d.uint(1).saturating_mul(d.uint(2)).saturating_mul(4);
    while d.fields.len() < sub_field(subs) {
        d.fields.push(Field::U(0));
        d.fields
            .push(Field::S(vec![0; cells.min(1 << 20) as usize]));
    }
}

/// Forgeries of `bases` (as `bases` returns them) that break an invariant the
/// loader checks, each to be refused: the kind, sizes out of range or past the
/// cap, a window out of range or without its sub-sketches, a newest slot that is
/// no slot start or past a signed 64-bit ms, a total past it, counters of the
/// wrong length or of the wrong kind, sub-sketches missing or one more, another
/// encoding version, no EOF; and another type's fields under the sketch's id, and
/// back.
pub fn refusals(bases: &[Base], others: &[&Base]) -> Forged {
    let other = foreign(others, &KIT);
    let (plain, win, fresh) = (&bases[0], &bases[1], &bases[6]);
    let mut f = Forged::default();
    let max = u64::from(u32::MAX);
    f.uint("kind 0", plain, 0, 0);
    f.uint("kind 2", plain, 0, 2);
    f.uint("width 0", plain, 1, 0);
    f.uint("width past 2^32", plain, 1, 1 << 32);
    f.uint("depth 0", plain, 2, 0);
    f.uint("one row more", plain, 2, plain.dump.uint(2) + 1);
    f.with("size past the cap", plain, |d| {
        d.fields[1] = Field::U(max);
        d.fields[2] = Field::U(max);
    });
    f.uint("size within the cap, counters missing", plain, 1, max);
    f.window(plain, win, 3);
    f.uint("total past a signed integer", plain, 5, MAX_COUNT + 1);
    f.uint("a later total u64::MAX", fresh, sub_field(3), u64::MAX);
    let counters = sub_field(0) + 1;
    f.string("counters a byte short", plain, counters, |s| {
        s.truncate(s.len() - 1)
    });
    f.string("counters a counter long", plain, counters, |s| {
        s.extend([0; 4])
    });
    f.string("counters a counter short", win, counters, |s| {
        s.truncate(s.len() - 4)
    });
    f.uint("counters as a number", plain, sub_field(0) + 1, 0);
    f.set(
        "a total as a string",
        plain,
        sub_field(0),
        Field::S(b"7".to_vec()),
    );
    f.with("a sub-sketch missing", win, |d| {
        d.fields.truncate(sub_field(RING - 1))
    });
    f.with("one sub-sketch more", plain, |d| {
        let pair = d.fields[sub_field(0)..].to_vec();
        d.fields.extend(pair);
    });
    f.framing(plain, other);
    f
}

/// CMS.INFOX: width and depth of at least 1, a count of at least 0 and, over a
/// window, a window of at least 100 ms.
pub fn info_ok(v: &Value) -> bool {
    match labelled_ints(v).as_deref() {
        Some([w, d, n]) => *w >= 1 && *d >= 1 && *n >= 0,
        Some([w, d, n, window]) => *w >= 1 && *d >= 1 && *n >= 0 && *window >= 100,
        _ => false,
    }
}

/// The reads of a sketch and what they must answer; they change nothing.
pub fn reads(key: &str) -> Vec<(redis::Cmd, Check)> {
    vec![
        (cmd_of!("CMS.INFOX", key), info_ok),
        (
            cmd_of!("CMS.QUERYX", key, "item1", "absent-item"),
            |v| matches!(ints(v).as_deref(), Some([a, b]) if *a >= 0 && *b >= 0),
        ),
    ]
}

/// The writes on a sketch a payload made (call `i`): counts that saturate,
/// merges into itself (which may overflow), and a creation it refuses.
pub fn writes(key: &str, i: usize) -> Vec<redis::Cmd> {
    vec![
        cmd_of!("CMS.INCRBYX", key, "a", 1, format!("item{i}"), 3),
        cmd_of!("CMS.INCRBYX", key, "big", u32::MAX, "b", 7),
        cmd_of!("CMS.MERGEX", key, 2, key, key),
        cmd_of!("CMS.MERGEX", key, 1, key, "WEIGHTS", -1),
        cmd_of!("CMS.INITBYDIMX", key, 10, 2),
        cmd_of!("CMS.INFOX", key),
    ]
}

/// An item counted 5 times is counted at least that (counts are never under the
/// truth), asked in one transaction (a window's slots do not move in between);
/// unless its counters saturated (an overflow error).
pub fn never_under(con: &mut Connection, key: &str, i: usize, found: &mut Findings, ctx: &str) {
    let item = format!("probe{i}");
    run(con, &cmd("MULTI"), found, ctx);
    run(con, &cmd_of!("CMS.INCRBYX", key, &item, 5), found, ctx);
    run(con, &cmd_of!("CMS.QUERYX", key, &item), found, ctx);
    let v = run(con, &cmd("EXEC"), found, ctx);
    let Value::Array(r) = &v else {
        return Findings::push(&mut found.read_failures, format!("{ctx}: EXEC -> {v:?}"));
    };
    if matches!(&r[..], [Value::Array(c), _] if c.first().is_some_and(|x| err_of(x).is_some())) {
        return;
    }
    let counted = r.get(1).and_then(ints);
    if !matches!(counted.as_deref(), Some([n]) if *n >= 5) {
        Findings::push(
            &mut found.read_failures,
            format!("{ctx}: {item} counted 5 times in {key}, then {r:?}"),
        );
    }
}
