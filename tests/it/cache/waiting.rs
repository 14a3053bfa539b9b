//! Waiting for a cache refresh: `CACHE.GET … LEASE … WAIT` hands the
//! refreshed value to every waiter (FIFO), gives the lease to the oldest
//! waiter when a lease ends without a SET or the key is deleted, answers
//! `[nil, 0]` at the timeout, and keeps its promises under `CLIENT PAUSE`,
//! disconnects, MULTI and scripts.

use crate::cache::support::*;
use crate::common::waiter::*;
use crate::common::*;

use std::thread::sleep;
use std::time::{Duration, Instant};

#[test]
fn a_set_hands_the_value_to_every_waiter() {
    let (s, mut con) = Server::start_conn();
    let (_, token) = get_lease(&mut con, "k", 10_000, &[]);
    let waiters: Vec<_> = (0..5)
        .map(|_| Waiter::cache(&s, "k", "k", 0, 1_000, 10_000))
        .collect();
    wait_for_waiters(&mut con, "k", 5);
    assert_eq!(warden_stat(&mut con, "cache_waiting"), 5);
    let t0 = Instant::now();
    assert_eq!(refresh(&mut con, "k", "computed", 10_000, token), 1);
    for w in waiters {
        let a = w.join();
        assert_eq!(a.lease(), (Some("computed".into()), 0));
        assert!(a.at.duration_since(t0) < Duration::from_secs(2));
    }
    assert_eq!(warden_stat(&mut con, "cache_waiting"), 0);
    assert_eq!(cache_info(&mut con, "k").unwrap()["waiters"], 0);
}

#[test]
fn a_lease_that_ends_without_a_set_goes_to_the_oldest_waiter() {
    let (s, mut con) = Server::start_conn();
    let t0 = Instant::now();
    let (_, first) = get_lease(&mut con, "k", 300, &[]);
    let oldest = cache_queued(&s, &mut con, ("k", "k"), 0, (5_000, 10_000));
    let second = cache_queued(&s, &mut con, ("k", "k"), 0, (5_000, 10_000));
    let Answer { reply, at, .. } = oldest.join();
    let (value, token) = reply.leased().expect("[value, lease]");
    assert_eq!(value, None);
    assert!(token > first, "a new lease: {token} > {first}");
    let waited = at.duration_since(t0);
    assert!(
        waited >= Duration::from_millis(295),
        "before the lease ended: {waited:?}"
    );
    assert!(waited < Duration::from_secs(3), "late: {waited:?}");
    assert_eq!(cache_info(&mut con, "k").unwrap()["lease"], token);
    // The new refresher stores: the second waiter gets the value.
    assert_eq!(refresh(&mut con, "k", "v", 10_000, token), 1);
    assert_eq!(second.join().lease(), (Some("v".into()), 0));
}

#[test]
fn a_del_gives_the_refresh_to_the_oldest_waiter() {
    let (s, mut con) = Server::start_conn();
    let (_, first) = get_lease(&mut con, "k", 60_000, &[]);
    let w = cache_queued(&s, &mut con, ("k", "k"), 0, (5_000, 10_000));
    let _: i64 = query!(&mut con, "DEL", "k");
    let (value, token) = w.join().lease();
    assert_eq!(value, None);
    assert!(token > first);
    assert_eq!(refresh(&mut con, "k", "v", 1_000, first), 0);
}

