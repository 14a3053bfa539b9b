//! `dlock.lost`: a grant that ends by anything but its holder's RELEASE —
//! the lease ending, DEL, an overwrite, eviction, a flush, a role change,
//! and for kept grants their connection closing and SWAPDB — sends the keyspace event `dlock.lost` on the key
//! (module class `d`), so a holder subscribed to its key can stop its work.
//! The module's own changes (RELEASE, hand-overs, re-entry, renewals,
//! replication) send none, and neither does a replica.

use crate::common::waiter::{RawConn, Reply, Waiter};
use crate::common::*;

use std::thread::sleep;
use std::time::{Duration, Instant};

/// A connection subscribed to the keyspace events of database 0.
struct Events(RawConn);

impl Events {
    fn on(server: &Server) -> Events {
        let mut con = server.conn();
        ok(
            &mut con,
            &command(&["CONFIG", "SET", "notify-keyspace-events", "Kd"]),
        );
        let mut raw = RawConn::open(server.port);
        raw.send(&["PSUBSCRIBE", "__keyspace@0__:*"]);
        assert!(matches!(raw.read(Duration::from_secs(5)), Reply::Array(_)));
        Events(raw)
    }

    /// The (key, event) pairs that arrive until none has for `quiet` (or
    /// for at most 3 s: a kept lock's renewals never go quiet).
    fn until_quiet(&mut self, quiet: Duration) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(3) {
            match self.0.read(quiet) {
                Reply::Array(parts) => {
                    let text = |r: &Reply| match r {
                        Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                        other => format!("{other:?}"),
                    };
                    let channel = text(&parts[2]);
                    let key = channel.trim_start_matches("__keyspace@0__:").to_string();
                    out.push((key, text(&parts[3])));
                }
                Reply::Silent => return out,
                other => panic!("subscriber got {other:?}"),
            }
        }
        out
    }

    /// The keys that got `dlock.lost`, in order.
    fn lost(&mut self) -> Vec<String> {
        self.until_quiet(Duration::from_millis(300))
            .into_iter()
            .filter(|(_, e)| e == "dlock.lost")
            .map(|(k, _)| k)
            .collect()
    }
}

#[test]
fn del_overwrite_lease_end_and_eviction_announce_a_loss_and_release_does_not() {
    let (server, mut con) = Server::start_conn();
    let mut events = Events::on(&server);
    let acquire = |con: &mut Connection, key: &str, ttl: i64| {
        let t: i64 = query!(con, "DLOCK.ACQUIRE", key, "o", ttl);
        t
    };
    acquire(&mut con, "released", 10_000);
    let _: i64 = query!(&mut con, "DLOCK.RELEASE", "released", "o");
    assert_eq!(events.lost(), Vec::<String>::new(), "RELEASE is no loss");

    acquire(&mut con, "deleted", 10_000);
    let _: i64 = query!(&mut con, "DEL", "deleted");
    acquire(&mut con, "overwritten", 10_000);
    ok(&mut con, &command(&["SET", "overwritten", "x"]));
    acquire(&mut con, "lapsed", 100);
    sleep(Duration::from_millis(250));
    assert!(!exists(&mut con, "lapsed"));
    assert_eq!(events.lost(), ["deleted", "overwritten", "lapsed"]);
    assert_eq!(warden_stat(&mut con, "locks_lost"), 3);

    // Eviction: every key goes once memory is over the limit.
    acquire(&mut con, "evicted", 10_000);
    ok(
        &mut con,
        &command(&["CONFIG", "SET", "maxmemory-policy", "allkeys-random"]),
    );
    ok(&mut con, &command(&["CONFIG", "SET", "maxmemory", "1"]));
    let _: redis::RedisResult<()> = redis::cmd("SET").arg("filler").arg("x").query(&mut con);
    ok(&mut con, &command(&["CONFIG", "SET", "maxmemory", "0"]));
    assert!(!exists(&mut con, "evicted"));
    assert_eq!(events.lost(), ["evicted"]);
}

