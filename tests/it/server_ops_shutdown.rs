//! The server's own operations as inputs (issue #10, SPEC "Rules every command keeps"):
//! the server stops while clients wait in `DLOCK.ACQUIRE … WAIT` — for a second
//! (`DEBUG SLEEP`), to reload its dataset (`DEBUG RELOAD`), or for good (`SHUTDOWN
//! SAVE|NOSAVE`, then a restart).
//!
//! Every test checks that the server survives (it answers PING and its log has no
//! assertion or crash report), that every blocked waiter gets exactly one answer (read
//! on its own raw connection, with a read timeout, and nothing more arrives after it),
//! and, where a replica or the AOF is involved, that they hold exactly the master's
//! dataset (`DEBUG DIGEST`). The helpers are in `tests/it/common/server_ops.rs`.

use crate::common::dlock::{conn_t, lock_info, release, try_acquire};
use crate::common::server_ops::*;
use crate::common::waiter::*;
use crate::common::*;

use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// DEBUG SLEEP, DEBUG RELOAD
// ---------------------------------------------------------------------------------------

/// DEBUG SLEEP 1 on the master while a 500 ms lease ends: the waiter is granted right
/// after the sleep (within `PROMPT`) with a token above the holder's; a waiter whose
/// WAIT (500 ms) passed during the sleep gets nil; each gets exactly one reply; the
/// replica holds the master's dataset.
#[test]
fn debug_sleep_while_a_lease_ends() {
    let what = "DEBUG SLEEP 1";
    let mut master = Server::start();
    let replica = master.start_replica(&[], &[]);
    let mut con = conn_t(&master);
    let held_at = Instant::now();
    let t0 = try_acquire(&mut con, "sleep:k", "holder", 500).expect("sleep:k");
    try_acquire(&mut con, "sleep:long", "holder", 60_000).expect("sleep:long");
    let waiters = queue(
        &master,
        &mut con,
        &[
            ("sleep:k", "w-lease", 5000, 10_000),
            ("sleep:long", "w-timeout", 5000, 500),
        ],
    );
    let mut sleeper = RawConn::open(master.port);
    before_lease_end(held_at, Duration::from_millis(500), "DEBUG SLEEP");
    let slept = sleeper.call(&["DEBUG", "SLEEP", "1"]);
    let woke_at = Instant::now();
    assert_eq!(slept, Reply::Status("OK".into()));
    let mut answers: Vec<Answer> = join_all(waiters);
    let token = token_of(&answers[0], &master, what);
    assert!(token > t0, "{what}: waiter token {token} <= holder's {t0}");
    let late = answers[0].at.saturating_duration_since(woke_at);
    assert!(
        late <= PROMPT,
        "{what}: the waiter was granted {late:?} after the sleep ended"
    );
    assert_eq!(
        answers[1].reply,
        Reply::Nil,
        "{what}: the waiter whose WAIT passed during the sleep"
    );
    assert_no_second_reply(&mut answers, what);
    assert_healthy(&mut master, what);
    let info = lock_info(&mut con, "sleep:k").expect("the waiter holds sleep:k");
    assert_eq!(
        (info.owner.as_slice(), info.token),
        (&b"w-lease"[..], token)
    );
    assert_eq!(
        lock_info(&mut con, "sleep:long").map(|i| i.waiters),
        Some(0)
    );
    assert_same_dataset(&master, &replica, &["sleep:k"], what);
}

