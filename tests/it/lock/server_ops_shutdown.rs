//! The server's own operations as inputs (issue #10, SPEC "Rules every command keeps"):
//! the server stops while clients wait in `DLOCK.ACQUIRE … WAIT` — for a second
//! (`DEBUG SLEEP`), to reload its dataset (`DEBUG RELOAD`), or for good (`SHUTDOWN
//! SAVE|NOSAVE`, then a restart).
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
use crate::lock::support::{lock_info, release, try_acquire};

use std::time::{Duration, Instant};

const ZERO: Duration = Duration::ZERO;

// ---------------------------------------------------------------------------------------
// DEBUG SLEEP, DEBUG RELOAD
// ---------------------------------------------------------------------------------------

/// DEBUG SLEEP 1 on the master while a 500 ms lease ends: the waiter is granted right
/// after the sleep (within `PROMPT`) with a token above the holder's; a waiter whose
/// WAIT (500 ms) passed during the sleep gets nil; each gets exactly one reply; the
/// replica holds the master's dataset.
#[test]
fn debug_sleep_while_a_lease_ends() {
    let mut s = Scene::replicated("DEBUG SLEEP 1", &[]);
    let held_at = Instant::now();
    let t0 = s.hold("sleep:k", "holder", 500, &[]);
    s.hold("sleep:long", "holder", 60_000, &[]);
    let waiters = s.queue(&[
        ("sleep:k", "w-lease", 5000, 10_000),
        ("sleep:long", "w-timeout", 5000, 500),
    ]);
    let woke_at = s.debug_sleep(held_at, Duration::from_millis(500), "1");
    let mut answers = join_all(waiters);
    let token = s.granted_between(&answers[0], t0, woke_at, ZERO, ZERO);
    assert_eq!(
        answers[1].reply,
        Reply::Nil,
        "{}: the waiter whose WAIT passed during the sleep",
        s.what
    );
    assert_no_second_reply(&mut answers, &s.what);
    s.assert_holder("sleep:k", "w-lease", token);
    let long = lock_info(&mut s.con, "sleep:long");
    assert_eq!(long.map(|i| i.waiters), Some(0));
    s.assert_end(&["sleep:k"]);
}

/// DEBUG RELOAD (save, flush, load) while a client waits behind a 600 ms lease: the
/// reload keeps the lock (same digest, holder and token) and the flush it does hands
/// nothing to the waiter; the waiter is granted exactly once at the lease end (not
/// before, promptly after), with a larger token.
#[test]
fn debug_reload_keeps_the_lock_and_its_waiter() {
    let lease = Duration::from_millis(600);
    let mut s = Scene::alone("DEBUG RELOAD");
    let held_at = Instant::now();
    let t0 = s.hold("rl:k", "holder", 600, &[]);
    let mut w = s.queue(&[("rl:k", "waiter", 5000, 10_000)]);
    let before = db_digest(&mut s.con);
    let _: () = query!(&mut s.con, "DEBUG", "RELOAD");
    before_lease_end(held_at, lease, "DEBUG RELOAD");
    assert_eq!(db_digest(&mut s.con), before, "{}: reloaded", s.what);
    let info = lock_info(&mut s.con, "rl:k").expect("rl:k is held after the reload");
    assert_eq!(
        (info.owner.as_slice(), info.token, info.waiters),
        (&b"holder"[..], t0, 1)
    );
    assert!(
        !w[0].is_finished() || held_at.elapsed() >= lease,
        "{}: the waiter was answered before the lease ended",
        s.what
    );
    let mut answers = vec![w.remove(0).join()];
    s.granted_between(&answers[0], t0, held_at, lease, lease);
    assert_no_second_reply(&mut answers, &s.what);
    s.assert_end(&[]);
}

// ---------------------------------------------------------------------------------------
// SHUTDOWN
// ---------------------------------------------------------------------------------------

/// `SHUTDOWN <mode>` with clients blocked (WAIT 0 and WAIT 10000) behind a 60 s
/// lease: the SHUTDOWN caller and every waiter see the connection closed (or an
/// error), never a token or a hang; the process exits with "ready to exit" and no
/// assertion in its log. With SAVE, a restart loads the same dataset (digest), the
/// holder still holds the lock, nobody is queued, and the lock is handed to a new
/// waiter on release. With NOSAVE the lock is gone and a new grant's token is still
/// above the old one.
fn shutdown_with_waiters(mode: &str) {
    let mut s = Scene::alone(&format!("SHUTDOWN {mode}"));
    let t0 = s.hold("down:k", "holder", 60_000, &[]);
    let waiters = s.queue(&[
        ("down:k", "w-forever", 5000, 0),
        ("down:k", "w-10s", 5000, 10_000),
    ]);
    let before = db_digest(&mut s.con);
    let log = s.shut_down(mode, waiters);
    let what = s.what.clone();
    assert!(
        log.contains("ready to exit, bye bye"),
        "{what}: no clean exit in the log:\n{}",
        s.master.log_tail(30)
    );
    if mode == "SAVE" {
        assert!(
            log.contains("DB saved on disk"),
            "{what}: no RDB saved:\n{}",
            s.master.log_tail(30)
        );
    }

    s.start_again();
    assert_eq!(warden_stat(&mut s.con, "locks_waiting"), 0);
    if mode == "SAVE" {
        assert_eq!(db_digest(&mut s.con), before, "{what}: reloaded");
        s.assert_holder("down:k", "holder", t0);
        let w = s.queue(&[("down:k", "after", 5000, 10_000)]);
        assert_eq!(release(&mut s.con, "down:k", "holder"), 1);
        let mut a = join_all(w);
        let t = s.token(&a[0]);
        assert!(t > t0, "{what}: token {t} after restart <= {t0}");
        assert_no_second_reply(&mut a, &what);
    } else {
        let gone = lock_info(&mut s.con, "down:k");
        assert_eq!(gone, None, "{what}: nothing was saved");
        let t = try_acquire(&mut s.con, "down:k", "after", 5000).expect("down:k is free");
        assert!(
            t > t0,
            "{what}: token {t} after a restart without data <= {t0}"
        );
    }
    s.assert_end(&[]);
}

#[test]
fn shutdown_nosave_with_waiters_exits_cleanly() {
    shutdown_with_waiters("NOSAVE");
}

#[test]
fn shutdown_save_with_waiters_exits_cleanly_and_keeps_the_lock() {
    shutdown_with_waiters("SAVE");
}