#[test]
fn the_modules_own_changes_announce_no_loss() {
    let (server, mut con) = Server::start_conn();
    let mut events = Events::on(&server);
    // Re-entry far past what one block holds (the lock moves to a new block).
    for _ in 0..300 {
        let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "re", "o", 10_000, "REENTRANT");
    }
    for _ in 0..300 {
        let _: i64 = query!(&mut con, "DLOCK.RELEASE", "re", "o");
    }
    assert!(!exists(&mut con, "re"));
    // A hand-over on release, of a plain lock and of a semaphore's place.
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "h", "a", 10_000);
    let w = Waiter::lock(&server, "h", "b", 10_000, 10_000);
    assert!(wait_until(Duration::from_secs(5), || {
        warden_stat(&mut con, "locks_waiting") == 1
    }));
    let _: i64 = query!(&mut con, "DLOCK.RELEASE", "h", "a");
    w.granted("hand-over");
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "s", "a", 10_000, "LIMIT", 1);
    let w = Waiter::lock_kind(&server, "s", "b", 10_000, 10_000, &["LIMIT", "1"]);
    assert!(wait_until(Duration::from_secs(5), || {
        warden_stat(&mut con, "locks_waiting") == 1
    }));
    let _: i64 = query!(&mut con, "DLOCK.RELEASE", "s", "a");
    w.granted("semaphore hand-over");
    // EXTEND and a kept lock's renewals.
    let _: i64 = query!(&mut con, "DLOCK.EXTEND", "h", "b", 20_000);
    let mut k = RawConn::open(server.port);
    assert!(matches!(
        k.call(&["DLOCK.ACQUIRE", "kept", "o", "300", "KEEP"]),
        Reply::Int(_)
    ));
    sleep(Duration::from_millis(700));
    assert!(matches!(
        k.call(&["DLOCK.RELEASE", "kept", "o"]),
        Reply::Int(1)
    ));
    assert_eq!(events.lost(), Vec::<String>::new());
}

/// A kept grant freed because its connection closed (`CLIENT KILL`, as a
/// load balancer's reset or a pool dropping the connection does) is a loss
/// to its holder: `dlock.release`, then `dlock.lost`, before the waiter's
/// `dlock.acquire` — for a plain lock and for a read lock.
#[test]
fn a_kept_grant_freed_by_its_connection_closing_is_announced_as_lost() {
    let (server, mut con) = Server::start_conn();
    let mut events = Events::on(&server);
    for (key, kind) in [("kplain", &[][..]), ("kread", &["SHARED"][..])] {
        let mut k = RawConn::open(server.port);
        let mut args = vec!["DLOCK.ACQUIRE", key, "o", "60000"];
        args.extend(kind);
        args.push("KEEP");
        assert!(matches!(k.call(&args), Reply::Int(_)));
        let w = Waiter::lock(&server, key, "w", 10_000, 10_000);
        assert!(wait_until(Duration::from_secs(5), || {
            warden_stat(&mut con, "locks_waiting") == 1
        }));
        events.until_quiet(Duration::from_millis(100));
        let id = k.client_id();
        let killed: i64 = query!(&mut con, "CLIENT", "KILL", "ID", id);
        assert_eq!(killed, 1);
        w.granted(key);
        let seen: Vec<String> = events
            .until_quiet(Duration::from_millis(300))
            .into_iter()
            .filter(|(k, _)| k == key)
            .map(|(_, e)| e)
            .collect();
        assert_eq!(
            &seen[..3],
            ["dlock.release", "dlock.lost", "dlock.acquire"],
            "{key}"
        );
    }
    assert_eq!(warden_stat(&mut con, "locks_lost"), 2);
}

