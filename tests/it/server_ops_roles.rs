//! The server's own operations as inputs (issue #10, SPEC "Rules every command keeps"):
//! role changes while clients wait in `DLOCK.ACQUIRE … WAIT` — `FAILOVER` with a fast
//! and with a slow replica, an aborted `FAILOVER`, `REPLICAOF` another server, also
//! during a `CLIENT PAUSE`.
//!
//! Every test checks that the server survives (it answers PING and its log has no
//! assertion or crash report), that every blocked waiter gets exactly one answer (read
//! on its own raw connection, with a read timeout, and nothing more arrives after it),
//! and, where a replica or the AOF is involved, that they hold exactly the master's
//! dataset (`DEBUG DIGEST`). The helpers are in `tests/it/common/server_ops.rs`.

use crate::common::dlock::{conn_t, lock_info, try_acquire};
use crate::common::server_ops::*;
use crate::common::waiter::*;
use crate::common::*;

use std::thread;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// FAILOVER
// ---------------------------------------------------------------------------------------

/// `FAILOVER TIMEOUT 3000` on a master with waiters — two behind a 60 s lease (WAIT
/// 10000 and WAIT 1000), one behind a 500 ms lease — optionally with the replica busy
/// in `DEBUG SLEEP 2`. With the slow replica the short lease always ends while the
/// failover pauses writes; with a fast one it does when the replica's once-a-second
/// ACK comes after it, else it ends just after the master turned replica. After: the
/// roles have swapped, both servers are alive with clean logs, every waiter got
/// exactly one answer and none was granted (the old master only paused and then
/// turned replica: `UNBLOCKED …`, or nil for the 1 s WAIT), the datasets are equal,
/// and the new master grants the ended lease to a new owner with a larger token.
fn failover_with_waiters(slow_replica: bool) {
    let what = if slow_replica {
        "FAILOVER with a replica in DEBUG SLEEP 2"
    } else {
        "FAILOVER"
    };
    let mut master = Server::start();
    let mut replica = master.start_streaming_replica();
    let mut con = conn_t(&master);
    let mut rcon = replica.conn();
    let held_at = Instant::now();
    let t_long = try_acquire(&mut con, "fo:long", "holder", 60_000).expect("fo:long");
    let t_short = try_acquire(&mut con, "fo:short", "holder", 500).expect("fo:short");
    let waiters = queue(
        &master,
        &mut con,
        &[
            ("fo:long", "w-long", 5000, 10_000),
            ("fo:short", "w-short", 5000, 10_000),
            ("fo:long", "w-1s", 5000, 1000),
        ],
    );
    // The replica has applied every write (fo:short is the last one) before it sleeps:
    // it acknowledges its offset once a second, so one ACK right after the sleep must
    // find it caught up for the failover to go through within its timeout.
    wait_applied(&mut rcon, "fo:short", what);
    let mut sleeper = slow_replica.then(|| put_to_sleep(&replica, "2"));
    let failover_at = Instant::now();
    before_lease_end(held_at, Duration::from_millis(500), "FAILOVER");
    failover(&mut con, 3000);
    assert_roles_swap(&mut master, &mut replica, &mut con, &mut rcon, what);
    let mut answers: Vec<Answer> = join_all(waiters);
    let listing = show_answers(&answers, failover_at);
    for a in &answers {
        let ok = match a.name.as_str() {
            "w-1s" => a.reply == Reply::Nil || a.reply.is_error_starting("UNBLOCKED"),
            _ => a.reply.is_error_starting("UNBLOCKED"),
        };
        assert!(
            ok,
            "{what}: waiter {} answered {:?} (expected UNBLOCKED{}); all:\n{listing}\nold master log:\n{}",
            a.name,
            a.reply,
            if a.name == "w-1s" { " or nil" } else { "" },
            master.log_tail(20)
        );
    }
    assert_no_second_reply(&mut answers, what);
    if let Some(c) = sleeper.as_mut() {
        assert_eq!(c.read(READ_TIMEOUT), Reply::Status("OK".into()));
    }
    assert_healthy(&mut master, what);
    assert_healthy(&mut replica, what);
    assert_eq!(
        warden_stat(&mut con, "locks_waiting"),
        0,
        "{what}: waiters left queued on the old master"
    );
    assert_same_dataset(&replica, &master, &["fo:long", "fo:short"], what);
    let info = lock_info(&mut rcon, "fo:long").expect("fo:long is still held on the new master");
    assert_eq!(
        (info.owner.as_slice(), info.token),
        (&b"holder"[..], t_long)
    );
    let mut rcon = conn_t(&replica);
    let t = try_acquire(&mut rcon, "fo:short", "after", 5000)
        .unwrap_or_else(|| panic!("{what}: the ended lease is not free on the new master"));
    assert!(
        t > t_short,
        "{what}: token {t} after promotion <= {t_short}"
    );
    assert_same_dataset(&replica, &master, &["fo:long", "fo:short"], what);
    assert_healthy(&mut master, what);
    assert_healthy(&mut replica, what);
}

