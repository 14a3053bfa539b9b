//! RedisBloom's cuckoo filters (`MBbloomCF`, made by RedisBloom's names
//! under `aliases redisbloom`) in the corrupt-payload tests (the payload
//! fuzzer and its controls in `tests/it/module/`, `redisbloom_layout.rs`
//! here): real DUMPs of several shapes, the older encoding versions' layouts
//! of them, forgeries field by field of the RDB layout
//! `src/cuckoo/redisbloom/data_type.rs` reads (table count, buckets, items,
//! deletes, bucket size, kicks, expansion; per table its buckets and slots),
//! the forgeries its loader must refuse, and what a filter a payload made
//! must answer. RedisBloom's error texts carry no `ERR` code: `CODES`.

use crate::common::fuzz_calls::is_int01;
use crate::common::kit::{foreign, of_type, Args};
use crate::common::payload::*;
use crate::common::payload_bases::*;
use crate::common::payload_checks::*;
use crate::common::payload_forgeries::Forged;
use crate::common::*;
use crate::cuckoo::kit::{CUCKOO, KIT, RB_CUCKOO};

/// The texts RedisBloom's cuckoo errors start with (those without `ERR`).
pub const CODES: &[&str] = &[
    "Filter is full",
    "Maximum expansions reached",
    "Not found",
    "Cuckoo filter was not found",
    "Couldn't load chunk!",
    "Couldn't create filter!",
    "Invalid position",
    "Invalid header",
];

/// Fields before the first table: table count, buckets, items, deletes,
/// bucket size, kicks, expansion.
pub const HEAD: usize = 7;

/// Index of field `f` of table `t` (0 its buckets, 1 its slots).
pub fn table_field(t: usize, f: usize) -> usize {
    HEAD + 2 * t + f
}

/// The number of tables of a payload's fields (`None` when they are not a
/// filter's layout of encoding version 4).
pub fn table_count(d: &Dump) -> Option<usize> {
    let n = d.fields.len().checked_sub(HEAD)?;
    let ok = n > 0
        && n.is_multiple_of(2)
        && d.fields[..HEAD].iter().all(|f| matches!(f, Field::U(_)))
        && d.fields[HEAD..]
            .chunks(2)
            .all(|t| matches!(t, [Field::U(_), Field::S(_)]));
    ok.then_some(n / 2)
}

/// The base keys, in the order `bases` returns them.
pub const BASES: [&str; 12] = [
    "rcfb:small",
    "rcfb:grown",
    "rcfb:single",
    "rcfb:wide",
    "rcfb:kicks",
    "rcfb:flat",
    "rcfb:compacted",
    "rcfb:empty",
    "rcfb:large",
    "rcfb:full",
    "rcfb:maxed",
    "rcfb:loaded",
];

/// `CF.INSERT key ITEMS {key}:0 … {key}:{n-1}` (items a full filter refuses
/// answer -1).
fn insert(con: &mut Connection, key: &str, n: usize) {
    let mut c = cmd_of!("CF.INSERT", key, "ITEMS");
    for i in 0..n {
        c.arg(format!("{key}:{i}"));
    }
    must(con, &c);
}

/// `CF.DEL key {key}:{i}` for each `i` of `items`.
fn delete(con: &mut Connection, key: &str, items: impl Iterator<Item = usize>) {
    for i in items {
        must(con, &cmd_of!("CF.DEL", key, format!("{key}:{i}")));
    }
}

