//! The fencing floor through every file and at the edge of the token space
//! (SPEC "Failover epochs"): after RDB, AOF with and without the preamble,
//! an AOF rewrite, a replica's full sync, `DEBUG RELOAD` and DUMP/RESTORE,
//! a node's next grant is above every token it granted before, after one
//! promotion and after two; tokens never repeat or go down however far the
//! floor runs ahead of the clock; at the top of the space grants are refused
//! with an error and INFO shows no headroom; a `RESTORE` that would push
//! every key's floor is refused.

use crate::common::aof::server_replaying;
use crate::common::payload::{encode, parse_dump, Field};
use crate::common::*;
use crate::lock::record::{with_token, SetRec};
use crate::lock::support::*;

use redis::Value;

/// `MAX_TOKEN`: the largest token the module issues.
const MAX_TOKEN: i64 = 1 << 62;
/// `EPOCH_JUMP`: (2 × 24 h + 1 h) of tokens at 1000 per ms.
const EPOCH_JUMP: i64 = (2 * 24 + 1) * 3_600_000 * 1000;
/// `MAX_TOKEN_LEAD`: how far past the clock a stored token may raise the floor.
const MAX_TOKEN_LEAD: i64 = 1 << 58;

/// `INFO warden`'s `fence_floor`.
fn floor(con: &mut Connection) -> i64 {
    warden_stat(con, "fence_floor")
}

/// Makes `server` a master `times` times over: each `REPLICAOF` of a port
/// nobody serves, then `REPLICAOF NO ONE`, starts a failover epoch.
fn promote_times(server: &Server, times: usize) {
    let mut con = server.conn();
    for _ in 0..times {
        let _: () = query!(&mut con, "REPLICAOF", "127.0.0.1", 1);
        let _: () = query!(&mut con, "REPLICAOF", "NO", "ONE");
    }
}

/// Grants and releases `key` (and a kept-free second key), returning the
/// largest token granted.
fn grant_and_release(con: &mut Connection, key: &str) -> i64 {
    let a = try_acquire(con, key, "o", 60_000).expect("free");
    assert_eq!(release(con, key, "o"), 1);
    let b = try_acquire(con, "other", "o", 60_000).expect("free");
    assert_eq!(release(con, "other", "o"), 1);
    a.max(b)
}

/// A server started from an AOF (no preamble) whose floor is `floor`, sent
/// as a master's `DLOCK._FENCE` would be.
fn server_with_floor(fence: i64) -> Server {
    server_replaying(&[&[b"DLOCK._FENCE", fence.to_string().as_bytes()]])
}

