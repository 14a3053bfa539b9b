//! Where a kept lease (`KEEP`) meets a limit: the 100 ms minimum on every
//! path that sets one, the renewal capacity (`dlock-keep-max-renewals`) and
//! a server under load, a write pause of twice the ttl, and a failover in
//! the middle of renewals held in a pause.

use crate::common::waiter::{RawConn, Reply, Waiter};
use crate::common::*;
use crate::lock::support::{holder, keep, set_holders};

use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// KEEP's 100 ms minimum holds on every path that sets a kept lease: EXTEND
/// (with and without TOKEN) and a repeat ACQUIRE (with or without KEEP,
/// REENTRANT) of a plain lock, a read lock and a semaphore place are refused
/// below it, changing and replicating nothing; the lease goes on being
/// renewed. A copy of a kept lock is an ordinary one and takes any lease.
#[test]
fn the_keep_minimum_holds_on_every_path_that_sets_a_kept_lease() {
    let (server, replica, mut con) = Server::start_replicated();
    let mut h = RawConn::open(server.port);
    let mut other = RawConn::open(server.port);
    for (key, extra) in [
        ("plain", &[][..]),
        ("read", &["SHARED"][..]),
        ("place", &["LIMIT", "2"][..]),
    ] {
        let token = keep(&mut h, key, "a", 60_000, extra);
        let t = token.to_string();
        let with = |words: &[&str]| -> Vec<String> {
            words.iter().chain(extra).map(|w| w.to_string()).collect()
        };
        let tries = [
            vec![
                "DLOCK.EXTEND".to_string(),
                key.into(),
                "a".into(),
                "1".into(),
            ],
            vec![
                "DLOCK.EXTEND".into(),
                key.into(),
                "a".into(),
                "99".into(),
                "TOKEN".into(),
                t.clone(),
            ],
            with(&["DLOCK.ACQUIRE", key, "a", "5"]),
            with(&["DLOCK.ACQUIRE", key, "a", "50", "REENTRANT"]),
            with(&["DLOCK.ACQUIRE", key, "a", "99", "KEEP"]),
        ];
        server.sync_replicas(1);
        let before = (digest(&mut con, key), pexpiretime(&mut con, key));
        for words in &tries {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            for c in [&mut h, &mut other] {
                match c.call(&words) {
                    Reply::Error(e) => assert!(e.contains("at least 100 ms"), "{words:?}: {e}"),
                    r => panic!("{words:?} answered {r:?}"),
                }
            }
        }
        assert_eq!(
            (digest(&mut con, key), pexpiretime(&mut con, key)),
            before,
            "{key}: changed"
        );
        server.sync_replicas(1);
        let mut rcon = replica.conn();
        let on_replica = (digest(&mut rcon, key), pexpiretime(&mut rcon, key));
        assert_eq!(on_replica, before, "{key}: replicated");
        // At the minimum it is taken, and renewals go on with it.
        match other.call(&["DLOCK.EXTEND", key, "a", "100"]) {
            Reply::Int(1) => {}
            r => panic!("{key}: EXTEND 100 answered {r:?}"),
        }
        sleep(Duration::from_millis(700));
        assert!(exists(&mut con, key), "{key}: renewed at 100 ms");
    }
    let _: i64 = query!(&mut con, "COPY", "plain", "copied");
    let extended: i64 = query!(&mut con, "DLOCK.EXTEND", "copied", "a", 1);
    assert_eq!(extended, 1, "a copy is not kept");
}