/// Filters: small (RedisBloom's defaults), grown by 2 over several tables
/// with deletes, one slot a bucket grown by 4, 255 slots a bucket with
/// 65535 kicks, one kick grown by 4, several tables of one size, deletes
/// compacted, empty (sparse, LZF), large, full (expansion 0: `Filter is
/// full`), at the 32 tables (`Maximum expansions reached`), and one made by
/// `CF.LOADCHUNK` of another's `CF.SCANDUMP` chunks, then added to.
pub fn bases(con: &mut Connection) -> Vec<Base> {
    let reserves = [
        cmd_of!("CF.RESERVE", "rcfb:small", 100),
        cmd_of!("CF.RESERVE", "rcfb:grown", 8, "EXPANSION", 2),
        cmd_of!(
            "CF.RESERVE",
            "rcfb:single",
            64,
            "BUCKETSIZE",
            1,
            "EXPANSION",
            4
        ),
        cmd_of!(
            "CF.RESERVE",
            "rcfb:wide",
            2000,
            "BUCKETSIZE",
            255,
            "MAXITERATIONS",
            65535
        ),
        cmd_of!(
            "CF.RESERVE",
            "rcfb:kicks",
            50,
            "BUCKETSIZE",
            4,
            "MAXITERATIONS",
            1,
            "EXPANSION",
            3
        ),
        cmd_of!("CF.RESERVE", "rcfb:flat", 8),
        cmd_of!("CF.RESERVE", "rcfb:compacted", 8),
        cmd_of!("CF.RESERVE", "rcfb:empty", 1000),
        cmd_of!("CF.RESERVE", "rcfb:large", 100_000, "BUCKETSIZE", 4),
        cmd_of!("CF.RESERVE", "rcfb:full", 4, "EXPANSION", 0),
        cmd_of!("CF.RESERVE", "rcfb:maxed", 2, "BUCKETSIZE", 1),
        cmd_of!(
            "CF.RESERVE",
            "rcfb:src",
            30,
            "BUCKETSIZE",
            3,
            "MAXITERATIONS",
            50,
            "EXPANSION",
            2
        ),
    ];
    for c in &reserves {
        must(con, c);
    }
    for (key, n) in [
        ("rcfb:small", 20),
        ("rcfb:grown", 100),
        ("rcfb:single", 150),
        ("rcfb:wide", 300),
        ("rcfb:kicks", 200),
        ("rcfb:flat", 60),
        ("rcfb:compacted", 60),
        ("rcfb:large", 500),
        ("rcfb:full", 12),
        ("rcfb:src", 200),
    ] {
        insert(con, key, n);
    }
    delete(con, "rcfb:grown", 0..3);
    delete(con, "rcfb:compacted", 0..40);
    must(con, &cmd_of!("CF.COMPACT", "rcfb:compacted"));
    delete(con, "rcfb:src", [7, 8].into_iter());
    let full = err_of(&raw(con, &cmd_of!("CF.ADD", "rcfb:full", "more")));
    assert_eq!(full.as_deref(), Some("Filter is full"), "rcfb:full");
    let maxed = (0..500)
        .map(|i| {
            raw(
                con,
                &cmd_of!("CF.ADD", "rcfb:maxed", format!("rcfb:maxed:{i}")),
            )
        })
        .find_map(|v| err_of(&v));
    assert_eq!(
        maxed.as_deref(),
        Some("Maximum expansions reached"),
        "rcfb:maxed"
    );
    let chunks = scandump_chunks(con, "CF.SCANDUMP", "rcfb:src").expect("rcfb:src's chunks");
    assert!(chunks.len() >= 3, "rcfb:src: {} chunks", chunks.len());
    for (it, data) in chunks {
        must(con, &cmd_of!("CF.LOADCHUNK", "rcfb:loaded", it, data));
    }
    assert_eq!(
        digest(con, "rcfb:loaded"),
        digest(con, "rcfb:src"),
        "rcfb:loaded"
    );
    must(con, &cmd_of!("DEL", "rcfb:src"));
    must(con, &cmd_of!("CF.ADD", "rcfb:loaded", "after"));
    let bases = bases_of(con, &BASES, &RB_CUCKOO);
    for b in &bases {
        assert!(
            table_count(&b.dump).is_some(),
            "{}: filter layout {:?}",
            b.key,
            b.dump.fields.iter().map(field_kind).collect::<Vec<_>>()
        );
    }
    let tables = |i: usize| table_count(&bases[i].dump).unwrap_or(0);
    let field = |i: usize, f: usize| bases[i].dump.uint(f);
    assert!(tables(1) >= 3 && tables(2) >= 2 && tables(4) >= 2 && tables(5) >= 2);
    assert!(field(1, 3) > 0, "rcfb:grown keeps its deletes");
    assert_eq!(field(6, 3), 0, "rcfb:compacted's deletes reset");
    assert_eq!(field(7, 2), 0, "rcfb:empty holds nothing");
    assert_eq!(tables(10), 32, "rcfb:maxed");
    assert!(tables(11) >= 3 && field(11, 4) == 3, "rcfb:loaded");
    bases
}

