//! Cuckoo filters in the checks that cross every family (`tests/it/module/`):
//! the family's `KIT`, with its two types, warden's filters (`warden-cf`, whole
//! or being loaded by CF.LOADCHUNKX: payloads in `payload.rs`) and RedisBloom's
//! (`MBbloomCF`, under `aliases redisbloom`: payloads in
//! `redisbloom_payload.rs`), INFO's gauges of filters (`cf_filters` and
//! `cf_bytes` count both), the kinds of key of the defrag churn and the large
//! filters kept whole through it, and the family's calls of the leak workload.

use crate::common::defrag::send;
use crate::common::kit::*;
use crate::common::payload::Rng;
use crate::common::*;
use crate::cuckoo::payload::*;
use crate::cuckoo::redisbloom_payload as rb;
use crate::cuckoo::support::scandump;

/// The family in the checks across families.
pub static KIT: FamilyKit = FamilyKit {
    types: &[CUCKOO, RB_CUCKOO],
    churn: &[
        Churn {
            prefix: "cf",
            count: 3_000,
            ttl: false,
            make: |k, i| {
                vec![
                    cmd_of!("CF.RESERVEX", k, 50),
                    cmd_of!("CF.ADDX", k, format!("item-{i}")),
                ]
            },
            survivor: |con, k, i| {
                let e: i64 = query!(con, "CF.COUNTX", k, format!("item-{i}"));
                assert_eq!(e, 1, "{k}");
            },
        },
        Churn {
            prefix: "cfs",
            count: 300,
            ttl: false,
            make: |k, i| {
                let mut add = cmd_of!("CF.INSERTX", k, "NOCREATE", "ITEMS");
                for n in 0..60 {
                    add.arg(format!("item-{i}-{n}"));
                }
                vec![cmd_of!("CF.RESERVEX", k, 8, "EXPANSION", 2), add]
            },
            survivor: |con, k, i| {
                for n in 0..60 {
                    let e: i64 = query!(con, "CF.EXISTSX", k, format!("item-{i}-{n}"));
                    assert_eq!(e, 1, "{k} item {n}");
                }
                let subs: i64 = cf_info(con, "CF.INFOX", k, "Number of filters");
                assert!(subs >= 3, "{k}: {subs} sub-filters");
            },
        },
        Churn {
            prefix: "rcf",
            count: 3_000,
            ttl: false,
            make: |k, i| {
                vec![
                    cmd_of!("CF.RESERVE", k, 50),
                    cmd_of!("CF.ADD", k, format!("item-{i}")),
                ]
            },
            survivor: |con, k, i| {
                let e: i64 = query!(con, "CF.EXISTS", k, format!("item-{i}"));
                assert_eq!(e, 1, "{k}");
            },
        },
        Churn {
            prefix: "rcfs",
            count: 300,
            ttl: false,
            make: |k, i| {
                let mut add = cmd_of!("CF.INSERT", k, "NOCREATE", "ITEMS");
                for n in 0..60 {
                    add.arg(format!("item-{i}-{n}"));
                }
                let size = 1 + i % 4;
                vec![
                    cmd_of!("CF.RESERVE", k, 8, "BUCKETSIZE", size, "EXPANSION", 2),
                    add,
                ]
            },
            survivor: |con, k, i| {
                for n in 0..60 {
                    let e: i64 = query!(con, "CF.EXISTS", k, format!("item-{i}-{n}"));
                    assert_eq!(e, 1, "{k} item {n}");
                }
                let subs: i64 = cf_info(con, "CF.INFO", k, "Number of filters");
                assert!(subs >= 3, "{k}: {subs} sub-filters");
            },
        },
    ],
    whole: Some(Whole {
        keys: &["big:cuckoo", "big:rcf"],
        make: big_cuckoo,
        check: big_cuckoo_holds,
    }),
    leak: Leak {
        share: 20,
        keys: &[("cf", FILTER_KEYS), ("cfl", LOADING_KEYS), RB_KEYS],
        errors: &[
            "ERR item exists",
            // CF.INFOX of a missing filter.
            "ERR not found",
            // Filters that never grow, or have every sub-filter.
            "ERR filter is full",
            "ERR Maximum expansions reached",
            // Chunks sent at random to filters being loaded.
            "ERR chunk out of order",
            "ERR key already holds a complete filter",
            // RedisBloom's names (their texts carry no ERR): a deleted or
            // compacted filter missing, filters that never grow or have
            // their 32 tables, chunks sent at random to its filters.
            "Not found",
            "Cuckoo filter was not found",
            "Filter is full",
            "Maximum expansions reached",
            "Couldn't load chunk!",
        ],
        setup: |con| {
            let mut chunks = chunks_of(con, "src:cf");
            chunks.extend(rb::rb_chunks_of(con, "src:rcf"));
            chunks
        },
        call: |r, chunks, buf| match r.below(20) {
            16.. => rb_leak_call(r, chunks, buf),
            _ => leak_call(r, chunks, buf),
        },
        round: None,
        idle: &[],
    },
};