/// Every persistence path, after one promotion and after two: the node's
/// floor and its next grants (on the key it granted and on a fresh one) stay
/// above every token it granted before. The rewritten AOF without preamble
/// and a replica's full sync followed by its own AOF rewrite lost the epoch
/// before the floor went into the AOF at each fork.
#[test]
fn the_epoch_survives_every_file_after_one_and_two_promotions() {
    let plain_aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "no"];
    let preamble_aof = ["--appendonly", "yes", "--aof-use-rdb-preamble", "yes"];
    for promotions in [1, 2] {
        for path in [
            "rdb",
            "aof",
            "aof-rewrite",
            "aof-preamble-rewrite",
            "debug-reload",
            "full-sync",
            "dump-restore",
        ] {
            let what = format!("{path} after {promotions} promotion(s)");
            let args: &[&str] = match path {
                "aof" | "aof-rewrite" => &plain_aof,
                "aof-preamble-rewrite" => &preamble_aof,
                _ => &[],
            };
            let mut server = Server::start_with(args, &[]);
            if !args.is_empty() {
                server.wait_aof_rewrite_idle();
            }
            promote_times(&server, promotions);
            let mut con = server.conn();
            let before = grant_and_release(&mut con, "k");
            let floor_before = floor(&mut con);
            assert!(
                floor_before >= before && before > now_ms() * 1000 + EPOCH_JUMP / 2,
                "{what}: an epoch ahead of the clock ({before}, floor {floor_before})"
            );
            // The node whose files are read back.
            let mut node = match path {
                "rdb" => {
                    let _: () = query!(&mut con, "SAVE");
                    server.restart("NOSAVE");
                    server
                }
                "aof" => {
                    server.restart("SAVE");
                    server
                }
                "aof-rewrite" | "aof-preamble-rewrite" => {
                    server.bgrewriteaof();
                    server.restart("NOSAVE");
                    server
                }
                "debug-reload" => {
                    debug_reload(&mut con);
                    server
                }
                "full-sync" => {
                    // The replica loads the floor from the RDB, rewrites its own
                    // AOF (no preamble) after the sync, and restarts from it.
                    let mut replica = server.start_replica(&plain_aof, &[]);
                    replica.wait_aof_rewrite_idle();
                    assert!(floor(&mut replica.conn()) >= floor_before, "{what}: synced");
                    replica.restart("NOSAVE");
                    let mut rcon = replica.loaded_conn();
                    assert!(
                        floor(&mut rcon) >= floor_before,
                        "{what}: replica's floor lost"
                    );
                    let _: () = query!(&mut rcon, "REPLICAOF", "NO", "ONE");
                    let t = try_acquire(&mut rcon, "promoted", "o", 60_000).expect("free");
                    assert!(t > before + EPOCH_JUMP, "{what}: promoted replica {t}");
                    drop(server);
                    replica
                }
                "dump-restore" => {
                    let held = try_acquire(&mut con, "k", "o", 60_000).expect("free");
                    let payload = dump(&mut con, "k");
                    let _: i64 = query!(&mut con, "DEL", "k");
                    let _: () = query!(&mut con, "RESTORE", "k", 0, &payload);
                    assert_eq!(lock_info(&mut con, "k").map(|i| i.token), Some(held));
                    assert_eq!(release(&mut con, "k", "o"), 1);
                    server
                }
                _ => unreachable!(),
            };
            let mut ncon = node.loaded_conn();
            assert!(floor(&mut ncon) >= floor_before, "{what}: floor lost");
            let on_k = try_acquire(&mut ncon, "k", "p", 60_000).expect(&what);
            let fresh = try_acquire(&mut ncon, "fresh", "p", 60_000).expect(&what);
            assert!(
                on_k > before && fresh > before,
                "{what}: {on_k}, {fresh} <= {before}"
            );
            node.assert_alive();
        }
    }
}

/// A floor past the plausible lead (where promotions without end, or a
/// restored token near the bound followed by one failover, leave it): every
/// grant on every key and every cache lease gets its own, larger token, and
/// the floor comes back whole from the RDB.
#[test]
fn tokens_past_the_lead_never_repeat_and_survive_a_restart() {
    let fence = now_ms() * 1000 + MAX_TOKEN_LEAD + EPOCH_JUMP;
    let mut server = server_with_floor(fence);
    let mut con = server.conn();
    assert_eq!(floor(&mut con), fence);
    let mut tokens = Vec::new();
    for i in 0..7 {
        tokens.push(try_acquire(&mut con, format!("k{}", i % 4), "o", 60_000).expect("free"));
        assert_eq!(release(&mut con, format!("k{}", i % 4), "o"), 1);
    }
    let lease: Value = query!(&mut con, "CACHE.GET", "c", "LEASE", 1000);
    let lease = match lease {
        Value::Array(v) => int_of(&v[1]).expect("lease token"),
        v => panic!("{v:?}"),
    };
    tokens.push(lease);
    assert_strictly_increasing(&tokens, "grants and a lease past the lead");
    assert!(tokens[0] > fence);
    let _: () = query!(&mut con, "SAVE");
    server.restart("NOSAVE");
    let mut con = server.loaded_conn();
    assert!(floor(&mut con) >= tokens[7], "the floor is the RDB's");
    let next = try_acquire(&mut con, "k0", "o", 60_000).expect("free");
    assert!(next > tokens[7], "{next} after {}", tokens[7]);
}

