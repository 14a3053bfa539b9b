//! Bloom filters in the checks that cross every family (`tests/it/module/`):
//! the family's three types, whole filters (`warden-bf`), filters being loaded by
//! BF.LOADCHUNKX (`warden-bl`) and RedisBloom's own (`MBbloom--`, under `aliases
//! redisbloom`: their payloads in `redisbloom_payload.rs`), with their payloads
//! (real DUMPs of several shapes, the family's forgeries, the refusals of the
//! loader), what a value a payload made must answer, and INFO's gauges of filters
//! (`bf_filters` and `bf_bytes` count both kinds of whole filter); the kinds of key
//! of the defrag churn and the large filters kept whole through it; the family's
//! calls of the leak workload.

use crate::bloom::fuzz_values::dump_header;
use crate::bloom::redisbloom_payload::{self as rb, legacy_header};
use crate::bloom::support::{loadchunks, scandump, LOADING};
use crate::common::defrag::send;
use crate::common::fuzz_calls::is_int01;
use crate::common::kit::*;
use crate::common::payload::*;
use crate::common::payload_bases::*;
use crate::common::payload_checks::*;
use crate::common::payload_forgeries::Forged;
use crate::common::*;

/// The family in the checks across families.
pub static KIT: FamilyKit = FamilyKit {
    types: &[FILTER, BEING_LOADED, CHAIN],
    churn: &[
        Churn {
            prefix: "bf",
            count: 3_000,
            ttl: false,
            make: |k, i| {
                vec![
                    cmd_of!("BF.RESERVEX", k, 0.01, 50),
                    cmd_of!("BF.ADDX", k, format!("item-{i}")),
                ]
            },
            survivor: holds_its_item,
        },
        Churn {
            prefix: "bfs",
            count: 300,
            ttl: false,
            make: |k, i| {
                let mut add = cmd_of!("BF.MADDX", k);
                for n in 0..60 {
                    add.arg(format!("item-{i}-{n}"));
                }
                vec![cmd_of!("BF.RESERVEX", k, 0.01, 4, "EXPANSION", 2), add]
            },
            survivor: |con, k, i| {
                for n in 0..60 {
                    let e: i64 = query!(con, "BF.EXISTSX", k, format!("item-{i}-{n}"));
                    assert_eq!(e, 1, "{k} item {n}");
                }
            },
        },
        Churn {
            prefix: "bfa",
            count: 300,
            ttl: false,
            make: |k, i| {
                vec![
                    cmd_of!("BF.RESERVEX", k, 0.01, 100, "AGE", "1h"),
                    cmd_of!("BF.ADDX", k, format!("item-{i}")),
                ]
            },
            survivor: holds_its_item,
        },
        Churn {
            prefix: "bl",
            count: 300,
            ttl: false,
            make: |k, _| vec![cmd_of!("BF.LOADCHUNKX", k, 1, dump_header(2, 3))],
            survivor: |con, k, _| {
                let v = raw(con, cmd("BF.INFOX").arg(k));
                assert_eq!(err_of(&v).as_deref(), Some(LOADING), "{k}");
            },
        },
        Churn {
            prefix: "rbf",
            count: 3_000,
            ttl: false,
            make: |k, i| {
                vec![
                    cmd_of!("BF.RESERVE", k, 0.01, 50),
                    cmd_of!("BF.ADD", k, format!("item-{i}")),
                ]
            },
            survivor: rb_holds_its_item,
        },
        Churn {
            prefix: "rbfs",
            count: 300,
            ttl: false,
            make: |k, i| {
                let mut add = cmd_of!("BF.MADD", k);
                for n in 0..60 {
                    add.arg(format!("item-{i}-{n}"));
                }
                vec![cmd_of!("BF.RESERVE", k, 0.01, 4, "EXPANSION", 2), add]
            },
            survivor: |con, k, i| {
                for n in 0..60 {
                    let e: i64 = query!(con, "BF.EXISTS", k, format!("item-{i}-{n}"));
                    assert_eq!(e, 1, "{k} item {n}");
                }
                let links: Vec<i64> = query!(con, "BF.INFO", k, "FILTERS");
                assert!(links[0] >= 3, "{k}: {links:?} links");
            },
        },
        Churn {
            prefix: "rbfl",
            count: 300,
            ttl: false,
            make: |k, i| {
                vec![
                    cmd_of!("BF.LOADCHUNK", k, 1, legacy_header()),
                    cmd_of!("BF.ADD", k, format!("item-{i}")),
                ]
            },
            survivor: rb_holds_its_item,
        },
    ],
    whole: Some(Whole {
        keys: &["big:scaling", "big:flat", "big:rb"],
        make: big_filters,
        check: big_filters_hold,
    }),
    leak: Leak {
        share: 26,
        keys: &[
            ("bf", FILTER_KEYS),
            ("bfl", LOADING_KEYS),
            ("rbf", CHAIN_KEYS),
        ],
        errors: &[
            "ERR item exists",
            "ERR non scaling filter is full",
            // BF.INFOX of a missing filter.
            "ERR not found",
            // Chunks sent at random to filters being loaded.
            "ERR chunk out of order",
            "ERR key already holds a complete filter",
            // RedisBloom's chunks sent at random to its filters.
            "ERR received bad data",
            "ERR invalid offset - no link found",
            "ERR invalid chunk - Too big for current filter",
        ],
        setup: |con| {
            let mut chunks = chunks_of(con, "src:bf");
            chunks.extend(rb::rb_chunks_of(con, "src:rbf"));
            chunks
        },
        call: leak_call,
        round: None,
        idle: &[],
    },
};