#[test]
fn failover_with_waiters_and_a_fast_replica() {
    failover_with_waiters(false);
}

#[test]
fn failover_with_waiters_and_a_slow_replica() {
    failover_with_waiters(true);
}

/// `FAILOVER TIMEOUT 1000` while the replica is in `DEBUG SLEEP 2`, so the failover is
/// aborted and the master stays master; a 500 ms lease ends while the failover pauses
/// writes. The waiter is granted exactly once, after the abort (not while writes are
/// paused) and promptly after it (the abort itself is noticed within a second), with
/// a larger token; the replica holds the master's dataset once it wakes.
#[test]
fn aborted_failover_hands_off_after_it() {
    let what = "FAILOVER TIMEOUT 1000, aborted";
    let mut master = Server::start();
    let mut replica = master.start_streaming_replica();
    let mut con = conn_t(&master);
    let mut rcon = replica.conn();
    let held_at = Instant::now();
    let t0 = try_acquire(&mut con, "fa:k", "holder", 500).expect("fa:k");
    let w = queue(&master, &mut con, &[("fa:k", "waiter", 5000, 10_000)]);
    wait_applied(&mut rcon, "fa:k", what);
    let mut sleeper = put_to_sleep(&replica, "2");
    let failover_at = Instant::now();
    failover(&mut con, 1000);
    before_lease_end(held_at, Duration::from_millis(500), "FAILOVER");
    let mut answers: Vec<Answer> = join_all(w);
    let token = token_of(&answers[0], &master, what);
    assert!(token > t0, "{what}: token {token} <= {t0}");
    let after = answers[0].at.saturating_duration_since(failover_at);
    assert!(
        after + EARLY >= Duration::from_millis(1000),
        "{what}: the waiter was granted {after:?} after FAILOVER, before its 1000 ms timeout"
    );
    assert!(
        after <= Duration::from_millis(2000) + PROMPT,
        "{what}: the waiter was granted only {after:?} after FAILOVER"
    );
    assert_no_second_reply(&mut answers, what);
    assert_healthy(&mut master, what);
    assert_eq!(role(&mut con), "master", "{what}: the master's role");
    let log = master.log_tail(1_000_000);
    premise(
        log.contains("FAILOVER to any replica aborted"),
        "the failover was aborted",
    );
    assert_eq!(sleeper.read(READ_TIMEOUT), Reply::Status("OK".into()));
    let info = lock_info(&mut con, "fa:k").expect("the waiter holds fa:k");
    assert_eq!((info.owner.as_slice(), info.token), (&b"waiter"[..], token));
    assert_same_dataset(&master, &replica, &["fa:k"], what);
    assert_healthy(&mut replica, what);
}

// ---------------------------------------------------------------------------------------
// REPLICAOF
// ---------------------------------------------------------------------------------------

