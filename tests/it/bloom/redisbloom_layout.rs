//! RedisBloom's names under `aliases redisbloom` make RedisBloom's own
//! filters (type `MBbloom--`): side by side with RedisBloom 2.8 (its
//! `redisbloom.so`, fetched by `tests/bench/redisbloom.sh`), the same calls
//! get the same replies, errors and chunk streams, byte for byte; RedisBloom's
//! RDB files, AOF files and `DUMP` payloads load into warden and warden's
//! load back into RedisBloom; replicas and AOF replays rebuild the same
//! filters; warden's own filters keep answering under those names; and
//! corrupt payloads of the type are refused without harm.

use crate::bloom::kit::CHAIN;
use crate::common::payload_forgeries::{assert_refused, restore_forgeries};
use crate::common::peer_modules::{
    aof_both_ways, dumps_both_ways, memory_usage_comparable, mutated_restores, rdb_both_ways,
    redisbloom_server, reply, same, ALIASES,
};
use crate::common::*;

/// Every chunk of `key`'s `BF.SCANDUMP`, the header first.
fn chunks(con: &mut Connection, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut it = 0i64;
    loop {
        let (next, data): (i64, Vec<u8>) = query!(con, "BF.SCANDUMP", key, it);
        if next == 0 {
            return out;
        }
        out.push((next, data));
        it = next;
    }
}

/// The filters both sides make: every option, growth past several links,
/// a full non-scaling filter, refusals of every kind.
fn workload() -> Vec<redis::Cmd> {
    let mut calls = vec![
        cmd_of!("BF.RESERVE", "scaled", "0.01", 10, "EXPANSION", 3),
        cmd_of!("BF.RESERVE", "scaled", "0.01", 10),
        cmd_of!("BF.RESERVE", "bad", "x", 10),
        cmd_of!("BF.RESERVE", "bad", "1", 10),
        cmd_of!("BF.RESERVE", "bad", "0.1", 0),
        cmd_of!("BF.RESERVE", "bad", "0.1", "x"),
        cmd_of!("BF.RESERVE", "bad", "0.1", 10, "EXPANSION"),
        cmd_of!("BF.RESERVE", "bad", "0.1", 10, "EXPANSION", 0),
        cmd_of!("BF.RESERVE", "bad", "0.1", 10, "EXPANSION", "x"),
        cmd_of!("BF.RESERVE", "bad", "0.1", 10, "NONSCALING", "EXPANSION", 2),
        cmd_of!("BF.RESERVE", "bad", "0.1", 10, "a", "b", "c", "d"),
        cmd_of!("BF.RESERVE", "lenient", "0.1", 10, "foo"),
        cmd_of!("BF.RESERVE", "nonscaling", "0.001", 5, "NONSCALING"),
        cmd_of!(
            "BF.INSERT",
            "ins",
            "CAPACITY",
            5,
            "ERROR",
            "0.001",
            "ITEMS",
            "a",
            "b",
            "c",
            "d",
            "e",
            "f",
            "g"
        ),
        cmd_of!("BF.INSERT", "nocreate", "NOCREATE", "ITEMS", "a"),
        cmd_of!(
            "BF.INSERT",
            "full",
            "NONSCALING",
            "CAPACITY",
            2,
            "ITEMS",
            "a",
            "b",
            "c",
            "d"
        ),
        cmd_of!("BF.INSERT", "bad", "bogus", "ITEMS", "a"),
        cmd_of!("BF.INSERT", "bad", "CAPACITY"),
        cmd_of!("BF.INSERT", "bad", "ITEMS"),
        cmd_of!("BF.INSERT", "bad", "CAPACITY", "x", "ITEMS", "a"),
        cmd_of!("BF.INSERT", "bad", "ERROR", 2, "ITEMS", "a"),
        cmd_of!("BF.INSERT", "bad", "EXPANSION", 0, "ITEMS", "a"),
        cmd_of!("BF.INSERT", "expand4", "EXPANSION", 4, "ITEMS", "q"),
        cmd_of!("BF.MADD", "auto", "a", "b", "a"),
        cmd_of!("BF.ADD", "auto", "a"),
        cmd_of!("SET", "string", "x"),
        cmd_of!("BF.ADD", "string", "x"),
        cmd_of!("BF.EXISTS", "string", "x"),
        cmd_of!("BF.MEXISTS", "string", "x", "y"),
        cmd_of!("BF.CARD", "string"),
        cmd_of!("BF.CARD", "missing"),
        cmd_of!("BF.INFO", "missing"),
        cmd_of!("BF.DEBUG", "missing"),
        cmd_of!("BF.SCANDUMP", "missing", 0),
        cmd_of!("BF.LOADCHUNK", "missing", 2, "y"),
    ];
    for i in 0..300 {
        calls.push(cmd_of!("BF.ADD", "scaled", format!("item{i}")));
        calls.push(cmd_of!("BF.ADD", "nonscaling", format!("item{i}")));
    }
    let batch: Vec<String> = (0..2_000).map(|i| format!("m{i}")).collect();
    calls.push(cmd_of!("BF.MADD", "auto", batch.clone()));
    calls.push(cmd_of!("BF.INSERT", "ins", "ITEMS", batch));
    calls
}

