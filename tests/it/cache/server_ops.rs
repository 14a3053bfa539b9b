//! The server's own operations against cache waiters and leases: a master turned
//! replica answers each waiter once (`UNBLOCKED`) and writes nothing of its own after;
//! `FAILOVER` (with a fast and a slow replica) hands no waiter a lease or a value the
//! new master lacks, and an aborted one hands both over once writes resume;
//! `SHUTDOWN SAVE` closes waiting connections and keeps entries and leases; `DEBUG
//! SLEEP` across a lease end hands the lease over once the server runs again; under
//! `maxmemory` new entries are refused while hits, leases' refresh SETs on existing
//! keys and hand-offs go on.

use crate::cache::support::*;
use crate::common::server_ops::*;
use crate::common::waiter::*;
use crate::common::*;

use std::thread::sleep;
use std::time::{Duration, Instant};

#[test]
fn replicaof_turns_cache_waiters_into_one_error_each() {
    let what = "REPLICAOF with cache waiters";
    let mut s = Scene::alone(what);
    let mut other = Server::start();
    cache_set(&mut other.conn(), "other", "o", 60_000, &[]);
    let (_, long) = get_lease(&mut s.con, "long", 60_000, &[]);
    let (_, short) = get_lease(&mut s.con, "short", 400, &[]);
    let waiters = vec![
        Waiter::cache(&s.master, "long", "long", 0, 5_000, 10_000),
        Waiter::cache(&s.master, "long 0", "long", 0, 5_000, 0),
        Waiter::cache(&s.master, "short", "short", 0, 5_000, 10_000),
    ];
    wait_for_waiters(&mut s.con, "long", 2);
    wait_for_waiters(&mut s.con, "short", 1);
    turn_replica_of(&mut s.con, &other, waiters, what);
    // The short lease ends while this server is a replica: no hand-off, no write.
    sleep(Duration::from_millis(600));
    assert_healthy(&mut s.master, what);
    assert_same_dataset(&other, &s.master, &["other"], what);
    let get = ["CACHE.GET", "x", "LEASE", "1000"];
    assert_replica_refuses(&s.master, &mut s.con, &get, "cache_waiting", what);
    promote(&mut s.con);
    let (_, t) = get_lease(&mut s.con, "long", 1_000, &[]);
    assert!(
        t > long.max(short),
        "{what}: lease token {t} after the role changes"
    );
    assert_healthy(&mut other, what);
}

#[test]
fn shutdown_save_with_cache_waiters_keeps_the_entry_and_its_lease() {
    let mut s = Scene::alone("SHUTDOWN SAVE with cache waiters");
    let opts = ["STALE", "600000", "VERSION", "4"];
    cache_set(&mut s.con, "stale", "old", 10, &opts);
    sleep(Duration::from_millis(20));
    let (value, token) = get_lease(&mut s.con, "stale", 600_000, &["MINVERSION", "5"]);
    assert_eq!(value, None, "older than MINVERSION: not served");
    let waiters = queue_cache(
        &s.master,
        &mut s.con,
        &[
            ("stale", "stale 0", 5, 5_000, 0),
            ("stale", "stale", 5, 5_000, 10_000),
        ],
    );
    let before = db_digest(&mut s.con);
    s.shut_down("SAVE", waiters);
    s.start_again();
    assert_eq!(db_digest(&mut s.con), before, "{}: reloaded", s.what);
    assert_eq!(cache_info(&mut s.con, "stale").unwrap()["lease"], token);
    assert_eq!(warden_stat(&mut s.con, "cache_waiting"), 0);
    let t = token.to_string();
    let refresh = ["VERSION", "5", "LEASE", &t];
    assert_eq!(cache_set(&mut s.con, "stale", "new", 60_000, &refresh), 1);
    let (_, next) = get_lease(&mut s.con, "other", 1_000, &[]);
    assert!(
        next > token,
        "{}: tokens go on increasing after a restart",
        s.what
    );
    s.assert_end(&[]);
}

#[test]
fn debug_sleep_across_a_lease_end_hands_it_over_after() {
    let mut s = Scene::alone("DEBUG SLEEP across a lease end");
    let (_, first) = get_lease(&mut s.con, "k", 200, &[]);
    let w = Waiter::cache(&s.master, "k", "k", 0, 5_000, 20_000);
    wait_for_waiters(&mut s.con, "k", 1);
    let _: () = query!(&mut s.con, "DEBUG", "SLEEP", 0.5);
    let t0 = Instant::now();
    let (value, token) = w.join().lease();
    assert_eq!(value, None);
    assert!(token > first, "{}: lease {token} <= {first}", s.what);
    assert!(t0.elapsed() < Duration::from_secs(3));
    s.assert_end(&[]);
}

