//! The server's own operations as inputs (issue #10, SPEC "Rules every command keeps"):
//! the lease is the key's expiry — a handed-off lease ends on time among 200 000
//! volatile keys, and `PEXPIRE` / `PERSIST` / `RESTORE` on a lock key move, remove or
//! set its lease — while clients wait in `DLOCK.ACQUIRE … WAIT`.
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
use crate::lock::support::{lock_info, lock_server, release, try_acquire};

use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// Lease ends among many keys
// ---------------------------------------------------------------------------------------

/// A lease that was itself handed off ends among 200 000 keys with a TTL: A holds the
/// lock (30 s), W1 and W2 wait, A releases → W1 gets it for 300 ms and does nothing →
/// W2 is granted after W1's lease ends (not before) and within 1 s of W1's grant —
/// not whenever active expiry happens to sample the key.
#[test]
fn handed_off_lease_ends_on_time_among_200k_volatile_keys() {
    let what = "lease end among 200k volatile keys";
    let (mut server, mut con) = lock_server();
    let _: () = query!(&mut con, "DEBUG", "POPULATE", 200_000, "vol", 8);
    let _: () = query!(
        &mut con,
        "EVAL",
        "for i = 0, 199999 do redis.call('PEXPIRE', 'vol:' .. i, 600000) end",
        0
    );
    let expires = info_field(&mut con, "keyspace", "db0").unwrap_or_default();
    assert!(
        expires.contains("expires=200000"),
        "volatile keys: {expires}"
    );
    let t_a = try_acquire(&mut con, "many:k", "a", 30_000).expect("many:k");
    let waiters = queue(
        &server,
        &mut con,
        &[("many:k", "w1", 300, 10_000), ("many:k", "w2", 300, 10_000)],
    );
    let released_at = Instant::now();
    assert_eq!(release(&mut con, "many:k", "a"), 1);
    let mut answers: Vec<Answer> = join_all(waiters);
    let listing = show_answers(&answers, released_at);
    let (t1, t2) = match (&answers[0].reply, &answers[1].reply) {
        (Reply::Int(t1), Reply::Int(t2)) => (*t1, *t2),
        _ => panic!(
            "{what}: W1 and W2 must both be granted (W1 holds for 300 ms, W2 waits up to 10 s); answers after the release:\n{listing}\n{}",
            crash_cause(&server)
        ),
    };
    assert!(
        t_a < t1 && t1 < t2,
        "{what}: tokens {t_a}, {t1}, {t2} not increasing"
    );
    let w2_after_release = answers[1].at.saturating_duration_since(released_at);
    assert!(
        w2_after_release + EARLY >= Duration::from_millis(300),
        "{what}: W2 was granted {w2_after_release:?} after the release, before W1's 300 ms lease ended:\n{listing}"
    );
    let gap = answers[1].at.saturating_duration_since(answers[0].at);
    assert!(
        gap < Duration::from_millis(1000),
        "{what}: W2 was granted {gap:?} after W1 (W1's lease: 300 ms):\n{listing}"
    );
    assert_no_second_reply(&mut answers, what);
    assert_healthy(&mut server, what);
}

// ---------------------------------------------------------------------------------------
// The lease is the key's expiry
// ---------------------------------------------------------------------------------------

/// PEXPIRE lengthening a held lock's lease (600 ms → 2000 ms): DLOCK.INFO ttl_ms is
/// the PTTL; past the old deadline the owner still holds it (another owner is refused);
/// another owner is granted only after the new deadline, with a larger token; the
/// replica holds the master's dataset.
#[test]
fn pexpire_moves_the_lease() {
    let mut s = Scene::replicated("PEXPIRE 2000 on a 600 ms lock", &[]);
    let mut c = Checks::default();
    let t = s.hold("px:k", "a", 600, &[]);
    let moved_at = Instant::now();
    let n: i64 = query!(&mut s.con, "PEXPIRE", "px:k", 2000);
    assert_eq!(n, 1);
    c.note(ttl_is_pttl(&mut s.con, "px:k").map(|_| ()));
    sleep_until(moved_at + Duration::from_millis(900));
    let other = try_acquire(&mut s.con, "px:k", "b", 1000);
    c.check(other.is_none(), || {
        format!("another owner got the lock (token {other:?}) 900 ms after PEXPIRE 2000, past the old deadline, before the new one")
    });
    if other.is_none() {
        c.holder(&mut s.con, "px:k", "a", t);
        c.note(ttl_is_pttl(&mut s.con, "px:k").map(|_| ()));
        let mut got = None;
        let granted = wait_until(Duration::from_secs(3), || {
            got = try_acquire(&mut s.con, "px:k", "b", 1000);
            got.is_some()
        });
        let at = moved_at.elapsed();
        c.check(granted, || "the lock never became free".to_string());
        c.check(at + EARLY >= Duration::from_millis(2000), || {
            format!("another owner was granted {at:?} after PEXPIRE 2000")
        });
        let t_b = got.unwrap_or(i64::MAX);
        c.check(t_b > t, || format!("token {t_b} <= {t}"));
    }
    s.assert_end(&["px:k"]);
    c.finish(&s.what);
}

