//! RedisBloom's top-k names under `aliases redisbloom` make RedisBloom's own
//! top-k (type `TopK-TYPE`): side by side with RedisBloom 2.8, a workload
//! without bucket conflicts (where RedisBloom draws no random decay) gets
//! the same replies and errors in RESP2 and RESP3; RedisBloom's RDB and AOF
//! load into warden and warden's into RedisBloom, answering the same; a
//! replica builds the same top-k even through decays; corrupt payloads are
//! refused without harm.

use crate::common::peer_modules::{
    aux_is_optional, copy_dir, memory_usage_comparable, redisbloom, redisbloom_server, reply, same,
};
use crate::common::*;

const ALIASES: &[&str] = &["aliases", "redisbloom"];

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
    let rb_server = redisbloom_server(&[]);
    let w_server = Server::start_with(&[], ALIASES);
    for resp3 in [false, true] {
        let (mut rb, mut w) = match resp3 {
            false => (rb_server.conn(), w_server.conn()),
            true => (rb_server.conn_resp3(), w_server.conn_resp3()),
        };
        let _: () = query!(&mut rb, "FLUSHALL");
        let _: () = query!(&mut w, "FLUSHALL");
        for c in workload().iter().chain(reads().iter()) {
            same(&mut rb, &mut w, c);
        }
    }
}

#[test]
fn rdb_files_move_both_ways() {
    let rb = redisbloom_server(&[]);
    let mut rbc = rb.conn();
    write_sketches(&mut rbc);
    let theirs = answers(&mut rbc);
    let _: () = query!(&mut rbc, "SAVE");
    let w = Server::start_with(&[], ALIASES);
    std::fs::copy(rb.dir.join("dump.rdb"), w.dir.join("dump.rdb")).unwrap();
    let mut wc = w.conn();
    let _: () = query!(&mut wc, "DEBUG", "RELOAD", "NOSAVE");
    assert_eq!(answers(&mut wc), theirs);
    let _: Value = query!(&mut wc, "TOPK.INCRBY", "t", "late", 50);
    let ours = answers(&mut wc);
    let back = redisbloom_server(&[]);
    let mut backc = back.conn();
    if aux_is_optional() {
        let _: () = query!(&mut wc, "SAVE");
        std::fs::copy(w.dir.join("dump.rdb"), back.dir.join("dump.rdb")).unwrap();
        let _: () = query!(&mut backc, "DEBUG", "RELOAD", "NOSAVE");
    } else {
        for k in KEYS {
            let payload = dump(&mut wc, *k);
            let _: () = query!(&mut backc, "RESTORE", *k, 0, payload);
        }
    }
    assert_eq!(answers(&mut backc), ours);
    let v: Vec<i64> = query!(&mut backc, "TOPK.COUNT", "t", "late");
    assert_eq!(v, [50]);
}

#[test]
fn aof_files_replay_both_ways() {
    for preamble in ["no", "yes"] {
        let args = ["--appendonly", "yes", "--aof-use-rdb-preamble", preamble];
        let rb = redisbloom_server(&args);
        rb.wait_aof_rewrite_idle();
        let mut rbc = rb.conn();
        write_sketches(&mut rbc);
        rb.bgrewriteaof();
        let _: Value = query!(&mut rbc, "TOPK.ADD", "t", "after");
        let theirs = answers(&mut rbc);
        let mut w = Server::start_with(&args, ALIASES);
        w.kill();
        let _ = std::fs::remove_dir_all(w.dir.join("appendonlydir"));
        copy_dir(&rb.dir.join("appendonlydir"), &w.dir.join("appendonlydir"));
        w.crash_and_restart();
        let mut wc = w.loaded_conn();
        assert_eq!(answers(&mut wc), theirs, "preamble {preamble}");
        let _: () = query!(&mut wc, "FLUSHALL");
        write_sketches(&mut wc);
        w.bgrewriteaof();
        let _: Value = query!(&mut wc, "TOPK.ADD", "small", "later");
        let ours = answers(&mut wc);
        if preamble == "yes" && !aux_is_optional() {
            continue;
        }
        let mut back = Server::start_bare(None);
        back.kill();
        copy_dir(
            &w.dir.join("appendonlydir"),
            &back.dir.join("appendonlydir"),
        );
        back.set_args(&["--appendonly", "yes", "--loadmodule", &redisbloom()]);
        back.crash_and_restart();
        let mut backc = back.loaded_conn();
        assert_eq!(answers(&mut backc), ours, "preamble {preamble}");
    }
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
    let mut rng = 0x70bb_u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut refused = 0;
    for k in ["t", "small", "narrow"] {
        let payload = dump(&mut con, k);
        for _ in 0..300 {
            let mut bad = payload.clone();
            for _ in 0..1 + next() % 4 {
                let at = (next() as usize) % bad.len();
                bad[at] = next() as u8;
            }
            let r: redis::RedisResult<()> = cmd("RESTORE")
                .arg("victim")
                .arg(0)
                .arg(bad)
                .arg("REPLACE")
                .query(&mut con);
            if r.is_err() {
                refused += 1;
                continue;
            }
            for c in [
                cmd_of!("TOPK.INFO", "victim"),
                cmd_of!("TOPK.LIST", "victim", "WITHCOUNT"),
                cmd_of!("TOPK.QUERY", "victim", "c1", "i2"),
                cmd_of!("TOPK.COUNT", "victim", "c1", "i2"),
                cmd_of!("TOPK.INCRBY", "victim", "c1", 1000),
                cmd_of!("TOPK.ADD", "victim", "new"),
            ] {
                let _ = reply(&mut con, &c);
            }
        }
    }
    s.assert_alive();
    assert!(refused > 0);
}
