//! Failover epochs and the replica rule (issue #25, SPEC "Failover epochs"): a
//! node that becomes master (`REPLICAOF NO ONE`, `FAILOVER`) issues tokens at
//! least `EPOCH_JUMP` above everything it had seen and above its clock; its
//! replicas learn that floor (`DLOCK._FENCE`), and it survives restarts (RDB
//! aux data, AOF) and a second failover; files from the build before keep
//! working. `dlock-min-replicas` refuses grants, EXTEND and GUARD on a master
//! without enough replicas, changing and replicating nothing.

use crate::common::waiter::*;
use crate::common::*;
use crate::lock::support::*;

use std::path::PathBuf;
use std::time::Duration;

/// `core::lock::EPOCH_JUMP`: (2 × 24 h + 1 h) of tokens at 1000 per ms.
const EPOCH_JUMP: i64 = (2 * 24 + 1) * 3_600_000 * 1000;

/// Turns `server` into a master and waits until it is one.
fn promote(server: &Server) {
    let mut con = server.conn();
    let _: () = query!(&mut con, "REPLICAOF", "NO", "ONE");
    assert_eq!(
        info_field(&mut con, "replication", "role").as_deref(),
        Some("master")
    );
}

/// Points `server` at `master` and waits for the link.
fn follow(server: &Server, master: &Server) {
    let mut con = server.conn();
    let _: () = query!(&mut con, "REPLICAOF", "127.0.0.1", master.port);
    assert!(master_link_up(&mut con), "{}", server.log_tail(20));
}

/// The next token `server` issues, on a fresh key.
fn next_token(server: &Server, key: &str) -> i64 {
    try_acquire(&mut conn_t(server), key, "probe", 60_000).expect("a fresh key is free")
}

/// The floor the log says the node started its epoch at (the last one).
fn logged_floor(server: &Server) -> i64 {
    let log = std::fs::read_to_string(server.dir.join("redis.log")).unwrap_or_default();
    log.lines()
        .filter_map(|l| l.split("start above ").nth(1))
        .filter_map(|rest| rest.split(' ').next()?.parse().ok())
        .next_back()
        .unwrap_or_else(|| panic!("no epoch in the log:\n{}", server.log_tail(20)))
}

/// A promoted replica's tokens clear everything it saw by `EPOCH_JUMP`, its
/// old master's later tokens stay below them, and the log says so.
#[test]
fn a_promoted_replica_starts_an_epoch() {
    let master = Server::start();
    let replica = master.start_streaming_replica();
    let mut con = conn_t(&master);
    let before = try_acquire(&mut con, "lock:a", "a", 60_000).expect("free");
    master.sync_replicas(1);
    promote(&replica);
    let after = next_token(&replica, "lock:b");
    assert!(after > before + EPOCH_JUMP, "{after} vs {before}");
    assert!(after > logged_floor(&replica));
    assert!(after <= logged_floor(&replica) + 10, "{after}");
    // The old master, cut off, goes on with its own clock: always below.
    for i in 0..100 {
        let old = try_acquire(&mut con, format!("old:{i}"), "a", 1_000).expect("free");
        assert!(old < after, "{old} >= {after}");
    }
    // The promoted node's lock from before is intact, with its token.
    let info = lock_info(&mut conn_t(&replica), "lock:a").expect("lock:a replicated");
    assert_eq!(info.token, before);
}

/// The new master tells its replicas its floor at once (`DLOCK._FENCE`,
/// before any grant), so a second failover to one of them starts
/// a higher epoch still, and tokens stay strictly increasing across both.
#[test]
fn replicas_learn_the_floor_and_a_second_failover_goes_higher() {
    let master = Server::start();
    let first = master.start_streaming_replica();
    let second = first.start_replica(&[], &[]);
    let t0 = try_acquire(&mut conn_t(&master), "lock:a", "a", 60_000).expect("free");
    master.sync_replicas(1);
    first.sync_replicas(1);
    promote(&first);
    let floor = logged_floor(&first);
    first.sync_replicas(1);
    // No grant happened on `first`, and `second` resynced partially (no RDB,
    // so no aux data): it knows the floor only from DLOCK._FENCE.
    let log = std::fs::read_to_string(second.dir.join("redis.log")).unwrap_or_default();
    assert!(
        log.contains("Successful partial resynchronization"),
        "{}",
        second.log_tail(20)
    );
    promote(&second);
    let t2 = next_token(&second, "lock:b");
    assert!(t2 > floor + EPOCH_JUMP, "{t2} vs floor {floor}");
    assert!(t0 < floor && floor < t2);
    // The replica rejects the command from clients.
    let err = cmd("DLOCK._FENCE")
        .arg(1)
        .query::<()>(&mut second.conn())
        .expect_err("internal");
    assert!(err_text(&err).contains("internal command"), "{err:?}");
}

