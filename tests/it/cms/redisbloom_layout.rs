//! RedisBloom's count-min names under `aliases redisbloom` make RedisBloom's
//! own sketches (type `CMSk-TYPE`): side by side with RedisBloom 2.8, the
//! same calls get the same replies and errors in RESP2 and RESP3 and the
//! same `DUMP` payloads; RedisBloom's RDB and AOF load into warden and
//! warden's into RedisBloom; a replica builds the same sketches; corrupt
//! payloads are refused without harm.

use crate::cms::kit::RB_SKETCH;
use crate::common::payload_forgeries::{assert_refused, restore_forgeries};
use crate::common::peer_modules::{
    aof_both_ways, in_both_protocols, memory_usage_comparable, mutated_restores, rdb_both_ways,
    same, ALIASES,
};
use crate::common::*;

/// Every command and refusal, then a stream of increments.
fn workload() -> Vec<redis::Cmd> {
    let mut calls = vec![
        cmd_of!("CMS.INITBYDIM", "a", 100, 5),
        cmd_of!("CMS.INITBYDIM", "a", 100, 5),
        cmd_of!("CMS.INITBYDIM", "bad", 0, 5),
        cmd_of!("CMS.INITBYDIM", "bad", "x", 5),
        cmd_of!("CMS.INITBYDIM", "bad", 10, -1),
        cmd_of!("CMS.INITBYPROB", "p", "0.001", "0.01"),
        cmd_of!("CMS.INITBYPROB", "bad", 0, "0.01"),
        cmd_of!("CMS.INITBYPROB", "bad", "0.1", 1),
        cmd_of!("CMS.INITBYPROB", "bad", "x", "0.5"),
        cmd_of!("CMS.INITBYPROB", "bad", "0.9", "0.9999999999999999"),
        cmd_of!("CMS.INITBYPROB", "bad", "0.0000000000000000001", "0.9"),
        cmd_of!("CMS.INITBYDIM", "bad", 8_589_934_592u64, 8_589_934_592u64),
        cmd_of!("CMS.INITBYDIM", "b", 100, 5),
        cmd_of!("CMS.INITBYDIM", "c", 50, 3),
        cmd_of!("CMS.INCRBY", "a", "x", 3, "y", 4),
        cmd_of!("CMS.INCRBY", "a", "x", -1),
        cmd_of!("CMS.INCRBY", "a", "x", "z"),
        cmd_of!("CMS.INCRBY", "missing", "x", 1),
        cmd_of!("CMS.INCRBY", "a", "x"),
        cmd_of!("CMS.INCRBY", "a", "big", 4_294_967_294u64),
        cmd_of!("CMS.INCRBY", "a", "big", 5, "x", 1),
        cmd_of!("CMS.INCRBY", "a", "huge", 4_294_967_296u64),
        cmd_of!("CMS.QUERY", "a", "x", "y", "big", "none"),
        cmd_of!("CMS.QUERY", "missing", "x"),
        cmd_of!("CMS.INCRBY", "b", "x", 10, "q", 3),
        cmd_of!("CMS.MERGE", "a", 2, "b", "b"),
        cmd_of!("CMS.MERGE", "a", 2, "a", "b", "WEIGHTS", 2, 3),
        cmd_of!("CMS.MERGE", "a", 1, "c"),
        cmd_of!("CMS.MERGE", "missing", 1, "a"),
        cmd_of!("CMS.MERGE", "a", "x", "b"),
        cmd_of!("CMS.MERGE", "a", 2, "b"),
        cmd_of!("CMS.MERGE", "a", 1, "b", "WEIGHTS"),
        cmd_of!("CMS.MERGE", "a", 1, "b", "WEIGHTS", "x"),
        cmd_of!("CMS.MERGE", "a", 1, "missing"),
        cmd_of!("CMS.MERGE", "a", 1, "b", "WEIGHTS", -100),
        cmd_of!("CMS.MERGE", "a", 0, "b"),
        cmd_of!("CMS.MERGE", "a", -1, "b"),
        cmd_of!("SET", "string", "x"),
        cmd_of!("CMS.INFO", "string"),
        cmd_of!("CMS.INCRBY", "string", "a", 1),
        cmd_of!("CMS.INITBYDIM", "string", 1, 1),
        cmd_of!("CMS.MERGE", "a", 1, "string"),
        cmd_of!("CMS.INFO", "missing"),
    ];
    for i in 0..600u64 {
        calls.push(cmd_of!(
            "CMS.INCRBY",
            "b",
            format!("k{}", i % 97),
            i % 17,
            "z",
            1
        ));
    }
    calls
}

