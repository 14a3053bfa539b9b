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

use crate::common::dlock::{conn_t, lock_info, release, set_holders, Holder};
use crate::common::server_ops::*;
use crate::common::waiter::*;
use crate::common::*;

use redis::Connection;
use std::time::{Duration, Instant};

const SHARED: &[&str] = &["SHARED"];
const EXCLUSIVE: &[&str] = &[];
const LIMIT2: &[&str] = &["LIMIT", "2"];

/// `DLOCK.ACQUIRE key owner ttl <kind…>` without waiting: the token, or None.
fn take(con: &mut Connection, key: &str, owner: &str, ttl: i64, kind: &[&str]) -> Option<i64> {
    let mut c = redis::cmd("DLOCK.ACQUIRE");
    c.arg(key).arg(owner).arg(ttl).arg(kind);
    c.query(con)
        .unwrap_or_else(|e| panic!("DLOCK.ACQUIRE {key} {owner}: {}", err_text(&e)))
}

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
    let what = "CLIENT PAUSE 1500 WRITE, lock sets";
    let mut master = Server::start_with(&["--appendonly", "yes"], &[]);
    let mut replica = master.start_replica(&[], &[]);
    let mut con = conn_t(&master);
    let held_at = Instant::now();
    let ttl = SHORT_LEASE.as_millis() as i64;
    let t_r1 = take(&mut con, "p:rw", "r1", ttl, SHARED).expect("r1");
    let t_a = take(&mut con, "p:sem", "a", ttl, LIMIT2).expect("a");
    let t_b = take(&mut con, "p:sem", "b", 60_000, LIMIT2).expect("b");
    let mut waiters = queue_kinds(
        &master,
        &mut con,
        &[
            ("p:rw", "w", 10_000, 10_000, EXCLUSIVE),
            ("p:rw", "r-late", 10_000, 10_000, SHARED),
            ("p:sem", "c-800ms", 10_000, 800, LIMIT2),
            ("p:sem", "c", 10_000, 10_000, LIMIT2),
        ],
    );
    let late_reader = waiters.remove(1);
    let paused_at = Instant::now();
    client_pause(&mut con, PAUSE.as_millis() as u64, "WRITE");
    before_lease_end(held_at, SHORT_LEASE, "CLIENT PAUSE");
    let mut answers: Vec<Answer> = join_all(waiters);
    let listing = show_answers(&answers, paused_at);
    let timed_out = answer(&answers, "c-800ms");
    assert_eq!(timed_out.reply, Reply::Nil, "{what}: all:\n{listing}");
    assert!(
        timed_out.at.saturating_duration_since(held_at) + EARLY >= Duration::from_millis(800),
        "{what}: WAIT 800 answered early; all:\n{listing}"
    );
    for owner in ["w", "c"] {
        let a = answer(&answers, owner);
        let t = token_of(a, &master, what);
        assert!(t > t_b, "{what}: {owner}'s token {t} <= {t_b}");
        let after = a.at.saturating_duration_since(paused_at);
        assert!(
            after + EARLY >= PAUSE && after <= PAUSE + PROMPT,
            "{what}: {owner} was granted {after:?} after a {PAUSE:?} pause began; all:\n{listing}"
        );
    }
    let t_w = token_of(answer(&answers, "w"), &master, what);
    let t_c = token_of(answer(&answers, "c"), &master, what);
    assert_no_second_reply(&mut answers, what);
    assert!(
        !late_reader.is_finished(),
        "{what}: the reader behind the writer was answered while the writer holds"
    );
    assert_eq!(
        set_holders(&mut con, "p:sem"),
        [("b".into(), t_b, 1), ("c".into(), t_c, 1)]
    );
    assert_eq!(release(&mut con, "p:rw", "w"), 1);
    let mut late = vec![late_reader.join()];
    let t_late = token_of(&late[0], &master, what);
    assert!(t_late > t_w && t_w > t_r1 && t_c > t_a);
    assert_no_second_reply(&mut late, what);
    assert_eq!(
        set_holders(&mut con, "p:rw"),
        [("r-late".into(), t_late, 1)]
    );
    assert_healthy(&mut master, what);
    assert_same_dataset(&master, &replica, &["p:rw", "p:sem"], what);
    assert_healthy(&mut replica, what);

    let before = db_digest(&mut con);
    master.restart("NOSAVE");
    let mut con = master.conn();
    assert_eq!(
        db_digest(&mut con),
        before,
        "{what}: the AOF replay differs"
    );
    assert_eq!(owners(&set_holders(&mut con, "p:sem")), ["b", "c"]);
    assert_healthy(&mut master, what);
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
    let what = "DEBUG SLEEP 1, lock sets";
    let mut master = Server::start();
    let replica = master.start_replica(&[], &[]);
    let mut con = conn_t(&master);
    let held_at = Instant::now();
    let ttl = SHORT_LEASE.as_millis() as i64;
    take(&mut con, "s:sem", "a", ttl, LIMIT2).expect("a");
    let t_b = take(&mut con, "s:sem", "b", ttl, LIMIT2).expect("b");
    take(&mut con, "s:rw", "r1", ttl, SHARED).expect("r1");
    let mut waiters = queue_kinds(
        &master,
        &mut con,
        &[
            ("s:sem", "c", 10_000, 10_000, LIMIT2),
            ("s:sem", "d", 10_000, 10_000, LIMIT2),
            ("s:sem", "e", 10_000, 10_000, LIMIT2),
            ("s:rw", "w", 10_000, 10_000, EXCLUSIVE),
            ("s:rw", "r2", 10_000, 10_000, SHARED),
            ("s:rw", "r3", 10_000, 10_000, SHARED),
        ],
    );
    let behind: Vec<Waiter> = vec![waiters.remove(2), waiters.remove(3), waiters.remove(3)];
    let mut sleeper = RawConn::open(master.port);
    before_lease_end(held_at, SHORT_LEASE, "DEBUG SLEEP");
    assert_eq!(
        sleeper.call(&["DEBUG", "SLEEP", "1"]),
        Reply::Status("OK".into())
    );
    let woke_at = Instant::now();
    let mut answers: Vec<Answer> = join_all(waiters);
    for a in &answers {
        let t = token_of(a, &master, what);
        assert!(t > t_b, "{what}: {}'s token {t} <= {t_b}", a.name);
        let late = a.at.saturating_duration_since(woke_at);
        assert!(
            late <= PROMPT,
            "{what}: {} was granted {late:?} after the sleep",
            a.name
        );
    }
    assert_no_second_reply(&mut answers, what);
    assert!(
        behind.iter().all(|w| !w.is_finished()),
        "{what}: a waiter behind a full set was answered"
    );
    assert_eq!(owners(&set_holders(&mut con, "s:sem")), ["c", "d"]);
    // The writer holds a plain (exclusive) lock.
    assert_eq!(
        lock_info(&mut con, "s:rw").map(|i| i.owner),
        Some(b"w".to_vec())
    );
    assert_eq!(release(&mut con, "s:sem", "c"), 1);
    assert_eq!(release(&mut con, "s:rw", "w"), 1);
    let mut rest: Vec<Answer> = join_all(behind);
    for a in &rest {
        token_of(a, &master, what);
    }
    assert_no_second_reply(&mut rest, what);
    assert_eq!(owners(&set_holders(&mut con, "s:sem")), ["d", "e"]);
    assert_eq!(owners(&set_holders(&mut con, "s:rw")), ["r2", "r3"]);
    assert_healthy(&mut master, what);
    assert_same_dataset(&master, &replica, &["s:sem", "s:rw"], what);
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
    let what = "FAILOVER, lock sets";
    let mut master = Server::start();
    let mut replica = master.start_streaming_replica();
    let mut con = conn_t(&master);
    let mut rcon = replica.conn();
    let t_r1 = take(&mut con, "f:rw", "r1", 60_000, SHARED).expect("r1");
    let t_r2 = take(&mut con, "f:rw", "r2", 60_000, SHARED).expect("r2");
    let t_a = take(&mut con, "f:sem", "a", 60_000, LIMIT2).expect("a");
    let held_at = Instant::now();
    let t_b = take(&mut con, "f:sem", "b", 500, LIMIT2).expect("b");
    let waiters = queue_kinds(
        &master,
        &mut con,
        &[
            ("f:rw", "w", 5000, 10_000, EXCLUSIVE),
            ("f:rw", "r3", 5000, 10_000, SHARED),
            ("f:sem", "c", 5000, 10_000, LIMIT2),
        ],
    );
    wait_applied(&mut rcon, "f:sem", what);
    let failover_at = Instant::now();
    before_lease_end(held_at, SHORT_LEASE, "FAILOVER");
    failover(&mut con, 3000);
    assert_roles_swap(&mut master, &mut replica, &mut con, &mut rcon, what);
    let mut answers: Vec<Answer> = join_all(waiters);
    assert_each_unblocked(&mut answers, failover_at, what);
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
    let mut rcon = conn_t(&replica);
    sleep_until(held_at + Duration::from_millis(600));
    assert_eq!(
        set_holders(&mut rcon, "f:rw"),
        [("r1".into(), t_r1, 1), ("r2".into(), t_r2, 1)],
        "{what}: the readers on the new master"
    );
    assert_eq!(set_holders(&mut rcon, "f:sem"), [("a".into(), t_a, 1)]);
    assert_same_dataset(&replica, &master, &["f:rw", "f:sem"], what);
    let t = take(&mut rcon, "f:sem", "after", 5000, LIMIT2)
        .unwrap_or_else(|| panic!("{what}: the ended lease's place is not free"));
    assert!(t > t_b, "{what}: token {t} after promotion <= {t_b}");
    assert_eq!(
        take(&mut rcon, "f:sem", "full", 5000, LIMIT2),
        None,
        "{what}: a third holder of LIMIT 2"
    );
    assert_same_dataset(&replica, &master, &["f:rw", "f:sem"], what);
    assert_healthy(&mut master, what);
    assert_healthy(&mut replica, what);
}

