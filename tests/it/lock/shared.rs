//! `DLOCK.ACQUIRE … SHARED | LIMIT n` (issue #15, SPEC "Shared (read/write) locks",
//! "Limited locks (semaphores)"): several holders, each with its own lease and token;
//! FIFO waiting with no writer starvation and consecutive shared waiters granted
//! together; the kind of a key fixed while it exists; DLOCK.INFO's `mode` and
//! `holders`; every holder kept by replication, RDB, AOF and DUMP/RESTORE.

use crate::common::server_ops::assert_same_dataset;
use crate::common::waiter::*;
use crate::common::*;
use crate::lock::support::*;

use redis::{cmd, Connection, Value};
use std::time::{Duration, Instant};

const KIND: &str = "ERR key holds a lock of another kind";
const SHARED: &[&str] = &["SHARED"];
const LIMIT2: &[&str] = &["LIMIT", "2"];

fn acquire(
    con: &mut Connection,
    key: &str,
    owner: &str,
    ttl: i64,
    opts: &[&str],
) -> redis::RedisResult<Option<i64>> {
    let mut c = cmd("DLOCK.ACQUIRE");
    c.arg(key).arg(owner).arg(ttl);
    for o in opts {
        c.arg(*o);
    }
    c.query(con)
}

#[test]
fn shared_holders_share_and_a_writer_waits_for_all_of_them() {
    let (server, mut con) = lock_server();
    let r1 = acquire_opts(&mut con, "rw", "r1", 30_000, &["SHARED"]).expect("r1");
    let r2 = acquire_opts(&mut con, "rw", "r2", 30_000, &["shared"]).expect("r2");
    assert!(r2 > r1, "each shared grant its own, larger token");
    assert_eq!(
        acquire_opts(&mut con, "rw", "w", 30_000, &[]),
        None,
        "a writer waits"
    );
    let e = acquire(&mut con, "rw", "x", 30_000, &["LIMIT", "3"]).unwrap_err();
    assert_eq!(err_text(&e), KIND);
    let (fields, holders) = set_info(&mut con, "rw").expect("held");
    assert!(
        fields.contains(&("mode".into(), Value::BulkString(b"shared".to_vec()))),
        "{fields:?}"
    );
    assert_eq!(holders, [("r1".into(), r1, 1), ("r2".into(), r2, 1)]);
    // A repeat by a holder keeps its token; REENTRANT adds a hold.
    assert_eq!(
        acquire_opts(&mut con, "rw", "r1", 30_000, &["SHARED"]),
        Some(r1)
    );
    assert_eq!(
        acquire_opts(&mut con, "rw", "r1", 30_000, &["SHARED", "REENTRANT"]),
        Some(r1)
    );
    assert_eq!(set_info(&mut con, "rw").unwrap().1[0], ("r1".into(), r1, 2));

    // A writer waits; a reader that comes after it waits behind it (no starvation).
    let w = Waiter::lock(&server, "rw", "w", 30_000, 10_000);
    wait_waiting(&mut con, 1);
    assert_eq!(
        acquire_opts(&mut con, "rw", "r3", 30_000, &["SHARED"]),
        None
    );
    assert_eq!(release(&mut con, "rw", "r2"), 1);
    assert_eq!(release(&mut con, "rw", "r1"), 1, "one of r1's two holds");
    assert_eq!(waiting(&mut con), 1, "r1 still holds");
    assert_eq!(release(&mut con, "rw", "r1"), 1);
    let (tw, _) = w.granted("the writer");
    assert!(tw > r2);
    assert_eq!(
        lock_info(&mut con, "rw").map(|i| i.owner),
        Some(b"w".to_vec())
    );
    assert_eq!(release(&mut con, "rw", "w"), 1);
    assert!(!exists(&mut con, "rw"));
}

