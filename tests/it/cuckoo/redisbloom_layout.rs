//! RedisBloom's cuckoo names under `aliases redisbloom` make RedisBloom's
//! own filters (type `MBbloomCF`): side by side with RedisBloom 2.8 (its
//! `redisbloom.so`, fetched by `tests/bench/redisbloom.sh`), the same calls
//! get the same replies, errors and chunk streams, byte for byte; RedisBloom's
//! RDB files (every encoding version it loads), AOF files and `DUMP`
//! payloads load into warden and warden's load back into RedisBloom;
//! replicas and AOF replays rebuild the same filters; `cf-max-bytes` caps
//! them with a clear refusal; warden's own filters keep answering under
//! those names; and corrupt payloads and headers are refused without harm.

use crate::common::payload::Rng;
use crate::common::payload::{encode, parse_dump, Field};
use crate::common::payload_forgeries::{assert_refused, restore_forgeries};
use crate::common::peer_modules::{
    aof_both_ways, dumps_both_ways, in_both_protocols, memory_usage_comparable, mutated_restores,
    rdb_both_ways, redisbloom_server, reply, same, ALIASES,
};
use crate::common::*;
use crate::cuckoo::kit::RB_CUCKOO;

/// Every chunk of `key`'s `CF.SCANDUMP`, the header first (none for a
/// filter without items).
fn chunks(con: &mut Connection, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut it = 0i64;
    loop {
        let (next, data): (i64, Option<Vec<u8>>) = query!(con, "CF.SCANDUMP", key, it);
        if next == 0 {
            return out;
        }
        out.push((next, data.unwrap_or_default()));
        it = next;
    }
}

