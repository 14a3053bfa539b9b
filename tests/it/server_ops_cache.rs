//! The server's own operations against cache waiters and leases: a master turned
//! replica answers each waiter once (`UNBLOCKED`) and writes nothing of its own after;
//! `FAILOVER` (with a fast and a slow replica) hands no waiter a lease or a value the
//! new master lacks, and an aborted one hands both over once writes resume;
//! `SHUTDOWN SAVE` closes waiting connections and keeps entries and leases; `DEBUG
//! SLEEP` across a lease end hands the lease over once the server runs again; under
//! `maxmemory` new entries are refused while hits, leases' refresh SETs on existing
//! keys and hand-offs go on.

use crate::common::cache::*;
use crate::common::server_ops::*;
use crate::common::waiter::*;
use crate::common::*;

use std::thread::sleep;
use std::time::{Duration, Instant};

#[test]
fn replicaof_turns_cache_waiters_into_one_error_each() {
    let what = "REPLICAOF with cache waiters";
    let mut master = Server::start();
    let mut other = Server::start();
    let mut ocon = other.conn();
    cache_set(&mut ocon, "other", "o", 60_000, &[]);
    let mut con = master.conn();
    let (_, long) = get_lease(&mut con, "long", 60_000, &[]);
    let (_, short) = get_lease(&mut con, "short", 400, &[]);
    let waiters = vec![
        Waiter::cache(&master, "long", "long", 0, 5_000, 10_000),
        Waiter::cache(&master, "long 0", "long", 0, 5_000, 0),
        Waiter::cache(&master, "short", "short", 0, 5_000, 10_000),
    ];
    wait_for_waiters(&mut con, "long", 2);
    wait_for_waiters(&mut con, "short", 1);
    let _: () = query!(&mut con, "REPLICAOF", "127.0.0.1", other.port);
    for mut a in join_all(waiters) {
        let r = a.reply;
        assert!(
            r.is_error_starting("UNBLOCKED"),
            "{what}: a waiter answered {r:?}"
        );
        let next = a.conn.read(QUIET);
        assert!(
            matches!(next, Reply::Silent | Reply::Closed(_)),
            "{what}: a second reply {next:?}"
        );
    }
    // The short lease ends while this server is a replica: no hand-off, no write.
    sleep(Duration::from_millis(600));
    assert_healthy(&mut master, what);
    assert_same_dataset(&other, &master, &["other"], what);
    assert_eq!(warden_stat(&mut con, "cache_waiting"), 0);
    let mut refused = RawConn::open(master.port);
    let r = refused.call(&["CACHE.GET", "x", "LEASE", "1000"]);
    assert!(r.is_error_starting("READONLY"), "{what}: {r:?}");
    let _: () = query!(&mut con, "REPLICAOF", "NO", "ONE");
    let (_, t) = get_lease(&mut con, "long", 1_000, &[]);
    assert!(
        t > long.max(short),
        "{what}: lease token {t} after the role changes"
    );
    assert_healthy(&mut other, what);
}