#[test]
fn consecutive_shared_waiters_are_granted_together() {
    let (server, mut con) = lock_server();
    let x = try_acquire(&mut con, "rw", "x", 30_000).expect("x");
    let mut readers = Vec::new();
    for i in 0..3 {
        let name = format!("r{i}");
        readers.push(Waiter::lock_kind(
            &server, "rw", &name, 30_000, 10_000, SHARED,
        ));
        wait_waiting(&mut con, i + 1);
    }
    let writer = Waiter::lock(&server, "rw", "w", 30_000, 10_000);
    wait_waiting(&mut con, 4);
    let late_reader = Waiter::lock_kind(&server, "rw", "r9", 30_000, 10_000, SHARED);
    wait_waiting(&mut con, 5);
    let released_at = Instant::now();
    assert_eq!(release(&mut con, "rw", "x"), 1);
    let tokens: Vec<i64> = readers
        .into_iter()
        .map(|h| h.granted("a reader").0)
        .collect();
    assert!(released_at.elapsed() < Duration::from_secs(2));
    assert!(
        tokens.windows(2).all(|w| w[0] < w[1]) && tokens[0] > x,
        "{tokens:?}"
    );
    assert_eq!(
        set_info(&mut con, "rw").unwrap().1.len(),
        3,
        "three readers at once"
    );
    assert_eq!(
        waiting(&mut con),
        2,
        "the writer and the reader behind it wait"
    );
    for i in 0..3 {
        assert_eq!(release(&mut con, "rw", format!("r{i}")), 1);
    }
    let (tw, _) = writer.granted("the writer");
    assert!(tw > tokens[2]);
    assert_eq!(release(&mut con, "rw", "w"), 1);
    let (r9, _) = late_reader.granted("the late reader after the writer");
    assert!(r9 > tw);
}

#[test]
fn a_semaphore_admits_n_owners_in_fifo_order() {
    let (server, mut con) = lock_server();
    let a = acquire_opts(&mut con, "sem", "a", 30_000, &["LIMIT", "2"]).expect("a");
    let b = acquire_opts(&mut con, "sem", "b", 30_000, &["LIMIT", "2"]).expect("b");
    assert_eq!(
        acquire_opts(&mut con, "sem", "c", 30_000, &["LIMIT", "2"]),
        None
    );
    for opts in [&["LIMIT", "3"][..], &["SHARED"], &[]] {
        let e = acquire(&mut con, "sem", "c", 30_000, opts).unwrap_err();
        assert_eq!(err_text(&e), KIND, "{opts:?}");
    }
    let mut bad = Vec::new();
    for (opts, want) in [
        (&["LIMIT", "0"][..], "ERR limit must be a positive integer"),
        (&["LIMIT", "x"], "ERR limit must be a positive integer"),
        (&["LIMIT", "1048577"], "ERR limit is out of range"),
        (&["LIMIT"], "ERR syntax error"),
        (&["SHARED", "LIMIT", "2"], "ERR syntax error"),
        (&["SHARED", "SHARED"], "ERR syntax error"),
    ] {
        match acquire(&mut con, "sem", "c", 30_000, opts) {
            Err(e) if err_text(&e) == want => {}
            other => bad.push(format!("{opts:?}: want {want}, got {other:?}")),
        }
    }
    report("bad LIMIT/SHARED options", bad);
    let c = Waiter::lock_kind(&server, "sem", "c", 30_000, 10_000, LIMIT2);
    wait_waiting(&mut con, 1);
    let d = Waiter::lock_kind(&server, "sem", "d", 30_000, 10_000, LIMIT2);
    wait_waiting(&mut con, 2);
    // b's lease is shortened: its place goes to the oldest waiter within milliseconds.
    assert_eq!(extend(&mut con, "sem", "b", 50), 1);
    let (tc, _) = c.granted("c got b's place");
    assert!(tc > b && tc > a);
    assert_eq!(waiting(&mut con), 1);
    assert_eq!(
        cmd("DLOCK.RELEASE")
            .arg("sem")
            .arg("a")
            .arg("TOKEN")
            .arg(b)
            .query::<i64>(&mut con)
            .unwrap(),
        0
    );
    assert_eq!(
        cmd("DLOCK.RELEASE")
            .arg("sem")
            .arg("a")
            .arg("TOKEN")
            .arg(a)
            .query::<i64>(&mut con)
            .unwrap(),
        1
    );
    let (td, _) = d.granted("d got a's place");
    assert!(td > tc);
    let holders: Vec<String> = set_info(&mut con, "sem")
        .unwrap()
        .1
        .into_iter()
        .map(|h| h.0)
        .collect();
    assert_eq!(holders, ["c", "d"]);
}