/// Whether `d` (version 4's layout) is one the older versions can say:
/// no deletes, 2 slots a bucket, 20 kicks, expansion 1.
fn says_old(d: &Dump) -> bool {
    d.uint(3) == 0 && d.uint(4) == 2 && d.uint(5) == 20 && d.uint(6) == 1
}

/// `d` in the older versions' layout (table count, buckets, items, then
/// each table's slots), whatever its fields say.
fn old_layout(d: &Dump, tables: usize) -> Dump {
    let mut old = d.clone();
    old.fields = d.fields[..3].to_vec();
    for t in 0..tables {
        old.fields.push(d.fields[table_field(t, 1)].clone());
    }
    old
}

/// The older encoding versions' layouts of `b` that load as the same value:
/// versions 0 to 3, where it has no deletes, 2 slots a bucket, 20 kicks and
/// expansion 1 (what they imply).
pub fn layouts(b: &Base) -> Vec<(&'static str, Dump)> {
    let d = &b.dump;
    let Some(tables) = table_count(d) else {
        return Vec::new();
    };
    if !says_old(d) {
        return Vec::new();
    }
    let old = old_layout(d, tables);
    [
        ("encoding version 3", 3),
        ("encoding version 2", 2),
        ("encoding version 1", 1),
        ("encoding version 0", 0),
    ]
    .into_iter()
    .map(|(name, v)| (name, with_encver(&old, v)))
    .collect()
}

/// Most bytes of slots a plausible forgery rebuilds.
const REBUILT_BYTES: u64 = 1 << 21;

/// `d`'s tables rebuilt for `buckets` first-table buckets, `bucket_size`
/// slots a bucket and growth `expansion` (each table's buckets and slots to
/// match, its old bytes repeated); left as it is where that passes 2 MiB
/// or 64 bits.
fn rebuild(d: &mut Dump, tables: usize, buckets: u64, bucket_size: u64, expansion: u64) {
    let mut sizes = Vec::with_capacity(tables);
    let (mut b, mut total) = (buckets, 0u64);
    for t in 0..tables {
        if t > 0 {
            let Some(next) = b.checked_mul(expansion) else {
                return;
            };
            b = next;
        }
        let Some(bytes) = b.checked_mul(bucket_size) else {
            return;
        };
        total = total.saturating_add(bytes);
        if total > REBUILT_BYTES {
            return;
        }
        sizes.push((b, bytes as usize));
    }
    for (t, (b, len)) in sizes.into_iter().enumerate() {
        let Field::S(old) = &d.fields[table_field(t, 1)] else {
            return;
        };
        let slots: Vec<u8> = old.iter().copied().cycle().take(len).collect();
        let slots = match slots.len() == len {
            true => slots,
            false => vec![0; len],
        };
        d.fields[table_field(t, 0)] = Field::U(b);
        d.fields[table_field(t, 1)] = Field::S(slots);
    }
    d.fields[1] = Field::U(buckets);
    d.fields[4] = Field::U(bucket_size);
    d.fields[6] = Field::U(expansion);
}