/// The reads compared after a workload: every key's INFO (all and each
/// field), DEBUG, CARD, chunks, and presence of items in and out.
fn reads(keys: &[&str]) -> Vec<redis::Cmd> {
    let mut calls = Vec::new();
    for k in keys {
        calls.push(cmd_of!("BF.INFO", *k));
        for f in ["CAPACITY", "size", "Filters", "ITEMS", "EXPANSION", "bogus"] {
            calls.push(cmd_of!("BF.INFO", *k, f));
        }
        calls.push(cmd_of!("BF.DEBUG", *k));
        calls.push(cmd_of!("BF.CARD", *k));
        if memory_usage_comparable() {
            calls.push(cmd_of!("MEMORY", "USAGE", *k));
        }
        calls.push(cmd_of!("TYPE", *k));
        let probe: Vec<String> = (0..3_000).map(|i| format!("item{i}")).collect();
        calls.push(cmd_of!("BF.MEXISTS", *k, probe));
        let probe: Vec<String> = (0..3_000).map(|i| format!("m{i}")).collect();
        calls.push(cmd_of!("BF.MEXISTS", *k, probe));
    }
    calls
}

const KEYS: &[&str] = &[
    "scaled",
    "lenient",
    "nonscaling",
    "ins",
    "full",
    "expand4",
    "auto",
];

#[test]
fn every_reply_is_redisblooms_in_both_protocols() {
    let rb_server = redisbloom_server(&[]);
    let w_server = Server::start_with(&[], ALIASES);
    for resp3 in [false, true] {
        let (mut rb, mut w) = match resp3 {
            false => (rb_server.conn(), w_server.conn()),
            true => (rb_server.conn_resp3(), w_server.conn_resp3()),
        };
        let _: () = query!(&mut rb, "FLUSHALL");
        let _: () = query!(&mut w, "FLUSHALL");
        for c in workload().iter().chain(reads(KEYS).iter()) {
            same(&mut rb, &mut w, c);
        }
        for k in KEYS {
            assert_eq!(chunks(&mut w, k), chunks(&mut rb, k), "{k}");
            // Any iterator answers, inside a link or past the end.
            let size: Vec<i64> = query!(&mut rb_server.conn(), "BF.INFO", *k, "SIZE");
            let size = size[0];
            for it in (0..size + 40).step_by(7) {
                same(&mut rb, &mut w, &cmd_of!("BF.SCANDUMP", *k, it));
            }
        }
        // Chunks of random sizes at random iterators into a live filter:
        // written where RedisBloom writes them, or refused with its texts.
        let mut rng = 0x5eed_u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for _ in 0..200 {
            let len = (next() % 120) as usize;
            let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let it = (next() % 400) as i64 - 20;
            same(
                &mut rb,
                &mut w,
                &cmd_of!("BF.LOADCHUNK", "scaled", it, data),
            );
        }
        same(&mut rb, &mut w, &cmd_of!("BF.DEBUG", "scaled"));
        assert_eq!(chunks(&mut w, "scaled"), chunks(&mut rb, "scaled"));
    }
}

/// A key and its `BF.SCANDUMP` chunks.
type Dumped = (Vec<u8>, Vec<(i64, Vec<u8>)>);

/// Each side's chunk streams of every key, which must be equal.
fn all_chunks(con: &mut Connection) -> Vec<Dumped> {
    let mut keys: Vec<Vec<u8>> = query!(con, "KEYS", "*");
    keys.sort();
    keys.into_iter()
        .map(|k| {
            let name = String::from_utf8(k.clone()).unwrap();
            (k, chunks(con, &name))
        })
        .collect()
}

/// Runs the workload's writes (not the string key) on `con`.
fn write_filters(con: &mut Connection) {
    for c in workload() {
        let _ = c.query::<Value>(con);
    }
    let _: () = query!(con, "DEL", "string");
}