#[test]
fn under_maxmemory_new_entries_are_refused_but_reads_and_refreshes_go_on() {
    let mut s = Scene::alone("maxmemory");
    cache_set(&mut s.con, "held", "v", 600_000, &[]);
    let (_, token) = get_lease(&mut s.con, "refresh", 600_000, &[]);
    let used = used_memory(&mut s.con);
    let _: () = query!(&mut s.con, "CONFIG", "SET", "maxmemory", used / 2);
    let _: () = query!(
        &mut s.con,
        "CONFIG",
        "SET",
        "maxmemory-policy",
        "noeviction"
    );
    let e = try_cache_set(&mut s.con, "new", "v", 1_000, &[]).unwrap_err();
    assert!(err_text(&e).starts_with("OOM"), "{}: {e}", s.what);
    let hit = cache_get(&mut s.con, "held", &[]);
    assert_eq!(hit.as_deref(), Some("v"), "a hit allocates nothing");
    assert_eq!(get_lease(&mut s.con, "refresh", 1_000, &[]), (None, 0));
    let _: () = query!(&mut s.con, "CONFIG", "SET", "maxmemory", 0);
    let lease = ["LEASE", &token.to_string()];
    assert_eq!(cache_set(&mut s.con, "refresh", "v", 1_000, &lease), 1);
    s.assert_end(&[]);
}

/// Sends a refresher's `CACHE.SET key value 60000 LEASE token` on a raw connection
/// (its reply is read later: while writes are paused it is held back).
fn send_refresh(server: &Server, key: &str, value: &str, token: i64) -> RawConn {
    let mut c = RawConn::open(server.port);
    let token = token.to_string();
    c.send(&["CACHE.SET", key, value, "60000", "LEASE", &token]);
    c
}

/// `FAILOVER TIMEOUT 3000` on a master with clients blocked in `CACHE.GET … LEASE …
/// WAIT` — two behind a 60 s lease (WAIT 10000 and WAIT 1000), one behind a 500 ms
/// lease, one behind a 60 s lease whose refresher's `CACHE.SET … LEASE` is sent
/// while the failover pauses writes — optionally with the replica busy in `DEBUG
/// SLEEP 2` (then the short lease always ends during the pause). After: the roles
/// have swapped, both servers are alive with clean logs, every waiter got exactly one
/// answer and none a lease or a value (`UNBLOCKED …`, or `[nil, 0]` for the 1 s
/// WAIT), the held-back SET is refused (it runs on what is a replica by then), the
/// datasets are equal, and the new master keeps the live leases, grants the ended one
/// with a larger token and serves a waiter of its own.
fn failover_with_cache_waiters(slow_replica: bool) {
    let mut f = Failover::start(if slow_replica {
        "FAILOVER with cache waiters and a replica in DEBUG SLEEP 2"
    } else {
        "FAILOVER with cache waiters"
    });
    let keys = ["fo:short", "fo:long", "fo:set"];
    let (_, t_short) = get_lease(&mut f.con, "fo:short", 500, &[]);
    let (_, t_long) = get_lease(&mut f.con, "fo:long", 60_000, &[]);
    let (_, t_set) = get_lease(&mut f.con, "fo:set", 60_000, &[]);
    let waiters = queue_cache(
        &f.master,
        &mut f.con,
        &[
            ("fo:long", "w-long", 0, 5000, 10_000),
            ("fo:short", "w-short", 0, 5000, 10_000),
            ("fo:set", "w-set", 0, 5000, 10_000),
            ("fo:long", "w-1s", 0, 5000, 1000),
        ],
    );
    f.run("fo:set", slow_replica, 3000);
    let mut refresher = send_refresh(&f.master, "fo:set", "fresh", t_set);
    let none = |r: &Reply| r.leased() == Some((None, 0));
    f.assert_swapped(
        waiters,
        ("w-1s", " or [nil, 0]", none),
        "cache_waiting",
        &keys,
    );
    let what = f.what.clone();
    let refused = refresher.read(READ_TIMEOUT);
    assert!(
        refused.is_error_starting("READONLY"),
        "{what}: the refresher's SET held back by the failover answered {refused:?}"
    );

    // The new master: the live leases came along, the refused SET stored nothing,
    // the ended lease is granted anew with a larger token.
    let rcon = &mut f.rcon;
    let lease_of = |c: &mut Connection, k: &str| cache_info(c, k).map(|i| i["lease"]);
    assert_eq!(lease_of(rcon, "fo:long"), Some(t_long), "{what}: fo:long");
    assert_eq!(lease_of(rcon, "fo:set"), Some(t_set), "{what}: fo:set");
    assert_eq!(cache_get(rcon, "fo:set", &[]), None, "{what}: fo:set");
    let (stale, t_new) = get_lease(rcon, "fo:short", 5_000, &[]);
    let before = t_short.max(t_long).max(t_set);
    assert!(
        stale.is_none() && t_new > before,
        "{what}: CACHE.GET fo:short LEASE on the new master gave {:?}, not a token above {before}",
        (stale, t_new)
    );
    // It serves a waiter of its own, and takes the refreshes of both leases.
    assert_refresh_answers_a_waiter(&f.replica, "fo:short", 0, t_new, "new");
    let t = t_set.to_string();
    assert_eq!(
        cache_set(&mut f.rcon, "fo:set", "fresh", 60_000, &["LEASE", &t]),
        1,
        "{what}: the lease taken on the old master is current on the new one"
    );
    assert_same_dataset(&f.replica, &f.master, &keys, &what);
    f.assert_healthy();
}