/// Whole filters.
pub const FILTER: TypeKit = TypeKit {
    name: "warden-bf",
    encver: 3,
    bases: filter_bases,
    layouts: no_layouts,
    forge: forge_filter,
    refusals: filter_refusals,
    reads: filter_reads,
    exercise: filter_writes,
    gauges: Some(Gauges {
        fields: ["bf_filters", "bf_bytes"],
        size: Some(filter_size),
    }),
};

/// Filters being loaded by BF.LOADCHUNKX.
pub const BEING_LOADED: TypeKit = TypeKit {
    name: "warden-bl",
    encver: 3,
    bases: loading_bases,
    layouts: no_layouts,
    forge: forge_loading,
    refusals: loading_refusals,
    reads: loading_reads,
    exercise: loading_writes,
    gauges: None,
};

/// RedisBloom's filters (`aliases redisbloom`), made by its names.
pub const CHAIN: TypeKit = TypeKit {
    name: "MBbloom--",
    encver: 4,
    bases: rb::chain_bases,
    layouts: rb::chain_layouts,
    forge: rb::forge_chain,
    refusals: rb::chain_refusals,
    reads: rb::chain_reads,
    exercise: rb::chain_writes,
    gauges: Some(Gauges {
        fields: ["bf_filters", "bf_bytes"],
        size: Some(rb::chain_size),
    }),
};

/// The number of layers of a filter payload (`FILTER_FIELDS` filter fields, then 5 per layer).
pub fn layer_count(d: &Dump) -> usize {
    d.fields.len().saturating_sub(FILTER_FIELDS) / 5
}

/// Fields of a (non-aging) filter before its layers: error rate, expansion,
/// layer count, window (0), hashing (encoding version 3).
pub const FILTER_FIELDS: usize = 5;

/// Index of field `f` of filter layer `layer` (0 capacity, 1 rate, 2 hashes, 3 items, 4 bits).
pub fn layer_field(layer: usize, f: usize) -> usize {
    FILTER_FIELDS + layer * 5 + f
}