/// More adds and a new key on warden, after RedisBloom's file loaded as
/// RedisBloom's type.
fn more_on_warden(con: &mut Connection) {
    assert_eq!(key_type(con, "scaled"), "MBbloom--");
    let more: Vec<String> = (0..5_000).map(|i| format!("more{i}")).collect();
    let _: Value = query!(con, "BF.MADD", "scaled", more);
    let _: () = query!(con, "BF.RESERVE", "fresh", "0.001", 77);
    let _: Value = query!(con, "BF.ADD", "fresh", "z");
}

#[test]
fn rdb_files_move_both_ways() {
    let back = rdb_both_ways(write_filters, more_on_warden, all_chunks);
    let v: i64 = query!(&mut back.conn(), "BF.EXISTS", "scaled", "more4999");
    assert_eq!(v, 1);
}

#[test]
fn dump_payloads_move_both_ways() {
    let (rb, w) = dumps_both_ways(write_filters, KEYS);
    assert_eq!(all_chunks(&mut w.conn()), all_chunks(&mut rb.conn()));
}

/// The filters and a late add, which both AOF tests write.
fn write_filters_and_more(con: &mut Connection) {
    write_filters(con);
    let _: Value = query!(
        con,
        "BF.INSERT",
        "late",
        "CAPACITY",
        3,
        "ITEMS",
        "a",
        "b",
        "c",
        "d"
    );
}

#[test]
fn redisblooms_aof_replays_into_warden_and_wardens_into_redisbloom() {
    let late = [cmd_of!("BF.MADD", "scaled", "after1", "after2")];
    aof_both_ways(ALIASES, write_filters_and_more, &late, all_chunks);
}

#[test]
fn a_replica_with_the_option_builds_the_same_filters() {
    let master = Server::start_with(&[], ALIASES);
    let replica = master.start_replica(&[], ALIASES);
    let mut con = master.conn();
    write_filters(&mut con);
    // A filter created by an add with other defaults on the replica.
    let mut rc = replica.conn();
    let _: () = query!(&mut rc, "CONFIG", "SET", "warden.bf-error-rate", "0.2");
    let _: Value = query!(&mut con, "BF.ADD", "defaults", "x");
    master.sync_replicas(1);
    assert_eq!(all_chunks(&mut rc), all_chunks(&mut con));
    assert_eq!(db_digest(&mut rc), db_digest(&mut con));
}

#[test]
fn wardens_own_filters_answer_under_redisblooms_names() {
    let s = Server::start_with(&[], ALIASES);
    let mut con = s.conn();
    let _: () = query!(&mut con, "BF.RESERVEX", "own", "0.01", 100);
    let v: i64 = query!(&mut con, "BF.ADD", "own", "a");
    assert_eq!(v, 1);
    let v: Vec<i64> = query!(&mut con, "BF.MADD", "own", "a", "b");
    assert_eq!(v, [0, 1]);
    let v: i64 = query!(&mut con, "BF.EXISTS", "own", "b");
    assert_eq!(v, 1);
    let v: i64 = query!(&mut con, "BF.CARD", "own");
    assert_eq!(v, 2);
    assert_eq!(key_type(&mut con, "own"), "warden-bf");
    let e = reply(&mut con, &cmd_of!("BF.DEBUG", "own"));
    assert!(e.contains("warden-bf"), "{e}");
    // Its X chunks go through RedisBloom's names too.
    let mut it = 0i64;
    loop {
        let (next, data): (i64, Vec<u8>) = query!(&mut con, "BF.SCANDUMP", "own", it);
        if next == 0 {
            break;
        }
        let _: () = query!(&mut con, "BF.LOADCHUNK", "own-copy", next, data);
        it = next;
    }
    assert_eq!(key_type(&mut con, "own-copy"), "warden-bf");
    assert_eq!(digest(&mut con, "own-copy"), digest(&mut con, "own"));
    // The X names refuse RedisBloom's filters.
    let _: Value = query!(&mut con, "BF.ADD", "theirs", "a");
    let e = reply(&mut con, &cmd_of!("BF.ADDX", "theirs", "a"));
    assert!(e.contains("WRONGTYPE"), "{e}");
}