/// At the top of the token space grants fail closed: each of the last
/// tokens is issued once, then ACQUIRE (also with WAIT, SHARED, and after
/// another promotion) and CACHE.GET … LEASE answer an error, change nothing
/// and replicate nothing; INFO shows the headroom shrinking to none.
#[test]
fn the_top_of_the_token_space_refuses_grants() {
    let server = server_with_floor(MAX_TOKEN - 2 * EPOCH_JUMP - 3);
    let mut con = server.conn();
    assert_eq!(warden_stat(&mut con, "fence_promotions_left"), 2);
    assert_eq!(
        warden_stat(&mut con, "fence_tokens_left"),
        2 * EPOCH_JUMP + 3
    );
    let first = try_acquire(&mut con, "a", "o", 60_000).expect("room for one");
    assert_eq!(first, MAX_TOKEN - 2 * EPOCH_JUMP - 2);
    promote_times(&server, 2);
    assert_eq!(warden_stat(&mut con, "fence_promotions_left"), 0);
    assert_eq!(warden_stat(&mut con, "fence_tokens_left"), 2);
    let last: Vec<i64> = (0..2)
        .map(|i| try_acquire(&mut con, format!("l{i}"), "o", 60_000).expect("room"))
        .collect();
    assert_eq!(last, [MAX_TOKEN - 1, MAX_TOKEN]);
    promote_times(&server, 1);
    assert_eq!(floor(&mut con), MAX_TOKEN, "a promotion stops at the top");
    let replica = server.start_replica(&[], &[]);
    let mut rcon = replica.conn();
    let refused: Vec<redis::RedisResult<Value>> = vec![
        cmd("DLOCK.ACQUIRE")
            .arg("b")
            .arg("o")
            .arg(1000)
            .query(&mut con),
        cmd("DLOCK.ACQUIRE")
            .arg("b")
            .arg("o")
            .arg(1000)
            .arg("WAIT")
            .arg(100)
            .query(&mut con),
        cmd("DLOCK.ACQUIRE")
            .arg("b")
            .arg("o")
            .arg(1000)
            .arg("SHARED")
            .query(&mut con),
        cmd("CACHE.GET")
            .arg("c")
            .arg("LEASE")
            .arg(1000)
            .query(&mut con),
    ];
    for r in refused {
        let e = expect_err(r, "a grant past the top");
        assert!(e.contains("exhausted"), "{e}");
    }
    assert!(
        !exists(&mut con, "b") && !exists(&mut con, "c"),
        "nothing changed"
    );
    assert_eq!(warden_stat(&mut con, "fence_tokens_left"), 0);
    server.sync_replicas(1);
    assert!(
        !exists(&mut rcon, "b") && !exists(&mut rcon, "c"),
        "nothing replicated"
    );
    assert_eq!(db_digest(&mut con), db_digest(&mut rcon));
    // The lock granted before is still released as usual.
    assert_eq!(release(&mut con, "a", "o"), 1);
}

/// A client's `RESTORE` of a lock or a lock set whose token
/// would push every key's floor past the plausible lead is refused with
/// nothing stored; one within the lead is taken and raises the floor.
#[test]
fn a_restore_that_would_push_every_key_is_refused() {
    let (server, mut con) = lock_server();
    try_acquire(&mut con, "model", "m", 60_000).expect("free");
    let lock = parse_dump(&dump(&mut con, "model"));
    let beyond = now_ms() * 1000 + MAX_TOKEN_LEAD + 60_000_000;
    for (key, token) in [("forged", beyond), ("forged2", MAX_TOKEN)] {
        let r: redis::RedisResult<()> = cmd("RESTORE")
            .arg(key)
            .arg(0)
            .arg(encode(&with_token(&lock, token)))
            .query(&mut con);
        let e = expect_err(r, "a forged token");
        assert!(e.contains("Bad data format"), "{e}");
        assert!(!exists(&mut con, key));
    }
    // A set whose floor (and holder) carries it.
    let _: Value = query!(&mut con, "DLOCK.ACQUIRE", "shared", "r", 60_000, "SHARED");
    let set = parse_dump(&dump(&mut con, "shared"));
    let mut rec = SetRec::of(&set);
    rec.floor = beyond;
    rec.holders[0].token = beyond;
    let mut forged = set.clone();
    forged.fields = vec![Field::S(rec.bytes_claiming(1))];
    let r: redis::RedisResult<()> = cmd("RESTORE")
        .arg("forged-set")
        .arg(0)
        .arg(encode(&forged))
        .query(&mut con);
    assert!(expect_err(r, "a forged set").contains("Bad data format"));
    assert!(!exists(&mut con, "forged-set"));
    assert!(server.log_tail(5).contains("refused a restored value"));
    let before = floor(&mut con);
    let other = try_acquire(&mut con, "other", "o", 60_000).expect("free");
    assert!(
        other > before && other < now_ms() * 1000 + 1_000_000,
        "{other}"
    );
    // Within the lead: a dump from a node some epochs ahead.
    let ahead = now_ms() * 1000 + 5 * EPOCH_JUMP;
    let _: () = query!(
        &mut con,
        "RESTORE",
        "moved",
        0,
        encode(&with_token(&lock, ahead))
    );
    assert_eq!(lock_info(&mut con, "moved").map(|i| i.token), Some(ahead));
    assert!(try_acquire(&mut con, "later", "o", 60_000).expect("free") > ahead);
    // A node takes back its own dumps, however far its floor has run.
    let server = server_with_floor(beyond + 1_000);
    let mut con = server.conn();
    let own = try_acquire(&mut con, "own", "o", 60_000).expect("free");
    let payload = dump(&mut con, "own");
    let _: i64 = query!(&mut con, "DEL", "own");
    let _: () = query!(&mut con, "RESTORE", "own", 0, &payload);
    assert_eq!(lock_info(&mut con, "own").map(|i| i.token), Some(own));
}