/// REPLICAOF <another server> on a master with waiters (two behind a 60 s lease, one
/// behind a 600 ms lease): each waiter gets exactly one `UNBLOCKED` error and none is
/// granted; the server stays up and, after the short lease would have ended, holds
/// exactly the new master's dataset (the module wrote nothing as a replica); an
/// ACQUIRE sent to it is refused (READONLY); after REPLICAOF NO ONE a fresh ACQUIRE is
/// granted with a token above every earlier one.
#[test]
fn replicaof_turns_waiters_into_one_error_each() {
    let what = "REPLICAOF";
    let mut master = Server::start();
    let mut other = Server::start();
    let mut ocon = conn_t(&other);
    try_acquire(&mut ocon, "ro:other", "o", 60_000).expect("ro:other");
    let mut con = conn_t(&master);
    let held_at = Instant::now();
    let t_long = try_acquire(&mut con, "ro:long", "holder", 60_000).expect("ro:long");
    let t_short = try_acquire(&mut con, "ro:short", "holder", 600).expect("ro:short");
    let waiters = queue(
        &master,
        &mut con,
        &[
            ("ro:long", "w1", 5000, 10_000),
            ("ro:long", "w2", 5000, 10_000),
            ("ro:short", "w3", 5000, 10_000),
        ],
    );
    let turned_at = Instant::now();
    before_lease_end(held_at, Duration::from_millis(600), "REPLICAOF");
    let _: () = query!(&mut con, "REPLICAOF", "127.0.0.1", other.port);
    let mut answers: Vec<Answer> = join_all(waiters);
    assert_each_unblocked(&mut answers, turned_at, what);
    let up = master_link_up(&mut con);
    assert!(up, "{what}: the link to the new master never came up");
    // Let the short lease's deadline pass while this server is a replica.
    let lease_end = held_at + Duration::from_millis(900);
    sleep_until(lease_end);
    assert_healthy(&mut master, what);
    assert_same_dataset(&other, &master, &["ro:other"], what);
    assert_eq!(
        lock_info(&mut con, "ro:long"),
        None,
        "synced from the new master"
    );
    assert_eq!(
        lock_info(&mut con, "ro:other").map(|i| i.owner),
        Some(b"o".to_vec())
    );
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
    let mut refused = RawConn::open(master.port);
    let r = refused.call(&["DLOCK.ACQUIRE", "ro:long", "x", "1000", "WAIT", "1000"]);
    assert!(
        r.is_error_starting("READONLY"),
        "{what}: ACQUIRE on a replica answered {r:?}"
    );
    let _: () = query!(&mut con, "REPLICAOF", "NO", "ONE");
    let t = try_acquire(&mut con, "ro:long", "again", 1000)
        .unwrap_or_else(|| panic!("{what}: no grant after REPLICAOF NO ONE"));
    assert!(
        t > t_long.max(t_short),
        "{what}: token {t} after the role changes is not above {}",
        t_long.max(t_short)
    );
    assert_healthy(&mut master, what);
    assert_healthy(&mut other, what);
}

/// CLIENT PAUSE 5000 WRITE, a 500 ms lease ends (its hand-off must wait), then
/// REPLICAOF <another server> during the pause, then CLIENT UNPAUSE: the waiter gets
/// exactly one `UNBLOCKED` error and is never granted; the server, now a replica,
/// writes nothing of its own after the pause — its dataset is the new master's
/// (digest) — and stays up with a clean log.
#[test]
fn replicaof_during_a_pause_drops_the_deferred_hand_off() {
    let what = "CLIENT PAUSE, lease end, REPLICAOF, UNPAUSE";
    let mut master = Server::start();
    let mut other = Server::start();
    let mut ocon = conn_t(&other);
    try_acquire(&mut ocon, "pr:other", "o", 60_000).expect("pr:other");
    let mut con = conn_t(&master);
    let held_at = Instant::now();
    try_acquire(&mut con, "pr:k", "holder", 500).expect("pr:k");
    let w = queue(&master, &mut con, &[("pr:k", "waiter", 5000, 10_000)]);
    client_pause(&mut con, 5000, "WRITE");
    before_lease_end(held_at, Duration::from_millis(500), "CLIENT PAUSE");
    let lease_over = wait_until(Duration::from_secs(3), || {
        !master.is_alive() || cmd("PTTL").arg("pr:k").query::<i64>(&mut con).ok() == Some(-2)
    });
    assert_healthy(&mut master, what);
    assert!(lease_over, "{what}: the 500 ms lease never ended");
    // Let a deferred hand-off retry a few times while paused.
    thread::sleep(Duration::from_millis(100));
    let _: () = query!(&mut con, "REPLICAOF", "127.0.0.1", other.port);
    let mut answers: Vec<Answer> = join_all(w);
    assert!(
        answers[0].reply.is_error_starting("UNBLOCKED"),
        "{what}: the waiter answered {:?}, expected UNBLOCKED; {}",
        answers[0].reply,
        crash_cause(&master)
    );
    assert_no_second_reply(&mut answers, what);
    let up = master_link_up(&mut con);
    assert!(up, "{what}: the link to the new master never came up");
    let _: () = query!(&mut con, "CLIENT", "UNPAUSE");
    // Give a module that retries deferred writes time to (wrongly) write as a replica.
    thread::sleep(Duration::from_millis(200));
    assert_healthy(&mut master, what);
    assert_same_dataset(&other, &master, &["pr:other"], what);
    assert_eq!(
        lock_info(&mut con, "pr:k"),
        None,
        "{what}: pr:k on the replica"
    );
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
    assert_healthy(&mut other, what);
}