/// Forgeries of a filter: table counts, buckets (the tables rebuilt to
/// match or not), items and deletes (any: RedisBloom keeps them apart from
/// the slots), bucket sizes, kicks and expansions in and out of range (the
/// tables rebuilt to match or not), a table's buckets, slots of random or
/// repeated fingerprints, cut or grown, tables swapped, dropped or repeated,
/// plausible filters of many tables of one size.
pub fn forge(rng: &mut Rng, d: &mut Dump) {
    let Some(tables) = table_count(d) else {
        // Another type's fields: a table count over them.
        if !d.fields.is_empty() {
            d.fields[0] = Field::U(rng.pick(&[0, 1, 2, 33, 65_535, u64::MAX]));
        }
        return;
    };
    let t = rng.below(tables);
    let (buckets, bucket_size, expansion) = (d.uint(1), d.uint(4), d.uint(6));
    let rebuilt = rng.chance(2, 3);
    match rng.below(10) {
        0 => {
            let n = tables as u64;
            let counts = [0, n + 1, n - 1, 32, 33, 65_535, 65_536, u64::MAX];
            d.fields[0] = Field::U(rng.pick(&counts));
        }
        1 => {
            let odd = odd_uint(rng, buckets);
            let b = rng.pick(&[
                0,
                1,
                3,
                buckets / 2,
                buckets.wrapping_mul(2),
                buckets.wrapping_add(1),
                (1 << 56) - 1,
                1 << 56,
                odd,
            ]);
            match rebuilt && b.is_power_of_two() {
                true => rebuild(d, tables, b, bucket_size, expansion),
                false => d.fields[1] = Field::U(b),
            }
        }
        2 => {
            let i = rng.pick(&[2usize, 3]);
            let odd = odd_uint(rng, d.uint(i));
            d.fields[i] = Field::U(rng.pick(&[0, 1, u64::MAX, 1 << 63, odd]));
        }
        3 => {
            let s = rng.pick(&[0, 1, 3, 4, 255, 256, 1 << 16 | bucket_size, u64::MAX]);
            match rebuilt && (1..=255).contains(&s) {
                true => rebuild(d, tables, buckets, s, expansion),
                false => d.fields[4] = Field::U(s),
            }
        }
        4 => {
            let k = rng.pick(&[0, 1, 2, 65_535, 65_536, 1 << 16 | 20, 1 << 32, u64::MAX]);
            d.fields[5] = Field::U(k);
        }
        5 => {
            let e = rng.pick(&[0, 1, 2, 3, 4, 32_768, 65_536, 1 << 16 | expansion, u64::MAX]);
            match rebuilt && e.is_power_of_two() {
                true => rebuild(d, tables, buckets, bucket_size, e),
                false => d.fields[6] = Field::U(e),
            }
        }
        6 => {
            let b = d.uint(table_field(t, 0));
            let odd = odd_uint(rng, b);
            let v = rng.pick(&[
                0,
                b.wrapping_add(1),
                b.wrapping_mul(2),
                b / 2,
                u64::MAX,
                odd,
            ]);
            d.fields[table_field(t, 0)] = Field::U(v);
        }
        7 => {
            let bucket = bucket_size.clamp(1, 255) as usize;
            let Field::S(s) = &mut d.fields[table_field(t, 1)] else {
                unreachable!()
            };
            match rng.below(5) {
                0 => {
                    // Random fingerprints, some slots empty.
                    let len = s.len();
                    *s = rng.bytes(len);
                }
                1 => s.iter_mut().for_each(|b| *b = 0xff),
                2 => {
                    let fp = rng.next() as u8;
                    s.iter_mut().for_each(|b| *b = fp);
                }
                3 => s.truncate(s.len().saturating_sub(rng.pick(&[1, bucket]))),
                _ => s.extend(vec![1; rng.pick(&[1, bucket])]),
            }
        }
        8 => {
            let (a, b) = (table_field(t, 0), table_field(rng.below(tables), 0));
            match rng.below(3) {
                0 => {
                    d.fields.swap(a, b);
                    d.fields.swap(a + 1, b + 1);
                }
                1 if tables > 1 => {
                    d.fields.drain(a..a + 2);
                }
                _ => {
                    let table = d.fields[a..a + 2].to_vec();
                    d.fields.splice(b..b, table);
                }
            }
            if rebuilt {
                let now = table_count(d).unwrap_or(tables);
                d.fields[0] = Field::U(now as u64);
            }
        }
        _ => {
            // Plausible filters of many tables of the oldest one's size.
            let Field::S(s) = &d.fields[table_field(0, 1)] else {
                unreachable!()
            };
            let most = (REBUILT_BYTES as usize / s.len().max(1)).max(1);
            let want = rng.pick(&[1usize, 2, 31, 32, 33, 100]).min(most);
            let table = d.fields[table_field(0, 0)..table_field(0, 2)].to_vec();
            d.fields.truncate(HEAD);
            for _ in 0..want {
                d.fields.extend_from_slice(&table);
            }
            d.fields[0] = Field::U(want as u64);
            d.fields[6] = Field::U(rng.pick(&[1, 1, 0, 2]));
        }
    }
}

