//! RedisBloom's count-min sketches (`CMSk-TYPE`, made by RedisBloom's names
//! under `aliases redisbloom`) in the corrupt-payload tests (the payload
//! fuzzer and its controls in `tests/it/module/`, `redisbloom_layout.rs`
//! here): real DUMPs of several shapes, forgeries field by field of the RDB
//! layout `src/cms/redisbloom/data_type.rs` reads (width, depth, the total,
//! the counters as one string of little-endian 32-bit words; RedisBloom has
//! one encoding version), the forgeries its loader must refuse, and what a
//! sketch a payload made must answer. RedisBloom's error texts carry no
//! `ERR` code: `CODES`.

use crate::cms::kit::{KIT, RB_SKETCH, SKETCH};
use crate::common::kit::{foreign, of_type};
use crate::common::payload::*;
use crate::common::payload_bases::*;
use crate::common::payload_checks::{labelled_ints, run_coded, Findings};
use crate::common::payload_forgeries::Forged;
use crate::common::*;

/// The code RedisBloom's count-min errors start with.
pub const CODES: &[&str] = &["CMS:"];

/// The largest counter.
const SATURATED: i64 = u32::MAX as i64;

/// The base keys, in the order `bases` returns them.
pub const BASES: [&str; 8] = [
    "rcb:plain",
    "rcb:prob",
    "rcb:sparse",
    "rcb:full",
    "rcb:deep",
    "rcb:merged",
    "rcb:fresh",
    "rcb:row",
];

/// Whether a payload's fields are a sketch's: three numbers and the counters.
pub fn is_sketch(d: &Dump) -> bool {
    matches!(
        &d.fields[..],
        [Field::U(_), Field::U(_), Field::U(_), Field::S(_)]
    )
}

/// Sketches: counted, sized by probability, sparse (LZF), with saturated
/// counters (and a total past 2^32), one counter wide and 30 deep, merged
/// with weights, never written, one row.
pub fn bases(con: &mut Connection) -> Vec<Base> {
    let counted = |key: &str| {
        let mut c = cmd_of!("CMS.INCRBY", key);
        for i in 0..40 {
            c.arg(format!("item{i}")).arg(1 + i % 7);
        }
        c
    };
    for c in [
        cmd_of!("CMS.INITBYDIM", "rcb:plain", 50, 4),
        counted("rcb:plain"),
        cmd_of!("CMS.INITBYPROB", "rcb:prob", 0.01, 0.01),
        counted("rcb:prob"),
        cmd_of!("CMS.INITBYDIM", "rcb:sparse", 20_000, 2),
        cmd_of!("CMS.INCRBY", "rcb:sparse", "a", 3, "b", 9),
        cmd_of!("CMS.INITBYDIM", "rcb:full", 8, 2),
        cmd_of!(
            "CMS.INCRBY",
            "rcb:full",
            "a",
            u32::MAX,
            "b",
            5,
            "c",
            1u64 << 33
        ),
        cmd_of!("CMS.INITBYDIM", "rcb:deep", 1, 30),
        counted("rcb:deep"),
        cmd_of!("CMS.INITBYDIM", "rcb:merged", 50, 4),
        cmd_of!(
            "CMS.MERGE",
            "rcb:merged",
            2,
            "rcb:plain",
            "rcb:plain",
            "WEIGHTS",
            3,
            1
        ),
        cmd_of!("CMS.INITBYDIM", "rcb:fresh", 10, 2),
        cmd_of!("CMS.INITBYDIM", "rcb:row", 300, 1),
        counted("rcb:row"),
    ] {
        must(con, &c);
    }
    let bases = bases_of(con, &BASES, &RB_SKETCH);
    for b in &bases {
        let d = &b.dump;
        assert!(is_sketch(d), "{}: sketch layout", b.key);
        let Field::S(s) = &d.fields[3] else {
            unreachable!()
        };
        assert_eq!(
            s.len() as u64,
            d.uint(0) * d.uint(1) * 4,
            "{}: counters",
            b.key
        );
    }
    assert!(
        bases[3].dump.uint(2) > u64::from(u32::MAX),
        "rcb:full's total"
    );
    bases
}