/// REPLICAOF <another server> on a master with set waiters: each gets exactly one
/// `UNBLOCKED` error, the server then holds the new master's dataset, and after
/// REPLICAOF NO ONE a set key is granted again with a token above the earlier ones.
#[test]
fn replicaof_turns_set_waiters_into_one_error_each() {
    let what = "REPLICAOF, lock sets";
    let mut master = Server::start();
    let mut other = Server::start();
    let mut con = conn_t(&master);
    let t_r1 = take(&mut con, "o:rw", "r1", 60_000, SHARED).expect("r1");
    take(&mut con, "o:sem", "a", 60_000, LIMIT2).expect("a");
    let t_b = take(&mut con, "o:sem", "b", 60_000, LIMIT2).expect("b");
    let waiters = queue_kinds(
        &master,
        &mut con,
        &[
            ("o:rw", "w", 5000, 10_000, EXCLUSIVE),
            ("o:rw", "r2", 5000, 10_000, SHARED),
            ("o:sem", "c", 5000, 10_000, LIMIT2),
        ],
    );
    let turned_at = Instant::now();
    let _: () = query!(&mut con, "REPLICAOF", "127.0.0.1", other.port);
    let mut answers: Vec<Answer> = join_all(waiters);
    assert_each_unblocked(&mut answers, turned_at, what);
    let up = master_link_up(&mut con);
    assert!(up, "{what}: the link to the new master never came up");
    assert_same_dataset(&other, &master, &[], what);
    assert!(
        set_holders(&mut con, "o:sem").is_empty(),
        "{what}: synced from an empty master"
    );
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
    let _: () = query!(&mut con, "REPLICAOF", "NO", "ONE");
    let t = take(&mut con, "o:sem", "again", 1000, LIMIT2).expect("a free semaphore");
    assert!(
        t > t_b.max(t_r1),
        "{what}: token {t} is not above the earlier ones"
    );
    assert_healthy(&mut master, what);
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
    let what = "SHUTDOWN SAVE, lock sets";
    let mut server = Server::start();
    let mut con = conn_t(&server);
    take(&mut con, "d:rw", "r1", 60_000, SHARED).expect("r1");
    take(&mut con, "d:rw", "r1", 60_000, &["SHARED", "REENTRANT"]).expect("r1 again");
    take(&mut con, "d:rw", "r2", 60_000, SHARED).expect("r2");
    take(&mut con, "d:sem", "a", 60_000, LIMIT2).expect("a");
    let t_b = take(&mut con, "d:sem", "b", 60_000, LIMIT2).expect("b");
    let waiters = queue_kinds(
        &server,
        &mut con,
        &[
            ("d:rw", "w", 5000, 0, EXCLUSIVE),
            ("d:sem", "c", 5000, 10_000, LIMIT2),
        ],
    );
    let rw = set_holders(&mut con, "d:rw");
    let sem = set_holders(&mut con, "d:sem");
    assert_eq!((rw.len(), rw[0].2, sem.len()), (2, 2, 2));
    let before = db_digest(&mut con);
    let mut caller = RawConn::open(server.port);
    let r = caller.call(&["SHUTDOWN", "SAVE"]);
    assert!(
        matches!(r, Reply::Closed(_)),
        "{what}: SHUTDOWN answered {r:?}"
    );
    assert!(
        wait_until(Duration::from_secs(10), || !server.is_alive()),
        "{what}: the server still runs"
    );
    for a in join_all(waiters) {
        assert!(
            matches!(a.reply, Reply::Closed(_) | Reply::Error(_)),
            "{what}: waiter {} answered {:?}",
            a.name,
            a.reply
        );
    }
    assert_clean_log(&server, what);
    server.crash_and_restart(); // only starts it again: the process has exited
    let mut con = conn_t(&server);
    assert_eq!(db_digest(&mut con), before, "{what}: the reloaded dataset");
    assert_eq!(set_holders(&mut con, "d:rw"), rw);
    assert_eq!(set_holders(&mut con, "d:sem"), sem);
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
    let w = queue_kinds(
        &server,
        &mut con,
        &[("d:sem", "after", 5000, 10_000, LIMIT2)],
    );
    assert_eq!(release(&mut con, "d:sem", "a"), 1);
    let mut a: Vec<Answer> = join_all(w);
    let t = token_of(&a[0], &server, what);
    assert!(t > t_b, "{what}: token {t} after the restart <= {t_b}");
    assert_no_second_reply(&mut a, what);
    assert_healthy(&mut server, what);
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
    let what = "OOM, lock sets";
    let mut master = Server::start();
    let replica = master.start_replica(&[], &[]);
    let mut con = conn_t(&master);
    take(&mut con, "m:sem", "a", 60_000, LIMIT2).expect("a");
    let lease_from = Instant::now();
    let t_b = take(&mut con, "m:sem", "b", 2000, LIMIT2).expect("b");
    take(&mut con, "m:rw", "r1", 60_000, SHARED).expect("r1");
    let waiters = queue_kinds(
        &master,
        &mut con,
        &[
            ("m:sem", "c", 5000, 10_000, LIMIT2),
            ("m:sem", "d", 5000, 10_000, LIMIT2),
            ("m:rw", "w", 5000, 10_000, EXCLUSIVE),
        ],
    );
    fill_past_maxmemory(&mut con);
    let mut probe = RawConn::open(master.port);
    for args in [
        &["DLOCK.ACQUIRE", "m:new", "x", "1000", "SHARED"][..],
        &[
            "DLOCK.ACQUIRE",
            "m:new",
            "x",
            "1000",
            "WAIT",
            "1000",
            "LIMIT",
            "3",
        ],
    ] {
        let r = probe.call(args);
        assert!(
            r.is_error_starting("OOM"),
            "{what}: {} answered {r:?}",
            args.join(" ")
        );
    }
    assert_eq!(release(&mut con, "m:sem", "a"), 1, "{what}: RELEASE at OOM");
    assert_eq!(release(&mut con, "m:rw", "r1"), 1, "{what}: RELEASE at OOM");
    let Ok([c, d, w]) = <[Waiter; 3]>::try_from(waiters) else {
        panic!("three waiters")
    };
    let (c, w) = (c.join(), w.join());
    before_lease_end(lease_from, Duration::from_millis(2000), "the releases");
    let d = d.join();
    let d_after = d.at.saturating_duration_since(lease_from);
    assert!(
        d_after + EARLY >= Duration::from_millis(2000)
            && d_after <= Duration::from_millis(2000) + PROMPT,
        "{what}: the lease-end hand-off came {d_after:?} into a 2000 ms lease"
    );
    let mut answers = vec![c, w, d];
    for a in &answers {
        let t = token_of(a, &master, what);
        assert!(t > t_b, "{what}: {}'s token {t} <= {t_b}", a.name);
    }
    assert_no_second_reply(&mut answers, what);
    assert_eq!(owners(&set_holders(&mut con, "m:sem")), ["c", "d"]);
    // The writer holds a plain (exclusive) lock.
    assert_eq!(
        lock_info(&mut con, "m:rw").map(|i| i.owner),
        Some(b"w".to_vec())
    );
    assert_healthy(&mut master, what);
    assert_same_dataset(&master, &replica, &[], what);
}