/// The filters both sides make: every option, growth over many
/// sub-filters, walks, a full filter that cannot grow, the sub-filter
/// limit, deletes that compact, refusals of every kind.
fn workload() -> Vec<redis::Cmd> {
    let mut calls = vec![
        cmd_of!("CF.RESERVE", "grown", 10, "EXPANSION", 2),
        cmd_of!("CF.RESERVE", "grown", 10),
        cmd_of!("CF.RESERVE", "flat", 64),
        cmd_of!("CF.RESERVE", "bad", 10, "BUCKETSIZE"),
        cmd_of!("CF.RESERVE", "bad", "x"),
        cmd_of!("CF.RESERVE", "bad", 3),
        cmd_of!("CF.RESERVE", "bad", -5),
        cmd_of!("CF.RESERVE", "bad", 10, "BUCKETSIZE", 0),
        cmd_of!("CF.RESERVE", "bad", 10, "BUCKETSIZE", 256),
        cmd_of!("CF.RESERVE", "bad", 10, "BUCKETSIZE", "x"),
        cmd_of!("CF.RESERVE", "bad", 10, "MAXITERATIONS", 0),
        cmd_of!("CF.RESERVE", "bad", 10, "MAXITERATIONS", 65536),
        cmd_of!("CF.RESERVE", "bad", 10, "maxiterations", "x"),
        cmd_of!("CF.RESERVE", "bad", 10, "EXPANSION", -1),
        cmd_of!("CF.RESERVE", "bad", 10, "EXPANSION", 32769),
        cmd_of!("CF.RESERVE", "bad", 10, "EXPANSION", "x"),
        cmd_of!("CF.RESERVE", "bad", 10, "BUCKETSIZE", 8),
        cmd_of!("CF.RESERVE", "lenient", 10, "foo", "bar"),
        cmd_of!(
            "CF.RESERVE",
            "wide",
            1000,
            "BUCKETSIZE",
            4,
            "MAXITERATIONS",
            500,
            "EXPANSION",
            3
        ),
        cmd_of!("CF.RESERVE", "never", 4, "EXPANSION", 0),
        cmd_of!("CF.RESERVE", "tiny", 4),
        cmd_of!("CF.RESERVE", "single", 2, "BUCKETSIZE", 1, "EXPANSION", 2),
        cmd_of!("SET", "string", "x"),
        cmd_of!("CF.RESERVE", "string", 10),
        cmd_of!("CF.ADD", "string", "x"),
        cmd_of!("CF.INSERT", "string", "ITEMS", "x"),
        cmd_of!("CF.EXISTS", "string", "x"),
        cmd_of!("CF.MEXISTS", "string", "x", "y"),
        cmd_of!("CF.COUNT", "string", "x"),
        cmd_of!("CF.DEL", "string", "x"),
        cmd_of!("CF.COMPACT", "string"),
        cmd_of!("CF.INFO", "string"),
        cmd_of!("CF.DEBUG", "string"),
        cmd_of!("CF.SCANDUMP", "string", 0),
        cmd_of!("CF.LOADCHUNK", "string", 1, "x"),
        cmd_of!("CF.LOADCHUNK", "string", 2, "x"),
        cmd_of!("CF.LOADCHUNK", "string", "x", "x"),
        cmd_of!("CF.EXISTS", "missing", "x"),
        cmd_of!("CF.MEXISTS", "missing", "x", "y"),
        cmd_of!("CF.COUNT", "missing", "x"),
        cmd_of!("CF.DEL", "missing", "x"),
        cmd_of!("CF.COMPACT", "missing"),
        cmd_of!("CF.INFO", "missing"),
        cmd_of!("CF.DEBUG", "missing"),
        cmd_of!("CF.SCANDUMP", "missing", 0),
        cmd_of!("CF.SCANDUMP", "missing", -1),
        cmd_of!("CF.SCANDUMP", "missing", "x"),
        cmd_of!("CF.LOADCHUNK", "missing", 2, "y"),
        cmd_of!("CF.LOADCHUNK", "missing", 0, "y"),
        cmd_of!("CF.LOADCHUNK", "missing", 1, "short"),
        cmd_of!("CF.INSERT", "missing", "NOCREATE", "ITEMS", "a"),
        cmd_of!("CF.SCANDUMP", "grown", 0),
        cmd_of!("CF.RESERVE", "EXPANSION", 10),
        cmd_of!("CF.RESERVE", "twice", 100, "BUCKETSIZE", 4, "bucketsize", 8),
        cmd_of!("CF.SCANDUMP", "grown", i64::MAX),
        cmd_of!("CF.LOADCHUNK", "grown", i64::MAX, "x"),
        cmd_of!("CF.LOADCHUNK", "grown", i64::MIN, "x"),
        cmd_of!("CF.LOADCHUNK", "grown", -1, "x"),
        cmd_of!("CF.INSERT", "ins", "CAPACITY", 100, "ITEMS", "a", "b", "c"),
        cmd_of!("CF.INSERT", "ins", "CAPACITY", 3, "ITEMS", "a"),
        cmd_of!("CF.INSERT", "ins", "CAPACITY", "x", "ITEMS", "a"),
        cmd_of!("CF.INSERT", "ins", "CAPACITY"),
        cmd_of!("CF.INSERT", "ins", "ITEMS"),
        cmd_of!("CF.INSERT", "ins", "bogus", "ITEMS", "a"),
        cmd_of!("CF.INSERT", "ins", "", "ITEMS", "a"),
        cmd_of!("CF.INSERT", "ins", "nothing", "ITEMS", "a"),
        cmd_of!("CF.INSERT", "ins", "NOCREATE", "NOCREATE"),
        cmd_of!("CF.INSERTNX", "ins", "ITEMS", "a", "d", "d"),
        cmd_of!(
            "CF.INSERTNX",
            "ins2",
            "CAPACITY",
            50,
            "ITEMS",
            "a",
            "b",
            "a"
        ),
        cmd_of!("CF.ADD", "auto", "a"),
        cmd_of!("CF.ADD", "auto", "a"),
        cmd_of!("CF.ADDNX", "auto", "a"),
        cmd_of!("CF.ADDNX", "auto", "b"),
        cmd_of!("CF.ADDNX", "auto2", "b"),
    ];
    let many: Vec<String> = (0..12).map(|i| format!("z{i}")).collect();
    calls.push(cmd_of!("CF.INSERT", "never", "ITEMS", many.clone()));
    calls.push(cmd_of!("CF.INSERTNX", "never", "ITEMS", many.clone()));
    calls.push(cmd_of!("CF.ADD", "never", "z11"));
    calls.push(cmd_of!("CF.ADDNX", "never", "z0"));
    calls.push(cmd_of!("CF.ADDNX", "never", "z11"));
    for i in 0..400 {
        for k in ["grown", "flat", "wide", "single"] {
            calls.push(cmd_of!("CF.ADD", k, format!("item{i}")));
        }
    }
    for i in 0..140 {
        calls.push(cmd_of!("CF.ADD", "tiny", format!("n{i}")));
    }
    for i in (0..400).step_by(3) {
        for k in ["grown", "flat", "wide", "single"] {
            calls.push(cmd_of!("CF.DEL", k, format!("item{i}")));
        }
    }
    calls.push(cmd_of!("CF.DEL", "grown", "never-added"));
    for k in ["grown", "flat", "wide", "tiny", "single", "auto"] {
        calls.push(cmd_of!("CF.COMPACT", k));
    }
    let batch: Vec<String> = (0..1_000).map(|i| format!("m{i}")).collect();
    calls.push(cmd_of!("CF.INSERT", "grown", "ITEMS", batch.clone()));
    calls.push(cmd_of!("CF.INSERTNX", "wide", "ITEMS", batch));
    calls
}