/// Forgeries of `bases` (as `bases` returns them) that the loader must
/// refuse: no table, a table count that is not the tables', buckets none,
/// not a power of two, past 2^56 − 1 or apart from the tables', bucket sizes
/// of 0 or past 255 (also with slots to match, and past 16 bits), slots apart
/// from the buckets', kicks of 0 or past 65535, an expansion of 0 with
/// several tables, not a power of two, past 32768 or apart from the tables',
/// a table's buckets apart, fields of the wrong kind or missing; the older
/// versions' layout of filters they cannot say, version 4's under version 3
/// and back, the next encoding version and no EOF; another family's fields
/// and warden's own filter's under the type's id, and back.
pub fn refusals(bases: &[Base], others: &[&Base]) -> Forged {
    let (small, grown, wide) = (&bases[0], &bases[1], &bases[3]);
    let mut f = Forged::default();
    let n = grown.dump.uint(0);
    let slots = |len: u64| Field::S(vec![0; len as usize]);
    f.uint("table count 0", small, 0, 0);
    f.with("no table", small, |d| {
        d.fields.truncate(HEAD);
        d.fields[0] = Field::U(0);
    });
    f.uint("one table more than stored", grown, 0, n + 1);
    f.uint("one table fewer than stored", grown, 0, n - 1);
    f.uint("table count 65536", small, 0, 65_536);
    f.uint("table count 2^16 + 1", small, 0, (1 << 16) + 1);
    f.uint("table count u64::MAX", small, 0, u64::MAX);
    f.with("buckets 0, the table to match", small, |d| {
        d.fields[1] = Field::U(0);
        d.fields[table_field(0, 0)] = Field::U(0);
        d.fields[table_field(0, 1)] = Field::S(Vec::new());
    });
    f.with("buckets 3, the table to match", small, |d| {
        d.fields[1] = Field::U(3);
        d.fields[table_field(0, 0)] = Field::U(3);
        d.fields[table_field(0, 1)] = slots(6);
    });
    f.with("buckets 2^56, the table's to match", small, |d| {
        d.fields[1] = Field::U(1 << 56);
        d.fields[table_field(0, 0)] = Field::U(1 << 56);
    });
    let b = grown.dump.uint(1);
    f.uint("buckets twice the tables'", grown, 1, b * 2);
    f.uint("buckets half the tables'", grown, 1, b / 2);
    f.with("a second table past 2^56 - 1 buckets", grown, |d| {
        d.fields[1] = Field::U(1 << 55);
        d.fields[table_field(0, 0)] = Field::U(1 << 55);
        d.fields[table_field(1, 0)] = Field::U(1 << 56);
    });
    let tb = grown.dump.uint(table_field(1, 0));
    f.uint(
        "a table's buckets one more",
        grown,
        table_field(1, 0),
        tb + 1,
    );
    f.uint("a table's buckets twice", grown, table_field(1, 0), tb * 2);
    f.uint("bucket size 0", small, 4, 0);
    f.uint("bucket size one more than the slots'", small, 4, 3);
    f.with("bucket size 256, the slots to match", small, |d| {
        d.fields[4] = Field::U(256);
        d.fields[table_field(0, 1)] = slots(d.uint(1) * 256);
    });
    f.uint("bucket size 2^16 + 2", small, 4, (1 << 16) + 2);
    f.uint("bucket size u64::MAX", small, 4, u64::MAX);
    f.uint("kicks 0", small, 5, 0);
    f.uint("kicks 65536", small, 5, 65_536);
    f.uint("kicks 2^16 + 20", small, 5, (1 << 16) + 20);
    f.uint("expansion 0 with several tables", grown, 6, 0);
    f.uint("expansion 3", small, 6, 3);
    f.uint("expansion 65536", small, 6, 65_536);
    f.uint("expansion 2^16 + 2", grown, 6, (1 << 16) + 2);
    f.uint("expansion 4 where the tables grow by 2", grown, 6, 4);
    f.uint("expansion 1 where the tables grow by 2", grown, 6, 1);
    f.string("slots a byte short", small, table_field(0, 1), |s| {
        s.truncate(s.len() - 1)
    });
    f.string("slots a byte long", small, table_field(0, 1), |s| s.push(0));
    f.string("slots a bucket long", wide, table_field(0, 1), |s| {
        s.extend([0; 255])
    });
    f.string("no slots", small, table_field(0, 1), Vec::clear);
    f.string("slots doubled", grown, table_field(1, 1), |s| {
        let copy = s.clone();
        s.extend(copy)
    });
    f.set("slots as a number", small, table_field(0, 1), Field::U(0));
    f.set("table count as a string", small, 0, Field::S(b"1".to_vec()));
    f.set("buckets as a double", small, 1, Field::D(64.0));
    f.set("a table's buckets as a string", small, table_field(0, 0), {
        Field::S(b"64".to_vec())
    });
    f.with("the last table missing", grown, |d| {
        d.fields.truncate(d.fields.len() - 2);
    });
    f.with("a table's buckets missing", small, |d| {
        d.fields.remove(table_field(0, 0));
    });
    f.with("no deletes nor options", small, |d| {
        d.fields.drain(3..HEAD);
    });
    let old = |b: &Base| old_layout(&b.dump, table_count(&b.dump).unwrap_or(1));
    for (what, b) in [("255 slots a bucket", wide), ("tables grown by 2", grown)] {
        let name = format!("{} {what} in version 3's layout", b.key);
        f.0.push((name, with_encver(&old(b), 3)));
    }
    f.0.push((
        format!("{} version 3's layout under version 4", small.key),
        old(small),
    ));
    f.with("version 4's layout under version 3", small, |d| {
        d.module_id = (d.module_id & !1023) | 3
    });
    f.with("version 4's layout under version 0", grown, |d| {
        d.module_id &= !1023
    });
    f.with("next encoding version", small, |d| {
        d.module_id = (d.module_id & !1023) | 5
    });
    f.with("no EOF", small, |d| d.eof = false);
    f.confused(small, foreign(others, &KIT));
    f.confused(small, of_type(others, CUCKOO.name));
    f
}