/// Forgeries of a sketch: a width or depth out of range or apart from the
/// counters, the same counters as other sizes, the total, counters cut,
/// grown, emptied or plausible (random, saturated), fields swapped.
pub fn forge(rng: &mut Rng, d: &mut Dump) {
    if !is_sketch(d) {
        // Another type's fields: a width over them.
        if !d.fields.is_empty() {
            d.fields[0] = Field::U(rng.pick(&[0, 1, 2, u64::MAX]));
        }
        return;
    }
    let (width, depth) = (d.uint(0), d.uint(1));
    match rng.below(7) {
        0 => {
            let i = rng.below(2);
            let v = d.uint(i);
            let odd = odd_uint(rng, v);
            let w = rng.pick(&[
                0,
                1,
                v.wrapping_add(1),
                v.wrapping_sub(1),
                v.wrapping_mul(2),
                1 << 32,
                u64::MAX,
                odd,
            ]);
            d.fields[i] = Field::U(w);
        }
        1 => {
            // The same counters as other sizes: taken.
            let cells = width.wrapping_mul(depth);
            let w = rng.pick(&[1, depth, cells]).max(1);
            d.fields[0] = Field::U(w);
            d.fields[1] = Field::U(cells / w);
        }
        2 => {
            let t = d.uint(2);
            let odd = odd_uint(rng, t);
            let v = rng.pick(&[
                0,
                t.wrapping_add(1),
                i64::MAX as u64,
                1 << 63,
                u64::MAX,
                odd,
            ]);
            d.fields[2] = Field::U(v);
        }
        3 => {
            let Field::S(s) = &mut d.fields[3] else {
                unreachable!()
            };
            match rng.below(4) {
                0 => s.truncate(s.len().saturating_sub(rng.pick(&[1, 4]))),
                1 => s.extend([0; 4]),
                2 => s.clear(),
                _ => {
                    // Counters for a row more or fewer, the depth to match
                    // (a row of a forged width capped at 1 MiB).
                    let row = width.saturating_mul(4).min(1 << 20) as usize;
                    let grow = rng.chance(1, 2) || depth <= 1 || row > s.len();
                    match grow {
                        true => s.extend(vec![7; row]),
                        false => s.truncate(s.len() - row),
                    }
                    let depth = match grow {
                        true => depth.wrapping_add(1),
                        false => depth - 1,
                    };
                    d.fields[1] = Field::U(depth);
                }
            }
        }
        4 => {
            // Plausible counters: random, some saturated; any total.
            let Field::S(s) = &d.fields[3] else {
                unreachable!()
            };
            let mut cells = Vec::with_capacity(s.len());
            for _ in 0..s.len() / 4 {
                let r = rng.next() as u32;
                cells.extend(
                    rng.pick(&[0, 0, 1, 7, r, u32::MAX - 1, u32::MAX])
                        .to_le_bytes(),
                );
            }
            d.fields[3] = Field::S(cells);
            d.fields[2] = Field::U(rng.pick(&[0, 1, 1000, u64::MAX]));
        }
        5 => {
            let (a, b) = (rng.below(4), rng.below(4));
            d.fields.swap(a, b);
        }
        _ => {
            // Two sketches' worth: the counters doubled, width or depth to match.
            let Field::S(s) = &mut d.fields[3] else {
                unreachable!()
            };
            let copy = s.clone();
            s.extend(copy);
            let i = rng.below(2);
            d.fields[i] = Field::U(d.uint(i).wrapping_mul(2));
        }
    }
}

/// Forgeries of `bases` (as `bases` returns them) that break an invariant the
/// loader checks, each to be refused: a width or depth of 0, sizes apart from
/// the counters (one more, one fewer, a product past 64 bits), counters that
/// are not whole words, a field of the wrong kind or missing, the next
/// encoding version, no EOF; another family's fields and warden's own
/// sketch's under the type's id, and back.
pub fn refusals(bases: &[Base], others: &[&Base]) -> Forged {
    let (plain, deep) = (&bases[0], &bases[4]);
    let mut f = Forged::default();
    let (w, d) = (plain.dump.uint(0), plain.dump.uint(1));
    f.uint("width 0", plain, 0, 0);
    f.uint("depth 0", plain, 1, 0);
    f.uint("width one more", plain, 0, w + 1);
    f.uint("width one fewer", plain, 0, w - 1);
    f.uint("depth one more", plain, 1, d + 1);
    f.uint("depth one fewer", deep, 1, deep.dump.uint(1) - 1);
    f.with("width and depth 2^32", plain, |d| {
        d.fields[0] = Field::U(1 << 32);
        d.fields[1] = Field::U(1 << 32);
    });
    f.with("a product that wraps to the counters' count", plain, |d| {
        d.fields[0] = Field::U((1 << 63) + w * d.uint(1) / 2);
        d.fields[1] = Field::U(2);
    });
    f.uint("width u64::MAX", plain, 0, u64::MAX);
    f.string("counters a byte short", plain, 3, |s| {
        s.truncate(s.len() - 1)
    });
    f.string("counters a byte long", plain, 3, |s| s.push(0));
    f.string("counters a counter long", plain, 3, |s| s.extend([0; 4]));
    f.string("counters a counter short", plain, 3, |s| {
        s.truncate(s.len() - 4)
    });
    f.string("no counters", plain, 3, Vec::clear);
    f.uint("counters as a number", plain, 3, 0);
    f.set("width as a string", plain, 0, Field::S(b"50".to_vec()));
    f.set("a total as a double", plain, 2, Field::D(7.0));
    f.with("no total", plain, |d| {
        d.fields.remove(2);
    });
    f.with("next encoding version", plain, |d| {
        d.module_id = (d.module_id & !1023) | 1
    });
    f.with("no EOF", plain, |d| d.eof = false);
    f.confused(plain, foreign(others, &KIT));
    f.confused(plain, of_type(others, SKETCH.name));
    f
}