/// Cuckoo filters, whole or being loaded.
pub const CUCKOO: TypeKit = TypeKit {
    name: "warden-cf",
    encver: 2,
    bases: cuckoo_bases,
    layouts: no_layouts,
    forge: forge_cuckoo,
    refusals: cuckoo_refusals,
    reads: cuckoo_checked_reads,
    exercise: cuckoo_writes,
    gauges: Some(Gauges {
        fields: ["cf_filters", "cf_bytes"],
        size: None,
    }),
};

/// RedisBloom's cuckoo filters (`aliases redisbloom`), made by its names.
pub const RB_CUCKOO: TypeKit = TypeKit {
    name: "MBbloomCF",
    encver: 4,
    bases: rb::bases,
    layouts: rb::layouts,
    forge: rb::forge,
    refusals: rb::refusals,
    reads: rb::reads,
    exercise: rb::writes,
    gauges: Some(Gauges {
        fields: ["cf_filters", "cf_bytes"],
        size: Some(rb::size),
    }),
};

/// Field `label` of `info key` (`CF.INFOX`, or RedisBloom's `CF.INFO`).
fn cf_info(con: &mut Connection, info: &str, key: &str, label: &str) -> i64 {
    let v: Vec<Value> = query!(con, info, key);
    let at = v
        .iter()
        .position(|x| text_of(x).as_deref() == Some(label))
        .unwrap_or_else(|| panic!("{info} {key}: no {label} in {v:?}"));
    int_of(&v[at + 1]).expect("an integer")
}

/// Filters of several sub-filters kept whole through the defrag churn, one
/// of warden's and one of RedisBloom's: 80,000 items each in 20,000, 40,000,
/// 80,000 …
fn big_cuckoo(con: &mut Connection) {
    let _: () = query!(con, "CF.RESERVEX", "big:cuckoo", 20_000, "EXPANSION", 2);
    let _: () = query!(con, "CF.RESERVE", "big:rcf", 20_000, "EXPANSION", 2);
    for chunk in 0..40 {
        let mut c = cmd_of!("CF.INSERTX", "big:cuckoo", "NOCREATE", "ITEMS");
        let mut r = cmd_of!("CF.INSERT", "big:rcf", "NOCREATE", "ITEMS");
        for n in 0..2_000 {
            c.arg(format!("c-{chunk}-{n}"));
            r.arg(format!("r-{chunk}-{n}"));
        }
        send(con, [c, r]);
    }
    for (info, key) in [("CF.INFOX", "big:cuckoo"), ("CF.INFO", "big:rcf")] {
        let subs = cf_info(con, info, key, "Number of filters");
        assert!(subs >= 3, "{key}: {subs} sub-filters");
    }
}