/// Runs `c`, RedisBloom's texts known.
fn run_rb(con: &mut Connection, c: &redis::Cmd, found: &mut Findings, ctx: &str) -> Value {
    run_coded(con, c, found, ctx, CODES)
}

/// `CF.INFO`'s eight values: Size, buckets, tables, items, deletes, bucket
/// size, expansion, kicks.
fn info(con: &mut Connection, key: &str, found: &mut Findings, ctx: &str) -> Option<Vec<i64>> {
    let v = run_rb(con, &cmd_of!("CF.INFO", key), found, ctx);
    labelled_ints(&v).filter(|n| n.len() == 8)
}

/// Whether `CF.INFO`'s values are a filter's: at least one bucket (a power
/// of two) and one table, a bucket size of 1 to 255, an expansion of 0 (one
/// table) or a power of two up to 32768, 1 to 65535 kicks, and a Size that
/// is the filter's 40 bytes, 16 per table and its slots (items and deletes
/// may be any: RedisBloom answers its unsigned counts signed).
pub fn info_ok(n: &[i64]) -> bool {
    let [size, buckets, tables, _, _, bs, exp, kicks] = n[..] else {
        return false;
    };
    let ranges = buckets >= 1
        && (buckets as u64).is_power_of_two()
        && tables >= 1
        && (1..=255).contains(&bs)
        && (exp == 0 && tables == 1
            || (1..=32_768).contains(&exp) && (exp as u64).is_power_of_two())
        && (1..=65_535).contains(&kicks);
    if !ranges {
        return false;
    }
    let mut want = 40i128;
    let mut b = i128::from(buckets);
    for t in 0..tables {
        if t > 0 {
            b *= i128::from(exp);
        }
        want += 16 + b * i128::from(bs);
        if want > i128::from(i64::MAX) {
            return false;
        }
    }
    want == i128::from(size)
}