/// A write pause of twice the ttl, starting at four points of the renewal
/// cycle (right at a renewal, and 250, 167 and 83 ms before one), ends no
/// kept lease — a plain lock, a read lock, a semaphore place: renewals are
/// made in memory while writes are paused (the keys never reach their
/// deadline, and read as held all along), and replicated when writes
/// resume, so the replica ends up with the master's state. `CLIENT PAUSE
/// ALL` the same.
#[test]
fn a_write_pause_of_twice_the_ttl_ends_no_kept_lease() {
    let (server, replica, mut con) = Server::start_replicated();
    let ttl = 1_000;
    for mode in ["WRITE", "ALL"] {
        let lost_before = warden_stat(&mut con, "locks_lost");
        let mut kept = Vec::new();
        for i in 0..4 {
            let key = format!("p:{mode}:{i}");
            let mut h = RawConn::open(server.port);
            let kind: &[&str] = match i % 3 {
                0 => &[],
                1 => &["SHARED"],
                _ => &["LIMIT", "2"],
            };
            let token = keep(&mut h, &key, "a", ttl, kind);
            kept.push((key, h, token));
            sleep(Duration::from_millis(83));
        }
        let paused_at = Instant::now();
        ok(
            &mut con,
            &command(&["CLIENT", "PAUSE", &(2 * ttl).to_string(), mode]),
        );
        if mode == "WRITE" {
            // Reads go on: every lock reads as held all through the pause.
            while paused_at.elapsed() < Duration::from_millis(2 * ttl as u64 - 50) {
                for (key, _, token) in &kept {
                    assert_eq!(
                        lock_token(&mut con, key),
                        Some(*token),
                        "{key} in the pause"
                    );
                }
                sleep(Duration::from_millis(50));
            }
        }
        sleep(Duration::from_millis(2 * ttl as u64 + 100).saturating_sub(paused_at.elapsed()));
        for (key, _, token) in &kept {
            assert_eq!(
                lock_token(&mut con, key),
                Some(*token),
                "{key} after the {mode} pause:\n{}",
                server.log_tail(20)
            );
        }
        // Two leases later, renewed all along, and the replica has it all.
        sleep(Duration::from_millis(2 * ttl as u64));
        for (key, _, token) in &kept {
            assert_eq!(
                lock_token(&mut con, key),
                Some(*token),
                "{key} two leases on"
            );
        }
        server.sync_replicas(1);
        let mut rcon = replica.conn();
        for (key, _, _) in &kept {
            assert_eq!(
                digest(&mut rcon, key),
                digest(&mut con, key),
                "{key}: replica"
            );
        }
        assert_eq!(
            warden_stat(&mut con, "locks_lost"),
            lost_before,
            "none lost"
        );
        for (key, h, _) in kept {
            drop(h);
            assert!(wait_until(Duration::from_secs(5), || !exists(
                &mut con, &key
            )));
        }
    }
    let pong: String = query!(&mut con, "PING");
    assert_eq!(pong, "PONG");
}

/// The token of `key`'s holder `a`, for a plain lock or a set.
fn lock_token(con: &mut Connection, key: &str) -> Option<i64> {
    if let Some((_, token)) = holder(con, key) {
        return Some(token);
    }
    set_holders(con, key)
        .into_iter()
        .find(|h| h.0 == "a")
        .map(|h| h.1)
}

/// A renewal made in memory during `FAILOVER`'s pause (the replica is slow
/// to catch up: `DEBUG SLEEP`) is put back when the master turns replica, so
/// the old master's copy of the lock is the new master's, expiry included.
#[test]
fn a_renewal_held_through_a_failover_is_put_back_on_the_old_master() {
    let master = Server::start();
    let replica = master.start_streaming_replica();
    let mut m = master.conn();
    let mut h = RawConn::open(master.port);
    // Renewals every 1.5 s: the first comes due in the 2.5 s stall.
    let token = keep(&mut h, "held", "a", 4_500, &[]);
    let _: i64 = query!(&mut m, "DLOCK.ACQUIRE", "held-set", "a", 4_500, "SHARED");
    let mut h2 = RawConn::open(master.port);
    keep(&mut h2, "held-set", "b", 4_500, &["SHARED"]);
    master.sync_replicas(1);
    let port = replica.port;
    let slow = std::thread::spawn(move || {
        let mut r = RawConn::open(port);
        r.call(&["DEBUG", "SLEEP", "2.5"])
    });
    sleep(Duration::from_millis(100));
    // A write the sleeping replica has not acknowledged: FAILOVER waits
    // for it, writes paused, through the first renewal.
    let _: () = query!(&mut m, "SET", "unacknowledged", 1);
    let before = pexpiretime(&mut m, "held");
    let _: () = query!(&mut m, "FAILOVER", "TIMEOUT", 10_000);
    let mut r = replica.conn();
    assert!(wait_until(Duration::from_secs(10), || {
        info_field(&mut r, "replication", "role").as_deref() == Some("master")
    }));
    slow.join().expect("DEBUG SLEEP");
    assert!(wait_until(Duration::from_secs(5), || master_link_up(
        &mut m
    )));
    assert_eq!(holder(&mut r, "held").map(|h| h.1), Some(token));
    for key in ["held", "held-set"] {
        let on_new = (pexpiretime(&mut r, key), digest(&mut r, key));
        let on_old = (pexpiretime(&mut m, key), digest(&mut m, key));
        assert_eq!(on_old, on_new, "{key}: the old master's copy");
    }
    assert_eq!(
        pexpiretime(&mut r, "held"),
        before,
        "the last replicated lease"
    );
    drop((h, h2));
}

