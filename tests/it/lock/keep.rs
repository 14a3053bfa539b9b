//! `DLOCK.ACQUIRE … KEEP`: a grant bound to the connection that received it
//! is renewed while that connection is open and released the moment it
//! closes (QUIT, a dropped socket, `CLIENT KILL`, kill -9 of the holder's
//! process), the next waiter served at once. Renewals are ordinary lease
//! changes with absolute deadlines: a replica follows them, the AOF replays
//! them without renewing anything, a promoted replica ends the lease on time,
//! and a write pause longer than half the ttl lapses nothing.

use crate::common::waiter::{RawConn, Reply, Waiter};
use crate::common::*;
use crate::lock::support::{holder, keep};

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// Long enough that a lock served before it ends was served by the
/// connection closing, not by the lease running out.
const LONG_TTL: i64 = 60_000;

#[test]
fn a_kept_lock_outlives_its_ttl_while_its_connection_is_open() {
    let (server, mut con) = Server::start_conn();
    let mut holder_conn = RawConn::open(server.port);
    let token = keep(&mut holder_conn, "job", "a", 300, &[]);
    assert_eq!(warden_stat(&mut con, "locks_kept"), 1);
    sleep(Duration::from_millis(1_200));
    assert_eq!(holder(&mut con, "job"), Some(("a".into(), token)));
    let ttl = pttl(&mut con, "job");
    assert!(
        (1..=300).contains(&ttl),
        "lease {ttl} ms: renewed for its ttl"
    );
    let other: Option<i64> = query!(&mut con, "DLOCK.ACQUIRE", "job", "b", 300);
    assert_eq!(other, None, "still held by a");
    // Without KEEP the same lock lapses.
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "plain", "a", 300);
    sleep(Duration::from_millis(600));
    assert!(!exists(&mut con, "plain"));
    assert_eq!(holder(&mut con, "job"), Some(("a".into(), token)));
    drop(holder_conn);
    assert!(wait_until(Duration::from_secs(5), || !exists(
        &mut con, "job"
    )));
    assert_eq!(warden_stat(&mut con, "locks_kept"), 0);
    assert_eq!(
        warden_stat(&mut con, "locks_lost"),
        2,
        "the lock without KEEP lapsed, and the kept one went with its connection: both lost"
    );
}

/// How a holder's connection goes away.
#[derive(Debug, Clone, Copy)]
enum Ending {
    Quit,
    Drop,
    ClientKill,
    IdleTimeout,
}

#[test]
fn every_way_a_connection_closes_releases_its_lock_to_the_next_waiter_at_once() {
    let (server, mut con) = Server::start_conn();
    for ending in [
        Ending::Quit,
        Ending::Drop,
        Ending::ClientKill,
        Ending::IdleTimeout,
    ] {
        let key = format!("job:{ending:?}");
        let mut holder_conn = RawConn::open(server.port);
        let id = holder_conn.client_id();
        let token = keep(&mut holder_conn, &key, "a", LONG_TTL, &[]);
        let waiter = Waiter::lock(&server, &key, "b", LONG_TTL, 30_000);
        assert!(wait_until(Duration::from_secs(5), || {
            warden_stat(&mut con, "locks_waiting") == 1
        }));
        let closed = Instant::now();
        match ending {
            Ending::Quit => {
                assert!(matches!(holder_conn.call(&["QUIT"]), Reply::Status(_)));
            }
            Ending::Drop => drop(holder_conn),
            Ending::ClientKill => {
                let killed: i64 = query!(&mut con, "CLIENT", "KILL", "ID", id);
                assert_eq!(killed, 1);
            }
            Ending::IdleTimeout => {
                ok(&mut con, &command(&["CONFIG", "SET", "timeout", "1"]));
            }
        }
        let (next, _) = waiter.granted(&format!("{ending:?}"));
        let waited = closed.elapsed();
        if matches!(ending, Ending::IdleTimeout) {
            // The idle timeout closed this test's own connection too.
            con = server.conn();
            ok(&mut con, &command(&["CONFIG", "SET", "timeout", "0"]));
        }
        assert!(next > token, "{ending:?}: tokens increase");
        assert!(
            waited < Duration::from_secs(10),
            "{ending:?}: the waiter was served {waited:?} after the holder went, not at once"
        );
        assert_eq!(holder(&mut con, &key), Some(("b".into(), next)));
    }
    server_alive(&server);
}