/// Every holder survives replication, DEBUG RELOAD, DUMP/RESTORE and an AOF rewrite
/// and replay; GUARD checks a set's holders.
#[test]
fn every_holder_survives_replicas_reloads_and_the_aof() {
    let mut server = Server::start_plain_aof();
    let replica = server.start_streaming_replica();
    let mut con = conn_t(&server);
    let r1 = acquire_opts(&mut con, "rw", "r1", 600_000, &["SHARED"]).expect("granted");
    let r2 = acquire_opts(&mut con, "rw", "r\u{0}2", 300_000, &["SHARED", "REENTRANT"])
        .expect("granted");
    let s1 = acquire_opts(&mut con, "sem", "a", 600_000, &["LIMIT", "3"]).expect("granted");
    acquire_opts(&mut con, "sem", "b", 400_000, &["LIMIT", "3"]).expect("granted");
    assert_eq!(release(&mut con, "sem", "b"), 1);
    let v: Value = query!(&mut con, "DLOCK.GUARD", "rw", "r1", r1, "INCR", "n");
    assert_eq!(v, Value::Int(1));
    let e: redis::RedisResult<Value> = cmd("DLOCK.GUARD")
        .arg("rw")
        .arg("r1")
        .arg(r2)
        .arg("INCR")
        .arg("n")
        .query(&mut con);
    assert!(err_text(&e.unwrap_err()).starts_with("FENCED"));
    let before = set_info(&mut con, "rw").unwrap();
    let sem_before = set_info(&mut con, "sem").unwrap();
    let digest = db_digest(&mut con);
    assert_same_dataset(&server, &replica, &["rw", "sem"], "lock sets");
    debug_reload(&mut con);
    assert_eq!(db_digest(&mut con), digest, "DEBUG RELOAD");
    let dump = dump(&mut con, "sem");
    ok(&mut con, cmd("RESTORE").arg("sem2").arg(0).arg(dump));
    assert_eq!(set_info(&mut con, "sem2").unwrap().1, sem_before.1);
    server.bgrewriteaof();
    server.wait_aof_rewrite_idle();
    let digest = db_digest(&mut con);
    drop(replica);
    server.restart("NOSAVE");
    let mut con = server.conn();
    assert_eq!(db_digest(&mut con), digest, "AOF replay");
    assert_eq!(set_info(&mut con, "rw").unwrap().1, before.1);
    assert_eq!(set_info(&mut con, "sem").unwrap().1, sem_before.1);
    // New grants after the replay get larger tokens.
    let s2 = acquire_opts(&mut con, "sem", "c", 1_000, &["LIMIT", "3"]).expect("granted");
    assert!(s2 > s1 && s2 > r2);
    // A forged set is refused by the internal command's check and by RESTORE.
    let e: redis::RedisResult<Value> = cmd("DLOCK._SETS")
        .arg("x")
        .arg("0:1")
        .arg("")
        .query(&mut con);
    assert_eq!(
        err_text(&e.unwrap_err()),
        "ERR dlock._sets is an internal command"
    );
}