/// The renewal capacity (`dlock-keep-max-renewals`, renewals per second; a
/// lease of t ms needs 3000 / t): a KEEP past it is refused with the error
/// and changes nothing, an EXTEND or a repeat that would need more renewals
/// is refused, and a KEEP waiter whose room went while it waited gets the
/// error when served; a release makes room again. INFO shows the load.
#[test]
fn keep_past_the_renewal_capacity_is_refused_and_changes_nothing() {
    let server = Server::start_with(&[], &["dlock-keep-max-renewals", "100"]);
    let mut con = server.conn();
    let mut h = RawConn::open(server.port);
    // ttl 300: a renewal every 100 ms, 10 a second each: ten fit.
    for i in 0..10 {
        keep(&mut h, &format!("c{i}"), "a", 300, &[]);
    }
    assert_eq!(warden_stat(&mut con, "locks_kept_renewals"), 100);
    let full = |r: Reply| match r {
        Reply::Error(e) => assert!(e.contains("renewal capacity"), "{e}"),
        other => panic!("past the capacity: {other:?}"),
    };
    full(h.call(&["DLOCK.ACQUIRE", "c10", "a", "300", "KEEP"]));
    full(h.call(&["DLOCK.ACQUIRE", "c10", "a", "300", "SHARED", "KEEP"]));
    assert!(!exists(&mut con, "c10"), "nothing changed");
    full(h.call(&["DLOCK.EXTEND", "c0", "a", "150"]));
    full(h.call(&["DLOCK.ACQUIRE", "c0", "a", "150"]));
    assert!(pttl(&mut con, "c0") > 150, "the lease stayed");
    // A longer lease needs fewer renewals: taken.
    assert!(matches!(
        h.call(&["DLOCK.EXTEND", "c0", "a", "600"]),
        Reply::Int(1)
    ));
    assert_eq!(warden_stat(&mut con, "locks_kept_renewals"), 95);
    assert!(matches!(
        h.call(&["DLOCK.RELEASE", "c1", "a"]),
        Reply::Int(1)
    ));
    // A KEEP waiter queued with room, served once the room is gone.
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "held", "x", 60_000);
    let w = Waiter::call(
        &server,
        "w",
        &["DLOCK.ACQUIRE", "held", "w", "300", "WAIT", "10000", "KEEP"],
    );
    assert!(wait_until(Duration::from_secs(5), || warden_stat(
        &mut con,
        "locks_waiting"
    ) == 1));
    keep(&mut h, "c1", "a", 300, &[]);
    let released: i64 = query!(&mut con, "DLOCK.RELEASE", "held", "x");
    assert_eq!(released, 1);
    assert!(w.join().error().contains("renewal capacity"));
    assert!(!exists(&mut con, "held"), "the refused waiter got nothing");
    assert_eq!(warden_stat(&mut con, "locks_kept"), 10);
}

