//! The server's own operations as inputs for lock sets (issue #15: `SHARED` and `LIMIT
//! n` keep "every server operation of the safety issue"): `CLIENT PAUSE` and `DEBUG
//! SLEEP` while holders' leases end, `FAILOVER` and `REPLICAOF` with set waiters,
//! `SHUTDOWN SAVE` with waiters, and `maxmemory`.
//!
//! Every test checks that the server survives (it answers PING and its log has no
//! assertion or crash report), that every blocked waiter gets exactly one answer (read
//! on its own raw connection, with a read timeout, and nothing more arrives after it),
//! that a set's holders (owner, token, holds) come through, and, where a replica or the
//! AOF is involved, that they hold exactly the master's dataset (`DEBUG DIGEST`). The
//! helpers are in `tests/it/common/server_ops.rs`.

use crate::common::server_ops::*;
use crate::common::waiter::*;
use crate::common::*;
use crate::lock::support::{acquire_opts, lock_info, release, set_holders, Holder};

use std::time::{Duration, Instant};

const SHARED: &[&str] = &["SHARED"];
const EXCLUSIVE: &[&str] = &[];
const LIMIT2: &[&str] = &["LIMIT", "2"];

/// The owners of a set's holders, in grant order.
fn owners(holders: &[Holder]) -> Vec<&str> {
    holders.iter().map(|h| h.0.as_str()).collect()
}

/// The answer of the waiter called `owner`.
fn answer<'a>(answers: &'a [Answer], owner: &str) -> &'a Answer {
    answers
        .iter()
        .find(|a| a.name == owner)
        .unwrap_or_else(|| panic!("no waiter {owner}"))
}

/// The owner holding `key` as a plain (exclusive) lock.
fn exclusive_owner(s: &mut Scene, key: &str) -> Option<Vec<u8>> {
    lock_info(&mut s.con, key).map(|i| i.owner)
}

// ---------------------------------------------------------------------------------------
// CLIENT PAUSE
// ---------------------------------------------------------------------------------------

const PAUSE: Duration = Duration::from_millis(1500);
const SHORT_LEASE: Duration = Duration::from_millis(500);

/// CLIENT PAUSE 1500 WRITE while a shared holder's and a semaphore holder's 500 ms
/// leases end, with a replica and the AOF on. A writer waits behind the reader and a
/// reader behind the writer; two wait for the semaphore's free place, the first with
/// WAIT 800 (it passes during the pause). After the pause the writer and the second
/// semaphore waiter are granted (not before it ends, promptly after), the 800 ms
/// waiter got nil once, the late reader still waits behind the writer and is granted
/// at its release; the replica and an AOF replay hold the master's dataset.
#[test]
fn pause_write_while_set_leases_end_grants_after_the_pause() {
    let mut s = Scene::replicated(
        "CLIENT PAUSE 1500 WRITE, lock sets",
        &["--appendonly", "yes"],
    );
    let held_at = Instant::now();
    let ttl = SHORT_LEASE.as_millis() as i64;
    let t_r1 = s.hold("p:rw", "r1", ttl, SHARED);
    let t_a = s.hold("p:sem", "a", ttl, LIMIT2);
    let t_b = s.hold("p:sem", "b", 60_000, LIMIT2);
    let mut waiters = s.queue_kinds(&[
        ("p:rw", "w", 10_000, 10_000, EXCLUSIVE),
        ("p:rw", "r-late", 10_000, 10_000, SHARED),
        ("p:sem", "c-800ms", 10_000, 800, LIMIT2),
        ("p:sem", "c", 10_000, 10_000, LIMIT2),
    ]);
    let late_reader = waiters.remove(1);
    let paused_at = s.pause(PAUSE.as_millis() as u64, "WRITE", held_at, SHORT_LEASE);
    let mut answers = join_all(waiters);
    let listing = show_answers(&answers, paused_at);
    let timed_out = answer(&answers, "c-800ms");
    assert_eq!(timed_out.reply, Reply::Nil, "{}: all:\n{listing}", s.what);
    assert_not_before(timed_out, held_at, Duration::from_millis(800), &s.what);
    let t_w = s.granted_between(answer(&answers, "w"), t_b, paused_at, PAUSE, PAUSE);
    let t_c = s.granted_between(answer(&answers, "c"), t_b, paused_at, PAUSE, PAUSE);
    assert_no_second_reply(&mut answers, &s.what);
    assert!(
        !late_reader.is_finished(),
        "{}: the reader behind the writer was answered while the writer holds",
        s.what
    );
    let sem = set_holders(&mut s.con, "p:sem");
    assert_eq!(sem, [("b".into(), t_b, 1), ("c".into(), t_c, 1)]);
    assert_eq!(release(&mut s.con, "p:rw", "w"), 1);
    let mut late = vec![late_reader.join()];
    let t_late = s.token(&late[0]);
    assert!(t_late > t_w && t_w > t_r1 && t_c > t_a);
    assert_no_second_reply(&mut late, &s.what);
    let rw = set_holders(&mut s.con, "p:rw");
    assert_eq!(rw, [("r-late".into(), t_late, 1)]);
    s.assert_end(&["p:rw", "p:sem"]);
    s.replay_aof();
    assert_eq!(owners(&set_holders(&mut s.con, "p:sem")), ["b", "c"]);
    assert_healthy(&mut s.master, &s.what);
}