/// The reads compared after a workload: every key's INFO, DEBUG, memory,
/// type, presence of items in and out, and counts.
fn reads(keys: &[&str]) -> Vec<redis::Cmd> {
    let mut calls = Vec::new();
    for k in keys {
        calls.push(cmd_of!("CF.INFO", *k));
        calls.push(cmd_of!("CF.DEBUG", *k));
        if memory_usage_comparable() {
            calls.push(cmd_of!("MEMORY", "USAGE", *k));
        }
        calls.push(cmd_of!("TYPE", *k));
        for prefix in ["item", "m", "n", "z", "absent"] {
            let probe: Vec<String> = (0..2_000).map(|i| format!("{prefix}{i}")).collect();
            calls.push(cmd_of!("CF.MEXISTS", *k, probe));
        }
        for i in 0..40 {
            calls.push(cmd_of!("CF.COUNT", *k, format!("item{i}")));
            calls.push(cmd_of!("CF.EXISTS", *k, format!("m{i}")));
        }
    }
    calls
}

const KEYS: &[&str] = &[
    "grown",
    "flat",
    "lenient",
    "wide",
    "never",
    "tiny",
    "single",
    "ins",
    "ins2",
    "auto",
    "auto2",
    "EXPANSION",
    "twice",
];

/// `CF.INFO`'s names and values, in turn, in either protocol.
fn info_fields(con: &mut Connection, key: &str) -> Vec<Value> {
    match query!(con, "CF.INFO", key) {
        Value::Array(v) => v,
        Value::Map(m) => m.into_iter().flat_map(|(k, v)| [k, v]).collect(),
        other => panic!("CF.INFO {key}: {other:?}"),
    }
}