/// `FAILOVER` (the coordinated hand-over) starts an epoch on the new master
/// too, and the old one, now its replica, takes the floor from it.
#[test]
fn failover_command_starts_an_epoch() {
    let master = Server::start();
    let replica = master.start_streaming_replica();
    let before = try_acquire(&mut conn_t(&master), "lock:a", "a", 60_000).expect("free");
    master.sync_replicas(1);
    let _: () = query!(&mut master.conn(), "FAILOVER", "TIMEOUT", 5000);
    let mut rcon = replica.conn();
    assert!(wait_until(Duration::from_secs(10), || {
        info_field(&mut rcon, "replication", "role").as_deref() == Some("master")
    }));
    let mut mcon = master.conn();
    assert!(master_link_up(&mut mcon), "{}", master.log_tail(20));
    let after = next_token(&replica, "lock:b");
    assert!(after > before + EPOCH_JUMP, "{after} vs {before}");
    replica.sync_replicas(1);
    // The old master learnt the floor: promoted back, it goes higher still.
    promote(&master);
    assert!(next_token(&master, "lock:c") > after + EPOCH_JUMP);
}

/// The epoch outlives a restart even when no lock key carries it: in the
/// RDB (aux data before the keys), in an AOF without RDB preamble (the
/// `DLOCK._FENCE` in its stream) and in one rewritten with a preamble.
#[test]
fn the_floor_survives_restarts_without_lock_keys() {
    for (label, args) in [
        ("rdb", &["--save", "3600 1"][..]),
        (
            "aof",
            &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"][..],
        ),
        (
            "aof-preamble",
            &["--appendonly", "yes", "--aof-use-rdb-preamble", "yes"][..],
        ),
    ] {
        let mut server = Server::start_with(args, &[]);
        let master = Server::start();
        follow(&server, &master);
        promote(&server);
        drop(master);
        let floor = logged_floor(&server);
        let mut con = server.conn();
        assert!(wait_until(Duration::from_secs(5), || {
            // The announcement went out (and into the AOF).
            let info: String = cmd("INFO")
                .arg("replication")
                .query(&mut con)
                .unwrap_or_default();
            !info.contains("master_repl_offset:0\r")
        }));
        if label != "rdb" {
            // The AOF the server began when it turned master must exist.
            server.wait_aof_rewrite_idle();
        }
        if label == "aof-preamble" {
            server.bgrewriteaof();
        }
        if label == "rdb" {
            let _: () = query!(&mut con, "SAVE");
        }
        server.restart(if label == "rdb" { "NOSAVE" } else { "SAVE" });
        let t = next_token(&server, "lock:after");
        assert!(t > floor, "{label}: {t} <= floor {floor}");
        let size: i64 = query!(&mut server.conn(), "DBSIZE");
        assert_eq!(size, 1, "{label}: no key but the new lock");
    }
}

/// A lock DUMPed on the new master and RESTOREd on a server that never saw
/// the epoch keeps its token, and its next grant goes above it.
#[test]
fn dump_and_restore_carry_the_epoch_with_the_key() {
    let master = Server::start();
    let replica = master.start_streaming_replica();
    promote(&replica);
    let mut con = conn_t(&replica);
    let t = try_acquire(&mut con, "lock:a", "a", 100).expect("free");
    let payload = dump(&mut con, "lock:a");
    let fresh = Server::start();
    let mut fcon = conn_t(&fresh);
    let _: () = query!(&mut fcon, "RESTORE", "lock:a", 0, &payload);
    assert_eq!(lock_info(&mut fcon, "lock:a").map(|i| i.token), Some(t));
    assert_eq!(release(&mut fcon, "lock:a", "a"), 1);
    let next = try_acquire(&mut fcon, "lock:a", "b", 1_000).expect("free");
    assert!(next > t, "{next} <= {t}");
}