/// Runs `c`, RedisBloom's texts known.
fn run(con: &mut Connection, c: &redis::Cmd, found: &mut Findings, ctx: &str) -> Value {
    run_coded(con, c, found, ctx, CODES)
}

/// The reads of a sketch, each answer in range (they change nothing):
/// `CMS.INFO`, a width and depth of at least 1 (the total may be any:
/// RedisBloom answers it signed), and counts of counters.
pub fn reads(con: &mut Connection, key: &str, found: &mut Findings, ctx: &str) {
    let info = cmd_of!("CMS.INFO", key);
    let v = run(con, &info, found, ctx);
    let ok = matches!(labelled_ints(&v).as_deref(), Some([w, d, _]) if *w >= 1 && *d >= 1);
    let query = cmd_of!("CMS.QUERY", key, "item1", "absent-item");
    let q = run(con, &query, found, ctx);
    let counts = matches!(ints(&q).as_deref(), Some([a, b]) if (0..=SATURATED).contains(a) && (0..=SATURATED).contains(b));
    for (c, v, ok) in [(info, v, ok), (query, q, counts)] {
        if !ok {
            let what = format!("{ctx}: {} -> {v:?}", show(&c));
            Findings::push(&mut found.read_failures, what);
        }
    }
}

/// The width and depth of the sketch at `key`, if `CMS.INFO` tells them.
fn dims(con: &mut Connection, key: &str) -> Option<(i64, i64)> {
    match labelled_ints(&raw(con, &cmd_of!("CMS.INFO", key))).as_deref() {
        Some([w, d, _]) => Some((*w, *d)),
        _ => None,
    }
}

/// The writes on a sketch a payload made (call `i`): a merge of weight 1
/// into an empty sketch of its sizes copies it (unless its total overflows);
/// a merge refused leaves it as it was; an item counted 5 times counts at
/// least 5 unless a counter saturated; counts that saturate, and a creation
/// it refuses.
pub fn writes(con: &mut Connection, key: &str, i: usize, found: &mut Findings, ctx: &str) {
    if let Some((w, d)) = dims(con, key) {
        let copy = format!("{key}:merged");
        raw(con, &cmd_of!("DEL", &copy));
        run(con, &cmd_of!("CMS.INITBYDIM", &copy, w, d), found, ctx);
        let v = run(con, &cmd_of!("CMS.MERGE", &copy, 1, key), found, ctx);
        if err_of(&v).is_none() {
            let (a, b) = (
                digest_value(con, key.as_bytes()),
                digest_value(con, copy.as_bytes()),
            );
            if a != b {
                let what = format!("{ctx}: a merge of weight 1 is not a copy: {a:?} -> {b:?}");
                Findings::push(&mut found.round_trips, what);
            }
        }
        raw(con, &cmd_of!("DEL", &copy));
    }
    for merge in [
        cmd_of!("CMS.MERGE", key, 2, key, key),
        cmd_of!("CMS.MERGE", key, 1, key, "WEIGHTS", -1),
    ] {
        let before = digest_value(con, key.as_bytes());
        let v = run(con, &merge, found, ctx);
        if err_of(&v).is_some() && digest_value(con, key.as_bytes()) != before {
            let what = format!(
                "{ctx}: {} refused ({v:?}) but changed the sketch",
                show(&merge)
            );
            Findings::push(&mut found.read_failures, what);
        }
    }
    let item = format!("probe{i}");
    let v = run(con, &cmd_of!("CMS.INCRBY", key, &item, 5), found, ctx);
    let saturated = matches!(&v, Value::Array(a) if a.first().is_some_and(|x| err_of(x).is_some()));
    let q = run(con, &cmd_of!("CMS.QUERY", key, &item), found, ctx);
    if !saturated && !matches!(ints(&q).as_deref(), Some([n]) if *n >= 5) {
        let what = format!("{ctx}: {item} counted 5 times ({v:?}), then {q:?}");
        Findings::push(&mut found.read_failures, what);
    }
    for c in [
        cmd_of!("CMS.INCRBY", key, "a", 1, format!("item{i}"), 3),
        cmd_of!("CMS.INCRBY", key, "big", u32::MAX, "b", 7, "c", 1u64 << 32),
        cmd_of!("CMS.INITBYDIM", key, 10, 2),
        cmd_of!("CMS.INFO", key),
    ] {
        run(con, &c, found, ctx);
    }
}

/// A sketch's bytes as `cms_bytes` counts them: 4 per counter.
pub fn size(con: &mut Connection, key: &[u8]) -> i64 {
    let v = raw(con, &cmd_of!("CMS.INFO", key));
    match labelled_ints(&v).as_deref() {
        Some([w, d, _]) => w * d * 4,
        _ => panic!("CMS.INFO: {v:?}"),
    }
}