/// PEXPIRE shortening a held lock's lease (30 s → 500 ms) while a client waits, with
/// active expiry off (so only the module's own timer can act): DLOCK.INFO ttl_ms is
/// the PTTL, and the waiter is granted at the new deadline — not before, and within
/// `PROMPT` after — exactly once, with a larger token; the replica holds the master's
/// dataset.
#[test]
fn pexpire_shortening_the_lease_serves_the_waiter() {
    let mut s = Scene::replicated("PEXPIRE 500 on a 30 s lock with a waiter", &[]);
    let mut c = Checks::default();
    let _: () = query!(&mut s.con, "DEBUG", "SET-ACTIVE-EXPIRE", 0);
    let t = s.hold("pxs:k", "a", 30_000, &[]);
    let w = s.queue(&[("pxs:k", "w", 5000, 10_000)]);
    let moved_at = Instant::now();
    let n: i64 = query!(&mut s.con, "PEXPIRE", "pxs:k", 500);
    assert_eq!(n, 1);
    c.note(ttl_is_pttl(&mut s.con, "pxs:k").map(|_| ()));
    let mut answers = join_all(w);
    if c.token_above(&answers[0], t) {
        let deadline = Duration::from_millis(500);
        c.came_between(&answers[0], moved_at, deadline, deadline);
    }
    assert_no_second_reply(&mut answers, &s.what);
    s.assert_end(&["pxs:k"]);
    c.finish(&s.what);
}

/// PERSIST on a held lock (600 ms lease): PTTL and DLOCK.INFO ttl_ms are -1, and past
/// the old deadline the owner still holds it — a waiter keeps waiting and another
/// owner is refused — until the owner releases it, which hands it to the waiter once.
#[test]
fn persist_keeps_the_lock_until_released() {
    let mut s = Scene::alone("PERSIST on a held lock");
    let mut c = Checks::default();
    let held_at = Instant::now();
    let t = s.hold("persist:k", "a", 600, &[]);
    let n: i64 = query!(&mut s.con, "PERSIST", "persist:k");
    assert_eq!(n, 1);
    c.note(ttl_is_pttl(&mut s.con, "persist:k").map(|_| ()));
    let mut w = s.queue(&[("persist:k", "w", 5000, 10_000)]);
    sleep_until(held_at + Duration::from_millis(900));
    assert_healthy(&mut s.master, &s.what);
    let early = w[0].is_finished();
    c.check(!early, || {
        "the waiter was answered past the old deadline, while the lock has no expiry".to_string()
    });
    let other = try_acquire(&mut s.con, "persist:k", "b", 1000);
    c.check(other.is_none(), || {
        format!("another owner got a lock that has no expiry (token {other:?})")
    });
    let info = lock_info(&mut s.con, "persist:k");
    let seen = info
        .as_ref()
        .map(|i| (i.owner.as_slice(), i.token, i.ttl_ms, i.waiters));
    c.check(seen == Some((&b"a"[..], t, -1, 1)), || {
        format!("DLOCK.INFO past the old deadline: {info:?}, expected owner a, token {t}, ttl_ms -1, 1 waiter")
    });
    let released_at = Instant::now();
    let released = release(&mut s.con, "persist:k", "a");
    c.check(released == 1, || {
        format!("the owner's RELEASE answered {released}")
    });
    let mut answers = vec![w.remove(0).join()];
    if c.token_above(&answers[0], t) && !early {
        c.came_between(&answers[0], released_at, Duration::ZERO, Duration::ZERO);
    }
    assert_no_second_reply(&mut answers, &s.what);
    s.assert_end(&[]);
    c.finish(&s.what);
}

/// `RESTORE key 5000 <DUMP of a lock with a 60 s lease>`: the RESTORE ttl is the
/// lease — PTTL ≈ 5000 and DLOCK.INFO ttl_ms = PTTL — with owner and token kept, and
/// another owner is refused.
#[test]
fn restore_with_a_ttl_sets_the_lease() {
    let what = "RESTORE key 5000 <60 s lock>";
    let (mut server, mut con) = lock_server();
    let mut c = Checks::default();
    let t = try_acquire(&mut con, "rs:k", "a", 60_000).expect("rs:k");
    let dump: Vec<u8> = query!(&mut con, "DUMP", "rs:k");
    let _: () = query!(&mut con, "DEL", "rs:k");
    let _: () = query!(&mut con, "RESTORE", "rs:k", 5000, dump);
    let p = pttl(&mut con, "rs:k");
    c.check((4000..=5000).contains(&p), || {
        format!("PTTL {p} after RESTORE … 5000")
    });
    match ttl_is_pttl(&mut con, "rs:k") {
        Ok(ttl) => c.check(ttl <= 5000, || format!("DLOCK.INFO ttl_ms {ttl}")),
        Err(e) => c.check(false, || e),
    }
    c.holder(&mut con, "rs:k", "a", t);
    let other = try_acquire(&mut con, "rs:k", "b", 1000);
    c.check(other.is_none(), || {
        format!("another owner got the restored lock (token {other:?})")
    });
    assert_healthy(&mut server, what);
    c.finish(what);
}