#[test]
fn a_shared_holder_whose_lease_ended_is_announced_when_it_is_dropped() {
    let (server, mut con) = Server::start_conn();
    let mut events = Events::on(&server);
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "sh", "short", 100, "SHARED");
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "sh", "long", 10_000, "SHARED");
    sleep(Duration::from_millis(250));
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "sh", "third", 10_000, "SHARED");
    assert_eq!(events.lost(), ["sh"]);
    let _: i64 = query!(&mut con, "DEL", "sh");
    assert_eq!(events.lost(), ["sh"], "a set with holders deleted");
}

#[test]
fn a_flush_takes_kept_locks_and_their_holders_hear_it_within_a_third_of_the_ttl() {
    let (server, mut con) = Server::start_conn();
    let mut events = Events::on(&server);
    let mut k = RawConn::open(server.port);
    assert!(matches!(
        k.call(&["DLOCK.ACQUIRE", "f", "o", "900", "KEEP"]),
        Reply::Int(_)
    ));
    let flushed = Instant::now();
    ok(&mut con, &command(&["FLUSHALL"]));
    let seen = events.until_quiet(Duration::from_millis(600));
    let lost: Vec<_> = seen.iter().filter(|(_, e)| e == "dlock.lost").collect();
    assert_eq!(lost.len(), 1, "{seen:?}");
    assert!(flushed.elapsed() < Duration::from_millis(1_500));
    // Nothing renews it afterwards.
    sleep(Duration::from_millis(700));
    assert!(!exists(&mut con, "f"));
    drop(k);
}

#[test]
fn a_master_turned_replica_tells_its_kept_holders_and_a_replica_never_announces() {
    let (master, replica, mut m) = Server::start_replicated();
    let mut on_replica = Events::on(&replica);
    let mut k = RawConn::open(master.port);
    assert!(matches!(
        k.call(&["DLOCK.ACQUIRE", "role", "o", "300", "KEEP"]),
        Reply::Int(_)
    ));
    let _: i64 = query!(&mut m, "DLOCK.ACQUIRE", "gone", "o", 10_000);
    sleep(Duration::from_millis(700));
    let _: i64 = query!(&mut m, "DEL", "gone");
    master.sync_replicas(1);
    assert_eq!(
        on_replica.lost(),
        Vec::<String>::new(),
        "renewals and a DEL applied from the master"
    );

    // The master becomes a replica of an empty server.
    let mut on_master = Events::on(&master);
    let other = Server::start();
    ok(
        &mut m,
        &command(&["REPLICAOF", "127.0.0.1", &other.port.to_string()]),
    );
    let seen = on_master.until_quiet(Duration::from_millis(1_000));
    assert!(
        seen.iter().any(|(k, e)| k == "role" && e == "dlock.lost"),
        "{seen:?}"
    );
    drop(k);
}

#[test]
fn a_kept_lease_that_lapses_while_the_server_sleeps_is_announced_once() {
    let (server, mut con) = Server::start_conn();
    let mut events = Events::on(&server);
    let mut k = RawConn::open(server.port);
    assert!(matches!(
        k.call(&["DLOCK.ACQUIRE", "slept", "o", "300", "KEEP"]),
        Reply::Int(_)
    ));
    ok(&mut con, &command(&["DEBUG", "SLEEP", "0.6"]));
    let seen = events.until_quiet(Duration::from_millis(500));
    let lost = seen.iter().filter(|(_, e)| e == "dlock.lost").count();
    assert_eq!(lost, 1, "{seen:?}");
    assert!(!exists(&mut con, "slept"));
    assert_eq!(warden_stat(&mut con, "locks_kept"), 0);
    drop(k);
}