/// Two waiters of one owner (a client that retried its WAIT request on a new
/// connection) are granted together as ONE holder with one token; the set
/// replicates, dumps, restores and reloads. (Red team: the owner was granted
/// twice, and the set then failed its own load check on the replica, RESTORE
/// and restart.)
#[test]
fn one_owner_waiting_twice_is_one_holder() {
    let mut server = Server::start();
    let replica = server.start_streaming_replica();
    let mut con = conn_t(&server);
    acquire_opts(&mut con, "rw", "x", 30_000, &[]).expect("granted");
    let first = Waiter::lock_kind(&server, "rw", "a", 30_000, 0, SHARED);
    wait_waiting(&mut con, 1);
    let retry = Waiter::lock_kind(&server, "rw", "a", 30_000, 0, SHARED);
    wait_waiting(&mut con, 2);
    assert_eq!(release(&mut con, "rw", "x"), 1);
    let (t1, _) = first.granted("a");
    let (t2, _) = retry.granted("a again");
    assert_eq!(t1, t2, "one grant per owner");
    assert_eq!(set_holders(&mut con, "rw"), [("a".into(), t1, 1)]);
    // A pipelined DEL and ACQUIRE by a waiting owner: also one holder.
    acquire_opts(&mut con, "sem", "x", 30_000, &["LIMIT", "2"]).expect("granted");
    acquire_opts(&mut con, "sem", "y", 30_000, &["LIMIT", "2"]).expect("granted");
    let w = Waiter::lock_kind(&server, "sem", "b", 30_000, 0, &["LIMIT", "2"]);
    wait_waiting(&mut con, 1);
    let (_, mine): (i64, Option<i64>) = redis::pipe()
        .cmd("DEL")
        .arg("sem")
        .cmd("DLOCK.ACQUIRE")
        .arg("sem")
        .arg("b")
        .arg(30_000)
        .arg("LIMIT")
        .arg(2)
        .query(&mut con)
        .unwrap();
    let (tw, _) = w.granted("b");
    assert_eq!(mine, Some(tw));
    assert_eq!(set_holders(&mut con, "sem"), [("b".into(), tw, 1)]);
    assert_same_dataset(&server, &replica, &["rw", "sem"], "one holder per owner");
    let d = dump(&mut con, "rw");
    ok(&mut con, cmd("RESTORE").arg("rw2").arg(0).arg(d));
    let digest = db_digest(&mut con);
    debug_reload(&mut con);
    assert_eq!(db_digest(&mut con), digest);
    drop(replica);
    server.restart("SAVE");
    let mut con = server.conn();
    assert_eq!(set_holders(&mut con, "rw"), [("a".into(), t1, 1)]);
}

/// A writer at the head of the queue that leaves (its WAIT ends, it
/// disconnects) lets the readers behind it in at once: the key is held only
/// by readers. (Red team: they stayed parked until another command came.)
#[test]
fn readers_behind_a_departed_writer_are_granted() {
    let (server, mut con) = lock_server();
    acquire_opts(&mut con, "rw", "r1", 30_000, &["SHARED"]).expect("granted");
    let writer = Waiter::lock(&server, "rw", "w", 30_000, 300);
    wait_waiting(&mut con, 1);
    let reader = Waiter::lock_kind(&server, "rw", "r2", 30_000, 5_000, SHARED);
    wait_waiting(&mut con, 2);
    let Answer {
        reply: w,
        at: writer_left,
        ..
    } = writer.join();
    assert_eq!(w, Reply::Nil, "the writer's WAIT ended");
    let (_, at) = reader.granted("r2");
    let after = at.saturating_duration_since(writer_left);
    assert!(
        after < Duration::from_millis(1000),
        "r2 waited {after:?} more"
    );
    // The same when the writer disconnects.
    let mut raw = RawConn::open(server.port);
    raw.send(&["DLOCK.ACQUIRE", "rw", "w", "30000", "WAIT", "0"]);
    wait_waiting(&mut con, 1);
    let reader = Waiter::lock_kind(&server, "rw", "r3", 30_000, 5_000, SHARED);
    wait_waiting(&mut con, 2);
    let left = Instant::now();
    drop(raw);
    let (_, at) = reader.granted("r3");
    assert!(at.saturating_duration_since(left) < Duration::from_millis(1000));
    assert_eq!(owners_of(&mut con, "rw"), ["r1", "r2", "r3"]);
}

/// `PEXPIRE` to an earlier time bounds every holder: a later grant does not
/// revive the old leases, and the holder's lease ends at the bound.
/// (Red team: the next grant moved the key's expiry back to the old lease.)
#[test]
fn pexpire_bounds_every_holder_past_the_next_change() {
    let (_server, mut con) = lock_server();
    let ta = acquire_opts(&mut con, "sem", "a", 60_000, &["LIMIT", "3"]).expect("granted");
    let _: i64 = query!(&mut con, "PEXPIRE", "sem", 300);
    let tb = acquire_opts(&mut con, "sem", "b", 5_000, &["LIMIT", "3"]).expect("granted");
    assert_eq!(
        set_holders(&mut con, "sem"),
        [("a".into(), ta, 1), ("b".into(), tb, 1)]
    );
    std::thread::sleep(Duration::from_millis(450));
    assert_eq!(
        owners_of(&mut con, "sem"),
        ["b"],
        "a's lease ended at the bound"
    );
    let e: redis::RedisResult<Value> = cmd("DLOCK.GUARD")
        .arg("sem")
        .arg("a")
        .arg(ta)
        .arg("SET")
        .arg("x")
        .arg(1)
        .query(&mut con);
    assert!(err_text(&e.unwrap_err()).starts_with("FENCED"));
}