#[test]
fn shutdown_save_with_cache_waiters_keeps_the_entry_and_its_lease() {
    let what = "SHUTDOWN SAVE with cache waiters";
    let mut server = Server::start();
    let mut con = server.conn();
    cache_set(
        &mut con,
        "stale",
        "old",
        10,
        &["STALE", "600000", "VERSION", "4"],
    );
    sleep(Duration::from_millis(20));
    let (value, token) = get_lease(&mut con, "stale", 600_000, &["MINVERSION", "5"]);
    assert_eq!(value, None, "older than MINVERSION: not served");
    let waiters = vec![
        Waiter::cache(&server, "stale 0", "stale", 5, 5_000, 0),
        Waiter::cache(&server, "stale", "stale", 5, 5_000, 10_000),
    ];
    wait_for_waiters(&mut con, "stale", 2);
    let before = db_digest(&mut con);
    let mut caller = RawConn::open(server.port);
    assert!(matches!(
        caller.call(&["SHUTDOWN", "SAVE"]),
        Reply::Closed(_)
    ));
    assert!(
        wait_until(Duration::from_secs(10), || !server.is_alive()),
        "{what}: still up"
    );
    for a in join_all(waiters) {
        let r = a.reply;
        assert!(
            matches!(r, Reply::Closed(_) | Reply::Error(_)),
            "{what}: {r:?}"
        );
    }
    assert_clean_log(&server, what);
    server.crash_and_restart(); // the process has exited: this only starts it
    let mut con = server.conn();
    assert_eq!(
        db_digest(&mut con),
        before,
        "{what}: the reloaded dataset differs"
    );
    assert_eq!(cache_info(&mut con, "stale").unwrap()["lease"], token);
    assert_eq!(warden_stat(&mut con, "cache_waiting"), 0);
    let t = token.to_string();
    assert_eq!(
        cache_set(
            &mut con,
            "stale",
            "new",
            60_000,
            &["VERSION", "5", "LEASE", &t]
        ),
        1
    );
    let (_, next) = get_lease(&mut con, "other", 1_000, &[]);
    assert!(
        next > token,
        "{what}: tokens go on increasing after a restart"
    );
    assert_healthy(&mut server, what);
}

#[test]
fn debug_sleep_across_a_lease_end_hands_it_over_after() {
    let what = "DEBUG SLEEP across a lease end";
    let mut server = Server::start();
    let mut con = server.conn();
    let (_, first) = get_lease(&mut con, "k", 200, &[]);
    let w = Waiter::cache(&server, "k", "k", 0, 5_000, 20_000);
    wait_for_waiters(&mut con, "k", 1);
    let _: () = query!(&mut con, "DEBUG", "SLEEP", 0.5);
    let t0 = Instant::now();
    match w.join().reply {
        Reply::Array(a) => {
            assert_eq!(a[0], Reply::Nil);
            assert!(matches!(a[1], Reply::Int(t) if t > first), "{what}: {a:?}");
        }
        other => panic!("{what}: the waiter answered {other:?}"),
    }
    assert!(t0.elapsed() < Duration::from_secs(3));
    assert_healthy(&mut server, what);
}

#[test]
fn under_maxmemory_new_entries_are_refused_but_reads_and_refreshes_go_on() {
    let what = "maxmemory";
    let mut server = Server::start();
    let mut con = server.conn();
    cache_set(&mut con, "held", "v", 600_000, &[]);
    let (_, token) = get_lease(&mut con, "refresh", 600_000, &[]);
    let used = used_memory(&mut con);
    let _: () = query!(&mut con, "CONFIG", "SET", "maxmemory", used / 2);
    let _: () = query!(&mut con, "CONFIG", "SET", "maxmemory-policy", "noeviction");
    let e = try_cache_set(&mut con, "new", "v", 1_000, &[]).unwrap_err();
    assert!(err_text(&e).starts_with("OOM"), "{what}: {e}");
    assert_eq!(
        cache_get(&mut con, "held", &[]).as_deref(),
        Some("v"),
        "a hit allocates nothing"
    );
    assert_eq!(get_lease(&mut con, "refresh", 1_000, &[]), (None, 0));
    let _: () = query!(&mut con, "CONFIG", "SET", "maxmemory", 0);
    assert_eq!(
        cache_set(
            &mut con,
            "refresh",
            "v",
            1_000,
            &["LEASE", &token.to_string()]
        ),
        1
    );
    assert_healthy(&mut server, what);
}

