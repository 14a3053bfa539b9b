//! The server's own operations as inputs (issue #10, SPEC "Rules every command keeps"):
//! role changes while clients wait in `DLOCK.ACQUIRE … WAIT` — `FAILOVER` with a fast
//! and with a slow replica, an aborted `FAILOVER`, `REPLICAOF` another server, also
//! during a `CLIENT PAUSE`.
//!
//! Every test checks that the server survives (it answers PING and its log has no
//! assertion or crash report), that every blocked waiter gets exactly one answer (read
//! on its own raw connection, with a read timeout, and nothing more arrives after it),
//! and, where a replica or the AOF is involved, that they hold exactly the master's
//! dataset (`DEBUG DIGEST`). The helpers are in
//! `tests/it/common/server_ops.rs` (the waiters in `common/waiter.rs`).

use crate::common::server_ops::*;
use crate::common::waiter::*;
use crate::common::*;
use crate::lock::support::{conn_t, lock_info, try_acquire};

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
    let mut f = Failover::start(if slow_replica {
        "FAILOVER with a replica in DEBUG SLEEP 2"
    } else {
        "FAILOVER"
    });
    let keys = ["fo:long", "fo:short"];
    let t_long = try_acquire(&mut f.con, "fo:long", "holder", 60_000).expect("fo:long");
    let t_short = try_acquire(&mut f.con, "fo:short", "holder", 500).expect("fo:short");
    let waiters = queue(
        &f.master,
        &mut f.con,
        &[
            ("fo:long", "w-long", 5000, 10_000),
            ("fo:short", "w-short", 5000, 10_000),
            ("fo:long", "w-1s", 5000, 1000),
        ],
    );
    f.run("fo:short", slow_replica, 3000);
    let nil = |r: &Reply| *r == Reply::Nil;
    f.assert_swapped(waiters, ("w-1s", " or nil", nil), "locks_waiting", &keys);
    let info = lock_info(&mut f.rcon, "fo:long").expect("fo:long is still held on the new master");
    assert_eq!(
        (info.owner.as_slice(), info.token),
        (&b"holder"[..], t_long)
    );
    let t = try_acquire(&mut f.rcon, "fo:short", "after", 5000)
        .unwrap_or_else(|| panic!("{}: the ended lease is not free on the new master", f.what));
    assert!(
        t > t_short,
        "{}: token {t} after promotion <= {t_short}",
        f.what
    );
    assert_same_dataset(&f.replica, &f.master, &keys, &f.what);
    f.assert_healthy();
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
    let mut f = Failover::start("FAILOVER TIMEOUT 1000, aborted");
    let t0 = try_acquire(&mut f.con, "fa:k", "holder", 500).expect("fa:k");
    let w = queue(&f.master, &mut f.con, &[("fa:k", "waiter", 5000, 10_000)]);
    f.run("fa:k", true, 1000);
    let mut answers = join_all(w);
    let token = token_of(&answers[0], &f.master, &f.what);
    assert!(token > t0, "{}: token {token} <= {t0}", f.what);
    let (timeout, by) = (Duration::from_millis(1000), Duration::from_millis(2000));
    assert_came_between(&answers[0], f.at, timeout, by, &f.what);
    f.assert_aborted(&mut answers, &["fa:k"]);
    let info = lock_info(&mut f.con, "fa:k").expect("the waiter holds fa:k");
    assert_eq!((info.owner.as_slice(), info.token), (&b"waiter"[..], token));
}

// ---------------------------------------------------------------------------------------
// REPLICAOF
// ---------------------------------------------------------------------------------------

/// A master alone and another server, the master to be, on which `o` holds `lock`.
fn with_other(what: &str, lock: &str) -> (Scene, Server) {
    let other = Server::start();
    try_acquire(&mut conn_t(&other), lock, "o", 60_000).expect("the other's lock");
    (Scene::alone(what), other)
}

/// REPLICAOF <another server> on a master with waiters (two behind a 60 s lease, one
/// behind a 600 ms lease): each waiter gets exactly one `UNBLOCKED` error and none is
/// granted; the server stays up and, after the short lease would have ended, holds
/// exactly the new master's dataset (the module wrote nothing as a replica); an
/// ACQUIRE sent to it is refused (READONLY); after REPLICAOF NO ONE a fresh ACQUIRE is
/// granted with a token above every earlier one.
#[test]
fn replicaof_turns_waiters_into_one_error_each() {
    let what = "REPLICAOF";
    let (mut s, mut other) = with_other(what, "ro:other");
    let held_at = Instant::now();
    let t_long = s.hold("ro:long", "holder", 60_000, &[]);
    let t_short = s.hold("ro:short", "holder", 600, &[]);
    let waiters = s.queue(&[
        ("ro:long", "w1", 5000, 10_000),
        ("ro:long", "w2", 5000, 10_000),
        ("ro:short", "w3", 5000, 10_000),
    ]);
    before_lease_end(held_at, Duration::from_millis(600), "REPLICAOF");
    turn_replica_of(&mut s.con, &other, waiters, what);
    // Let the short lease's deadline pass while this server is a replica.
    sleep_until(held_at + Duration::from_millis(900));
    assert_healthy(&mut s.master, what);
    assert_same_dataset(&other, &s.master, &["ro:other"], what);
    let long = lock_info(&mut s.con, "ro:long");
    assert_eq!(long, None, "synced from the new master");
    let synced = lock_info(&mut s.con, "ro:other").map(|i| i.owner);
    assert_eq!(synced, Some(b"o".to_vec()));
    let acquire = ["DLOCK.ACQUIRE", "ro:long", "x", "1000", "WAIT", "1000"];
    assert_replica_refuses(&s.master, &mut s.con, &acquire, "locks_waiting", what);
    promote(&mut s.con);
    let t = try_acquire(&mut s.con, "ro:long", "again", 1000)
        .unwrap_or_else(|| panic!("{what}: no grant after REPLICAOF NO ONE"));
    let before = t_long.max(t_short);
    assert!(
        t > before,
        "{what}: token {t} after the role changes <= {before}"
    );
    assert_healthy(&mut s.master, what);
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
    let (mut s, mut other) = with_other(what, "pr:other");
    let held_at = Instant::now();
    s.hold("pr:k", "holder", 500, &[]);
    let w = s.queue(&[("pr:k", "waiter", 5000, 10_000)]);
    s.pause(5000, "WRITE", held_at, Duration::from_millis(500));
    s.wait_lease_over("pr:k");
    // Let a deferred hand-off retry a few times while paused.
    thread::sleep(Duration::from_millis(100));
    turn_replica_of(&mut s.con, &other, w, what);
    let _: () = query!(&mut s.con, "CLIENT", "UNPAUSE");
    // Give a module that retries deferred writes time to (wrongly) write as a replica.
    thread::sleep(Duration::from_millis(200));
    assert_healthy(&mut s.master, what);
    assert_same_dataset(&other, &s.master, &["pr:other"], what);
    let pr = lock_info(&mut s.con, "pr:k");
    assert_eq!(pr, None, "{what}: pr:k on the replica");
    assert_eq!(warden_stat(&mut s.con, "locks_waiting"), 0);
    assert_healthy(&mut other, what);
}