/// Inside MULTI the server judges a key by the time the transaction began, so
/// a key whose `PEXPIRE` passed during it can still be read. Its holders are
/// over all the same, as a plain lock's: GUARD answers `FENCED` and another
/// owner gets the key. (Red team: a shared holder could still write.)
#[test]
fn a_key_past_its_expiry_inside_multi_has_no_holder() {
    let server = Server::start();
    let replica = server.start_streaming_replica();
    let mut con = conn_t(&server);
    let kinds: [(&str, &[&str]); 3] = [
        ("plain", &[]),
        ("rw", &["SHARED"]),
        ("sem", &["LIMIT", "2"]),
    ];
    let mut tokens = Vec::new();
    for (key, kind) in kinds {
        tokens.push(acquire_opts(&mut con, key, "a", 100_000, kind).expect("granted"));
        let _: i64 = query!(&mut con, "PEXPIRE", key, 100);
    }
    let mut raw = RawConn::open(server.port);
    raw.call(&["MULTI"]);
    raw.call(&["DEBUG", "SLEEP", "0.3"]);
    for ((key, _), token) in kinds.iter().zip(&tokens) {
        let (data, token) = (format!("{key}:data"), token.to_string());
        raw.call(&["DLOCK.GUARD", key, "a", &token, "SET", &data, "late"]);
    }
    for (key, kind) in kinds {
        let mut args = vec!["DLOCK.ACQUIRE", key, "b", "30000"];
        args.extend_from_slice(kind);
        raw.call(&args);
    }
    let Reply::Array(replies) = raw.call(&["EXEC"]) else {
        panic!("EXEC did not answer an array");
    };
    for (i, (key, _)) in kinds.iter().enumerate() {
        match &replies[1 + i] {
            Reply::Error(e) => assert!(e.starts_with("FENCED"), "{key}: {e}"),
            other => panic!("{key}: GUARD after the key's expiry answered {other:?}"),
        }
        assert!(
            matches!(replies[4 + i], Reply::Int(t) if t > tokens[i]),
            "{key}: b gets the key: {:?}",
            replies[4 + i]
        );
        assert!(
            !exists(&mut con, format!("{key}:data")),
            "{key}: no late write"
        );
    }
    assert_eq!(owners_of(&mut con, "rw"), ["b"]);
    assert_eq!(owners_of(&mut con, "sem"), ["b"]);
    assert_same_dataset(
        &server,
        &replica,
        &["plain", "rw", "sem"],
        "after the MULTI",
    );
}

/// A semaphore of one place, `key`, held by `x`, and `w` queued for it (WAIT
/// `wait`): the server, a connection to it and the waiter.
fn full_semaphore(key: &str, wait: i64) -> (Server, Connection, Waiter) {
    let (server, mut con) = lock_server();
    acquire_opts(&mut con, key, "x", 30_000, &["LIMIT", "1"]).expect("granted");
    let w = Waiter::lock_kind(&server, key, "w", 30_000, wait, &["LIMIT", "1"]);
    wait_waiting(&mut con, 1);
    (server, con, w)
}

/// A request of another kind on a free key with waiters queued is refused
/// before anything is handed over: inside MULTI the transaction replicates
/// only its DEL, and the grant to the waiter comes after it, not in the
/// command that answered the error.
/// (Red team: the ACQUIRE that errored had granted the waiter first.)
#[test]
fn a_request_of_another_kind_changes_nothing() {
    let (server, mut con, w) = full_semaphore("sem", 0);
    let mut tap = server.replication_tap();
    let mut raw = RawConn::open(server.port);
    raw.call(&["MULTI"]);
    raw.call(&["DEL", "sem"]);
    raw.call(&["DLOCK.ACQUIRE", "sem", "y", "1000", "SHARED"]);
    let exec = raw.call(&["EXEC"]);
    assert_eq!(
        exec,
        Reply::Array(vec![Reply::Int(1), Reply::Error(KIND.into())]),
        "EXEC"
    );
    let (tw, _) = w.granted("the waiter");
    assert_eq!(set_holders(&mut con, "sem"), [("w".into(), tw, 1)]);
    let stream: Vec<String> = tap
        .drain(Duration::from_millis(300))
        .into_iter()
        .map(|c| c[0].to_ascii_uppercase())
        .collect();
    // The transaction wrote only the DEL (one write is not wrapped in MULTI);
    // the grant follows it on its own.
    assert_eq!(stream, ["DEL", "DLOCK._SETS"], "{stream:?}");
}