const KEYS: &[&str] = &["a", "b", "c", "p"];

/// The reads compared after a workload.
fn reads() -> Vec<redis::Cmd> {
    let mut calls = Vec::new();
    for k in KEYS {
        calls.push(cmd_of!("CMS.INFO", *k));
        if memory_usage_comparable() {
            calls.push(cmd_of!("MEMORY", "USAGE", *k));
        }
        calls.push(cmd_of!("TYPE", *k));
        let items: Vec<String> = (0..120).map(|i| format!("k{i}")).collect();
        calls.push(cmd_of!("CMS.QUERY", *k, items, "x", "y", "q", "z", "big"));
    }
    calls
}

#[test]
fn every_reply_is_redisblooms_in_both_protocols() {
    in_both_protocols(|rb, w, _| {
        for c in workload().iter().chain(reads().iter()) {
            same(rb, w, c);
        }
        for k in KEYS {
            assert_eq!(dump(w, *k), dump(rb, *k), "{k}");
        }
    });
}

/// The `DUMP` of every count-min key, by name.
fn dumps(con: &mut Connection) -> Vec<(String, Vec<u8>)> {
    let mut keys: Vec<String> = query!(con, "KEYS", "*");
    keys.sort();
    let mut out = Vec::new();
    for k in keys {
        if key_type(con, &k) == "CMSk-TYPE" {
            let d = dump(con, &k);
            out.push((k, d));
        }
    }
    out
}

fn write_sketches(con: &mut Connection) {
    for c in workload() {
        let _ = c.query::<Value>(con);
    }
    let _: () = query!(con, "DEL", "string");
}

/// More counts and a new sketch on warden.
fn more(con: &mut Connection) {
    let _: Value = query!(con, "CMS.INCRBY", "b", "after", 7);
    let _: () = query!(con, "CMS.INITBYDIM", "fresh", 9, 2);
}

#[test]
fn rdb_files_and_dumps_move_both_ways() {
    let back = rdb_both_ways(write_sketches, more, dumps);
    let v: Vec<i64> = query!(&mut back.conn(), "CMS.QUERY", "b", "after");
    assert!(v[0] >= 7);
    assert_eq!(dumps(&mut back.conn()).len(), KEYS.len() + 1);
}

#[test]
fn aof_files_replay_both_ways() {
    aof_both_ways(
        ALIASES,
        write_sketches,
        &[cmd_of!("CMS.INCRBY", "a", "late", 2)],
        dumps,
    );
}

#[test]
fn a_replica_with_the_option_builds_the_same_sketches() {
    let master = Server::start_with(&[], ALIASES);
    let replica = master.start_replica(&[], ALIASES);
    let mut con = master.conn();
    write_sketches(&mut con);
    master.sync_replicas(1);
    let mut rc = replica.conn();
    assert_eq!(dumps(&mut rc), dumps(&mut con));
}

#[test]
fn corrupt_payloads_are_refused_and_the_server_lives() {
    let mut s = Server::start_with(&[], ALIASES);
    let mut con = s.conn();
    write_sketches(&mut con);
    let payloads: Vec<Vec<u8>> = KEYS.iter().map(|k| dump(&mut con, *k)).collect();
    let exercise = [
        cmd_of!("CMS.INFO", "victim"),
        cmd_of!("CMS.QUERY", "victim", "x", "y"),
        cmd_of!("CMS.INCRBY", "victim", "x", 1),
        cmd_of!("CMS.MERGE", "victim", 1, "victim"),
    ];
    assert!(mutated_restores(&mut s, &payloads, 0xc0ffee, &exercise) > 0);
}

/// Every field of a payload is checked: each forgery of
/// `redisbloom_payload::refusals` answers `Bad data format`, and the server
/// lives on.
#[test]
fn forged_payloads_are_refused() {
    assert_refused(&RB_SKETCH);
}

/// Corrupt and forged payloads by the thousand: a payload the module takes is
/// a sketch every command works on, read in range, and DUMPed and RESTOREd
/// the same.
#[test]
fn forged_payloads_never_harm_the_server() {
    let mut s = Server::start_with(&[], ALIASES);
    let mut con = s.conn();
    write_sketches(&mut con);
    restore_forgeries(&mut con, &RB_SKETCH, KEYS, 0xc3c3);
    s.assert_alive();
}