/// The build before failover epochs (commit 0b41e4e) wrote an RDB and an AOF
/// (no preamble) holding a reentrant lock (2 holds), a read/write lock with
/// two readers and a semaphore with one holder, each for 10 years.
const OLD_LOCKS: &[(&str, &str, i64)] = &[
    ("lock:a", "worker-a", 1_796_223_212_690_000),
    ("lock:s", "reader-1", 1_796_223_212_704_000),
    ("lock:s", "reader-2", 1_796_223_212_711_000),
    ("lock:l", "slot-1", 1_796_223_212_718_000),
];

fn old_fixture() -> PathBuf {
    repo_root().join("tests/fixtures/0b41e4e")
}

/// Loads the fixture file `name` (`dump.rdb` or `appendonlydir`) into a
/// fresh server started with `args`.
fn load_old(name: &str, args: &[&str]) -> Server {
    let mut server = Server::start_with(args, &[]);
    server.kill();
    let from = old_fixture().join(name);
    if from.is_dir() {
        let to = server.dir.join(name);
        let _ = std::fs::remove_dir_all(&to);
        std::fs::create_dir_all(&to).expect("dir");
        for entry in std::fs::read_dir(&from).expect("fixture") {
            let entry = entry.expect("entry");
            std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
        }
    } else {
        std::fs::copy(&from, server.dir.join(name)).expect("copy");
    }
    server.crash_and_restart();
    server
}

/// Files from the build before load with every lock and token; new grants
/// go above them, and a replica of such a node, promoted, a whole epoch
/// above.
#[test]
fn files_from_the_build_before_keep_their_locks() {
    for (name, args) in [
        ("dump.rdb", &[][..]),
        (
            "appendonlydir",
            &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"][..],
        ),
    ] {
        let server = load_old(name, args);
        let mut con = conn_t(&server);
        let a = lock_info(&mut con, "lock:a").expect("lock:a");
        assert_eq!(
            (a.owner.as_slice(), a.token, a.holds),
            (&b"worker-a"[..], OLD_LOCKS[0].2, 2),
            "{name}"
        );
        for (key, owner, token) in &OLD_LOCKS[1..] {
            let holders = set_holders(&mut con, key);
            assert!(
                holders.iter().any(|h| h.0 == *owner && h.1 == *token),
                "{name}: {key} {owner}: {holders:?}"
            );
        }
        let newest = OLD_LOCKS.iter().map(|l| l.2).max().expect("locks");
        assert!(next_token(&server, "lock:new") > newest, "{name}");
        let replica = server.start_replica(&[], &[]);
        promote(&replica);
        assert!(
            next_token(&replica, "lock:newer") > newest + EPOCH_JUMP,
            "{name}"
        );
        assert_eq!(
            set_holders(&mut conn_t(&replica), "lock:s").len(),
            2,
            "{name}"
        );
    }
}

/// Sets `dlock-min-replicas` and its lag on `server`.
fn require_replicas(server: &Server, n: i64, lag_s: i64) {
    let mut con = server.conn();
    for (name, value) in [
        ("warden.dlock-min-replicas", n),
        ("warden.dlock-min-replicas-max-lag", lag_s),
    ] {
        let _: () = query!(&mut con, "CONFIG", "SET", name, value);
    }
}

