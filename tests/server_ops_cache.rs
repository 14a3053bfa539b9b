//! The server's own operations against cache waiters and leases: a master turned
//! replica answers each waiter once (`UNBLOCKED`) and writes nothing of its own after;
//! `SHUTDOWN SAVE` closes waiting connections and keeps entries and leases; `DEBUG
//! SLEEP` across a lease end hands the lease over once the server runs again; under
//! `maxmemory` new entries are refused while hits, leases' refresh SETs on existing
//! keys and hand-offs go on.

mod common;
use common::cache::*;
use common::server_ops::*;
use common::*;

use std::thread::sleep;
use std::time::{Duration, Instant};

/// A raw client blocked in `CACHE.GET key MINVERSION v LEASE lease_ms WAIT timeout_ms`.
fn raw_waiter(server: &Server, key: &str, min: i64, lease_ms: i64, timeout_ms: i64) -> RawConn {
    let mut c = RawConn::open(server.port);
    let (min, lease, timeout) = (
        min.to_string(),
        lease_ms.to_string(),
        timeout_ms.to_string(),
    );
    c.send(&[
        "CACHE.GET",
        key,
        "MINVERSION",
        &min,
        "LEASE",
        &lease,
        "WAIT",
        &timeout,
    ]);
    c
}

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
    let mut waiters = vec![
        raw_waiter(&master, "long", 0, 5_000, 10_000),
        raw_waiter(&master, "long", 0, 5_000, 0),
        raw_waiter(&master, "short", 0, 5_000, 10_000),
    ];
    wait_for_waiters(&mut con, "long", 2);
    wait_for_waiters(&mut con, "short", 1);
    let _: () = cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(other.port)
        .query(&mut con)
        .unwrap();
    for w in &mut waiters {
        let r = w.read(Duration::from_secs(10));
        assert!(
            r.is_error_starting("UNBLOCKED"),
            "{what}: a waiter answered {r:?}"
        );
        let next = w.read(QUIET);
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
    let _: () = cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(&mut con)
        .unwrap();
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
    let mut waiters = vec![
        raw_waiter(&server, "stale", 5, 5_000, 0),
        raw_waiter(&server, "stale", 5, 5_000, 10_000),
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
    for w in &mut waiters {
        let r = w.read(Duration::from_secs(5));
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
    let mut w = raw_waiter(&server, "k", 0, 5_000, 20_000);
    wait_for_waiters(&mut con, "k", 1);
    let _: () = cmd("DEBUG").arg("SLEEP").arg(0.5).query(&mut con).unwrap();
    let t0 = Instant::now();
    match w.read(Duration::from_secs(10)) {
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
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(used / 2)
        .query(&mut con)
        .unwrap();
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("noeviction")
        .query(&mut con)
        .unwrap();
    let e = try_cache_set(&mut con, "new", "v", 1_000, &[]).unwrap_err();
    assert!(err_text(&e).starts_with("OOM"), "{what}: {e}");
    assert_eq!(
        cache_get(&mut con, "held", &[]).as_deref(),
        Some("v"),
        "a hit allocates nothing"
    );
    assert_eq!(get_lease(&mut con, "refresh", 1_000, &[]), (None, 0));
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(0)
        .query(&mut con)
        .unwrap();
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