#[test]
fn a_flush_tells_the_holders_of_every_lock_it_took_and_debug_reload_tells_none() {
    let (server, mut con) = Server::start_conn();
    let mut events = Events::on(&server);
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "plain", "o", 60_000);
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "set", "a", 60_000, "SHARED");
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "set", "b", 60_000, "SHARED");
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "sem", "a", 60_000, "LIMIT", 2);
    ok(&mut con, &command(&["SET", "plain-string", "x"]));
    assert_eq!(warden_stat(&mut con, "lock_keys"), 3);

    ok(&mut con, &command(&["DEBUG", "RELOAD"]));
    assert_eq!(
        events.lost(),
        Vec::<String>::new(),
        "DEBUG RELOAD brings them back"
    );
    assert_eq!(warden_stat(&mut con, "lock_keys"), 3);
    let holders: Vec<Value> = query!(&mut con, "DLOCK.INFO", "set");
    assert!(!holders.is_empty());

    // FLUSHDB of another database takes nothing here.
    let mut db1 = server.conn();
    ok(&mut db1, &command(&["SELECT", "1"]));
    let _: i64 = query!(&mut db1, "DLOCK.ACQUIRE", "elsewhere", "o", 60_000);
    ok(&mut db1, &command(&["FLUSHDB"]));
    assert_eq!(
        events.lost(),
        Vec::<String>::new(),
        "database 1 is not watched"
    );
    assert_eq!(warden_stat(&mut con, "lock_keys"), 3);

    let lost_before = warden_stat(&mut con, "locks_lost");
    ok(&mut con, &command(&["FLUSHALL", "ASYNC"]));
    let mut lost = events.lost();
    lost.sort();
    assert_eq!(lost, ["plain", "sem", "set"]);
    assert_eq!(warden_stat(&mut con, "locks_lost") - lost_before, 3);
    assert_eq!(warden_stat(&mut con, "lock_keys"), 0);
    ok(&mut con, &command(&["FLUSHALL"]));
    assert_eq!(events.lost(), Vec::<String>::new(), "nothing left to lose");
}

#[test]
fn the_lock_key_gauge_follows_copies_restores_releases_and_expiry() {
    let (_server, mut con) = Server::start_conn();
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "a", "o", 60_000);
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "a", "o", 60_000, "REENTRANT");
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "s", "o", 60_000, "SHARED");
    let _: i64 = query!(&mut con, "COPY", "a", "b");
    let _: i64 = query!(&mut con, "COPY", "s", "t");
    assert_eq!(warden_stat(&mut con, "lock_keys"), 4);
    let dump: Vec<u8> = query!(&mut con, "DUMP", "a");
    ok(
        &mut con,
        redis::cmd("RESTORE")
            .arg("a")
            .arg(0)
            .arg(dump)
            .arg("REPLACE"),
    );
    assert_eq!(
        warden_stat(&mut con, "lock_keys"),
        4,
        "REPLACE frees the old value"
    );
    let _: i64 = query!(&mut con, "DLOCK.RELEASE", "a", "o");
    let _: i64 = query!(&mut con, "DLOCK.RELEASE", "a", "o");
    let _: i64 = query!(&mut con, "DLOCK.RELEASE", "s", "o");
    let _: i64 = query!(&mut con, "DEL", "t");
    assert_eq!(warden_stat(&mut con, "lock_keys"), 1);
    let _: i64 = query!(&mut con, "PEXPIRE", "b", 1);
    sleep(Duration::from_millis(50));
    assert!(!exists(&mut con, "b"));
    assert_eq!(warden_stat(&mut con, "lock_keys"), 0);
}

#[test]
fn a_master_turned_replica_tells_the_holders_of_locks_without_keep() {
    let (master, _replica, mut m) = Server::start_replicated();
    let _: i64 = query!(&mut m, "DLOCK.ACQUIRE", "plain", "o", 60_000);
    let _: i64 = query!(&mut m, "DLOCK.ACQUIRE", "set", "o", 60_000, "SHARED");
    let mut on_master = Events::on(&master);
    let other = Server::start();
    ok(
        &mut m,
        &command(&["REPLICAOF", "127.0.0.1", &other.port.to_string()]),
    );
    let mut lost = on_master.lost();
    lost.sort();
    assert_eq!(lost, ["plain", "set"], "once each");
}

