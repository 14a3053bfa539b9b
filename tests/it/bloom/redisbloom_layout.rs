//! RedisBloom's names under `aliases redisbloom` make RedisBloom's own
//! filters (type `MBbloom--`): side by side with RedisBloom 2.8 (its
//! `redisbloom.so`, fetched by `tests/bench/redisbloom.sh`), the same calls
//! get the same replies, errors and chunk streams, byte for byte; RedisBloom's
//! RDB files, AOF files and `DUMP` payloads load into warden and warden's
//! load back into RedisBloom; replicas and AOF replays rebuild the same
//! filters; warden's own filters keep answering under those names; and
//! corrupt payloads of the type are refused without harm.

use crate::common::peer_modules::{aux_is_optional, redisbloom, redisbloom_server, reply, same};
use crate::common::*;

const ALIASES: &[&str] = &["aliases", "redisbloom"];

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
        calls.push(cmd_of!("MEMORY", "USAGE", *k));
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

/// Runs the workload's writes (not the string key) on `con`.
fn write_filters(con: &mut Connection) {
    for c in workload() {
        let _ = c.query::<Value>(con);
    }
    let _: () = query!(con, "DEL", "string");
}

#[test]
fn rdb_files_move_both_ways() {
    // RedisBloom's file, loaded by warden.
    let rb = redisbloom_server(&[]);
    let mut rbc = rb.conn();
    write_filters(&mut rbc);
    let theirs = all_chunks(&mut rbc);
    let _: () = query!(&mut rbc, "SAVE");
    let w = Server::start_with(&[], ALIASES);
    std::fs::copy(rb.dir.join("dump.rdb"), w.dir.join("dump.rdb")).unwrap();
    let mut wc = w.conn();
    let _: () = query!(&mut wc, "DEBUG", "RELOAD", "NOSAVE");
    assert_eq!(all_chunks(&mut wc), theirs);
    assert_eq!(key_type(&mut wc, "scaled"), "MBbloom--");
    // More adds and a new key on warden, then back to RedisBloom.
    let more: Vec<String> = (0..5_000).map(|i| format!("more{i}")).collect();
    let _: Value = query!(&mut wc, "BF.MADD", "scaled", more.clone());
    let _: () = query!(&mut wc, "BF.RESERVE", "fresh", "0.001", 77);
    let _: Value = query!(&mut wc, "BF.ADD", "fresh", "z");
    let ours = all_chunks(&mut wc);
    // An RDB holds warden's aux field unless the server lets a module save
    // none (aux_save2: Redis 7.2+, Valkey); there, DUMP payloads move instead.
    let back = redisbloom_server(&[]);
    let mut backc = back.conn();
    if aux_is_optional() {
        let _: () = query!(&mut wc, "SAVE");
        std::fs::copy(w.dir.join("dump.rdb"), back.dir.join("dump.rdb")).unwrap();
        let _: () = query!(&mut backc, "DEBUG", "RELOAD", "NOSAVE");
    } else {
        let keys: Vec<String> = query!(&mut wc, "KEYS", "*");
        for k in keys {
            let payload = dump(&mut wc, &k);
            let _: () = query!(&mut backc, "RESTORE", &k, 0, payload);
        }
    }
    assert_eq!(all_chunks(&mut backc), ours);
    let v: i64 = query!(&mut backc, "BF.EXISTS", "scaled", "more4999");
    assert_eq!(v, 1);
}

#[test]
fn dump_payloads_move_both_ways() {
    let rb = redisbloom_server(&[]);
    let w = Server::start_with(&[], ALIASES);
    let (mut rbc, mut wc) = (rb.conn(), w.conn());
    write_filters(&mut rbc);
    for k in KEYS {
        let payload = dump(&mut rbc, *k);
        let _: () = query!(&mut wc, "RESTORE", *k, 0, payload.clone());
        // warden's own payload of the same filter is RedisBloom's.
        assert_eq!(dump(&mut wc, *k), payload, "{k}");
    }
    assert_eq!(all_chunks(&mut wc), all_chunks(&mut rbc));
}

#[test]
fn redisblooms_aof_replays_into_warden_and_wardens_into_redisbloom() {
    for preamble in ["no", "yes"] {
        let args = ["--appendonly", "yes", "--aof-use-rdb-preamble", preamble];
        // RedisBloom's AOF (its writes, then a rewrite and more writes).
        let rb = redisbloom_server(&args);
        rb.wait_aof_rewrite_idle();
        let mut rbc = rb.conn();
        write_filters(&mut rbc);
        rb.bgrewriteaof();
        let _: Value = query!(&mut rbc, "BF.MADD", "scaled", "after1", "after2");
        let theirs = all_chunks(&mut rbc);
        assert_eq!(theirs.len(), KEYS.len());
        let mut w = Server::start_with(&args, ALIASES);
        w.kill();
        let aof = w.dir.join("appendonlydir");
        let _ = std::fs::remove_dir_all(&aof);
        copy_dir(&rb.dir.join("appendonlydir"), &aof);
        w.crash_and_restart();
        let mut wc = w.loaded_conn();
        assert_eq!(all_chunks(&mut wc), theirs, "preamble {preamble}");
        // warden's own AOF (effects under RedisBloom's names, a rewrite) into RedisBloom.
        let _: () = query!(&mut wc, "FLUSHALL");
        write_filters(&mut wc);
        w.bgrewriteaof();
        let _: Value = query!(&mut wc, "BF.MADD", "scaled", "late1", "late2");
        let _: Value = query!(
            &mut wc,
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
        let ours = all_chunks(&mut wc);
        // An RDB preamble holds warden's aux field where it cannot be left out.
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
        assert_eq!(all_chunks(&mut backc), ours, "preamble {preamble}");
    }
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
    let mut rng = 0xbad_u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut refused = 0;
    for k in KEYS {
        let payload = dump(&mut con, *k);
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
            } else {
                // What loaded answers every read.
                for c in reads(&["victim"]) {
                    let _ = c.query::<Value>(&mut con);
                }
                let _: Value = query!(&mut con, "BF.ADD", "victim", "after");
            }
        }
    }
    s.assert_alive();
    assert!(refused > 0);
}