/// `CF.SCANDUMP key 0`'s header as `CF.INFO`'s values (items, buckets,
/// deletes, tables, bucket size, kicks, expansion), or `[0, nil]` where
/// they say no items.
fn header_agrees(v: &Value, n: &[i64]) -> bool {
    let Value::Array(a) = v else {
        return false;
    };
    match &a[..] {
        [Value::Int(0), Value::Nil] => n[3] == 0,
        [Value::Int(1), Value::BulkString(h)] if h.len() == 38 => {
            let word = |i: usize| u64::from_le_bytes(h[i * 8..i * 8 + 8].try_into().unwrap());
            let half = |i: usize| i64::from(u16::from_le_bytes([h[32 + i * 2], h[33 + i * 2]]));
            let got = [
                word(0) as i64,
                word(1) as i64,
                word(2) as i64,
                word(3) as i64,
                half(0),
                half(1),
                half(2),
            ];
            got == [n[3], n[1], n[4], n[2], n[5], n[7], n[6]]
        }
        _ => false,
    }
}

/// The reads of a filter, each answer in range: `CF.INFO` a filter's values
/// (`info_ok`), `CF.SCANDUMP`'s header agreeing with them, `CF.EXISTS`,
/// `CF.MEXISTS`, `CF.COUNT` (at most two copies a slot's worth of every
/// table), `CF.DEBUG`, and the first table's chunk whole.
pub fn reads(con: &mut Connection, key: &str, found: &mut Findings, ctx: &str) {
    let reads: [(redis::Cmd, Check); 5] = [
        (cmd_of!("CF.EXISTS", key, "rcfb:small:1"), is_int01),
        (cmd_of!("CF.EXISTS", key, "absent-item"), is_int01),
        (
            cmd_of!("CF.MEXISTS", key, "a", "rcfb:grown:30"),
            |v| matches!(v, Value::Array(a) if a.len() == 2 && a.iter().all(is_int01)),
        ),
        (cmd_of!("CF.DEBUG", key), |v| {
            text_of(v).is_some_and(|t| t.starts_with("bktsize:"))
        }),
        (
            cmd_of!("CF.COUNT", key, "rcfb:grown:40"),
            |v| matches!(v, Value::Int(n) if *n >= 0),
        ),
    ];
    run_reads(con, &reads, found, ctx);
    for what in agreement(con, key, found, ctx) {
        Findings::push(&mut found.read_failures, format!("{ctx}: {what}"));
    }
}

/// What of `CF.INFO` is out of range, or of `CF.SCANDUMP`'s header, the
/// first table's chunk and `CF.COUNT` disagrees with it.
fn agreement(con: &mut Connection, key: &str, found: &mut Findings, ctx: &str) -> Vec<String> {
    let Some(n) = info(con, key, found, ctx).filter(|n| info_ok(n)) else {
        let v = raw(con, &cmd_of!("CF.INFO", key));
        return vec![format!("CF.INFO -> {v:?}")];
    };
    let mut out = Vec::new();
    let header = raw(con, &cmd_of!("CF.SCANDUMP", key, 0));
    if !header_agrees(&header, &n) {
        out.push(format!("CF.SCANDUMP 0 -> {header:?} but CF.INFO {n:?}"));
    }
    let count = raw(con, &cmd_of!("CF.COUNT", key, "rcfb:small:2"));
    if !matches!(count, Value::Int(c) if c <= 2 * n[5] * n[2]) {
        out.push(format!("CF.COUNT -> {count:?} of CF.INFO {n:?}"));
    }
    if n[3] != 0 {
        let first = raw(con, &cmd_of!("CF.SCANDUMP", key, 1));
        let len = n[1] * n[5];
        let whole = |a: &[Value]| match a {
            [Value::Int(next), Value::BulkString(s)] => *next == 1 + len && s.len() as i64 == len,
            _ => false,
        };
        if !matches!(&first, Value::Array(a) if whole(a)) {
            out.push(format!("CF.SCANDUMP 1 -> {first:?} of CF.INFO {n:?}"));
        }
    }
    out
}