#[test]
fn the_timeout_answers_nil_and_no_lease() {
    let (s, mut con) = Server::start_conn();
    get_lease(&mut con, "k", 60_000, &[]);
    let t0 = Instant::now();
    let Answer { reply, at, .. } = Waiter::cache(&s, "k", "k", 0, 1_000, 200).join();
    assert_eq!(reply.leased(), Some((None, 0)));
    let waited = at.duration_since(t0);
    assert!(
        waited >= Duration::from_millis(195) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    assert_eq!(cache_info(&mut con, "k").unwrap()["waiters"], 0);
}

/// A client waiting on "k" (`CACHE.GET k LEASE 1000 WAIT 0`), queued, and its
/// CLIENT ID (to unblock or kill it).
fn unblockable(s: &Server, con: &mut Connection) -> (i64, Waiter) {
    let (id, w) = Waiter::with_id(s, "k", &cache_args("k", 0, 1_000, 0));
    wait_for_waiters(con, "k", 1);
    (id, w)
}

#[test]
fn client_unblock_answers_nil_and_no_lease() {
    let (s, mut con) = Server::start_conn();
    get_lease(&mut con, "k", 60_000, &[]);
    let (id, w) = unblockable(&s, &mut con);
    let n: i64 = query!(&mut con, "CLIENT", "UNBLOCK", id);
    assert_eq!(n, 1);
    assert_eq!(w.join().lease(), (None, 0));
    assert_eq!(warden_stat(&mut con, "cache_waiting"), 0);
}

#[test]
fn a_stale_value_is_served_at_once_even_with_wait() {
    let (s, mut con) = Server::start_conn();
    cache_set(&mut con, "k", "old", 50, &["STALE", "60000"]);
    sleep(Duration::from_millis(80));
    let (value, token) = get_lease(&mut con, "k", 60_000, &[]);
    assert_eq!(value.as_deref(), Some("old"));
    assert!(token > 0);
    let t0 = Instant::now();
    let mut c2 = s.conn();
    assert_eq!(
        get_wait(&mut c2, "k", 1_000, 5_000).unwrap(),
        (Some("old".into()), 0)
    );
    assert!(t0.elapsed() < Duration::from_secs(1));
}

#[test]
fn a_waiter_that_disconnects_never_gets_the_lease() {
    let (s, mut con) = Server::start_conn();
    get_lease(&mut con, "k", 300, &[]);
    let (id, lost) = unblockable(&s, &mut con);
    let live = cache_queued(&s, &mut con, ("k", "k"), 0, (5_000, 10_000));
    let n: i64 = query!(&mut con, "CLIENT", "KILL", "ID", id);
    assert_eq!(n, 1);
    assert!(
        matches!(lost.join().reply, Reply::Closed(_)),
        "the killed client got no reply"
    );
    let (value, token) = live.join().lease();
    assert_eq!(value, None);
    assert!(token > 0, "the live waiter takes the lease");
    assert_eq!(warden_stat(&mut con, "cache_waiting"), 0);
}

#[test]
fn inside_multi_and_scripts_wait_does_not_block() {
    let (_s, mut con) = Server::start_conn();
    get_lease(&mut con, "k", 60_000, &[]);
    let v: Value = redis::pipe()
        .atomic()
        .cmd("CACHE.GET")
        .arg("k")
        .arg("LEASE")
        .arg(100)
        .arg("WAIT")
        .arg(0)
        .query(&mut con)
        .unwrap();
    assert_eq!(
        format!("{v:?}"),
        format!(
            "{:?}",
            Value::Array(vec![Value::Array(vec![Value::Nil, Value::Int(0)])])
        )
    );
    let v: Value = query!(
        &mut con,
        "EVAL",
        "return redis.call('CACHE.GET', KEYS[1], 'LEASE', 100, 'WAIT', 0)",
        1,
        "k"
    );
    assert!(matches!(v, Value::Array(ref a) if a.len() == 2), "{v:?}");
}

#[test]
fn a_lease_ending_during_a_write_pause_is_handed_over_after_it() {
    let (s, mut con) = Server::start_conn();
    let (_, first) = get_lease(&mut con, "k", 200, &[]);
    let w = cache_queued(&s, &mut con, ("k", "k"), 0, (5_000, 20_000));
    let _: () = query!(&mut con, "CLIENT", "PAUSE", 1_000, "WRITE");
    let t0 = Instant::now();
    let Answer { reply, at, .. } = w.join();
    let (value, token) = reply.leased().expect("[value, lease]");
    assert_eq!(value, None);
    assert!(token > first);
    assert!(
        at.duration_since(t0) >= Duration::from_millis(700),
        "handed over during the pause: {:?}",
        at.duration_since(t0)
    );
    let mut s = s;
    s.assert_alive();
    assert_eq!(cache_info(&mut con, "k").unwrap()["lease"], token);
}

#[test]
fn max_waiters_is_enforced_per_key() {
    let s = Server::start_with(&[], &["cache-max-waiters", "2"]);
    let mut con = s.conn();
    get_lease(&mut con, "k", 60_000, &[]);
    // The oldest takes a lease outlasting the other's timeout.
    let a = cache_queued(&s, &mut con, ("k", "k"), 0, (5_000, 5_000));
    let b = cache_queued(&s, &mut con, ("k", "k"), 0, (1_000, 1_500));
    let e = get_wait(&mut con, "k", 1_000, 5_000).unwrap_err();
    assert_eq!(err_text(&e), "ERR too many waiters for this key");
    let _: i64 = query!(&mut con, "DEL", "k");
    let replies: Vec<Leased> = [a, b].map(|w| w.join().lease()).into();
    assert!(replies[0].1 > 0, "the oldest takes the lease: {replies:?}");
    assert_eq!(replies[1], (None, 0), "the other times out: {replies:?}");
}

/// Red team: a SET that satisfies a younger waiter answers it even when an
/// older one asks for a higher MINVERSION (that one takes the next lease).
#[test]
fn a_set_answers_every_waiter_it_satisfies_past_an_unsatisfied_one() {
    let (s, mut con) = Server::start_conn();
    let (_, token) = get_lease(&mut con, "q", 10_000, &[]);
    let newer = cache_queued(&s, &mut con, ("q", "q"), 10, (5_000, 0));
    let plain = cache_queued(&s, &mut con, ("q", "q"), 0, (5_000, 10_000));
    let t0 = Instant::now();
    let t = token.to_string();
    assert_eq!(
        cache_set(&mut con, "q", "v5", 60_000, &["VERSION", "5", "LEASE", &t]),
        1
    );
    let Answer { reply, at, .. } = plain.join();
    assert_eq!(reply.leased(), Some((Some("v5".into()), 0)));
    assert!(
        at.duration_since(t0) < Duration::from_secs(2),
        "answered at the SET"
    );
    let (value, lease) = newer.join().lease();
    assert_eq!(value, None, "v5 is older than its MINVERSION");
    assert!(lease > token, "it refreshes next");
}

/// Red team: a cache waiter on a key name whose queue a lock left behind is
/// served by the cache (each waiter names its own family).
#[test]
fn a_cache_waiter_behind_a_former_lock_queue_is_served() {
    let (s, mut con) = Server::start_conn();
    crate::lock::support::try_acquire(&mut con, "y", "a", 5_000).unwrap();
    let lock_waiter = Waiter::lock(&s, "y", "b", 5_000, 0);
    assert!(wait_until(Duration::from_secs(5), || warden_stat(
        &mut con,
        "locks_waiting"
    ) == 1));
    assert_eq!(crate::lock::support::release(&mut con, "y", "a"), 1);
    lock_waiter.granted("the lock waiter");
    let _: i64 = query!(&mut con, "DEL", "y");
    cache_set(&mut con, "y", "old", 1, &["STALE", "60000", "VERSION", "1"]);
    sleep(Duration::from_millis(5));
    let (_, first) = get_lease(&mut con, "y", 300, &["MINVERSION", "5"]);
    let cache_waiter = Waiter::cache(&s, "y", "y", 5, 1_000, 0);
    let (value, token) = cache_waiter.join().lease();
    assert_eq!(value, None);
    assert!(
        token > first,
        "the lease passed to the cache waiter at its end"
    );
}

/// A command of another type that overwrites the key (`SET`, a set store)
/// ends the entry and its lease: the waiters are answered within warden's
/// once-a-second look, not at the end of the old lease. (Red team: they
/// waited out a lease that can be ten years long; Redis 7.0 sends such
/// overwrites an event of the writing command's own class only.)
#[test]
fn a_key_overwritten_by_another_command_answers_its_waiters() {
    let (s, mut con) = Server::start_conn();
    for (key, overwrite) in [
        ("by:set", vec!["SET", "by:set", "text"]),
        ("by:store", vec!["SUNIONSTORE", "by:store", "members"]),
    ] {
        let _: i64 = query!(&mut con, "SADD", "members", "m");
        get_lease(&mut con, key, 600_000, &[]);
        let w = cache_queued(&s, &mut con, (key, key), 0, (5_000, 0));
        let at = Instant::now();
        let _: Value = query!(&mut con, overwrite[0], &overwrite[1..]);
        let a = w.join();
        assert!(
            a.reply.is_error_starting("WRONGTYPE"),
            "{key}: {:?}",
            a.reply
        );
        a.assert_within(at, Duration::from_secs(3), key);
    }
}