#[test]
fn every_reply_is_redisblooms_in_both_protocols() {
    in_both_protocols(|rb, w, _| {
        let answers: Vec<String> = workload()
            .iter()
            .chain(reads(KEYS).iter())
            .map(|c| same(rb, w, c))
            .collect();
        // The workload reaches the limits it is meant to.
        for text in ["Maximum expansions reached", "Filter is full", "(-1)"] {
            assert!(answers.iter().any(|a| a.contains(text)), "{text}");
        }
        for (k, least) in [("tiny", 32), ("flat", 4), ("grown", 3), ("wide", 2)] {
            let info = info_fields(w, k);
            assert!(int_of(&info[5]).unwrap() >= least, "{k}: {info:?}");
        }
        for k in KEYS {
            assert_eq!(chunks(w, k), chunks(rb, k), "{k}");
            // Any iterator answers: inside a sub-filter or past the end.
            let info = info_fields(rb, k);
            let size = int_of(&info[1]).unwrap();
            for it in (0..size + 40).step_by(3) {
                same(rb, w, &cmd_of!("CF.SCANDUMP", *k, it));
            }
        }
        // Chunks of random sizes at random iterators into live filters:
        // written where RedisBloom writes them, or refused with its texts.
        let mut rng = Rng(0x5eed);
        for _ in 0..300 {
            let data = rng.some_bytes(0, 70);
            let it = rng.below(600) as i64 - 20;
            let key = KEYS[rng.below(3)];
            same(rb, w, &cmd_of!("CF.LOADCHUNK", key, it, data));
        }
        for k in KEYS {
            same(rb, w, &cmd_of!("CF.DEBUG", *k));
            assert_eq!(chunks(w, k), chunks(rb, k), "{k}");
        }
        // Headers RedisBloom refuses, loaded on empty keys.
        let good: (i64, Vec<u8>) = query!(rb, "CF.SCANDUMP", "grown", 0);
        for (at, byte) in [(8, 0u8), (8, 3), (24, 0), (32, 0), (34, 0), (33, 1)] {
            let mut bad = good.1.clone();
            bad[at] = byte;
            same(rb, w, &cmd_of!("CF.LOADCHUNK", "fresh", 1, bad));
            let _: () = query!(rb, "DEL", "fresh");
            let _: () = query!(w, "DEL", "fresh");
        }
    });
}

/// Every key's name and chunk stream.
type KeyChunks = Vec<(Vec<u8>, Vec<(i64, Vec<u8>)>)>;

/// Each side's chunk streams of every key, which must be equal.
fn all_chunks(con: &mut Connection) -> KeyChunks {
    let mut keys: Vec<Vec<u8>> = query!(con, "KEYS", "*");
    keys.sort();
    keys.into_iter()
        .map(|k| {
            let name = String::from_utf8(k.clone()).unwrap();
            (k, chunks(con, &name))
        })
        .collect()
}

/// Each side's CF.INFO of every key (the chunks leave out filters without
/// items' headers).
fn all_infos(con: &mut Connection) -> Vec<Value> {
    let mut keys: Vec<String> = query!(con, "KEYS", "*");
    keys.sort();
    keys.iter()
        .map(|k| query!(con, "CF.INFO", k.as_str()))
        .collect()
}

/// Runs the workload's writes (not the string key) on `con`.
fn write_filters(con: &mut Connection) {
    for c in workload() {
        let _ = c.query::<Value>(con);
    }
    let _: () = query!(con, "DEL", "string");
}

/// Each side's chunk streams and CF.INFO of every key.
fn filters(con: &mut Connection) -> (KeyChunks, Vec<Value>) {
    (all_chunks(con), all_infos(con))
}

/// More writes and a new key on warden, after RedisBloom's file loaded as
/// RedisBloom's type.
fn more_on_warden(con: &mut Connection) {
    assert_eq!(key_type(con, "grown"), "MBbloomCF");
    let more: Vec<String> = (0..3_000).map(|i| format!("more{i}")).collect();
    let _: Value = query!(con, "CF.INSERT", "grown", "ITEMS", more);
    let _: () = query!(con, "CF.RESERVE", "fresh", 77, "BUCKETSIZE", 3);
    let _: Value = query!(con, "CF.ADD", "fresh", "z");
    let _: Value = query!(con, "CF.DEL", "wide", "item1");
}

#[test]
fn rdb_files_move_both_ways() {
    let back = rdb_both_ways(write_filters, more_on_warden, filters);
    let v: i64 = query!(&mut back.conn(), "CF.EXISTS", "grown", "more2999");
    assert_eq!(v, 1);
}