/// `big_cuckoo`'s items are all still there.
fn big_cuckoo_holds(con: &mut Connection) {
    whole_items_present(
        con,
        &[
            ("big:cuckoo", "c", "CF.EXISTSX"),
            ("big:rcf", "r", "CF.EXISTS"),
        ],
    );
}

/// The leak workload's filters: `cf:0` to `cf:299`.
const FILTER_KEYS: usize = 300;
/// The leak workload's filters being loaded: `cfl:0` to `cfl:99`.
const LOADING_KEYS: usize = 100;

/// The leak workload's RedisBloom filters: `rcf:0` to `rcf:199`.
const RB_KEYS: (&str, usize) = ("rcf", 200);

/// A filter `src` of several sub-filters made, and its chunks (CF.SCANDUMPX,
/// the header first), each as its iterator and data, for filters being loaded.
fn chunks_of(con: &mut Connection, src: &str) -> Vec<Args> {
    let _: () = query!(con, "CF.RESERVEX", src, 50, "EXPANSION", 2);
    for i in 0..300 {
        let _: i64 = query!(con, "CF.ADDX", src, i);
    }
    let chunks = scandump(con, src);
    assert!(chunks.len() >= 3, "chunks of {src}");
    chunks
        .into_iter()
        .map(|(it, data)| vec![it.to_string().into_bytes(), data])
        .collect()
}

/// One call of the leak workload: on a filter (15 in 16: adds, inserts that
/// grow, reads, deletes, creations of every shape, compaction, copies), or on
/// a filter being loaded (a chunk of `chunks`, taken in order or refused, or
/// a DEL).
fn leak_call(r: &mut Rng, chunks: &[Args], buf: &mut Vec<u8>) {
    let n = |r: &mut Rng, m: usize| r.below(m).to_string();
    if r.below(16) == 15 {
        let key = format!("cfl:{}", n(r, LOADING_KEYS));
        match r.below(8) {
            0 => pack(buf, &[b"DEL", key.as_bytes()]),
            _ => {
                // A chunk with the iterator SCANDUMPX gave with it.
                let ours: Vec<&Args> = chunks.iter().filter(|c| c.len() == 2).collect();
                let chunk = ours[r.below(ours.len())];
                pack(
                    buf,
                    &[b"CF.LOADCHUNKX", key.as_bytes(), &chunk[0], &chunk[1]],
                );
            }
        }
        return;
    }
    let key = format!("cf:{}", n(r, FILTER_KEYS));
    let item = format!("it:{}", r.next() % 4_000_000);
    let k = key.as_bytes();
    match r.below(20) {
        0..=5 => pack(buf, &[b"CF.ADDX", k, item.as_bytes()]),
        6 => pack(buf, &[b"CF.ADDNXX", k, item.as_bytes()]),
        7..=8 => {
            let items: Vec<String> = (0..5)
                .map(|_| format!("it:{}", r.next() % 4_000_000))
                .collect();
            let mut args: Vec<&[u8]> = vec![b"CF.INSERTX", k, b"CAPACITY", b"100"];
            args.push(b"ITEMS");
            args.extend(items.iter().map(|s| s.as_bytes()));
            pack(buf, &args);
        }
        9..=10 => pack(buf, &[b"CF.EXISTSX", k, item.as_bytes()]),
        11..=12 => pack(buf, &[b"CF.DELX", k, item.as_bytes()]),
        13 => {
            let cap = r.pick(&["50", "1000", "10000"]);
            let mut args: Vec<&[u8]> = vec![b"CF.RESERVEX", k, cap.as_bytes()];
            args.extend([&b"BUCKETSIZE"[..], r.pick(&["1", "2", "4"]).as_bytes()]);
            args.extend([&b"EXPANSION"[..], r.pick(&["0", "1", "2"]).as_bytes()]);
            pack(buf, &args);
        }
        14 => pack(buf, &[b"CF.COMPACTX", k]),
        15 => pack(buf, &[b"CF.INFOX", k]),
        16 => pack(buf, &[b"CF.COUNTX", k, item.as_bytes()]),
        17 => pack(buf, &[b"DEL", k]),
        18 => {
            let dst = format!("cf:{}", n(r, FILTER_KEYS));
            pack(buf, &[b"COPY", k, dst.as_bytes(), b"REPLACE"]);
        }
        _ => pack(buf, &[b"UNLINK", k]),
    }
}

