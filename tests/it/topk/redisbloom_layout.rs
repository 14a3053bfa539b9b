//! RedisBloom's top-k names under `aliases redisbloom` make RedisBloom's own
//! top-k (type `TopK-TYPE`): side by side with RedisBloom 2.8, a workload
//! without bucket conflicts (where RedisBloom draws no random decay) gets
//! the same replies and errors in RESP2 and RESP3; RedisBloom's RDB and AOF
//! load into warden and warden's into RedisBloom, answering the same; a
//! replica builds the same top-k even through decays; corrupt payloads are
//! refused without harm.

use crate::common::payload_forgeries::{assert_refused, restore_forgeries};
use crate::common::peer_modules::{
    aof_both_ways, in_both_protocols, memory_usage_comparable, mutated_restores, rdb_both_ways,
    reply, same, ALIASES,
};
use crate::common::*;
use crate::topk::kit::RB_TOPK;

/// Every command and refusal, on wide sketches (no two items share a bucket).
fn workload() -> Vec<redis::Cmd> {
    let mut calls = vec![
        cmd_of!("TOPK.RESERVE", "t", 5, 4000, 5, "0.9"),
        cmd_of!("TOPK.RESERVE", "t", 5),
        cmd_of!("TOPK.RESERVE", "bad", 0),
        cmd_of!("TOPK.RESERVE", "bad", "x"),
        cmd_of!("TOPK.RESERVE", "bad", 3, 0, 5, "0.9"),
        cmd_of!("TOPK.RESERVE", "bad", 3, 10, "x", "0.9"),
        cmd_of!("TOPK.RESERVE", "bad", 3, 10, 5, "1.5"),
        cmd_of!("TOPK.RESERVE", "bad", 3, 10, 5, 0),
        cmd_of!("TOPK.RESERVE", "bad", 3, 10),
        cmd_of!("TOPK.RESERVE", "small", 2, 3000, 4, "1"),
        cmd_of!("TOPK.ADD", "missing", "a"),
        // One pair only: RedisBloom counts the pairs before a bad one
        // (warden counts none).
        cmd_of!("TOPK.INCRBY", "t", "b", 100_001),
        cmd_of!("TOPK.INCRBY", "t", "a", 3),
        cmd_of!("TOPK.INCRBY", "t", "a", -1),
        cmd_of!("TOPK.INCRBY", "t", "a", 123_456),
        cmd_of!("TOPK.INCRBY", "t", "a"),
        cmd_of!("TOPK.LIST", "t", "WITHCOUNTS"),
        cmd_of!("TOPK.LIST", "t", "with"),
        cmd_of!("TOPK.LIST", "t", "x"),
        cmd_of!("TOPK.LIST", "missing"),
        cmd_of!("TOPK.INFO", "missing"),
        cmd_of!("SET", "string", "x"),
        cmd_of!("TOPK.ADD", "string", "a"),
        cmd_of!("TOPK.INFO", "string"),
        cmd_of!("TOPK.RESERVE", "string", 3),
    ];
    for i in 0..400u64 {
        let item = format!("i{}", (i * 7) % 23);
        calls.push(cmd_of!("TOPK.ADD", "t", &item, "z"));
        calls.push(cmd_of!("TOPK.INCRBY", "small", &item, 1 + i % 5));
    }
    calls
}

const KEYS: &[&str] = &["t", "small"];

/// The reads compared after a workload.
fn reads() -> Vec<redis::Cmd> {
    let mut calls = Vec::new();
    for k in KEYS {
        let items: Vec<String> = (0..23).map(|i| format!("i{i}")).collect();
        calls.push(cmd_of!("TOPK.INFO", *k));
        calls.push(cmd_of!("TOPK.LIST", *k));
        calls.push(cmd_of!("TOPK.LIST", *k, "withcount"));
        calls.push(cmd_of!("TOPK.QUERY", *k, items.clone(), "z", "none"));
        calls.push(cmd_of!("TOPK.COUNT", *k, items, "z", "none"));
        if memory_usage_comparable() {
            calls.push(cmd_of!("MEMORY", "USAGE", *k));
        }
        calls.push(cmd_of!("TYPE", *k));
    }
    calls
}

/// What both sides answer of every key.
fn answers(con: &mut Connection) -> Vec<String> {
    reads().iter().map(|c| reply(con, c)).collect()
}

fn write_sketches(con: &mut Connection) {
    for c in workload() {
        let _ = c.query::<Value>(con);
    }
    let _: () = query!(con, "DEL", "string");
}

#[test]
fn every_reply_is_redisblooms_in_both_protocols() {
    in_both_protocols(|rb, w, _| {
        for c in workload().iter().chain(reads().iter()) {
            same(rb, w, c);
        }
    });
}

/// A late add on warden.
fn late(con: &mut Connection) {
    let _: Value = query!(con, "TOPK.INCRBY", "t", "late", 50);
}

#[test]
fn rdb_files_move_both_ways() {
    let back = rdb_both_ways(write_sketches, late, answers);
    let v: Vec<i64> = query!(&mut back.conn(), "TOPK.COUNT", "t", "late");
    assert_eq!(v, [50]);
}