// ---------------------------------------------------------------------------------------
// DEBUG SLEEP
// ---------------------------------------------------------------------------------------

/// DEBUG SLEEP 1 while every holder's 500 ms lease ends: after the sleep the semaphore
/// grants its two places to the first two waiters and the writer is granted, each
/// promptly and once; the third semaphore waiter and the two readers behind the writer
/// wait on, and are granted (the readers together) when a place frees; the replica
/// holds the master's dataset.
#[test]
fn debug_sleep_while_set_leases_end_fills_every_free_place_after_it() {
    let mut s = Scene::replicated("DEBUG SLEEP 1, lock sets", &[]);
    let held_at = Instant::now();
    let ttl = SHORT_LEASE.as_millis() as i64;
    s.hold("s:sem", "a", ttl, LIMIT2);
    let t_b = s.hold("s:sem", "b", ttl, LIMIT2);
    s.hold("s:rw", "r1", ttl, SHARED);
    let mut waiters = s.queue_kinds(&[
        ("s:sem", "c", 10_000, 10_000, LIMIT2),
        ("s:sem", "d", 10_000, 10_000, LIMIT2),
        ("s:sem", "e", 10_000, 10_000, LIMIT2),
        ("s:rw", "w", 10_000, 10_000, EXCLUSIVE),
        ("s:rw", "r2", 10_000, 10_000, SHARED),
        ("s:rw", "r3", 10_000, 10_000, SHARED),
    ]);
    let behind: Vec<Waiter> = vec![waiters.remove(2), waiters.remove(3), waiters.remove(3)];
    let woke_at = s.debug_sleep(held_at, SHORT_LEASE, "1");
    let mut answers = join_all(waiters);
    for a in &answers {
        s.granted_between(a, t_b, woke_at, Duration::ZERO, Duration::ZERO);
    }
    assert_no_second_reply(&mut answers, &s.what);
    assert!(
        behind.iter().all(|w| !w.is_finished()),
        "{}: a waiter behind a full set was answered",
        s.what
    );
    assert_eq!(owners(&set_holders(&mut s.con, "s:sem")), ["c", "d"]);
    assert_eq!(exclusive_owner(&mut s, "s:rw"), Some(b"w".to_vec()));
    assert_eq!(release(&mut s.con, "s:sem", "c"), 1);
    assert_eq!(release(&mut s.con, "s:rw", "w"), 1);
    let mut rest = join_all(behind);
    for a in &rest {
        s.token(a);
    }
    assert_no_second_reply(&mut rest, &s.what);
    assert_eq!(owners(&set_holders(&mut s.con, "s:sem")), ["d", "e"]);
    assert_eq!(owners(&set_holders(&mut s.con, "s:rw")), ["r2", "r3"]);
    s.assert_end(&["s:sem", "s:rw"]);
}

// ---------------------------------------------------------------------------------------
// FAILOVER, REPLICAOF
// ---------------------------------------------------------------------------------------