/// A key with a forged token near the top, stored by an older version, keeps
/// it to itself through replication and replay: its holder's EXTEND (or a
/// re-entry) reaches a replica, and the AOF rewritten and replayed, and
/// neither ends with every key's floor at the forged token.
#[test]
fn a_forged_key_s_token_stays_its_own_through_replication_and_replay() {
    let (_model, mut con) = lock_server();
    try_acquire(&mut con, "model", "o", 600_000).expect("free");
    let forged = encode(&with_token(
        &parse_dump(&dump(&mut con, "model")),
        MAX_TOKEN - 904,
    ));
    let mut server = server_replaying(&[&[b"RESTORE", b"x", b"0", &forged]]);
    let replica = server.start_replica(&[], &[]);
    let mut con = server.conn();
    let extended: i64 = query!(&mut con, "DLOCK.EXTEND", "x", "o", 100_000);
    assert_eq!(extended, 1);
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "x", "o", 100_000, "REENTRANT");
    server.sync_replicas(1);
    let ordinary = now_ms() * 1000 + EPOCH_JUMP;
    let mut rcon = replica.conn();
    assert!(
        floor(&mut rcon) < ordinary,
        "the replica's floor: {}",
        floor(&mut rcon)
    );
    assert_eq!(
        lock_info(&mut rcon, "x").map(|i| i.token),
        Some(MAX_TOKEN - 904)
    );
    server.bgrewriteaof();
    server.restart("NOSAVE");
    let mut con = server.loaded_conn();
    assert!(
        floor(&mut con) < ordinary,
        "after a rewrite and a replay: {}",
        floor(&mut con)
    );
    let other = try_acquire(&mut con, "other", "a", 10_000).expect("other keys are granted");
    assert!(other < ordinary, "{other}");
}