/// Filters: one layer, two layers, sparse (LZF), non-scaling and full, expansion 1.
pub fn filter_bases(con: &mut Connection) -> Vec<Base> {
    let add = |con: &mut Connection, key: &str, n: usize| {
        let mut c = cmd("BF.MADDX");
        c.arg(key);
        for i in 0..n {
            c.arg(format!("{key}:{i}"));
        }
        must(con, &c);
    };
    must(con, cmd("BF.RESERVEX").arg("fb:small").arg(0.01).arg(10));
    add(con, "fb:small", 5);
    must(
        con,
        &cmd_of!("BF.RESERVEX", "fb:two", 0.01, 20, "EXPANSION", 2),
    );
    add(con, "fb:two", 30);
    must(
        con,
        &cmd_of!("BF.RESERVEX", "fb:sparse", 0.01, 1000, "NONSCALING"),
    );
    add(con, "fb:sparse", 3);
    must(
        con,
        &cmd_of!("BF.RESERVEX", "fb:full", 0.1, 8, "NONSCALING"),
    );
    add(con, "fb:full", 8);
    must(
        con,
        &cmd_of!("BF.RESERVEX", "fb:three", 0.05, 4, "EXPANSION", 1),
    );
    add(con, "fb:three", 12);
    let bases = bases_of(
        con,
        &["fb:small", "fb:two", "fb:sparse", "fb:full", "fb:three"],
        &FILTER,
    );
    for b in &bases {
        let f = &b.dump.fields;
        assert!(
            matches!(f[..4], [Field::D(_), Field::U(_), Field::U(_), Field::U(0)])
                && (f.len() - FILTER_FIELDS).is_multiple_of(5),
            "{}: filter layout {:?}",
            b.key,
            f.iter().map(field_kind).collect::<Vec<_>>()
        );
    }
    assert!(layer_count(&bases[1].dump) >= 2 && layer_count(&bases[4].dump) >= 3);
    bases
}