#[test]
fn dump_payloads_move_both_ways() {
    let (rb, w) = dumps_both_ways(write_filters, KEYS);
    assert_eq!(filters(&mut w.conn()), filters(&mut rb.conn()));
}

/// Payloads of the encoding versions before 4 (table count, buckets, items,
/// then each table's slots; bucket size 2, 20 kicks, expansion 1, no
/// deletes), made from a version 4 payload of such a filter: RedisBloom and
/// warden load each into the same filter.
#[test]
fn older_encoding_versions_load_as_redisbloom_loads_them() {
    let rb = redisbloom_server(&[]);
    let w = Server::start_with(&[], ALIASES);
    let (mut rbc, mut wc) = (rb.conn(), w.conn());
    let _: () = query!(&mut rbc, "CF.RESERVE", "v4", 64);
    let items: Vec<String> = (0..300).map(|i| format!("old{i}")).collect();
    let _: Value = query!(&mut rbc, "CF.INSERT", "v4", "ITEMS", items.clone());
    let want = chunks(&mut rbc, "v4");
    assert!(want.len() > 3, "several sub-filters");
    let v4 = parse_dump(&dump(&mut rbc, "v4"));
    assert_eq!((v4.encver(), v4.type_name().as_str()), (4, "MBbloomCF"));
    let tables = v4.uint(0) as usize;
    for encver in 0..4u64 {
        let mut old = v4.clone();
        old.module_id = (v4.module_id & !1023) | encver;
        old.fields = v4.fields[..3].to_vec();
        for t in 0..tables {
            old.fields.push(v4.fields[7 + 2 * t + 1].clone());
        }
        let payload = encode(&old);
        for con in [&mut rbc, &mut wc] {
            let _: () = query!(con, "RESTORE", "old", 0, payload.clone(), "REPLACE");
            assert_eq!(chunks(con, "old"), want, "version {encver}");
            let found: Vec<i64> = query!(con, "CF.MEXISTS", "old", items.clone());
            assert!(found.iter().all(|&f| f == 1));
        }
    }
    // A table of another length than its buckets need is refused.
    let mut bad = v4.clone();
    bad.fields[8] = Field::S(vec![1; 3]);
    let r: redis::RedisResult<()> = cmd("RESTORE")
        .arg("bad")
        .arg(0)
        .arg(encode(&bad))
        .query(&mut wc);
    assert!(r.is_err());
}

#[test]
fn redisblooms_aof_replays_into_warden_and_wardens_into_redisbloom() {
    // Other defaults on warden: RedisBloom's creating calls replay with its own.
    let other_defaults = [
        "aliases",
        "redisbloom",
        "cf-initial-capacity",
        "100",
        "cf-bucket-size",
        "4",
        "cf-expansion",
        "2",
    ];
    let late = [
        cmd_of!("CF.INSERT", "grown", "ITEMS", "after1", "after2"),
        cmd_of!("CF.DEL", "grown", "after1"),
        cmd_of!("CF.ADD", "made-after", "x"),
        cmd_of!(
            "CF.INSERT",
            "late",
            "CAPACITY",
            8,
            "ITEMS",
            "a",
            "b",
            "c",
            "d",
            "e"
        ),
    ];
    aof_both_ways(&other_defaults, write_filters, &late, filters);
}