/// One call of the leak workload on a RedisBloom filter (`rcf:*`): adds,
/// inserts (NX too), reads, deletes, creations of the shape `n % 3` (grown by
/// 2; 4 slots a bucket that never grow; one slot a bucket grown by 1, to its
/// 32 tables), compaction, its chunks dumped, chunks of `chunks` (those
/// tagged `rb`: a filter's header and tables) loaded, in order or refused,
/// copies and deletes.
fn rb_leak_call(r: &mut Rng, chunks: &[Args], buf: &mut Vec<u8>) {
    let (prefix, keys) = RB_KEYS;
    let n = r.below(keys);
    let key = format!("{prefix}:{n}");
    let k = key.as_bytes();
    let items: Vec<String> = (0..5)
        .map(|_| format!("it:{}", r.next() % 4_000_000))
        .collect();
    let item = items[0].as_bytes();
    let all: Vec<&[u8]> = items.iter().map(|s| s.as_bytes()).collect();
    match r.below(24) {
        0..=5 => pack(buf, &[b"CF.ADD", k, item]),
        6 => pack(buf, &[b"CF.ADDNX", k, item]),
        7..=8 => {
            let mut args: Vec<&[u8]> = vec![b"CF.INSERT", k, b"CAPACITY", b"60", b"ITEMS"];
            args.extend(&all);
            pack(buf, &args);
        }
        9 => {
            let mut args: Vec<&[u8]> = vec![b"CF.INSERTNX", k, b"NOCREATE", b"ITEMS"];
            args.extend(&all);
            pack(buf, &args);
        }
        10..=11 => pack(buf, &[b"CF.EXISTS", k, item]),
        12 => pack(buf, &[b"CF.MEXISTS", k, item, all[1]]),
        13 => pack(buf, &[b"CF.COUNT", k, item]),
        14..=15 => pack(buf, &[b"CF.DEL", k, item]),
        16 => {
            let shape: &[&[u8]] = match n % 3 {
                0 => &[b"50", b"EXPANSION", b"2"],
                1 => &[b"20", b"BUCKETSIZE", b"4", b"EXPANSION", b"0"],
                _ => &[b"8", b"BUCKETSIZE", b"1", b"MAXITERATIONS", b"5"],
            };
            let mut args: Vec<&[u8]> = vec![b"CF.RESERVE", k];
            args.extend(shape);
            pack(buf, &args);
        }
        17 => pack(buf, &[b"CF.COMPACT", k]),
        18 => {
            let read = r.pick(&[&b"CF.INFO"[..], b"CF.DEBUG"]);
            pack(buf, &[read, k]);
        }
        19 => {
            let it = r.pick(&[&b"0"[..], b"1"]);
            pack(buf, &[b"CF.SCANDUMP", k, it]);
        }
        20..=21 => {
            // A chunk with the iterator CF.SCANDUMP gave with it (the header first).
            let theirs: Vec<&Args> = chunks.iter().filter(|c| c.len() == 3).collect();
            let chunk = match r.chance(1, 3) {
                true => theirs[0],
                false => theirs[r.below(theirs.len())],
            };
            pack(buf, &[b"CF.LOADCHUNK", k, &chunk[0], &chunk[1]]);
        }
        22 => pack(buf, &[r.pick(&[&b"DEL"[..], b"UNLINK"]), k]),
        _ => {
            let dst = format!("{prefix}:{}", r.below(keys));
            pack(buf, &[b"COPY", k, dst.as_bytes(), b"REPLACE"]);
        }
    }
}