/// The owners of a set's holders.
fn owners_of(con: &mut Connection, key: &str) -> Vec<String> {
    set_holders(con, key).into_iter().map(|h| h.0).collect()
}

/// An owner waiting on two connections is served as one holder also when the
/// key is full after its first grant (a semaphore of one, a plain lock): the
/// second waiter gets the same token at once, `REENTRANT` adding a hold as a
/// direct repeat does, and the waiter behind keeps waiting. (Red team: the
/// second waiter waited for its own owner's lease to end, blocking the queue.)
#[test]
fn an_owner_waiting_twice_on_a_full_key_is_served_at_once() {
    let server = Server::start();
    // The repeat grant replicates the renewed lease (`DLOCK._SET` for a plain
    // lock, the set for a semaphore): a replica must hold the same.
    let replica = server.start_streaming_replica();
    let mut con = conn_t(&server);
    for (key, kind) in [("sem", &["LIMIT", "1"][..]), ("plain", &[][..])] {
        acquire_opts(&mut con, key, "x", 30_000, kind).expect("granted");
        let waiter = |owner: &str| {
            let mut opts = vec!["REENTRANT"];
            opts.extend_from_slice(kind);
            Waiter::lock_kind(&server, key, owner, 30_000, 5_000, &opts)
        };
        let a1 = waiter("a");
        wait_waiting(&mut con, 1);
        let a2 = waiter("a");
        wait_waiting(&mut con, 2);
        let b = waiter("b");
        wait_waiting(&mut con, 3);
        assert_eq!(release(&mut con, key, "x"), 1);
        let (t1, _) = a1.granted("a");
        let (t2, _) = a2.granted("a again");
        assert_eq!(t1, t2, "{key}: one grant per owner");
        wait_waiting(&mut con, 1);
        assert!(!b.is_finished(), "{key}: b waits behind a");
        let holds = match kind {
            [] => lock_info(&mut con, key).map(|i| (i.owner, i.holds)),
            _ => set_holders(&mut con, key)
                .first()
                .map(|h| (h.0.clone().into_bytes(), h.2)),
        };
        assert_eq!(holds, Some((b"a".to_vec(), 2)), "{key}: a holds twice");
        assert_same_dataset(&server, &replica, &[key], "an owner served twice");
        assert_eq!(release(&mut con, key, "a"), 1);
        assert_eq!(release(&mut con, key, "a"), 1);
        let (tb, _) = b.granted("b");
        assert!(tb > t1);
        assert_eq!(release(&mut con, key, "b"), 1);
    }
    assert_same_dataset(&server, &replica, &["sem", "plain"], "after the releases");
}

/// The oldest waiter's kind decides only for a free key: a key that holds a
/// read/write lock (moved onto a semaphore's name by RENAME, with the
/// semaphore's waiter still queued) answers its own kind's requests nil, not
/// an error. (Red team, after the fix above.)
#[test]
fn a_held_key_answers_by_its_own_kind() {
    let (_server, mut con, w) = full_semaphore("a", 5_000);
    acquire_opts(&mut con, "b", "r1", 400, &["SHARED"]).expect("granted");
    ok(&mut con, cmd("RENAME").arg("b").arg("a"));
    assert_eq!(acquire_opts(&mut con, "a", "r2", 1_000, &["SHARED"]), None);
    // Once the reader's lease ends the key is free and the waiter gets it.
    let (t, _) = w.granted("the semaphore's waiter");
    assert_eq!(set_holders(&mut con, "a"), [("w".into(), t, 1)]);
}