/// Without enough replicas ACQUIRE (also with WAIT), EXTEND and GUARD are
/// refused with NOREPLICAS, nothing changes and nothing is replicated; other
/// writes and RELEASE go on. With the replica back, grants resume.
#[test]
fn too_few_replicas_refuse_lock_grants_and_change_nothing() {
    let (master, mut con) = lock_server();
    let held = try_acquire(&mut con, "lock:held", "a", 60_000).expect("free");
    // The tap below is a replica too: one more is needed.
    let mut tap = master.replication_tap();
    master.wait_replicas_online(1);
    require_replicas(&master, 2, 10);
    let digest_before = db_digest(&mut con);
    let refused: Vec<(&str, redis::Cmd)> = vec![
        ("ACQUIRE", cmd_of!("DLOCK.ACQUIRE", "lock:new", "a", 1000)),
        (
            "ACQUIRE WAIT",
            cmd_of!("DLOCK.ACQUIRE", "lock:held", "b", 1000, "WAIT", 100),
        ),
        ("repeat", cmd_of!("DLOCK.ACQUIRE", "lock:held", "a", 1000)),
        (
            "SHARED",
            cmd_of!("DLOCK.ACQUIRE", "lock:r", "a", 1000, "SHARED"),
        ),
        ("EXTEND", cmd_of!("DLOCK.EXTEND", "lock:held", "a", 1000)),
        (
            "GUARD",
            cmd_of!("DLOCK.GUARD", "lock:held", "a", held, "INCR", "n"),
        ),
    ];
    for (what, c) in &refused {
        let err = c.query::<redis::Value>(&mut con).expect_err(what);
        assert_eq!(
            err_text(&err),
            "NOREPLICAS lock grants need 2 replicas with lag <= 10 s (dlock-min-replicas); this master sees 1",
            "{what}"
        );
    }
    assert_eq!(db_digest(&mut con), digest_before);
    assert!(pttl(&mut con, "lock:held") > 50_000);
    let _: () = query!(&mut con, "SET", "plain", 1);
    let stream = tap.until_marker(&mut con, "marker", "1");
    assert_eq!(
        without_multi_exec(stream),
        vec![vec!["SET".to_string(), "plain".into(), "1".into()]],
        "only the plain write replicates"
    );
    // With a replica, grants resume (the count is refreshed within 100 ms).
    let replica = master.start_streaming_replica();
    let acquire = command(&["DLOCK.ACQUIRE", "lock:new", "a", "1000"]);
    let allowed = |con: &mut Connection| acquire.query::<Option<i64>>(con).is_ok();
    assert!(wait_until(Duration::from_secs(5), || allowed(&mut con)));
    // Three replicas needed, two seen: refused again.
    require_replicas(&master, 3, 10);
    assert!(wait_until(Duration::from_secs(2), || {
        let r = cmd("DLOCK.EXTEND")
            .arg("lock:new")
            .arg("a")
            .arg(1000)
            .query::<i64>(&mut con);
        matches!(&r, Err(e) if err_text(e).ends_with("this master sees 2"))
    }));
    // RELEASE needs no replica.
    assert_eq!(release(&mut con, "lock:held", "a"), 1);
    drop(replica);
}

/// A waiter whose lock is handed over on a master that lost its replicas
/// gets NOREPLICAS at the hand-off instead of a grant.
#[test]
fn a_hand_off_without_replicas_fails_the_waiters() {
    let master = Server::start();
    let replica = master.start_streaming_replica();
    require_replicas(&master, 1, 10);
    let mut con = conn_t(&master);
    let acquire = command(&["DLOCK.ACQUIRE", "lock:a", "holder", "60000"]);
    let granted =
        |con: &mut Connection| acquire.query::<Option<i64>>(con).is_ok_and(|t| t.is_some());
    assert!(wait_until(Duration::from_secs(5), || granted(&mut con)));
    let waiter = Waiter::lock(&master, "lock:a", "w", 1_000, 10_000);
    wait_waiting(&mut con, 1);
    drop(replica);
    // The master notices the replica is gone at once (the link closes).
    let mut mcon = master.conn();
    assert!(wait_until(Duration::from_secs(5), || {
        info_field(&mut mcon, "replication", "connected_slaves").as_deref() == Some("0")
    }));
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(release(&mut con, "lock:a", "holder"), 1);
    let out = waiter.join();
    assert!(out.error().contains("NOREPLICAS"), "{:?}", out.reply);
    assert!(lock_info(&mut con, "lock:a").is_none(), "nobody got it");
    assert_eq!(waiting(&mut con), 0);
}