#[test]
fn a_replica_with_the_option_and_other_defaults_builds_the_same_filters() {
    let master = Server::start_with(&[], ALIASES);
    let replica = master.start_replica(&[], ALIASES);
    let mut rc = replica.conn();
    for (name, value) in [
        ("cf-initial-capacity", "100"),
        ("cf-bucket-size", "4"),
        ("cf-expansion", "2"),
        ("cf-max-iterations", "7"),
    ] {
        let _: () = query!(&mut rc, "CONFIG", "SET", format!("warden.{name}"), value);
    }
    let mut con = master.conn();
    write_filters(&mut con);
    // Filters created by adds with the defaults, chunks loaded, no-op calls.
    let _: Value = query!(&mut con, "CF.ADD", "defaults", "x");
    let _: Value = query!(&mut con, "CF.INSERT", "defaults2", "ITEMS", "x", "y");
    for (it, data) in chunks(&mut con, "grown") {
        let _: () = query!(&mut con, "CF.LOADCHUNK", "copy", it, data);
    }
    let _: Value = query!(&mut con, "CF.ADDNX", "grown", "m1");
    let _: Value = query!(&mut con, "CF.DEL", "grown", "never-added");
    master.sync_replicas(1);
    assert_eq!(all_chunks(&mut rc), all_chunks(&mut con));
    assert_eq!(all_infos(&mut rc), all_infos(&mut con));
    assert_eq!(db_digest(&mut rc), db_digest(&mut con));
}