/// How long after a watched lease ends its `dlock.lost` may come: the
/// timer fires at the lease end; the rest is a busy test machine.
const TOLD_WITHIN: Duration = Duration::from_millis(400);

/// Waits for the next `dlock.lost` and returns its key and when it came.
fn next_loss(events: &mut Events, within: Duration) -> (String, Instant) {
    let start = Instant::now();
    while start.elapsed() < within {
        if let Some(key) = events.lost_now() {
            return (key, Instant::now());
        }
    }
    panic!("no dlock.lost within {within:?}");
}

impl Events {
    /// The key of the next `dlock.lost` if one comes within 50 ms.
    fn lost_now(&mut self) -> Option<String> {
        match self.0.read(Duration::from_millis(50)) {
            Reply::Array(parts) => {
                let text = |r: &Reply| match r {
                    Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                    other => format!("{other:?}"),
                };
                let key = text(&parts[2])
                    .trim_start_matches("__keyspace@0__:")
                    .to_string();
                (text(&parts[3]) == "dlock.lost").then_some(key)
            }
            Reply::Silent => None,
            other => panic!("subscriber got {other:?}"),
        }
    }
}

/// The live holders `DLOCK.INFO` lists for a set key whose owners are
/// named `holder-…`, sorted (empty when free).
fn owners(con: &mut Connection, key: &str) -> Vec<String> {
    let info: Option<Vec<Value>> = query!(con, "DLOCK.INFO", key);
    let text = format!("{info:?}");
    let named: std::collections::BTreeSet<String> = text
        .split('"')
        .filter(|s| s.starts_with("holder-"))
        .map(str::to_string)
        .collect();
    named.into_iter().collect()
}

/// The key's `DUMP` payload (lapsed holders included, unlike DLOCK.INFO).
fn dump(con: &mut Connection, key: &str) -> Vec<u8> {
    let payload: Option<Vec<u8>> = query!(con, "DUMP", key);
    payload.expect("the key exists")
}

#[test]
fn a_set_holder_whose_lease_ends_before_the_others_is_dropped_and_told_at_its_end() {
    let (master, replica, mut m) = Server::start_replicated();
    let mut r = replica.conn();
    let mut events = Events::on(&master);
    let mut on_replica = Events::on(&replica);
    for (key, kind) in [("sh", &["SHARED"][..]), ("sem", &["LIMIT", "3"])] {
        let acquired = Instant::now();
        let _: i64 = query!(&mut m, "DLOCK.ACQUIRE", key, "holder-short", 300, kind);
        let _: i64 = query!(&mut m, "DLOCK.ACQUIRE", key, "holder-long", 20_000, kind);
        assert_eq!(warden_stat(&mut m, "locks_watched"), 1, "{key}");
        let (lost, at) = next_loss(&mut events, Duration::from_secs(3));
        assert_eq!(lost, key);
        let after = at - acquired;
        assert!(
            after >= Duration::from_millis(290) && after < Duration::from_millis(300) + TOLD_WITHIN,
            "{key}: told {after:?} after the grant of a 300 ms lease"
        );
        // Dropped on the master, and by replication on the replica.
        assert_eq!(owners(&mut m, key), ["holder-long"]);
        assert_eq!(warden_stat(&mut m, "locks_watched"), 0);
        // The replica holds the dropped set: its own would still list the
        // lapsed holder.
        master.sync_replicas(1);
        assert_eq!(dump(&mut r, key), dump(&mut m, key), "{key}");
        assert_eq!(owners(&mut r, key), ["holder-long"]);
        // Told once: nothing more when the set next changes.
        let _: i64 = query!(&mut m, "DLOCK.ACQUIRE", key, "holder-third", 20_000, kind);
        assert_eq!(events.lost(), Vec::<String>::new(), "{key}");
        // Leases ending over 100 ms apart again: watched again.
        assert_eq!(warden_stat(&mut m, "locks_watched"), 1, "{key}");
        for owner in ["holder-long", "holder-third"] {
            let _: i64 = query!(&mut m, "DLOCK.RELEASE", key, owner);
        }
        assert_eq!(warden_stat(&mut m, "locks_watched"), 0, "{key}");
    }
    assert_eq!(
        on_replica.lost(),
        Vec::<String>::new(),
        "a replica never tells"
    );
    assert_eq!(warden_stat(&mut r, "locks_watched"), 0);

    // A promoted replica watches the sets it holds.
    let _: i64 = query!(
        &mut m,
        "DLOCK.ACQUIRE",
        "promo",
        "holder-a",
        1_500,
        "SHARED"
    );
    let _: i64 = query!(
        &mut m,
        "DLOCK.ACQUIRE",
        "promo",
        "holder-b",
        20_000,
        "SHARED"
    );
    master.sync_replicas(1);
    ok(&mut r, &command(&["REPLICAOF", "NO", "ONE"]));
    assert_eq!(warden_stat(&mut r, "locks_watched"), 1);
    let (lost, _) = next_loss(&mut on_replica, Duration::from_secs(4));
    assert_eq!(lost, "promo");
    assert_eq!(owners(&mut r, "promo"), ["holder-b"]);
}