#[test]
fn corrupt_payloads_are_refused_and_the_server_lives() {
    let mut s = Server::start_with(&[], ALIASES);
    let mut con = s.conn();
    write_filters(&mut con);
    let payloads: Vec<Vec<u8>> = KEYS.iter().map(|k| dump(&mut con, *k)).collect();
    let mut exercise = reads(&["victim"]);
    exercise.push(cmd_of!("BF.ADD", "victim", "after"));
    assert!(mutated_restores(&mut s, &payloads, 0xbad, &exercise) > 0);
}

/// RedisBloom 8's `test_load_bloom_with_large_number_of_filters`: a filter
/// of capacity 1 and expansion 1 takes items in a thousand links and more
/// (until its halved error rate reaches 0 and no link can be made, as in
/// RedisBloom), and reloads whole.
#[test]
fn a_filter_of_thousands_of_links_reloads() {
    let s = Server::start_with(&[], ALIASES);
    let mut con = s.conn();
    let _: () = query!(&mut con, "BF.RESERVE", "poc", "0.0001", 1, "EXPANSION", 1);
    let items: Vec<String> = (10_000..15_000).map(|i| i.to_string()).collect();
    let added: Vec<bool> = items
        .iter()
        .map(|i| !reply(&mut con, &cmd_of!("BF.ADD", "poc", i)).starts_with("error"))
        .collect();
    let refused = added.iter().filter(|a| !**a).count();
    let links: Vec<i64> = query!(&mut con, "BF.INFO", "poc", "FILTERS");
    assert!(
        links[0] > 1_000 && refused > 0,
        "{links:?} links, {refused} refused"
    );
    let before = chunks(&mut con, "poc");
    debug_reload(&mut con);
    assert_eq!(chunks(&mut con, "poc"), before);
    let kept: Vec<&String> = items
        .iter()
        .zip(added.iter())
        .filter(|(_, a)| **a)
        .map(|(i, _)| i)
        .collect();
    let found: Vec<i64> = query!(&mut con, "BF.MEXISTS", "poc", kept);
    assert!(found.iter().all(|&f| f == 1));
}

/// Every field of a payload is checked: each forgery of
/// `redisbloom_payload::chain_refusals` (bits per item no rate gives among
/// them, with the hash counts they give) answers `Bad data format`, and the
/// server lives on.
#[test]
fn forged_payloads_are_refused() {
    assert_refused(&CHAIN);
}

/// Corrupt and forged payloads by the thousand: a payload the module takes is
/// a filter every command works on, read in range, and DUMPed and RESTOREd the
/// same.
#[test]
fn forged_payloads_never_harm_the_server() {
    let mut s = Server::start_with(&[], ALIASES);
    let mut con = s.conn();
    write_filters(&mut con);
    restore_forgeries(&mut con, &CHAIN, KEYS, 0xb100);
    s.assert_alive();
}

/// A filter whose items sum to the top of their range (a payload may say so)
/// refuses an add that would pass it, and keeps a value that DUMPs and
/// RESTOREs: a wrapped count would no longer be its links' sum, and its RDB
/// and DUMP would no longer load.
#[test]
fn an_add_past_the_items_range_is_refused() {
    use crate::bloom::redisbloom_payload::{link_count, link_field};
    use crate::common::payload::{encode, parse_dump, Field};
    let mut s = Server::start_with(&[], ALIASES);
    let mut con = s.conn();
    ok(
        &mut con,
        &cmd_of!("BF.RESERVE", "top", 0.01, 10, "EXPANSION", 2),
    );
    for i in 0..30 {
        let _: Value = query!(&mut con, "BF.ADD", "top", format!("i{i}"));
    }
    let mut d = parse_dump(&dump(&mut con, "top"));
    let links = link_count(&d).expect("a filter's layout");
    assert!(links >= 2, "{links} links");
    for l in 0..links {
        d.fields[link_field(l, 7)] = Field::U(0);
    }
    d.fields[link_field(0, 0)] = Field::U(u64::MAX);
    d.fields[link_field(0, 7)] = Field::U(u64::MAX);
    d.fields[0] = Field::U(u64::MAX);
    ok(
        &mut con,
        &cmd_of!("RESTORE", "top", 0, encode(&d), "REPLACE"),
    );
    let before = digest(&mut con, "top");
    let e = err_of(&raw(&mut con, &cmd_of!("BF.ADD", "top", "one-more")));
    assert_eq!(e.as_deref(), Some("ERR problem inserting into filter"));
    assert_eq!(digest(&mut con, "top"), before, "a refused add changed it");
    let payload = dump(&mut con, "top");
    ok(&mut con, &cmd_of!("RESTORE", "again", 0, payload));
    assert_eq!(digest(&mut con, "again"), before);
    s.assert_alive();
}