#[test]
fn failover_with_cache_waiters_and_a_fast_replica() {
    failover_with_cache_waiters(false);
}

#[test]
fn failover_with_cache_waiters_and_a_slow_replica() {
    failover_with_cache_waiters(true);
}

/// `FAILOVER TIMEOUT 1000` while the replica is in `DEBUG SLEEP 2`, so the failover is
/// aborted and the master stays master. A 500 ms lease ends while the failover pauses
/// writes, and a refresher's `CACHE.SET … LEASE` for another key arrives during the
/// pause (held back). After the abort, and not before it, the first key's waiter takes
/// the next lease (a larger token) and the other's gets the refreshed value, each
/// exactly once and promptly; both reach the replica (digest-equal once it wakes).
#[test]
fn aborted_failover_hands_cache_leases_and_values_over_after_it() {
    let mut f = Failover::start("FAILOVER TIMEOUT 1000 with cache waiters, aborted");
    let keys = ["fa:lease", "fa:set"];
    let (_, t0) = get_lease(&mut f.con, "fa:lease", 500, &[]);
    let (_, t_set) = get_lease(&mut f.con, "fa:set", 60_000, &[]);
    let specs = [
        ("fa:lease", "w-lease", 0, 5000, 10_000),
        ("fa:set", "w-set", 0, 5000, 10_000),
    ];
    let waiters = queue_cache(&f.master, &mut f.con, &specs);
    f.run("fa:set", true, 1000);
    let mut refresher = send_refresh(&f.master, "fa:set", "fresh", t_set);
    let mut answers = join_all(waiters);
    let what = f.what.clone();
    let listing = show_answers(&answers, f.at);
    let token = match answers[0].reply.leased() {
        Some((None, token)) => token,
        _ => panic!(
            "{what}: w-lease expected [nil, token]; all:\n{listing}\n{}",
            crash_cause(&f.master)
        ),
    };
    assert!(token > t_set, "{what}: token {token} <= {t_set} (and {t0})");
    let fresh = answers[1].reply.leased();
    assert_eq!(
        fresh,
        Some((Some("fresh".into()), 0)),
        "{what}: w-set; all:\n{listing}"
    );
    let (timeout, by) = (Duration::from_millis(1000), Duration::from_millis(2000));
    for a in &answers {
        assert_came_between(a, f.at, timeout, by, &what);
    }
    assert_eq!(refresher.read(READ_TIMEOUT), Reply::Int(1), "{what}: SET");
    f.assert_aborted(&mut answers, &keys);
    for c in [&mut f.con, &mut f.rcon] {
        let info = cache_info(c, "fa:lease").expect("fa:lease");
        assert_eq!(info["lease"], token, "{what}: the handed-over lease");
        let info = cache_info(c, "fa:set").expect("fa:set");
        assert!(
            info["fresh_ms"] > 0 && info["lease"] == 0,
            "{what}: {info:?}"
        );
    }
    let (_, next) = get_lease(&mut f.con, "fa:next", 1_000, &[]);
    assert!(next > token, "{what}: lease token {next} after the abort");
}