#[test]
fn holders_whose_leases_end_together_cost_no_watch_and_go_with_the_key() {
    let (server, mut con) = Server::start_conn();
    let mut events = Events::on(&server);
    let mut pipe = redis::pipe();
    for owner in ["holder-a", "holder-b", "holder-c"] {
        pipe.cmd("DLOCK.ACQUIRE")
            .arg("burst")
            .arg(owner)
            .arg(400)
            .arg("SHARED");
    }
    let _: Vec<i64> = pipe.query(&mut con).expect("three shared grants");
    assert_eq!(warden_stat(&mut con, "locks_watched"), 0);
    let (lost, _) = next_loss(&mut events, Duration::from_secs(3));
    assert_eq!(lost, "burst");
    assert!(!exists(&mut con, "burst"));
    assert_eq!(events.lost(), Vec::<String>::new(), "told once");
}

#[test]
fn a_watched_set_deleted_flushed_or_released_is_no_longer_watched() {
    let (server, mut con) = Server::start_conn();
    let mut events = Events::on(&server);
    let spread = |con: &mut Connection, key: &str| {
        let _: i64 = query!(con, "DLOCK.ACQUIRE", key, "holder-a", 600, "SHARED");
        let _: i64 = query!(con, "DLOCK.ACQUIRE", key, "holder-b", 20_000, "SHARED");
    };
    spread(&mut con, "del");
    spread(&mut con, "rel");
    ok(&mut con, &command(&["SELECT", "3"]));
    spread(&mut con, "db3");
    assert_eq!(warden_stat(&mut con, "locks_watched"), 3);
    ok(&mut con, &command(&["FLUSHDB"]));
    ok(&mut con, &command(&["SELECT", "0"]));
    let _: i64 = query!(&mut con, "DEL", "del");
    let _: i64 = query!(&mut con, "DLOCK.RELEASE", "rel", "holder-a");
    assert_eq!(warden_stat(&mut con, "locks_watched"), 0);
    assert_eq!(
        events.lost(),
        ["del"],
        "the DEL took grants; the release none"
    );
    sleep(Duration::from_millis(800));
    assert_eq!(events.lost(), Vec::<String>::new(), "nothing lapsed later");
    assert_eq!(owners(&mut con, "rel"), ["holder-b"]);
}