/// `FAILOVER TIMEOUT 3000` with a writer and a reader waiting on a key two readers
/// hold, and a waiter on a semaphore one of whose two holders has a 500 ms lease that
/// ends during the failover: every waiter gets exactly one `UNBLOCKED` error; the new
/// master holds every holder with its token (the ended lease no longer listed), the
/// datasets are equal, and the new master grants the free place with a larger token.
#[test]
fn failover_keeps_every_holder_and_unblocks_set_waiters() {
    let mut f = Failover::start("FAILOVER, lock sets");
    let keys = ["f:rw", "f:sem"];
    let take = |f: &mut Failover, key, owner, ttl| {
        let kind = if key == "f:rw" { SHARED } else { LIMIT2 };
        acquire_opts(&mut f.con, key, owner, ttl, kind).expect("granted")
    };
    let t_r1 = take(&mut f, "f:rw", "r1", 60_000);
    let t_r2 = take(&mut f, "f:rw", "r2", 60_000);
    let t_a = take(&mut f, "f:sem", "a", 60_000);
    f.held_at = Instant::now();
    let t_b = take(&mut f, "f:sem", "b", 500);
    let waiters = queue_kinds(
        &f.master,
        &mut f.con,
        &[
            ("f:rw", "w", 5000, 10_000, EXCLUSIVE),
            ("f:rw", "r3", 5000, 10_000, SHARED),
            ("f:sem", "c", 5000, 10_000, LIMIT2),
        ],
    );
    f.run("f:sem", false, 3000);
    f.assert_swapped(waiters, ("", "", |_| false), "locks_waiting", &keys);
    let what = f.what.clone();
    let rcon = &mut f.rcon;
    sleep_until(f.held_at + Duration::from_millis(600));
    assert_eq!(
        set_holders(rcon, "f:rw"),
        [("r1".into(), t_r1, 1), ("r2".into(), t_r2, 1)],
        "{what}: the readers on the new master"
    );
    assert_eq!(set_holders(rcon, "f:sem"), [("a".into(), t_a, 1)]);
    assert_same_dataset(&f.replica, &f.master, &keys, &what);
    let t = acquire_opts(rcon, "f:sem", "after", 5000, LIMIT2)
        .unwrap_or_else(|| panic!("{what}: the ended lease's place is not free"));
    assert!(t > t_b, "{what}: token {t} after promotion <= {t_b}");
    let full = acquire_opts(rcon, "f:sem", "full", 5000, LIMIT2);
    assert_eq!(full, None, "{what}: a third holder of LIMIT 2");
    assert_same_dataset(&f.replica, &f.master, &keys, &what);
    f.assert_healthy();
}

/// REPLICAOF <another server> on a master with set waiters: each gets exactly one
/// `UNBLOCKED` error, the server then holds the new master's dataset, and after
/// REPLICAOF NO ONE a set key is granted again with a token above the earlier ones.
#[test]
fn replicaof_turns_set_waiters_into_one_error_each() {
    let what = "REPLICAOF, lock sets";
    let mut s = Scene::alone(what);
    let mut other = Server::start();
    let t_r1 = s.hold("o:rw", "r1", 60_000, SHARED);
    s.hold("o:sem", "a", 60_000, LIMIT2);
    let t_b = s.hold("o:sem", "b", 60_000, LIMIT2);
    let waiters = s.queue_kinds(&[
        ("o:rw", "w", 5000, 10_000, EXCLUSIVE),
        ("o:rw", "r2", 5000, 10_000, SHARED),
        ("o:sem", "c", 5000, 10_000, LIMIT2),
    ]);
    turn_replica_of(&mut s.con, &other, waiters, what);
    assert_same_dataset(&other, &s.master, &[], what);
    let sem = set_holders(&mut s.con, "o:sem");
    assert!(sem.is_empty(), "{what}: synced from an empty master");
    assert_eq!(warden_stat(&mut s.con, "locks_waiting"), 0);
    promote(&mut s.con);
    let t = s.hold("o:sem", "again", 1000, LIMIT2);
    assert!(
        t > t_b.max(t_r1),
        "{what}: token {t} is not above the earlier ones"
    );
    assert_healthy(&mut s.master, what);
    assert_healthy(&mut other, what);
}

// ---------------------------------------------------------------------------------------
// SHUTDOWN
// ---------------------------------------------------------------------------------------