/// Sends a refresher's `CACHE.SET key value 60000 LEASE token` on a raw connection
/// (its reply is read later: while writes are paused it is held back).
fn send_refresh(server: &Server, key: &str, value: &str, token: i64) -> RawConn {
    let mut c = RawConn::open(server.port);
    c.send(&[
        "CACHE.SET",
        key,
        value,
        "60000",
        "LEASE",
        &token.to_string(),
    ]);
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
    let what = if slow_replica {
        "FAILOVER with cache waiters and a replica in DEBUG SLEEP 2"
    } else {
        "FAILOVER with cache waiters"
    };
    let keys = ["fo:short", "fo:long", "fo:set"];
    let mut master = Server::start();
    let mut replica = master.start_streaming_replica();
    let mut con = timed(master.conn(), READ_TIMEOUT);
    let mut rcon = timed(replica.conn(), READ_TIMEOUT);
    let held_at = Instant::now();
    let (_, t_short) = get_lease(&mut con, "fo:short", 500, &[]);
    let (_, t_long) = get_lease(&mut con, "fo:long", 60_000, &[]);
    let (_, t_set) = get_lease(&mut con, "fo:set", 60_000, &[]);
    let waiters = queue_cache(
        &master,
        &mut con,
        &[
            ("fo:long", "w-long", 0, 5000, 10_000),
            ("fo:short", "w-short", 0, 5000, 10_000),
            ("fo:set", "w-set", 0, 5000, 10_000),
            ("fo:long", "w-1s", 0, 5000, 1000),
        ],
    );
    // The replica has applied every write (fo:set's lease is the last) before it
    // sleeps, so that its first ACK after the sleep lets the failover through.
    wait_applied(&mut rcon, "fo:set", what);
    let mut sleeper = slow_replica.then(|| put_to_sleep(&replica, "2"));
    let failover_at = Instant::now();
    before_lease_end(held_at, Duration::from_millis(500), "FAILOVER");
    failover(&mut con, 3000);
    let mut refresher = send_refresh(&master, "fo:set", "fresh", t_set);
    assert_roles_swap(&mut master, &mut replica, &mut con, &mut rcon, what);
    let mut answers: Vec<Answer> = join_all(waiters);
    let listing = show_answers(&answers, failover_at);
    for a in &answers {
        let ok = a.reply.is_error_starting("UNBLOCKED")
            || (a.name == "w-1s" && a.reply.leased() == Some((None, 0)));
        assert!(
            ok,
            "{what}: waiter {} answered {:?} (expected UNBLOCKED{}); all:\n{listing}\nold master log:\n{}",
            a.name,
            a.reply,
            if a.name == "w-1s" { " or [nil, 0]" } else { "" },
            master.log_tail(20)
        );
    }
    assert_no_second_reply(&mut answers, what);
    let refused = refresher.read(READ_TIMEOUT);
    assert!(
        refused.is_error_starting("READONLY"),
        "{what}: the refresher's SET held back by the failover answered {refused:?}"
    );
    if let Some(c) = sleeper.as_mut() {
        assert_eq!(c.read(READ_TIMEOUT), Reply::Status("OK".into()));
    }
    assert_healthy(&mut master, what);
    assert_healthy(&mut replica, what);
    assert_eq!(
        warden_stat(&mut con, "cache_waiting"),
        0,
        "{what}: waiters left queued on the old master"
    );
    assert_same_dataset(&replica, &master, &keys, what);

    // The new master: the live leases came along, the refused SET stored nothing,
    // the ended lease is granted anew with a larger token.
    let lease_of = |c: &mut Connection, k: &str| cache_info(c, k).map(|i| i["lease"]);
    assert_eq!(
        lease_of(&mut rcon, "fo:long"),
        Some(t_long),
        "{what}: fo:long"
    );
    assert_eq!(lease_of(&mut rcon, "fo:set"), Some(t_set), "{what}: fo:set");
    assert_eq!(cache_get(&mut rcon, "fo:set", &[]), None, "{what}: fo:set");
    let (stale, t_new) = get_lease(&mut rcon, "fo:short", 5_000, &[]);
    let before = t_short.max(t_long).max(t_set);
    assert!(
        stale.is_none() && t_new > before,
        "{what}: CACHE.GET fo:short LEASE on the new master gave {:?}, not a token above {before}",
        (stale, t_new)
    );
    // It serves a waiter of its own, and takes the refreshes of both leases.
    assert_refresh_answers_a_waiter(&replica, "fo:short", 0, t_new, "new");
    let t = t_set.to_string();
    assert_eq!(
        cache_set(&mut rcon, "fo:set", "fresh", 60_000, &["LEASE", &t]),
        1,
        "{what}: the lease taken on the old master is current on the new one"
    );
    assert_same_dataset(&replica, &master, &keys, what);
    assert_healthy(&mut master, what);
    assert_healthy(&mut replica, what);
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
    let what = "FAILOVER TIMEOUT 1000 with cache waiters, aborted";
    let keys = ["fa:lease", "fa:set"];
    let mut master = Server::start();
    let mut replica = master.start_streaming_replica();
    let mut con = timed(master.conn(), READ_TIMEOUT);
    let mut rcon = timed(replica.conn(), READ_TIMEOUT);
    let held_at = Instant::now();
    let (_, t0) = get_lease(&mut con, "fa:lease", 500, &[]);
    let (_, t_set) = get_lease(&mut con, "fa:set", 60_000, &[]);
    let waiters = queue_cache(
        &master,
        &mut con,
        &[
            ("fa:lease", "w-lease", 0, 5000, 10_000),
            ("fa:set", "w-set", 0, 5000, 10_000),
        ],
    );
    wait_applied(&mut rcon, "fa:set", what);
    let mut sleeper = put_to_sleep(&replica, "2");
    let failover_at = Instant::now();
    failover(&mut con, 1000);
    before_lease_end(held_at, Duration::from_millis(500), "FAILOVER");
    let mut refresher = send_refresh(&master, "fa:set", "fresh", t_set);
    let mut answers: Vec<Answer> = join_all(waiters);
    let listing = show_answers(&answers, failover_at);
    let token = match answers[0].reply.leased() {
        Some((None, token)) => token,
        _ => panic!(
            "{what}: w-lease expected [nil, token]; all:\n{listing}\n{}",
            crash_cause(&master)
        ),
    };
    assert!(token > t_set, "{what}: token {token} <= {t_set} (and {t0})");
    assert_eq!(
        answers[1].reply.leased(),
        Some((Some("fresh".into()), 0)),
        "{what}: w-set; all:\n{listing}"
    );
    for a in &answers {
        let after = a.at.saturating_duration_since(failover_at);
        assert!(
            after + EARLY >= Duration::from_millis(1000),
            "{what}: {} was answered {after:?} after FAILOVER, before its 1000 ms timeout",
            a.name
        );
        assert!(
            after <= Duration::from_millis(2000) + PROMPT,
            "{what}: {} was answered only {after:?} after FAILOVER",
            a.name
        );
    }
    assert_eq!(refresher.read(READ_TIMEOUT), Reply::Int(1), "{what}: SET");
    assert_no_second_reply(&mut answers, what);
    assert_healthy(&mut master, what);
    assert_eq!(role(&mut con), "master", "{what}: the master's role");
    let log = master.log_tail(1_000_000);
    premise(
        log.contains("FAILOVER to any replica aborted"),
        "the failover was aborted",
    );
    assert_eq!(sleeper.read(READ_TIMEOUT), Reply::Status("OK".into()));
    assert_same_dataset(&master, &replica, &keys, what);
    for c in [&mut con, &mut rcon] {
        let info = cache_info(c, "fa:lease").expect("fa:lease");
        assert_eq!(info["lease"], token, "{what}: the handed-over lease");
        let info = cache_info(c, "fa:set").expect("fa:set");
        assert!(
            info["fresh_ms"] > 0 && info["lease"] == 0,
            "{what}: {info:?}"
        );
    }
    let (_, next) = get_lease(&mut con, "fa:next", 1_000, &[]);
    assert!(next > token, "{what}: lease token {next} after the abort");
    assert_healthy(&mut replica, what);
}