/// DEBUG RELOAD (save, flush, load) while a client waits behind a 600 ms lease: the
/// reload keeps the lock (same digest, holder and token) and the flush it does hands
/// nothing to the waiter; the waiter is granted exactly once at the lease end (not
/// before, promptly after), with a larger token.
#[test]
fn debug_reload_keeps_the_lock_and_its_waiter() {
    let what = "DEBUG RELOAD";
    let mut server = Server::start();
    let mut con = conn_t(&server);
    let held_at = Instant::now();
    let t0 = try_acquire(&mut con, "rl:k", "holder", 600).expect("rl:k");
    let mut w = queue(&server, &mut con, &[("rl:k", "waiter", 5000, 10_000)]);
    let before = db_digest(&mut con);
    let _: () = query!(&mut con, "DEBUG", "RELOAD");
    before_lease_end(held_at, Duration::from_millis(600), "DEBUG RELOAD");
    assert_eq!(db_digest(&mut con), before, "{what}: the reloaded dataset");
    let info = lock_info(&mut con, "rl:k").expect("rl:k is held after the reload");
    assert_eq!(
        (info.owner.as_slice(), info.token, info.waiters),
        (&b"holder"[..], t0, 1)
    );
    assert!(
        !w[0].is_finished() || held_at.elapsed() >= Duration::from_millis(600),
        "{what}: the waiter was answered before the lease ended"
    );
    let mut answers = vec![w.remove(0).join()];
    let token = token_of(&answers[0], &server, what);
    assert!(token > t0, "{what}: token {token} <= {t0}");
    let after = answers[0].at.saturating_duration_since(held_at);
    assert!(
        after + EARLY >= Duration::from_millis(600),
        "{what}: the waiter was granted {after:?} into a 600 ms lease"
    );
    assert!(
        after <= Duration::from_millis(600) + PROMPT,
        "{what}: the waiter was granted only {after:?} after a 600 ms lease began"
    );
    assert_no_second_reply(&mut answers, what);
    assert_healthy(&mut server, what);
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
    let what = format!("SHUTDOWN {mode}");
    let what = what.as_str();
    let mut server = Server::start();
    let mut con = conn_t(&server);
    let t0 = try_acquire(&mut con, "down:k", "holder", 60_000).expect("down:k");
    let waiters = queue(
        &server,
        &mut con,
        &[
            ("down:k", "w-forever", 5000, 0),
            ("down:k", "w-10s", 5000, 10_000),
        ],
    );
    let before = db_digest(&mut con);
    let mut caller = RawConn::open(server.port);
    let r = caller.call(&["SHUTDOWN", mode]);
    assert!(
        matches!(r, Reply::Closed(_)),
        "{what}: SHUTDOWN answered {r:?}; log:\n{}",
        server.log_tail(20)
    );
    let exited = wait_until(Duration::from_secs(10), || !server.is_alive());
    assert!(exited, "{what}: the server still runs");
    let answers: Vec<Answer> = join_all(waiters);
    for a in &answers {
        assert!(
            matches!(a.reply, Reply::Closed(_) | Reply::Error(_)),
            "{what}: waiter {} answered {:?}, expected the connection to close",
            a.name,
            a.reply
        );
    }
    let log = server.log_tail(1_000_000);
    assert!(
        log.contains("ready to exit, bye bye"),
        "{what}: no clean exit in the log:\n{}",
        server.log_tail(30)
    );
    assert_clean_log(&server, what);
    if mode == "SAVE" {
        assert!(
            log.contains("DB saved on disk"),
            "{what}: no RDB saved:\n{}",
            server.log_tail(30)
        );
    }

    server.crash_and_restart(); // only starts it again: the process has exited
    let mut con = conn_t(&server);
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
    if mode == "SAVE" {
        assert_eq!(
            db_digest(&mut con),
            before,
            "{what}: the reloaded dataset differs"
        );
        let info = lock_info(&mut con, "down:k").expect("the holder still holds down:k");
        assert_eq!((info.owner.as_slice(), info.token), (&b"holder"[..], t0));
        let w = queue(&server, &mut con, &[("down:k", "after", 5000, 10_000)]);
        assert_eq!(release(&mut con, "down:k", "holder"), 1);
        let mut a: Vec<Answer> = join_all(w);
        let t = token_of(&a[0], &server, what);
        assert!(t > t0, "{what}: token {t} after restart <= {t0}");
        assert_no_second_reply(&mut a, what);
    } else {
        assert_eq!(
            lock_info(&mut con, "down:k"),
            None,
            "{what}: nothing was saved"
        );
        let t = try_acquire(&mut con, "down:k", "after", 5000).expect("down:k is free");
        assert!(
            t > t0,
            "{what}: token {t} after a restart without data <= {t0}"
        );
    }
    assert_healthy(&mut server, what);
}

#[test]
fn shutdown_nosave_with_waiters_exits_cleanly() {
    shutdown_with_waiters("NOSAVE");
}

#[test]
fn shutdown_save_with_waiters_exits_cleanly_and_keeps_the_lock() {
    shutdown_with_waiters("SAVE");
}