/// What a master sends for RedisBloom's filters: a creation as an explicit
/// `CF.RESERVE` with every parameter, stored items as `CF.INSERT … NOCREATE
/// ITEMS`, deletes, compactions and chunks as sent; nothing for refused
/// calls or calls that changed nothing.
#[test]
fn writes_replicate_their_effects_under_redisblooms_names() {
    let s = Server::start_with(&[], ALIASES);
    let mut con = s.conn();
    let mut tap = s.replication_tap();
    let calls = [
        cmd_of!("CF.ADD", "a", "x"),
        cmd_of!("CF.ADDNX", "a", "x"),
        cmd_of!("CF.INSERTNX", "a", "ITEMS", "x", "y", "x"),
        cmd_of!("CF.RESERVE", "r", 100, "EXPANSION", 3),
        cmd_of!("CF.RESERVE", "r", 100),
        cmd_of!("CF.RESERVE", "bad", 1),
        cmd_of!("CF.INSERT", "n", "CAPACITY", 9, "NOCREATE", "ITEMS", "q"),
        cmd_of!("CF.DEL", "a", "absent"),
        cmd_of!("CF.DEL", "a", "y"),
        cmd_of!("CF.COMPACT", "a"),
        cmd_of!("CF.COMPACT", "a"),
        cmd_of!("CF.LOADCHUNK", "a", 1, "x"),
        cmd_of!("CF.EXISTS", "a", "x"),
    ];
    for c in &calls {
        let _ = c.query::<Value>(&mut con);
    }
    let stream = without_multi_exec(tap.until_marker(&mut con, "mark", "1"));
    let want: Vec<Vec<&str>> = vec![
        vec![
            "CF.RESERVE",
            "a",
            "1024",
            "BUCKETSIZE",
            "2",
            "MAXITERATIONS",
            "20",
            "EXPANSION",
            "1",
        ],
        vec!["CF.INSERT", "a", "NOCREATE", "ITEMS", "x"],
        vec!["CF.INSERT", "a", "NOCREATE", "ITEMS", "y"],
        vec![
            "CF.RESERVE",
            "r",
            "128",
            "BUCKETSIZE",
            "2",
            "MAXITERATIONS",
            "20",
            "EXPANSION",
            "4",
        ],
        vec!["CF.DEL", "a", "y"],
        vec!["CF.COMPACT", "a"],
    ];
    let got: Vec<Vec<&str>> = stream
        .iter()
        .filter(|c| c[0] != "SET")
        .map(|c| c.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(got, want);
}

#[test]
fn cf_max_bytes_caps_creation_growth_and_headers() {
    let s = Server::start_with(&[], ALIASES);
    let mut con = s.conn();
    let _: () = query!(&mut con, "CONFIG", "SET", "warden.cf-max-bytes", 100_000);
    let e = reply(&mut con, &cmd_of!("CF.RESERVE", "big", 1_000_000));
    assert!(
        e.contains("Insufficient memory to create filter")
            && e.contains("it would take 1048632 bytes, over cf-max-bytes (100000)")
            && e.contains("CONFIG SET warden.cf-max-bytes 1048632"),
        "{e}"
    );
    let e = reply(
        &mut con,
        &cmd_of!("CF.INSERT", "big", "CAPACITY", 1_000_000, "ITEMS", "a"),
    );
    assert!(e.contains("Insufficient memory to create filter"), "{e}");
    assert!(!exists(&mut con, "big"));
    // 65536 slots (65,592 bytes) fit; a second sub-filter does not.
    let _: () = query!(&mut con, "CF.RESERVE", "full", 65_536, "BUCKETSIZE", 1);
    let items: Vec<String> = (0..70_000).map(|i| format!("f{i}")).collect();
    let got: Vec<i64> = query!(&mut con, "CF.INSERT", "full", "ITEMS", items.clone());
    assert!(got.contains(&-1) && got.iter().all(|&g| g == 1 || g == -1));
    // An item refused by the array is refused alone, naming the size.
    let refusal = (0..items.len())
        .filter(|&i| got[i] == -1)
        .map(|i| reply(&mut con, &cmd_of!("CF.ADD", "full", items[i].clone())))
        .find(|e| e.starts_with("error"))
        .expect("a refused add");
    assert!(
        refusal.contains("Insufficient memory: it would take 131144 bytes, over cf-max-bytes"),
        "{refusal}"
    );
    let info: Vec<Value> = query!(&mut con, "CF.INFO", "full");
    assert_eq!(int_of(&info[5]), Some(1), "one sub-filter");
    // A header of a filter over the cap is refused before anything is made.
    let mut header = vec![0u8; 38];
    header[0] = 1;
    header[8..16].copy_from_slice(&(1u64 << 20).to_le_bytes());
    header[24] = 1;
    header[32] = 2;
    header[34] = 20;
    let e = reply(
        &mut con,
        &cmd_of!("CF.LOADCHUNK", "loaded", 1, header.clone()),
    );
    assert!(
        e.contains("Couldn't create filter!") && e.contains("2097208 bytes, over cf-max-bytes"),
        "{e}"
    );
    let _: () = query!(&mut con, "CONFIG", "SET", "warden.cf-max-bytes", 4_000_000);
    let _: () = query!(&mut con, "CF.LOADCHUNK", "loaded", 1, header);
    assert_eq!(key_type(&mut con, "loaded"), "MBbloomCF");
}

#[test]
fn wardens_own_filters_answer_under_redisblooms_names() {
    let s = Server::start_with(&[], ALIASES);
    let mut con = s.conn();
    let _: () = query!(&mut con, "CF.RESERVEX", "own", 100);
    let v: i64 = query!(&mut con, "CF.ADD", "own", "a");
    assert_eq!(v, 1);
    let v: i64 = query!(&mut con, "CF.ADDNX", "own", "a");
    assert_eq!(v, 0);
    let v: Vec<i64> = query!(&mut con, "CF.INSERT", "own", "ITEMS", "b", "c");
    assert_eq!(v, [1, 1]);
    let v: Vec<i64> = query!(&mut con, "CF.INSERTNX", "own", "ITEMS", "b", "d");
    assert_eq!(v, [0, 1]);
    let v: Vec<i64> = query!(&mut con, "CF.MEXISTS", "own", "a", "zz-absent");
    assert_eq!(v, [1, 0]);
    let v: i64 = query!(&mut con, "CF.COUNT", "own", "a");
    assert_eq!(v, 1);
    let v: i64 = query!(&mut con, "CF.DEL", "own", "a");
    assert_eq!(v, 1);
    let v: i64 = query!(&mut con, "CF.EXISTS", "own", "a");
    assert_eq!(v, 0);
    let _: () = query!(&mut con, "CF.COMPACT", "own");
    let info: Vec<Value> = query!(&mut con, "CF.INFO", "own");
    assert_eq!(info.len(), 16);
    assert_eq!(key_type(&mut con, "own"), "warden-cf");
    let e = reply(&mut con, &cmd_of!("CF.DEBUG", "own"));
    assert!(e.contains("warden-cf"), "{e}");
    let e = reply(&mut con, &cmd_of!("CF.RESERVE", "own", 100));
    assert!(e.contains("item exists"), "{e}");
    let v: Value = query!(&mut s.conn_resp3(), "CF.EXISTS", "own", "b");
    assert_eq!(v, Value::Boolean(true));
    // Its X chunks go through RedisBloom's names too.
    let mut it = 0i64;
    loop {
        let (next, data): (i64, Vec<u8>) = query!(&mut con, "CF.SCANDUMP", "own", it);
        if next == 0 {
            break;
        }
        let _: () = query!(&mut con, "CF.LOADCHUNK", "own-copy", next, data);
        it = next;
    }
    assert_eq!(key_type(&mut con, "own-copy"), "warden-cf");
    assert_eq!(digest(&mut con, "own-copy"), digest(&mut con, "own"));
    // The X names refuse RedisBloom's filters.
    let _: Value = query!(&mut con, "CF.ADD", "theirs", "a");
    assert_eq!(key_type(&mut con, "theirs"), "MBbloomCF");
    for c in [
        cmd_of!("CF.ADDX", "theirs", "a"),
        cmd_of!("CF.EXISTSX", "theirs", "a"),
        cmd_of!("CF.INFOX", "theirs"),
    ] {
        let e = reply(&mut con, &c);
        assert!(e.contains("WRONGTYPE"), "{e}");
    }
}

#[test]
fn corrupt_payloads_and_headers_are_refused_and_the_server_lives() {
    let mut s = Server::start_with(&[], ALIASES);
    let mut con = s.conn();
    write_filters(&mut con);
    let writes = |key: &str| {
        [
            cmd_of!("CF.ADD", key, "after"),
            cmd_of!("CF.INSERT", key, "ITEMS", "p", "q", "r", "s", "t"),
            cmd_of!("CF.DEL", key, "after"),
            cmd_of!("CF.COMPACT", key),
            cmd_of!("CF.SCANDUMP", key, 1),
        ]
    };
    let survive = |key: &str| [reads(&[key]), writes(key).to_vec()].concat();
    let payloads: Vec<Vec<u8>> = KEYS.iter().map(|k| dump(&mut con, k)).collect();
    assert!(mutated_restores(&mut s, &payloads, 0xbad, &survive("victim")) > 0);
    // Headers: RedisBloom's, with random fields changed.
    let (_, good): (i64, Vec<u8>) = query!(&mut con, "CF.SCANDUMP", "grown", 0);
    let mut rng = Rng(0xbad);
    let mut loaded = 0;
    for _ in 0..300 {
        let mut bad = good.clone();
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(bad.len());
            bad[at] = rng.next() as u8;
        }
        let _: () = query!(&mut con, "DEL", "header");
        let r = cmd_of!("CF.LOADCHUNK", "header", 1, bad).query::<Value>(&mut con);
        if r.is_ok_and(|v| is_ok(&v)) {
            loaded += 1;
            for c in survive("header") {
                let _ = c.query::<Value>(&mut con);
            }
        }
    }
    s.assert_alive();
    assert!(loaded > 0, "no changed header loaded");
}

/// Every field of a payload is checked: each forgery of
/// `redisbloom_payload::refusals` (bucket sizes, kicks and expansions past
/// 16 bits among them) answers `Bad data format`, and the server lives on.
#[test]
fn forged_payloads_are_refused() {
    assert_refused(&RB_CUCKOO);
}

/// Corrupt and forged payloads by the thousand: a payload the module takes is
/// a filter every command works on, read in range, and DUMPed and RESTOREd the
/// same.
#[test]
fn forged_payloads_never_harm_the_server() {
    let mut s = Server::start_with(&[], ALIASES);
    let mut con = s.conn();
    write_filters(&mut con);
    restore_forgeries(&mut con, &RB_CUCKOO, KEYS, 0xcf00);
    s.assert_alive();
}