#[test]
fn aof_files_replay_both_ways() {
    let late = [cmd_of!("TOPK.ADD", "t", "after")];
    aof_both_ways(ALIASES, write_sketches, &late, answers);
}

/// A narrow sketch, where items share buckets and decay each other.
fn contested(con: &mut Connection) {
    let _: () = query!(con, "TOPK.RESERVE", "narrow", 4, 4, 2, "0.8");
    for i in 0..3_000u64 {
        let _: Value = query!(
            con,
            "TOPK.INCRBY",
            "narrow",
            format!("c{}", i % 37),
            1 + i % 4
        );
    }
}

#[test]
fn a_replica_builds_the_same_top_k_through_decays() {
    let master = Server::start_with(&[], ALIASES);
    let replica = master.start_replica(&[], ALIASES);
    let mut con = master.conn();
    write_sketches(&mut con);
    contested(&mut con);
    master.sync_replicas(1);
    let mut rc = replica.conn();
    for k in ["t", "small", "narrow"] {
        assert_eq!(dump(&mut rc, k), dump(&mut con, k), "{k}");
    }
    let listed: Vec<String> = query!(&mut con, "TOPK.LIST", "narrow");
    assert_eq!(listed.len(), 4);
}

#[test]
fn corrupt_payloads_are_refused_and_the_server_lives() {
    let mut s = Server::start_with(&[], ALIASES);
    let mut con = s.conn();
    write_sketches(&mut con);
    contested(&mut con);
    let payloads: Vec<Vec<u8>> = ["t", "small", "narrow"]
        .iter()
        .map(|k| dump(&mut con, *k))
        .collect();
    let exercise = [
        cmd_of!("TOPK.INFO", "victim"),
        cmd_of!("TOPK.LIST", "victim", "WITHCOUNT"),
        cmd_of!("TOPK.QUERY", "victim", "c1", "i2"),
        cmd_of!("TOPK.COUNT", "victim", "c1", "i2"),
        cmd_of!("TOPK.INCRBY", "victim", "c1", 1000),
        cmd_of!("TOPK.ADD", "victim", "new"),
    ];
    assert!(mutated_restores(&mut s, &payloads, 0x70bb, &exercise) > 0);
}

/// Every field of a payload is checked: each forgery of
/// `redisbloom_payload::refusals` (sizes whose bytes wrap to the buckets'
/// length, fingerprints not their items', an item twice among them) answers
/// `Bad data format`, and the server lives on.
#[test]
fn forged_payloads_are_refused() {
    assert_refused(&RB_TOPK);
}

/// Corrupt and forged payloads by the thousand: a payload the module takes is
/// a top-k every command works on, read in range, and DUMPed and RESTOREd
/// the same.
#[test]
fn forged_payloads_never_harm_the_server() {
    let mut s = Server::start_with(&[], ALIASES);
    let mut con = s.conn();
    write_sketches(&mut con);
    contested(&mut con);
    restore_forgeries(&mut con, &RB_TOPK, &["t", "small", "narrow"], 0x70b7);
    s.assert_alive();
}

/// RedisBloom saves an item up to its first NUL, under the fingerprint and
/// length of the whole item: its payload of items with a NUL inside loads
/// into warden and answers as RedisBloom answers it.
#[test]
fn items_with_a_nul_inside_load_from_redisbloom() {
    in_both_protocols(|rb, w, _| {
        let _: () = query!(rb, "TOPK.RESERVE", "bin", 3, 10, 2, "0.9");
        let items: [&[u8]; 4] = [b"a\0b", b"a\0c", b"\0x", b"plain"];
        let _: Value = query!(rb, "TOPK.ADD", "bin", &items[..]);
        let payload = dump(rb, "bin");
        for con in [&mut *rb, &mut *w] {
            let _: () = query!(con, "RESTORE", "back", 0, payload.clone());
        }
        for c in [
            cmd_of!("TOPK.LIST", "back", "WITHCOUNT"),
            cmd_of!("TOPK.QUERY", "back", "plain", "x"),
            cmd_of!("TOPK.COUNT", "back", "plain"),
            cmd_of!("TOPK.INFO", "back"),
        ] {
            same(rb, w, &c);
        }
    });
}

/// The empty item, saved as a lone NUL as an entry never filled is, is
/// still found once its top-k is RESTOREd: queried, counted and added to in
/// its entry, listed once, as RedisBloom does.
#[test]
fn the_empty_item_is_found_after_a_restore() {
    in_both_protocols(|rb, w, _| {
        for con in [&mut *rb, &mut *w] {
            let _: () = query!(con, "TOPK.RESERVE", "e", 3, 10, 2, "0.9");
            let _: Value = query!(con, "TOPK.ADD", "e", "", "", "a");
            let payload = dump(con, "e");
            let _: () = query!(con, "RESTORE", "back", 0, payload);
        }
        for c in [
            cmd_of!("TOPK.QUERY", "back", "", "a"),
            cmd_of!("TOPK.COUNT", "back", "", "a"),
            cmd_of!("TOPK.ADD", "back", ""),
            cmd_of!("TOPK.INCRBY", "back", "", 4),
            cmd_of!("TOPK.LIST", "back", "WITHCOUNT"),
        ] {
            same(rb, w, &c);
        }
    });
}