/// `SHUTDOWN SAVE` with clients waiting on a read/write lock and a semaphore: the
/// waiters see the connection close (or an error), the process exits cleanly, and the
/// restarted server has every holder with its token and holds, nobody queued; the
/// semaphore then hands a released place to a new waiter with a larger token.
#[test]
fn shutdown_save_with_set_waiters_keeps_every_holder() {
    let mut s = Scene::alone("SHUTDOWN SAVE, lock sets");
    s.hold("d:rw", "r1", 60_000, SHARED);
    s.hold("d:rw", "r1", 60_000, &["SHARED", "REENTRANT"]);
    s.hold("d:rw", "r2", 60_000, SHARED);
    s.hold("d:sem", "a", 60_000, LIMIT2);
    let t_b = s.hold("d:sem", "b", 60_000, LIMIT2);
    let waiters = s.queue_kinds(&[
        ("d:rw", "w", 5000, 0, EXCLUSIVE),
        ("d:sem", "c", 5000, 10_000, LIMIT2),
    ]);
    let rw = set_holders(&mut s.con, "d:rw");
    let sem = set_holders(&mut s.con, "d:sem");
    assert_eq!((rw.len(), rw[0].2, sem.len()), (2, 2, 2));
    let before = db_digest(&mut s.con);
    s.shut_down("SAVE", waiters);
    s.start_again();
    assert_eq!(db_digest(&mut s.con), before, "{}: reloaded", s.what);
    assert_eq!(set_holders(&mut s.con, "d:rw"), rw);
    assert_eq!(set_holders(&mut s.con, "d:sem"), sem);
    assert_eq!(warden_stat(&mut s.con, "locks_waiting"), 0);
    let w = s.queue_kinds(&[("d:sem", "after", 5000, 10_000, LIMIT2)]);
    assert_eq!(release(&mut s.con, "d:sem", "a"), 1);
    let mut a = join_all(w);
    let t = s.token(&a[0]);
    assert!(t > t_b, "{}: token {t} after the restart <= {t_b}", s.what);
    assert_no_second_reply(&mut a, &s.what);
    s.assert_end(&[]);
}

// ---------------------------------------------------------------------------------------
// maxmemory
// ---------------------------------------------------------------------------------------

/// Past `maxmemory` (noeviction): DLOCK.ACQUIRE of a new set key answers OOM, but a
/// held semaphore still hands a released place and an ended lease's place to its
/// waiters, and a read/write lock hands over from its reader to the waiting writer,
/// each once; the replica holds the master's dataset.
#[test]
fn oom_refuses_new_sets_but_hands_off_held_ones() {
    let mut s = Scene::replicated("OOM, lock sets", &[]);
    s.hold("m:sem", "a", 60_000, LIMIT2);
    let lease_from = Instant::now();
    let t_b = s.hold("m:sem", "b", 2000, LIMIT2);
    s.hold("m:rw", "r1", 60_000, SHARED);
    let waiters = s.queue_kinds(&[
        ("m:sem", "c", 5000, 10_000, LIMIT2),
        ("m:sem", "d", 5000, 10_000, LIMIT2),
        ("m:rw", "w", 5000, 10_000, EXCLUSIVE),
    ]);
    fill_past_maxmemory(&mut s.con);
    let limit3 = [
        "DLOCK.ACQUIRE",
        "m:new",
        "x",
        "1000",
        "WAIT",
        "1000",
        "LIMIT",
        "3",
    ];
    let shared = ["DLOCK.ACQUIRE", "m:new", "x", "1000", "SHARED"];
    assert_refused_oom(&s.master, &[&shared, &limit3], &s.what);
    assert_eq!(
        release(&mut s.con, "m:sem", "a"),
        1,
        "{}: RELEASE at OOM",
        s.what
    );
    assert_eq!(
        release(&mut s.con, "m:rw", "r1"),
        1,
        "{}: RELEASE at OOM",
        s.what
    );
    let Ok([c, d, w]) = <[Waiter; 3]>::try_from(waiters) else {
        panic!("three waiters")
    };
    let (c, w) = (c.join(), w.join());
    let lease = Duration::from_millis(2000);
    before_lease_end(lease_from, lease, "the releases");
    let d = d.join();
    assert_came_between(&d, lease_from, lease, lease, &s.what);
    let mut answers = vec![c, w, d];
    for a in &answers {
        let t = s.token(a);
        assert!(t > t_b, "{}: {}'s token {t} <= {t_b}", s.what, a.name);
    }
    assert_no_second_reply(&mut answers, &s.what);
    assert_eq!(owners(&set_holders(&mut s.con, "m:sem")), ["c", "d"]);
    assert_eq!(exclusive_owner(&mut s, "m:rw"), Some(b"w".to_vec()));
    s.assert_end(&[]);
}