/// The writes on a filter a payload made (call `i`): its chunks loaded into
/// another key must make the same filter; an item added is then present,
/// counted and deleted; adds, inserts (NX too), deletes, compaction, a
/// chunk written into it, a header and a creation it refuses.
pub fn writes(con: &mut Connection, key: &str, i: usize, found: &mut Findings, ctx: &str) {
    chunks_copy_same(con, ["CF.SCANDUMP", "CF.LOADCHUNK"], key, found, ctx);
    let item = format!("new{i}");
    let added = run_rb(con, &cmd_of!("CF.ADD", key, &item), found, ctx);
    if added == Value::Int(1) {
        let e = run_rb(con, &cmd_of!("CF.EXISTS", key, &item), found, ctx);
        let n = run_rb(con, &cmd_of!("CF.COUNT", key, &item), found, ctx);
        let d = run_rb(con, &cmd_of!("CF.DEL", key, &item), found, ctx);
        if e != Value::Int(1) || !matches!(n, Value::Int(c) if c >= 1) || d != Value::Int(1) {
            let what = format!(
                "{ctx}: CF.ADD {item} -> 1, then CF.EXISTS -> {e:?}, CF.COUNT -> {n:?}, CF.DEL -> {d:?}"
            );
            Findings::push(&mut found.read_failures, what);
        }
    }
    let mut many = cmd_of!("CF.INSERT", key, "NOCREATE", "ITEMS");
    for n in 0..40 {
        many.arg(format!("i{i}:{n}"));
    }
    let writes = [
        cmd_of!("CF.ADDNX", key, format!("nx{i}")),
        cmd_of!("CF.INSERTNX", key, "NOCREATE", "ITEMS", "rcfb:small:1", "x"),
        many,
        cmd_of!("CF.DEL", key, "rcfb:grown:30"),
        cmd_of!("CF.DEL", key, format!("i{i}:3")),
        cmd_of!("CF.COMPACT", key),
        cmd_of!("CF.LOADCHUNK", key, 9, vec![0x5au8; 8]),
        cmd_of!("CF.LOADCHUNK", key, 1, vec![0u8; 38]),
        cmd_of!("CF.RESERVE", key, 100),
        cmd_of!("CF.INFO", key),
    ];
    for c in &writes {
        run_rb(con, c, found, ctx);
    }
}

/// A filter's bytes as `cf_bytes` counts them (`CF.INFO`'s Size).
pub fn size(con: &mut Connection, key: &[u8]) -> i64 {
    let v = raw(con, &cmd_of!("CF.INFO", key));
    match labelled_ints(&v).as_deref() {
        Some([size, ..]) => *size,
        _ => panic!("CF.INFO: {v:?}"),
    }
}

/// A filter `src` of several tables made with RedisBloom's names, and its
/// chunks (the header first), each as its iterator, its data and `rb`, for
/// `CF.LOADCHUNK` in the leak workload.
pub fn rb_chunks_of(con: &mut Connection, src: &str) -> Vec<Args> {
    must(con, &cmd_of!("CF.RESERVE", src, 50, "EXPANSION", 2));
    insert(con, src, 300);
    let chunks = scandump_chunks(con, "CF.SCANDUMP", src).expect("chunks");
    assert!(chunks.len() >= 3, "chunks of {src}");
    chunks
        .into_iter()
        .map(|(it, data)| vec![it.to_string().into_bytes(), data, b"rb".to_vec()])
        .collect()
}