/// An AOF rewritten without the RDB preamble carries the epoch in the
/// rewritten file itself (the rewrite's child appends `DLOCK._FENCE`), so
/// nothing written after the fork is needed: a rewrite started just before a
/// write pause (pipelined with it), one during a pause, and the AOF turned
/// on during a pause all restart above every token granted, even when the
/// server is killed before the pause ends. With the preamble the floor is in
/// its aux data.
#[test]
fn an_aof_rewritten_around_a_pause_keeps_the_epoch() {
    for (preamble, how) in [
        ("no", "pipelined"),
        ("no", "paused"),
        ("no", "turned on"),
        ("yes", "paused"),
    ] {
        let what = format!("preamble {preamble}, {how}");
        let aof = if how == "turned on" { "no" } else { "yes" };
        let mut server = Server::start_with(
            &["--appendonly", aof, "--aof-use-rdb-preamble", preamble],
            &[],
        );
        server.wait_aof_rewrite_idle();
        promote_times(&server, 1);
        let mut con = server.conn();
        let before = grant_and_release(&mut con, "k");
        let rewrites = |con: &mut Connection| -> i64 {
            info_field(con, "persistence", "aof_rewrites")
                .and_then(|v| v.parse().ok())
                .expect("aof_rewrites")
        };
        let n0 = rewrites(&mut con);
        let pause = redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(60_000)
            .arg("WRITE")
            .clone();
        match how {
            "pipelined" => {
                let _: Vec<Value> = redis::pipe()
                    .cmd("BGREWRITEAOF")
                    .add_command(pause)
                    .query(&mut con)
                    .expect(&what);
            }
            "paused" => {
                let _: () = pause.query(&mut con).expect(&what);
                let _: Value = query!(&mut con, "BGREWRITEAOF");
            }
            _ => {
                let _: () = pause.query(&mut con).expect(&what);
                let _: () = query!(&mut con, "CONFIG", "SET", "appendonly", "yes");
            }
        }
        assert!(
            wait_until(std::time::Duration::from_secs(10), || {
                rewrites(&mut con) > n0
                    && info_field(&mut con, "persistence", "aof_rewrite_in_progress").as_deref()
                        == Some("0")
            }),
            "{what}: no rewrite"
        );
        assert_eq!(
            info_field(&mut con, "persistence", "aof_last_bgrewrite_status").as_deref(),
            Some("ok"),
            "{what}"
        );
        // Killed while still paused: what the server might have written
        // after the fork is not there.
        if how == "turned on" {
            server.set_args(&["--appendonly", "yes", "--aof-use-rdb-preamble", preamble]);
        }
        server.crash_and_restart();
        let mut con = server.loaded_conn();
        let after = try_acquire(&mut con, "k", "p", 60_000).expect("free");
        assert!(after > before, "{what}: {after} <= {before}");
    }
}

/// A chain of forged keys, each 2^58 above the last, that a writable
/// replica took from a client (`RESTORE`): after it is promoted, its
/// holders' EXTENDs reach its own replica, and it restarts from its AOF;
/// neither ends with every key's floor walked up to the top.
#[test]
fn a_chain_of_forged_keys_cannot_walk_the_floor_up() {
    let (_model, mut con) = lock_server();
    try_acquire(&mut con, "model", "o", 600_000).expect("free");
    let model = parse_dump(&dump(&mut con, "model"));
    let master = Server::start();
    let mut writable = master.start_replica(
        &[
            "--replica-read-only",
            "no",
            "--appendonly",
            "yes",
            "--aof-use-rdb-preamble",
            "no",
        ],
        &[],
    );
    writable.wait_aof_rewrite_idle();
    let mut w = writable.conn();
    for i in 0..16 {
        let token = MAX_TOKEN - 5 - i * MAX_TOKEN_LEAD;
        let payload = encode(&with_token(&model, token));
        let _: () = query!(&mut w, "RESTORE", format!("k{i}"), 0, &payload);
    }
    let _: () = query!(&mut w, "REPLICAOF", "NO", "ONE");
    // The chain's lowest token is within the plausible lead, and raises the
    // floor as any restored token may; none above it may.
    let below =
        |con: &mut Connection| floor(con) < now_ms() * 1000 + MAX_TOKEN_LEAD + 3 * EPOCH_JUMP;
    assert!(
        below(&mut w),
        "the promoted node's floor: {}",
        floor(&mut w)
    );
    let sub = writable.start_replica(&[], &[]);
    for i in (0..16).rev() {
        let extended: i64 = query!(&mut w, "DLOCK.EXTEND", format!("k{i}"), "o", 600_000);
        assert_eq!(extended, 1);
    }
    writable.sync_replicas(1);
    let mut s = sub.conn();
    assert!(below(&mut s), "its replica's floor: {}", floor(&mut s));
    writable.set_args(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    writable.restart("NOSAVE");
    let mut w = writable.loaded_conn();
    assert!(
        below(&mut w),
        "after a restart from its AOF: {}",
        floor(&mut w)
    );
    assert!(
        try_acquire(&mut w, "other", "a", 1_000).is_some(),
        "other keys are granted"
    );
}