#[test]
fn a_lease_that_ends_during_a_write_pause_is_dropped_after_it() {
    let (mut server, mut con) = Server::start_conn();
    let mut events = Events::on(&server);
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "p", "holder-a", 200, "LIMIT", 2);
    let _: i64 = query!(
        &mut con,
        "DLOCK.ACQUIRE",
        "p",
        "holder-b",
        20_000,
        "LIMIT",
        2
    );
    let paused = Instant::now();
    ok(&mut con, &command(&["CLIENT", "PAUSE", "700", "WRITE"]));
    let (lost, at) = next_loss(&mut events, Duration::from_secs(3));
    assert_eq!(lost, "p");
    assert!(
        at - paused >= Duration::from_millis(690),
        "told {:?} into a 700 ms pause",
        at - paused
    );
    assert_eq!(owners(&mut con, "p"), ["holder-b"]);
    server.assert_alive();
}

#[test]
fn a_reload_watches_the_sets_it_loads() {
    let (server, mut con) = Server::start_conn();
    let mut events = Events::on(&server);
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "re", "holder-a", 1_500, "SHARED");
    let _: i64 = query!(
        &mut con,
        "DLOCK.ACQUIRE",
        "re",
        "holder-b",
        20_000,
        "SHARED"
    );
    ok(&mut con, &command(&["DEBUG", "RELOAD"]));
    assert_eq!(warden_stat(&mut con, "locks_watched"), 1);
    let (lost, _) = next_loss(&mut events, Duration::from_secs(4));
    assert_eq!(lost, "re");
    assert_eq!(owners(&mut con, "re"), ["holder-b"]);
}

#[test]
fn a_holder_that_lapsed_before_a_promotion_or_a_restart_is_dropped_at_once() {
    let mut master = Server::start();
    let replica = master.start_streaming_replica();
    let mut m = master.conn();
    // holder-a's lease ends 1 s after its grant; the test then waits for
    // its end plus 300 ms.
    let spread = |con: &mut Connection, key: &str| {
        let _: i64 = query!(con, "DLOCK.ACQUIRE", key, "holder-a", 1_000, "SHARED");
        let _: i64 = query!(con, "DLOCK.ACQUIRE", key, "holder-b", 20_000, "SHARED");
        Instant::now()
    };
    let lapse_after = |granted: Instant| {
        sleep((granted + Duration::from_millis(1_300)).saturating_duration_since(Instant::now()))
    };
    let granted = spread(&mut m, "promo");
    let acked: i64 = query!(&mut m, "WAIT", 1, 900);
    assert_eq!(acked, 1);
    // The master dies before holder-a's end: it lapses on the replica,
    // where nobody drops it.
    let listed = dump(&mut m, "promo");
    master.kill();
    let mut r = replica.conn();
    assert_eq!(dump(&mut r, "promo"), listed, "both holders replicated");
    lapse_after(granted);
    let mut events = Events::on(&replica);
    ok(&mut r, &command(&["REPLICAOF", "NO", "ONE"]));
    let (lost, _) = next_loss(&mut events, TOLD_WITHIN);
    assert_eq!(lost, "promo");
    assert!(
        dump(&mut r, "promo").len() < listed.len(),
        "holder-a dropped"
    );
    assert_eq!(owners(&mut r, "promo"), ["holder-b"]);
    assert_eq!(warden_stat(&mut r, "locks_watched"), 0);

    // Saved, then lapsed while the server was down: dropped as it loads.
    let mut server = Server::start();
    let mut r = server.conn();
    let granted = spread(&mut r, "saved");
    ok(&mut r, &command(&["SAVE"]));
    let saved = dump(&mut r, "saved");
    server.kill();
    lapse_after(granted);
    server.crash_and_restart();
    let mut r = server.conn();
    assert!(
        wait_until(Duration::from_secs(2), || warden_stat(&mut r, "locks_lost")
            == 1),
        "the lapsed holder was told"
    );
    assert!(
        dump(&mut r, "saved").len() < saved.len(),
        "holder-a dropped"
    );
    assert_eq!(owners(&mut r, "saved"), ["holder-b"]);
}