/// 20,000 KEEP requests at ttl 100 ms (30 renewals a second each) against a
/// capacity of 20,000 renewals a second: the 660 that fit are granted, the
/// rest refused, and under `redis-benchmark` load (DLOCK.ACQUIRE, 50
/// clients, 32 deep) for 4 s none of the 660 lapses. (Without the capacity
/// every request was granted and most lapsed: 7,000-18,490 of 20,000.)
#[test]
fn kept_leases_within_the_renewal_capacity_outlive_a_server_under_load() {
    let server = Server::start_with(&[], &["dlock-keep-max-renewals", "20000"]);
    let mut con = server.conn();
    let mut holders: Vec<RawConn> = (0..100).map(|_| RawConn::open(server.port)).collect();
    let mut granted = Vec::new();
    let mut refused = 0;
    for (c, conn) in holders.iter_mut().enumerate() {
        let keys: Vec<String> = (0..200).map(|i| format!("cap:{c}:{i}")).collect();
        for key in &keys {
            conn.send(&["DLOCK.ACQUIRE", key, "h", "100", "KEEP"]);
        }
        for key in keys {
            match conn.read(Duration::from_secs(10)) {
                Reply::Int(t) => granted.push((key, t)),
                Reply::Error(e) if e.contains("renewal capacity") => refused += 1,
                other => panic!("{key}: {other:?}"),
            }
        }
    }
    assert_eq!(granted.len(), 660);
    assert_eq!(refused, 20_000 - 660);
    let load = Command::new("timeout")
        .args(["4", "redis-benchmark", "-p", &server.port.to_string()])
        .args([
            "-c",
            "50",
            "-P",
            "32",
            "-r",
            "100000",
            "-n",
            "100000000",
            "-q",
        ])
        .args(["DLOCK.ACQUIRE", "load:__rand_int__", "o", "1000"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("redis-benchmark");
    assert_eq!(load.code(), Some(124), "redis-benchmark ran the whole 4 s");
    let lapsed: Vec<&String> = granted
        .iter()
        .filter(|(key, token)| holder(&mut con, key) != Some(("h".into(), *token)))
        .map(|(key, _)| key)
        .collect();
    assert!(
        lapsed.is_empty(),
        "{} kept leases lapsed under load: {lapsed:?}",
        lapsed.len()
    );
    assert_eq!(warden_stat(&mut con, "locks_kept"), 660);
    drop(holders);
    assert!(wait_until(Duration::from_secs(5), || warden_stat(
        &mut con,
        "locks_kept"
    ) == 0));
}

/// The keepalive timer (`ss -tno`) of the server's side of the connection
/// to local port `client_port`, in whole seconds left.
fn keepalive_left_s(server: &Server, client_port: u16) -> Option<u64> {
    let out = Command::new("ss")
        .args(["-tnoH", "state", "established"])
        .arg(format!(
            "( sport = :{} and dport = :{client_port} )",
            server.port
        ))
        .output()
        .expect("ss");
    let text = String::from_utf8_lossy(&out.stdout);
    let timer = text.split("timer:(keepalive,").nth(1)?;
    let left = timer.split(',').next()?;
    let secs = left.trim_end_matches("sec").trim_end_matches("ms");
    if left.ends_with("ms") {
        return Some(0);
    }
    // "1min2sec" or "28sec".
    let (min, sec) = secs.split_once("min").unwrap_or(("0", secs));
    Some(min.parse::<u64>().ok()? * 60 + sec.parse::<u64>().unwrap_or(0))
}

/// A kept lease shortened by EXTEND or a repeat gets the liveness of the
/// shorter lease on its connection's socket (probes after half a second of
/// silence here, not half a minute), and a longer one keeps the tighter;
/// the socket's own settings come back when it keeps nothing.
#[test]
fn a_shortened_kept_lease_tightens_its_connection_s_liveness() {
    let (server, _con) = Server::start_conn();
    let mut h = RawConn::open(server.port);
    let port = h.local_port();
    keep(&mut h, "short", "a", 60_000, &[]);
    let before = keepalive_left_s(&server, port).expect("a keepalive timer");
    assert!(
        (20..=30).contains(&before),
        "idle 30 s for a 60 s lease: {before}"
    );
    assert!(matches!(
        h.call(&["DLOCK.EXTEND", "short", "a", "1000"]),
        Reply::Int(1)
    ));
    sleep(Duration::from_millis(100));
    let after = keepalive_left_s(&server, port).expect("a keepalive timer");
    assert!(
        after <= 1,
        "probes a second after silence for a 1 s lease: {after}"
    );
    assert!(matches!(
        h.call(&["DLOCK.RELEASE", "short", "a"]),
        Reply::Int(1)
    ));
    sleep(Duration::from_millis(1_100));
    let restored = keepalive_left_s(&server, port).expect("the server's own keepalive");
    assert!(restored > 200, "tcp-keepalive 300 again: {restored}");
}

/// A copy of a kept lock (`COPY`) that its owner also keeps (a repeat with
/// KEEP on the copy: the same token) is a second kept grant: neither ends
/// the other's renewals, and each goes with its own release.
#[test]
fn a_kept_copy_of_a_kept_lock_keeps_both() {
    let (server, mut con) = Server::start_conn();
    let mut h = RawConn::open(server.port);
    let token = keep(&mut h, "orig", "a", 300, &[]);
    let copied: i64 = query!(&mut con, "COPY", "orig", "copy");
    assert_eq!(copied, 1);
    assert_eq!(keep(&mut h, "copy", "a", 300, &[]), token);
    assert_eq!(warden_stat(&mut con, "locks_kept"), 2);
    sleep(Duration::from_millis(1_000));
    assert_eq!(holder(&mut con, "orig"), Some(("a".into(), token)));
    assert_eq!(holder(&mut con, "copy"), Some(("a".into(), token)));
    assert!(matches!(
        h.call(&["DLOCK.RELEASE", "copy", "a"]),
        Reply::Int(1)
    ));
    sleep(Duration::from_millis(600));
    assert_eq!(holder(&mut con, "orig"), Some(("a".into(), token)));
    assert_eq!(warden_stat(&mut con, "locks_kept"), 1);
}

/// Two kept holders of one semaphore (and a third, not kept, whose key
/// `PERSIST` made endless) renewed in memory through a pause, then the node
/// turned replica of its own replica: each key's expiry goes back to what
/// the replicas have (none), not to what the second hold saw (the first
/// hold's unreplicated one), and the holders' leases too. Four such keys,
/// so an order left to chance shows.
#[test]
fn holds_of_two_holders_of_one_set_are_put_back_to_the_replicas_expiry() {
    let master = Server::start();
    let replica = master.start_streaming_replica();
    let mut m = master.conn();
    let keys = ["sem0", "sem1", "sem2", "sem3"];
    let mut holders = Vec::new();
    for key in keys {
        let _: i64 = query!(&mut m, "DLOCK.ACQUIRE", key, "x", 30_000, "LIMIT", 3);
        for owner in ["o1", "o2"] {
            let mut h = RawConn::open(master.port);
            keep(&mut h, key, owner, 6_000, &["LIMIT", "3"]);
            holders.push(h);
        }
        let persisted: i64 = query!(&mut m, "PERSIST", key);
        assert_eq!(persisted, 1);
    }
    master.sync_replicas(1);
    ok(&mut m, &command(&["CLIENT", "PAUSE", "60000", "WRITE"]));
    // Every holder's renewal (every 2 s) comes due in the pause.
    sleep(Duration::from_millis(2_300));
    let mut r = replica.conn();
    let _: () = query!(&mut r, "REPLICAOF", "NO", "ONE");
    let _: () = query!(&mut m, "REPLICAOF", "127.0.0.1", replica.port);
    assert!(wait_until(Duration::from_secs(10), || master_link_up(
        &mut m
    )));
    for key in keys {
        let on_new = (pexpiretime(&mut r, key), digest(&mut r, key));
        let on_old = (pexpiretime(&mut m, key), digest(&mut m, key));
        assert_eq!(on_old, on_new, "{key}: the old master's copy");
        assert_eq!(on_new.0, -1, "{key}: PERSIST's endless key");
    }
    drop(holders);
}