/// Filters being loaded: a header only (one layer; a sparse non-scaling one), one of
/// two layers loaded, two of three. Their layout is a filter's, then the bytes loaded.
pub fn loading_bases(con: &mut Connection) -> Vec<Base> {
    // Key, rate, capacity, reserve options, items, chunks sent (the header first).
    type Shape = (&'static str, f64, u64, &'static [&'static str], u64, usize);
    let shapes: [Shape; 4] = [
        ("lb:header", 0.01, 10, &[], 5, 1),
        ("lb:sparse", 0.01, 1000, &["NONSCALING"], 3, 1),
        ("lb:two", 0.01, 20, &[], 30, 2),
        ("lb:three", 0.05, 4, &["EXPANSION", "1"], 12, 3),
    ];
    let mut bases = Vec::new();
    for (key, rate, capacity, extra, items, sent) in shapes {
        let src = format!("{key}:src");
        must(con, &cmd_of!("BF.RESERVEX", &src, rate, capacity, extra));
        let mut c = cmd("BF.MADDX");
        c.arg(&src);
        for i in 0..items {
            c.arg(format!("{key}:{i}"));
        }
        must(con, &c);
        let chunks = scandump(con, src.as_str());
        assert!(chunks.len() > sent, "{src}: {} chunks", chunks.len());
        loadchunks(con, key, &chunks[..sent]);
        let b = base(con, key, &BEING_LOADED);
        let f = &b.dump.fields;
        assert!(
            matches!(f[..4], [Field::D(_), Field::U(_), Field::U(_), Field::U(0)])
                && (f.len() - FILTER_FIELDS - 1).is_multiple_of(5)
                && matches!(f[f.len() - 1], Field::U(_)),
            "{key}: layout {:?}",
            f.iter().map(field_kind).collect::<Vec<_>>()
        );
        bases.push(b);
    }
    bases
}

/// Layer counts a forged filter of `layers` layers may claim: none, one more or one
/// fewer, past the 64-layer limit, and huge (`1 << 62` too with `also_1_62`; the
/// order is the draws' of the seeded generators).
pub fn odd_layer_counts(layers: usize, also_1_62: bool) -> Vec<u64> {
    let l = layers as u64;
    let mut counts = vec![0, l + 1, l - 1, 64, 65, 1000, 1 << 32];
    if also_1_62 {
        counts.push(1 << 62);
    }
    counts.push(u64::MAX);
    counts
}

/// Filter-specific forgeries: layer counts, capacities, hashes, items, error rates,
/// expansion and plausible multi-layer filters.
pub fn forge_filter(rng: &mut Rng, d: &mut Dump) {
    let layers = layer_count(d);
    if layers == 0 || !(d.fields.len() - FILTER_FIELDS).is_multiple_of(5) {
        return;
    }
    match rng.below(7) {
        0 => d.fields[2] = Field::U(rng.pick(&odd_layer_counts(layers, false))),
        1 => {
            let l = rng.below(layers);
            let c = rng.pick(&[0, 1, 1 << 32, 1 << 40, 1 << 62, i64::MAX as u64, u64::MAX]);
            d.fields[layer_field(l, 0)] = Field::U(c);
            if rng.chance(1, 2) {
                d.fields[layer_field(l, 3)] = Field::U(c);
            }
        }
        2 => {
            let l = rng.below(layers);
            let f = rng.pick(&[2usize, 3]);
            if let Field::U(v) = d.fields[layer_field(l, f)] {
                d.fields[layer_field(l, f)] = Field::U(odd_uint(rng, v));
            }
        }
        3 => {
            let i = if rng.chance(1, 2) {
                0
            } else {
                layer_field(rng.below(layers), 1)
            };
            if let Field::D(x) = d.fields[i] {
                d.fields[i] = Field::D(odd_double(rng, x));
            }
        }
        4 => {
            d.fields[1] =
                Field::U(rng.pick(&[0, 1, 2, 32_768, 32_769, u64::from(u32::MAX), u64::MAX]))
        }
        5 => {
            // Bits of one layer moved to another (sizes no longer match).
            if layers >= 2 {
                let (a, b) = (rng.below(layers), rng.below(layers));
                d.fields.swap(layer_field(a, 4), layer_field(b, 4));
            } else if let Field::S(s) = &mut d.fields[layer_field(0, 4)] {
                s.truncate(s.len() / 2);
            }
        }
        _ => {
            // Plausible filters of many (copied) layers, full or not.
            let want = rng.pick(&[2usize, 3, 10, 63, 64]);
            let mut fields = d.fields[..FILTER_FIELDS].to_vec();
            for k in 0..want {
                let src = k % layers;
                let mut layer = d.fields[layer_field(src, 0)..layer_field(src, 0) + 5].to_vec();
                if rng.chance(1, 2) {
                    layer[3] = layer[0].clone();
                }
                fields.extend(layer);
            }
            fields[2] = Field::U(want as u64);
            fields[1] = Field::U(rng.pick(&[0u64, 1, 2, 32_768, u64::from(u32::MAX)]));
            d.fields = fields;
        }
    }
}

/// Bytes of all bit arrays of a filter payload (being loaded or not).
pub fn bit_bytes(d: &Dump) -> u64 {
    d.fields
        .iter()
        .map(|f| match f {
            Field::S(s) => s.len() as u64,
            _ => 0,
        })
        .sum()
}

/// Forgeries of a filter being loaded: the bytes loaded so far (inside a chunk, at or
/// past the end, odd values), or the filter's own fields.
pub fn forge_loading(rng: &mut Rng, d: &mut Dump) {
    let Some(Field::U(loaded)) = d.fields.last().cloned() else {
        return;
    };
    if rng.chance(1, 2) {
        let total = bit_bytes(d);
        let odd = odd_uint(rng, loaded);
        let v = rng.pick(&[
            loaded + 8,
            loaded + 1,
            loaded.wrapping_sub(8),
            total,
            total + 8,
            u64::MAX,
            odd,
        ]);
        *d.fields.last_mut().expect("a field") = Field::U(v);
    } else {
        d.fields.pop();
        forge_filter(rng, d);
        d.fields.push(Field::U(loaded));
    }
}

/// Forgeries of whole filters the loader must refuse: no layers or too many,
/// no hashes, an error rate that is no rate; a value of another family under
/// the filter id, and back.
fn filter_refusals(bases: &[Base], others: &[&Base]) -> Forged {
    let filter = &bases[0];
    let mut f = Forged::default();
    f.uint("layer count 0", filter, 2, 0);
    f.uint("layer count u64::MAX", filter, 2, u64::MAX);
    f.uint("hashes 0", filter, layer_field(0, 2), 0);
    f.set("error rate NaN", filter, 0, Field::D(f64::NAN));
    f.confused(filter, foreign(others, &KIT));
    f
}

/// Forgeries of a filter being loaded the loader must refuse: the bytes loaded
/// so far must be where a chunk starts, before the end; the fields are a
/// filter's, checked as a filter's; and a whole filter under the loading id, and
/// back.
fn loading_refusals(bases: &[Base], others: &[&Base]) -> Forged {
    let two = &bases[2];
    let filter = of_type(others, FILTER.name);
    let loaded = |d: &Dump| match d.fields.last() {
        Some(Field::U(v)) => *v,
        other => panic!("loaded: {other:?}"),
    };
    let set_loaded = |d: &mut Dump, v: u64| *d.fields.last_mut().expect("fields") = Field::U(v);
    let mut f = Forged::default();
    f.with("loaded inside a chunk", two, |d| {
        set_loaded(d, loaded(d) + 8)
    });
    f.with("loaded everything", two, |d| set_loaded(d, bit_bytes(d)));
    f.with("loaded past the end", two, |d| {
        set_loaded(d, bit_bytes(d) + 8)
    });
    f.with("loaded u64::MAX", two, |d| set_loaded(d, u64::MAX));
    f.with("no loaded count", two, |d| {
        d.fields.pop();
    });
    f.uint("hashes 0 while loading", two, layer_field(0, 2), 0);
    f.uint("non-scaling with two layers while loading", two, 1, 0);
    let (ours, theirs) = (&two.dump.fields, &filter.dump.fields);
    f.with("a loading value under the filter id", filter, |d| {
        d.fields.clone_from(ours)
    });
    f.with("a filter under the loading id", two, |d| {
        d.fields.clone_from(theirs)
    });
    f
}

/// BF.INFOX: capacity, size, number of filters (>= 1), items (all >= 0), expansion
/// (>= 1 or nil) and an error rate in (0, 1).
pub fn filter_info_ok(v: &Value) -> bool {
    let Value::Array(a) = v else {
        return false;
    };
    if a.len() != 12 {
        return false;
    }
    let n = |i: usize| match a[i] {
        Value::Int(n) => n,
        _ => i64::MIN,
    };
    let rate = match &a[11] {
        Value::Double(d) => *d,
        Value::BulkString(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(f64::NAN),
        Value::SimpleString(s) => s.parse().unwrap_or(f64::NAN),
        _ => f64::NAN,
    };
    n(1) >= 0
        && n(3) >= 0
        && n(5) >= 1
        && n(7) >= 0
        && (matches!(a[9], Value::Nil) || n(9) >= 1)
        && rate > 0.0
        && rate < 1.0
}

/// The error of a filter command on a key being loaded.
pub fn is_loading(v: &Value) -> bool {
    err_of(v).as_deref() == Some(LOADING)
}

/// The reads of a filter, each answer in range.
fn filter_reads(con: &mut Connection, key: &str, found: &mut Findings, ctx: &str) {
    let reads: [(redis::Cmd, Check); 5] = [
        (cmd_of!("BF.INFOX", key), filter_info_ok),
        (cmd_of!("BF.EXISTSX", key, "fb:small:1"), is_int01),
        (cmd_of!("BF.EXISTSX", key, "absent-item"), is_int01),
        (
            cmd_of!("BF.CARDX", key),
            |v| matches!(v, Value::Int(n) if *n >= 0),
        ),
        (
            cmd_of!("BF.MEXISTSX", key, "a", "fb:two:3"),
            |v| matches!(v, Value::Array(a) if a.len() == 2 && a.iter().all(is_int01)),
        ),
    ];
    run_reads(con, &reads, found, ctx);
}

/// The reads of a filter being loaded: never readable as a filter, every read
/// answers that it is being loaded.
fn loading_reads(con: &mut Connection, key: &str, found: &mut Findings, ctx: &str) {
    let reads = [
        cmd_of!("BF.INFOX", key),
        cmd_of!("BF.EXISTSX", key, "lb:two:1"),
        cmd_of!("BF.CARDX", key),
        cmd_of!("BF.MEXISTSX", key, "a", "b"),
        cmd_of!("BF.SCANDUMPX", key, 0),
    ];
    let reads: Vec<(redis::Cmd, Check)> = reads
        .into_iter()
        .map(|c| (c, is_loading as Check))
        .collect();
    run_reads(con, &reads, found, ctx);
}

/// The writes on a filter a payload made (call `i`): adds, inserts, a read of
/// what was added, and a creation it refuses.
fn filter_writes(con: &mut Connection, key: &str, i: usize, found: &mut Findings, ctx: &str) {
    let writes = [
        cmd_of!("BF.ADDX", key, format!("new{i}")),
        cmd_of!(
            "BF.MADDX",
            key,
            format!("m{i}a"),
            format!("m{i}b"),
            "fb:small:0"
        ),
        cmd_of!("BF.INSERTX", key, "NOCREATE", "ITEMS", format!("n{i}")),
        cmd_of!("BF.EXISTSX", key, format!("new{i}")),
        cmd_of!("BF.INFOX", key, "SIZE"),
        cmd_of!("BF.RESERVEX", key, 0.01, 10),
    ];
    run_all(con, &writes, found, ctx);
}

/// The writes on a filter being loaded a payload made (call `i`): chunks of
/// each base's source in turn (taken, or refused as out of order or of the
/// wrong length), then the writes a filter takes, refused.
fn loading_writes(con: &mut Connection, key: &str, i: usize, found: &mut Findings, ctx: &str) {
    let mut w: Vec<redis::Cmd> = Vec::new();
    for (it, len) in [(9u64, 8usize), (17, 16), (25, 24), (161, 160), (1, 0)] {
        w.push(cmd_of!("BF.LOADCHUNKX", key, it, vec![0x5au8; len]));
    }
    w.push(cmd_of!("BF.ADDX", key, format!("new{i}")));
    w.push(cmd_of!("BF.RESERVEX", key, 0.01, 10));
    run_all(con, &w, found, ctx);
}

/// A filter's bytes as `bf_bytes` counts them (BF.INFOX SIZE).
pub fn filter_size(con: &mut Connection, key: &[u8]) -> i64 {
    let size: Value = query!(con, "BF.INFOX", key, "SIZE");
    match size {
        Value::Int(n) => n,
        Value::Array(a) if a.len() == 1 => match a[0] {
            Value::Int(n) => n,
            ref other => panic!("BF.INFOX SIZE: {other:?}"),
        },
        other => panic!("BF.INFOX SIZE: {other:?}"),
    }
}

/// A churned filter that survived still holds its item.
fn holds_its_item(con: &mut Connection, k: &str, i: usize) {
    let e: i64 = query!(con, "BF.EXISTSX", k, format!("item-{i}"));
    assert_eq!(e, 1, "{k}");
}

/// A churned RedisBloom filter that survived still holds its item.
fn rb_holds_its_item(con: &mut Connection, k: &str, i: usize) {
    let e: i64 = query!(con, "BF.EXISTS", k, format!("item-{i}"));
    assert_eq!(e, 1, "{k}");
}

/// Large filters, kept whole through the defrag churn: one scaling filter of
/// many layers, one non-scaling filter of several MB, and one of RedisBloom's
/// of many links.
fn big_filters(con: &mut Connection) {
    let _: () = query!(con, "BF.RESERVE", "big:rb", 0.01, 1000, "EXPANSION", 2);
    let _: () = query!(
        con,
        "BF.RESERVEX",
        "big:scaling",
        0.01,
        1000,
        "EXPANSION",
        2
    );
    let _: () = query!(
        con,
        "BF.RESERVEX",
        "big:flat",
        0.0001,
        2_000_000,
        "NONSCALING"
    );
    for chunk in 0..40 {
        let mut s = cmd_of!("BF.MADDX", "big:scaling");
        let mut f = cmd_of!("BF.MADDX", "big:flat");
        let mut r = cmd_of!("BF.MADD", "big:rb");
        for n in 0..2_000 {
            s.arg(format!("s-{chunk}-{n}"));
            f.arg(format!("f-{chunk}-{n}"));
            r.arg(format!("r-{chunk}-{n}"));
        }
        send(con, [s, f, r]);
    }
}

/// `big_filters`' items are all still there.
fn big_filters_hold(con: &mut Connection) {
    whole_items_present(
        con,
        &[
            ("big:scaling", "s", "BF.EXISTSX"),
            ("big:flat", "f", "BF.EXISTSX"),
            ("big:rb", "r", "BF.EXISTS"),
        ],
    );
}

/// The leak workload's filters: `bf:0` to `bf:299`.
const FILTER_KEYS: usize = 300;
/// The leak workload's filters being loaded: `bfl:0` to `bfl:99`.
const LOADING_KEYS: usize = 100;
/// The leak workload's RedisBloom filters: `rbf:0` to `rbf:199`.
const CHAIN_KEYS: usize = 200;

/// A filter `src` of several layers made, and its chunks (BF.SCANDUMPX, the
/// header first), each as its iterator and data, for filters being loaded.
pub fn chunks_of(con: &mut Connection, src: &str) -> Vec<Args> {
    let _: () = query!(con, "BF.RESERVEX", src, 0.01, 100, "EXPANSION", 2);
    for i in 0..300 {
        let _: i64 = query!(con, "BF.ADDX", src, i);
    }
    let chunks = scandump(con, src);
    assert!(chunks.len() >= 3, "chunks of {src}");
    chunks
        .into_iter()
        .map(|(it, data)| vec![it.to_string().into_bytes(), data])
        .collect()
}

/// One call of the leak workload: on a filter (20 in 26: adds, reads,
/// creations of every kind, inserts, copies, deletes), on a filter being
/// loaded (1 in 26: a chunk of `chunks`, taken in order or refused, or a
/// DEL), or on one of RedisBloom's (5 in 26: `rb_leak_call`).
fn leak_call(r: &mut Rng, chunks: &[Args], buf: &mut Vec<u8>) {
    let n = |r: &mut Rng, m: usize| r.below(m).to_string();
    let roll = r.below(26);
    if roll > 20 {
        return rb_leak_call(r, chunks, buf);
    }
    if roll == 20 {
        let key = format!("bfl:{}", n(r, LOADING_KEYS));
        let ours: Vec<&Args> = chunks.iter().filter(|c| c.len() == 2).collect();
        match r.below(8) {
            0 => pack(buf, &[b"DEL", key.as_bytes()]),
            _ => {
                // A chunk with the iterator SCANDUMPX gave with it.
                let chunk = ours[r.below(ours.len())];
                pack(
                    buf,
                    &[b"BF.LOADCHUNKX", key.as_bytes(), &chunk[0], &chunk[1]],
                );
            }
        }
        return;
    }
    let key = format!("bf:{}", n(r, FILTER_KEYS));
    let item = format!("it:{}", r.next() % 4_000_000);
    match r.below(20) {
        0..=6 => pack(buf, &[b"BF.ADDX", key.as_bytes(), item.as_bytes()]),
        7..=9 => {
            let items: Vec<String> = (0..5)
                .map(|_| format!("it:{}", r.next() % 4_000_000))
                .collect();
            let mut args: Vec<&[u8]> = vec![b"BF.MADDX", key.as_bytes()];
            args.extend(items.iter().map(|s| s.as_bytes()));
            pack(buf, &args);
        }
        10..=12 => pack(buf, &[b"BF.EXISTSX", key.as_bytes(), item.as_bytes()]),
        13 => {
            let cap = r.pick(&["100", "1000", "10000", "100000"]);
            let rate = r.pick(&["0.01", "0.001", "0.1"]);
            let mut args: Vec<&[u8]> = vec![b"BF.RESERVEX", key.as_bytes()];
            args.extend([rate.as_bytes(), cap.as_bytes()]);
            if r.chance(1, 4) {
                args.push(b"NONSCALING");
            } else {
                args.extend([&b"EXPANSION"[..], r.pick(&["1", "2", "4"]).as_bytes()]);
            }
            pack(buf, &args);
        }
        14 => pack(
            buf,
            &[
                b"BF.INSERTX",
                key.as_bytes(),
                b"CAPACITY",
                b"500",
                b"ITEMS",
                item.as_bytes(),
                b"x",
            ],
        ),
        15 => pack(buf, &[b"BF.CARDX", key.as_bytes()]),
        16 => pack(buf, &[b"BF.INFOX", key.as_bytes()]),
        17 => pack(buf, &[b"DEL", key.as_bytes()]),
        18 => {
            let dst = format!("bf:{}", n(r, FILTER_KEYS));
            pack(buf, &[b"COPY", key.as_bytes(), dst.as_bytes(), b"REPLACE"]);
        }
        _ => pack(buf, &[b"UNLINK", key.as_bytes()]),
    }
}

/// One call of the leak workload on a RedisBloom filter (`rbf:*`): adds,
/// reads, creations of every kind, inserts, its chunks dumped, chunks of
/// `chunks` (those tagged `rb`: a filter's header and bits) loaded, in order
/// or refused, copies and deletes.
fn rb_leak_call(r: &mut Rng, chunks: &[Args], buf: &mut Vec<u8>) {
    let key = format!("rbf:{}", r.below(CHAIN_KEYS));
    let k = key.as_bytes();
    let items: Vec<String> = (0..5)
        .map(|_| format!("it:{}", r.next() % 4_000_000))
        .collect();
    let item = items[0].as_bytes();
    match r.below(20) {
        0..=5 => pack(buf, &[b"BF.ADD", k, item]),
        6..=7 => {
            let mut args: Vec<&[u8]> = vec![b"BF.MADD", k];
            args.extend(items.iter().map(|s| s.as_bytes()));
            pack(buf, &args);
        }
        8..=9 => pack(buf, &[b"BF.EXISTS", k, item]),
        10 => pack(buf, &[b"BF.MEXISTS", k, item, items[1].as_bytes()]),
        11 => {
            let cap = r.pick(&["50", "1000", "20000"]);
            let rate = r.pick(&["0.01", "0.001", "0.1"]);
            let mut args: Vec<&[u8]> = vec![b"BF.RESERVE", k, rate.as_bytes(), cap.as_bytes()];
            if r.chance(1, 4) {
                args.push(b"NONSCALING");
            } else {
                args.extend([&b"EXPANSION"[..], r.pick(&["1", "2", "4"]).as_bytes()]);
            }
            pack(buf, &args);
        }
        12 => {
            let grow: &[&[u8]] = match r.below(3) {
                0 => &[b"NONSCALING"],
                1 => &[b"EXPANSION", b"3"],
                _ => &[],
            };
            let mut args: Vec<&[u8]> = vec![b"BF.INSERT", k, b"CAPACITY", b"40", b"ERROR", b"0.01"];
            args.extend(grow);
            args.extend([&b"ITEMS"[..], item, items[1].as_bytes()]);
            pack(buf, &args);
        }
        13 => {
            let read = r.pick(&[&b"BF.CARD"[..], b"BF.INFO", b"BF.DEBUG"]);
            pack(buf, &[read, k]);
        }
        14 => {
            let it = r.pick(&[&b"0"[..], b"1"]);
            pack(buf, &[b"BF.SCANDUMP", k, it]);
        }
        15..=16 => {
            // A chunk with the iterator SCANDUMP gave with it (the header first).
            let theirs: Vec<&Args> = chunks.iter().filter(|c| c.len() == 3).collect();
            let chunk = match r.chance(1, 3) {
                true => theirs[0],
                false => theirs[r.below(theirs.len())],
            };
            pack(buf, &[b"BF.LOADCHUNK", k, &chunk[0], &chunk[1]]);
        }
        17 => pack(buf, &[b"DEL", k]),
        18 => pack(buf, &[b"UNLINK", k]),
        _ => {
            let dst = format!("rbf:{}", r.below(CHAIN_KEYS));
            pack(buf, &[b"COPY", k, dst.as_bytes(), b"REPLACE"]);
        }
    }
}