/// A kept set holder outlives a write pause longer than its lease (its
/// renewals are made in memory meanwhile): nothing is lost. A stall of the
/// server longer than the lease (`DEBUG SLEEP`: no renewal can run) ends it:
/// it is told once, dropped and no longer renewed.
#[test]
fn a_kept_set_holder_outlives_a_pause_and_a_stall_past_its_lease_is_told_once() {
    let (server, mut con) = Server::start_conn();
    let mut events = Events::on(&server);
    let mut k = RawConn::open(server.port);
    assert!(matches!(
        k.call(&["DLOCK.ACQUIRE", "kp", "holder-k", "300", "SHARED", "KEEP"]),
        Reply::Int(_)
    ));
    let _: i64 = query!(
        &mut con,
        "DLOCK.ACQUIRE",
        "kp",
        "holder-b",
        20_000,
        "SHARED"
    );
    ok(&mut con, &command(&["CLIENT", "PAUSE", "800", "WRITE"]));
    let seen = events.until_quiet(Duration::from_millis(1_500));
    assert!(!seen.iter().any(|(_, e)| e == "dlock.lost"), "{seen:?}");
    assert_eq!(owners(&mut con, "kp"), ["holder-b", "holder-k"]);
    let _: () = query!(&mut con, "DEBUG", "SLEEP", "0.5");
    let seen = events.until_quiet(Duration::from_millis(600));
    let lost = seen.iter().filter(|(_, e)| e == "dlock.lost").count();
    assert_eq!(lost, 1, "{seen:?}");
    assert_eq!(owners(&mut con, "kp"), ["holder-b"]);
    assert_eq!(warden_stat(&mut con, "locks_kept"), 0, "no renewal left");
    assert_eq!(warden_stat(&mut con, "locks_watched"), 0);
    drop(k);
}

#[test]
fn swapped_databases_keep_their_watched_sets() {
    let (_server, mut con) = Server::start_conn();
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "sw", "holder-a", 400, "SHARED");
    let _: i64 = query!(
        &mut con,
        "DLOCK.ACQUIRE",
        "sw",
        "holder-b",
        20_000,
        "SHARED"
    );
    ok(&mut con, &command(&["SELECT", "1"]));
    let _: i64 = query!(
        &mut con,
        "DLOCK.ACQUIRE",
        "other",
        "holder-c",
        20_000,
        "SHARED"
    );
    ok(&mut con, &command(&["SWAPDB", "0", "1"]));
    let before = dump(&mut con, "sw");
    assert!(
        wait_until(Duration::from_secs(2), || warden_stat(
            &mut con,
            "locks_lost"
        ) == 1),
        "the holder in the swapped database was told"
    );
    assert!(
        dump(&mut con, "sw").len() < before.len(),
        "holder-a dropped"
    );
    assert_eq!(owners(&mut con, "sw"), ["holder-b"]);
    assert_eq!(warden_stat(&mut con, "locks_watched"), 0);
}

#[test]
fn a_lapse_drop_keeps_the_bound_an_earlier_pexpire_put_on_the_leases_left() {
    let (_server, mut con) = Server::start_conn();
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "pb", "holder-a", 300, "SHARED");
    let _: i64 = query!(
        &mut con,
        "DLOCK.ACQUIRE",
        "pb",
        "holder-b",
        20_000,
        "SHARED"
    );
    let _: i64 = query!(&mut con, "PEXPIRE", "pb", 5_000);
    let bound = pexpiretime(&mut con, "pb");
    assert!(
        wait_until(Duration::from_secs(2), || warden_stat(
            &mut con,
            "locks_lost"
        ) == 1),
        "holder-a dropped and told"
    );
    assert_eq!(owners(&mut con, "pb"), ["holder-b"]);
    assert_eq!(
        pexpiretime(&mut con, "pb"),
        bound,
        "holder-b's lease stays bounded"
    );
}
