//! Cuckoo filters (`warden-cf`, whole or being loaded by CF.LOADCHUNKX: one
//! type) in the checks that cross every family (`tests/it/module/`): the
//! family's `KIT`, with its type (payloads in `payload.rs`), INFO's gauges of
//! filters, the kinds of key of the defrag churn and the large filter kept whole
//! through it, and the family's calls of the leak workload.

use crate::common::defrag::send;
use crate::common::kit::*;
use crate::common::payload::Rng;
use crate::common::*;
use crate::cuckoo::payload::*;
use crate::cuckoo::support::scandump;

/// The family in the checks across families.
pub static KIT: FamilyKit = FamilyKit {
    types: &[CUCKOO],
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
                let subs: i64 = cf_info(con, k, "Number of filters");
                assert!(subs >= 3, "{k}: {subs} sub-filters");
            },
        },
    ],
    whole: Some(Whole {
        keys: &["big:cuckoo"],
        make: big_cuckoo,
        check: big_cuckoo_holds,
    }),
    leak: Leak {
        share: 16,
        keys: &[("cf", FILTER_KEYS), ("cfl", LOADING_KEYS)],
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
        ],
        setup: |con| chunks_of(con, "src:cf"),
        call: leak_call,
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

/// Field `label` of `CF.INFOX key`.
fn cf_info(con: &mut Connection, key: &str, label: &str) -> i64 {
    let v: Vec<Value> = query!(con, "CF.INFOX", key);
    let at = v
        .iter()
        .position(|x| text_of(x).as_deref() == Some(label))
        .unwrap_or_else(|| panic!("CF.INFOX {key}: no {label} in {v:?}"));
    int_of(&v[at + 1]).expect("an integer")
}

/// A filter of several sub-filters kept whole through the defrag churn:
/// 80,000 items in 20,000, 40,000, 80,000 …
fn big_cuckoo(con: &mut Connection) {
    let _: () = query!(con, "CF.RESERVEX", "big:cuckoo", 20_000, "EXPANSION", 2);
    for chunk in 0..40 {
        let mut c = cmd_of!("CF.INSERTX", "big:cuckoo", "NOCREATE", "ITEMS");
        for n in 0..2_000 {
            c.arg(format!("c-{chunk}-{n}"));
        }
        send(con, [c]);
    }
    let subs = cf_info(con, "big:cuckoo", "Number of filters");
    assert!(subs >= 3, "big:cuckoo: {subs} sub-filters");
}

/// `big_cuckoo`'s items are all still there.
fn big_cuckoo_holds(con: &mut Connection) {
    for chunk in [0, 17, 39] {
        for n in (0..2_000).step_by(97) {
            let e: i64 = query!(con, "CF.EXISTSX", "big:cuckoo", format!("c-{chunk}-{n}"));
            assert_eq!(e, 1, "big:cuckoo: c-{chunk}-{n}");
        }
    }
}

/// The leak workload's filters: `cf:0` to `cf:299`.
const FILTER_KEYS: usize = 300;
/// The leak workload's filters being loaded: `cfl:0` to `cfl:99`.
const LOADING_KEYS: usize = 100;

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
                let chunk = &chunks[r.below(chunks.len())];
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