fn server_alive(server: &Server) {
    let mut con = server.conn();
    let pong: String = query!(&mut con, "PING");
    assert_eq!(pong, "PONG");
}

#[test]
fn kill_9_of_the_holders_process_hands_the_lock_over() {
    let (server, mut con) = Server::start_conn();
    let mut cli = Command::new("redis-cli")
        .args(["-p", &server.port.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("redis-cli runs");
    let mut stdin = cli.stdin.take().expect("stdin");
    writeln!(stdin, "DLOCK.ACQUIRE job a {LONG_TTL} KEEP").expect("send");
    let mut line = String::new();
    BufReader::new(cli.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("token line");
    let token: i64 = line.trim().parse().expect("a token");
    let waiter = Waiter::lock(&server, "job", "b", LONG_TTL, 30_000);
    assert!(wait_until(Duration::from_secs(5), || {
        warden_stat(&mut con, "locks_waiting") == 1
    }));
    let killed = Instant::now();
    cli.kill().expect("kill -9");
    let _ = cli.wait();
    let (next, _) = waiter.granted("after kill -9");
    let waited = killed.elapsed();
    assert!(next > token);
    assert!(
        waited < Duration::from_secs(10),
        "served {waited:?} after the kill"
    );
    drop(stdin);
}

#[test]
fn release_ends_the_binding_and_reentrant_holds_all_go_with_the_connection() {
    let (server, mut con) = Server::start_conn();
    let mut a = RawConn::open(server.port);
    keep(&mut a, "r", "a", 300, &[]);
    assert!(matches!(
        a.call(&["DLOCK.RELEASE", "r", "a"]),
        Reply::Int(1)
    ));
    // The key is b's now; a's connection closing must not touch it.
    let b_token: i64 = query!(&mut con, "DLOCK.ACQUIRE", "r", "b", LONG_TTL);
    // Two holds kept on one connection: both end with it.
    let t = keep(&mut a, "re", "a", LONG_TTL, &["REENTRANT"]);
    assert_eq!(keep(&mut a, "re", "a", LONG_TTL, &["REENTRANT"]), t);
    drop(a);
    assert!(wait_until(Duration::from_secs(5), || !exists(
        &mut con, "re"
    )));
    assert_eq!(holder(&mut con, "r"), Some(("b".into(), b_token)));
    // A lock given up with RELEASE is not renewed any more.
    let mut c = RawConn::open(server.port);
    keep(&mut c, "gone", "c", 300, &["REENTRANT"]);
    keep(&mut c, "gone", "c", 300, &["REENTRANT"]);
    assert!(matches!(
        c.call(&["DLOCK.RELEASE", "gone", "c"]),
        Reply::Int(1)
    ));
    sleep(Duration::from_millis(700));
    assert!(
        holder(&mut con, "gone").is_some(),
        "one hold is left: still kept"
    );
    assert!(matches!(
        c.call(&["DLOCK.RELEASE", "gone", "c"]),
        Reply::Int(1)
    ));
    assert!(!exists(&mut con, "gone"));
}

#[test]
fn a_semaphore_slot_frees_itself_when_its_worker_dies() {
    let (server, mut con) = Server::start_conn();
    let mut w1 = RawConn::open(server.port);
    let mut w2 = RawConn::open(server.port);
    keep(&mut w1, "pool", "w1", 400, &["LIMIT", "2"]);
    let t2 = keep(&mut w2, "pool", "w2", 400, &["LIMIT", "2"]);
    let third = Waiter::lock_kind(&server, "pool", "w3", 400, 30_000, &["LIMIT", "2"]);
    sleep(Duration::from_millis(900));
    assert!(!third.is_finished(), "both slots stay held past their ttl");
    let died = Instant::now();
    drop(w1);
    let (t3, _) = third.granted("the freed slot");
    assert!(died.elapsed() < Duration::from_secs(5));
    assert!(t3 > t2);
    // w2's slot is still renewed.
    sleep(Duration::from_millis(900));
    let info: Value = query!(&mut con, "DLOCK.INFO", "pool");
    let text = format!("{info:?}");
    assert!(text.contains("w2"), "w2 still holds: {text}");
    assert!(!text.contains("w1"), "w1's slot went: {text}");
    assert!(matches!(
        w2.call(&["DLOCK.RELEASE", "pool", "w2"]),
        Reply::Int(1)
    ));
}

#[test]
fn keep_in_multi_binds_the_connection_and_a_script_is_refused() {
    let (server, mut con) = Server::start_conn();
    let mut m = RawConn::open(server.port);
    assert!(matches!(m.call(&["MULTI"]), Reply::Status(_)));
    assert!(matches!(
        m.call(&["DLOCK.ACQUIRE", "tx", "a", "300", "KEEP", "WAIT", "100"]),
        Reply::Status(_)
    ));
    let token = match m.call(&["EXEC"]) {
        Reply::Array(r) => match r.as_slice() {
            [Reply::Int(t)] => *t,
            other => panic!("EXEC answered {other:?}"),
        },
        other => panic!("EXEC answered {other:?}"),
    };
    sleep(Duration::from_millis(800));
    assert_eq!(holder(&mut con, "tx"), Some(("a".into(), token)));
    drop(m);
    assert!(wait_until(Duration::from_secs(5), || !exists(
        &mut con, "tx"
    )));

    let e: redis::RedisResult<Value> = redis::cmd("EVAL")
        .arg("return redis.call('DLOCK.ACQUIRE', KEYS[1], 'a', 300, 'KEEP')")
        .arg(1)
        .arg("lua")
        .query(&mut con);
    let e = e.expect_err("KEEP from a script");
    assert!(err_text(&e).contains("KEEP"), "{}", err_text(&e));
    assert!(!exists(&mut con, "lua"), "the refused call changed nothing");
}

#[test]
fn a_replica_follows_the_renewals_and_a_promoted_one_ends_the_lease_on_time() {
    let (master, replica, mut m) = Server::start_replicated();
    let mut r = replica.conn();
    let mut h = RawConn::open(master.port);
    let ttl = 500;
    let token = keep(&mut h, "rep", "a", ttl, &[]);
    sleep(Duration::from_millis(1_500));
    master.sync_replicas(1);
    assert_eq!(holder(&mut r, "rep"), Some(("a".into(), token)));
    let left = pexpiretime(&mut r, "rep") - server_time_ms(&mut r);
    assert!(
        (0..=ttl).contains(&left),
        "the replica's lease ends {left} ms from now: at most the ttl past the last renewal"
    );
    // The master renews meanwhile: compare in a window where its deadline
    // stood still from before the replica caught up until after it was read.
    let same = (0..20).find_map(|_| {
        let before = pexpiretime(&mut m, "rep");
        master.sync_replicas(1);
        let on_replica = pexpiretime(&mut r, "rep");
        (pexpiretime(&mut m, "rep") == before).then_some((on_replica, before))
    });
    let (on_replica, on_master) = same.expect("twenty renewals in a row between two reads");
    assert_eq!(
        on_replica, on_master,
        "the replica's deadline is the master's"
    );

    // The holder goes: the replica drops the lock with the master.
    drop(h);
    assert!(wait_until(Duration::from_secs(5), || !exists(
        &mut m, "rep"
    )));
    master.sync_replicas(1);
    assert!(!exists(&mut r, "rep"));

    // A kept lock, then the master dies: the promoted replica renews
    // nothing, and the lease ends at its last replicated deadline.
    let mut h = RawConn::open(master.port);
    keep(&mut h, "fo", "a", ttl, &[]);
    sleep(Duration::from_millis(700));
    master.sync_replicas(1);
    let deadline = pexpiretime(&mut r, "fo");
    let mut master = master;
    master.kill();
    ok(&mut r, &command(&["REPLICAOF", "NO", "ONE"]));
    assert!(wait_until(Duration::from_secs(5), || !exists(&mut r, "fo")));
    let ended = server_time_ms(&mut r);
    assert!(
        ended <= deadline + 200,
        "the lease ended at {ended}, its last deadline was {deadline}"
    );
    drop(h);
}

#[test]
fn the_aof_replays_renewals_as_deadlines_and_renews_nothing_after_a_restart() {
    let mut server = Server::start_plain_aof();
    let mut con = server.conn();
    let mut h = RawConn::open(server.port);
    let ttl = 3_000;
    let token = keep(&mut h, "aof", "a", ttl, &[]);
    sleep(Duration::from_millis(2_200));
    let before = pexpiretime(&mut con, "aof");
    let stopped_at = server_time_ms(&mut con);
    // SHUTDOWN writes the AOF out: every renewal so far is in it.
    server.restart("NOSAVE");
    let mut con = server.conn();
    let after = pexpiretime(&mut con, "aof");
    assert!(after > 0, "the kept lock was replayed with its lease");
    {
        assert!(
            after >= before && after <= stopped_at + ttl,
            "replayed deadline {after}: between the last seen {before} and shutdown + ttl"
        );
        assert_eq!(holder(&mut con, "aof").map(|h| h.1), Some(token));
    }
    // Nobody keeps it after the restart: it lapses within its ttl.
    assert!(wait_until(Duration::from_millis(5_000), || !exists(
        &mut con, "aof"
    )));
    drop(h);
}

/// 2,000 kept locks, held by 20 connections, each with a waiter (200 of
/// them with a second one behind): all holders die at once, every waiter is
/// served exactly once, and on each key in the order it queued.
#[test]
fn two_thousand_kept_locks_whose_holders_die_at_once_serve_every_waiter_once_in_order() {
    let (server, mut con) = Server::start_conn();
    const KEYS: usize = 2_000;
    const SECOND: usize = 200;
    let mut holders: Vec<RawConn> = (0..20).map(|_| RawConn::open(server.port)).collect();
    for k in 0..KEYS {
        keep(&mut holders[k % 20], &format!("m:{k}"), "h", LONG_TTL, &[]);
    }
    let ttl = LONG_TTL.to_string();
    let mut first = Vec::new();
    let mut second = Vec::new();
    for k in 0..KEYS {
        let mut c = RawConn::open(server.port);
        c.send(&[
            "DLOCK.ACQUIRE",
            &format!("m:{k}"),
            "w1",
            "100",
            "WAIT",
            "60000",
        ]);
        first.push(c);
    }
    assert!(wait_until(Duration::from_secs(20), || {
        warden_stat(&mut con, "locks_waiting") == KEYS as i64
    }));
    for k in 0..SECOND {
        let mut c = RawConn::open(server.port);
        c.send(&[
            "DLOCK.ACQUIRE",
            &format!("m:{k}"),
            "w2",
            &ttl,
            "WAIT",
            "60000",
        ]);
        second.push(c);
    }
    assert!(wait_until(Duration::from_secs(20), || {
        warden_stat(&mut con, "locks_waiting") == (KEYS + SECOND) as i64
    }));
    let died = Instant::now();
    holders.clear();
    let mut firsts = Vec::new();
    for (k, c) in first.iter_mut().enumerate() {
        match c.read(Duration::from_secs(30)) {
            Reply::Int(t) => firsts.push(t),
            other => panic!("first waiter of m:{k} answered {other:?}"),
        }
    }
    let all_first = died.elapsed();
    for (k, c) in second.iter_mut().enumerate() {
        match c.read(Duration::from_secs(30)) {
            Reply::Int(t) => assert!(t > firsts[k], "m:{k}: the second waiter went first"),
            other => panic!("second waiter of m:{k} answered {other:?}"),
        }
    }
    for c in first.iter_mut().chain(second.iter_mut()) {
        assert!(
            matches!(c.read(Duration::from_millis(1)), Reply::Silent),
            "a waiter was answered twice"
        );
    }
    assert!(
        all_first < Duration::from_secs(20),
        "all first waiters served {all_first:?} after the holders died"
    );
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
}

#[test]
fn keep_is_refused_below_the_shortest_ttl_on_a_replica_and_changes_nothing() {
    let master = Server::start();
    let replica = master.start_replica(&["--replica-read-only", "no"], &[]);
    let mut m = RawConn::open(master.port);
    match m.call(&["DLOCK.ACQUIRE", "short", "a", "99", "KEEP"]) {
        Reply::Error(e) => assert!(e.contains("at least 100 ms"), "{e}"),
        other => panic!("a 99 ms KEEP answered {other:?}"),
    }
    let mut r = RawConn::open(replica.port);
    match r.call(&["DLOCK.ACQUIRE", "rep", "a", "1000", "KEEP"]) {
        Reply::Error(e) => assert!(e.contains("master"), "{e}"),
        other => panic!("KEEP on a replica answered {other:?}"),
    }
    let mut con = master.conn();
    assert!(!exists(&mut con, "short"));
    let mut rc = replica.conn();
    assert!(!exists(&mut rc, "rep"));
    // The shortest ttl is kept.
    let token = keep(&mut m, "edge", "a", 100, &[]);
    sleep(Duration::from_millis(600));
    assert_eq!(holder(&mut con, "edge"), Some(("a".into(), token)));
}

#[test]
fn a_kept_lease_shortened_by_extend_or_a_repeat_is_renewed_with_the_new_ttl() {
    let (server, mut con) = Server::start_conn();
    let mut h = RawConn::open(server.port);
    let token = keep(&mut h, "ext", "a", 60_000, &[]);
    assert!(matches!(
        h.call(&["DLOCK.EXTEND", "ext", "a", "300"]),
        Reply::Int(1)
    ));
    let t2 = keep(&mut h, "rep", "a", 60_000, &["SHARED"]);
    // A repeat without KEEP, from another connection, with a shorter lease.
    let mut other = RawConn::open(server.port);
    assert!(matches!(
        other.call(&["DLOCK.ACQUIRE", "rep", "a", "300", "SHARED"]),
        Reply::Int(t) if t == t2
    ));
    sleep(Duration::from_millis(1_200));
    assert_eq!(holder(&mut con, "ext"), Some(("a".into(), token)));
    let left = pttl(&mut con, "ext");
    assert!(
        (1..=300).contains(&left),
        "renewed with the new 300 ms lease: {left}"
    );
    assert!(exists(&mut con, "rep"), "the shared grant is still kept");
    let left = pttl(&mut con, "rep");
    assert!((1..=300).contains(&left), "{left}");
    drop(h);
    assert!(wait_until(Duration::from_secs(5), || {
        !exists(&mut con, "ext") && !exists(&mut con, "rep")
    }));
}

#[test]
fn a_copy_of_a_kept_lock_ending_leaves_the_kept_one_alone() {
    let (server, mut con) = Server::start_conn();
    let mut h = RawConn::open(server.port);
    let token = keep(&mut h, "orig", "a", 300, &[]);
    let copied: i64 = query!(&mut con, "COPY", "orig", "copy1");
    assert_eq!(copied, 1);
    let _: i64 = query!(&mut con, "COPY", "orig", "copy2");
    let released: i64 = query!(&mut con, "DLOCK.RELEASE", "copy1", "a");
    assert_eq!(released, 1);
    let _: i64 = query!(&mut con, "DEL", "copy2");
    sleep(Duration::from_millis(1_000));
    assert_eq!(holder(&mut con, "orig"), Some(("a".into(), token)));
    drop(h);
    assert!(wait_until(Duration::from_secs(5), || !exists(
        &mut con, "orig"
    )));
}

/// `FAILOVER`: the old master pauses writes while its replica catches up
/// (renewals wait), then becomes a replica (it renews nothing, and tells the
/// holder with `dlock.lost`); the new master has the lock until its last
/// replicated deadline, at most the ttl after the last renewal.
#[test]
fn failover_ends_a_kept_lease_at_its_last_replicated_deadline() {
    let master = Server::start();
    let replica = master.start_streaming_replica();
    let mut m = master.conn();
    ok(
        &mut m,
        &command(&["CONFIG", "SET", "notify-keyspace-events", "Kd"]),
    );
    let mut events = RawConn::open(master.port);
    events.send(&["SUBSCRIBE", "__keyspace@0__:fo"]);
    assert!(matches!(
        events.read(Duration::from_secs(5)),
        Reply::Array(_)
    ));
    let mut h = RawConn::open(master.port);
    let ttl = 3_000;
    let token = keep(&mut h, "fo", "a", ttl, &[]);
    sleep(Duration::from_millis(1_500));
    master.sync_replicas(1);
    let _: () = query!(&mut m, "FAILOVER", "TIMEOUT", 5000);
    let mut r = replica.conn();
    assert!(wait_until(Duration::from_secs(10), || {
        info_field(&mut r, "replication", "role").as_deref() == Some("master")
    }));
    assert_eq!(holder(&mut r, "fo").map(|h| h.1), Some(token));
    let deadline = pexpiretime(&mut r, "fo");
    let promoted_at = server_time_ms(&mut r);
    assert!(
        deadline - promoted_at <= ttl,
        "the new master's lease ends {} ms after the promotion",
        deadline - promoted_at
    );
    assert!(wait_until(Duration::from_secs(8), || !exists(&mut r, "fo")));
    assert!(server_time_ms(&mut r) <= deadline + 200);
    // The old master told the holder.
    let mut lost = false;
    let until = Instant::now() + Duration::from_secs(3);
    while !lost && Instant::now() < until {
        if let Reply::Array(parts) = events.read(Duration::from_millis(200)) {
            lost = matches!(parts.get(2), Some(Reply::Bulk(b)) if b == b"dlock.lost");
        }
    }
    assert!(lost, "no dlock.lost on the old master");
    drop(h);
}

/// Memory of pending module timers: arming a sooner renewal stops the later
/// timer, so grants that come and go around a long-kept one leave none
/// behind (each pending timer costs the server about 90 bytes).
#[test]
fn kept_grants_that_come_and_go_leave_no_timers_behind() {
    let (server, mut con) = Server::start_conn();
    let mut long = RawConn::open(server.port);
    keep(&mut long, "long", "o", LONG_TTL, &[]);
    let churn = |con: &mut Connection, rounds: usize| {
        for i in 0..rounds {
            let mut brief = RawConn::open(server.port);
            keep(&mut brief, &format!("brief{i}"), "o", LONG_TTL, &[]);
            drop(brief);
            // Released by the timer, which then re-arms for "long".
            assert!(wait_until(Duration::from_secs(2), || {
                warden_stat(con, "locks_kept") == 1
            }));
        }
    };
    churn(&mut con, 500);
    let before = used_memory(&mut con);
    churn(&mut con, 4_000);
    let grown = used_memory(&mut con) - before;
    assert!(
        grown < 100_000,
        "{grown} bytes more after 4,000 kept grants came and went"
    );
    assert_eq!(warden_stat(&mut con, "lock_keys"), 1);
}

/// A renewal that finds its grant gone changes nothing it does not
/// replicate: here `SWAPDB` put another set, whose key `PEXPIRE` shortened
/// below its holder's lease, where the kept grant was.
#[test]
fn a_renewal_that_finds_another_set_leaves_it_as_the_replica_has_it() {
    let master = Server::start();
    let replica = master.start_streaming_replica();
    let mut m = master.conn();
    let mut k = RawConn::open(master.port);
    keep(&mut k, "s", "holder-k", 300, &["SHARED"]);
    ok(&mut m, &command(&["SELECT", "1"]));
    let _: i64 = query!(&mut m, "DLOCK.ACQUIRE", "s", "holder-b", LONG_TTL, "SHARED");
    let _: i64 = query!(&mut m, "PEXPIRE", "s", 20_000);
    ok(&mut m, &command(&["SWAPDB", "0", "1"]));
    ok(&mut m, &command(&["SELECT", "0"]));
    // Renewals of holder-k come every 100 ms; by now some found "s" of db 0
    // holding holder-b's set.
    sleep(Duration::from_millis(500));
    let acked: i64 = query!(&mut m, "WAIT", 1, 2_000);
    assert_eq!(acked, 1);
    let mut r = replica.conn();
    assert_eq!(digest(&mut m, "s"), digest(&mut r, "s"));
    assert_eq!(db_digest(&mut m), db_digest(&mut r));
    drop(k);
}
