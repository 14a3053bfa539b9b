//! Integration tests for the distributed locks (`DLOCK.*`) of warden:
//! mutual exclusion, re-entrance, ownership, expiry, FIFO waiting, fencing tokens,
//! counters, configuration and bad input. Replication and persistence tests live in
//! `tests/dlock_persistence.rs`.

mod common;
use common::dlock::*;
use common::*;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// The error text of a reply that must be an error.
fn expect_err<T: std::fmt::Debug>(r: redis::RedisResult<T>, what: &str) -> String {
    match r {
        Ok(v) => panic!("{what}: expected an error reply, got {v:?}"),
        Err(e) => err_text(&e),
    }
}

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const TTL_ERR: &str = "ERR ttl must be a positive integer";
const OWNER_ERR: &str = "ERR owner must not be empty";
const TIMEOUT_ERR: &str = "ERR timeout must be a non-negative integer";
const TTL_RANGE_ERR: &str = "ERR ttl is out of range";
const TIMEOUT_RANGE_ERR: &str = "ERR timeout is out of range";
const SYNTAX_ERR: &str = "ERR syntax error";

fn arity_err(cmd_name: &str) -> String {
    format!("ERR wrong number of arguments for '{cmd_name}' command")
}

// ---------------------------------------------------------------------------------------
// 1. Seed scenario: 5 workers, one shared counter
// ---------------------------------------------------------------------------------------

#[test]
fn seed_five_workers_increment_counter_without_overlap() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let _: () = cmd("SET").arg("counter").arg(0).query(&mut con).unwrap();
    let inside = Arc::new(AtomicBool::new(false));
    let overlaps = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for i in 1..=5 {
        let inside = inside.clone();
        let overlaps = overlaps.clone();
        let (_, h) = spawn_client(&server, move |con| {
            let owner = format!("worker{i}");
            let token = acquire_wait(con, "counter-lock", &owner, 10_000, 10_000)
                .expect("DLOCK.ACQUIRE")
                .expect("lock granted before the WAIT timeout");
            let granted_at = Instant::now();
            if inside.swap(true, Ordering::SeqCst) {
                overlaps.fetch_add(1, Ordering::SeqCst);
            }
            let v: i64 = cmd("GET").arg("counter").query(con).unwrap();
            thread::sleep(Duration::from_millis(20));
            let _: () = cmd("SET").arg("counter").arg(v + 1).query(con).unwrap();
            inside.store(false, Ordering::SeqCst);
            let released_at = Instant::now();
            assert_eq!(
                release(con, "counter-lock", &owner),
                1,
                "{owner} releases its lock"
            );
            (token, granted_at, released_at)
        });
        handles.push(h);
    }
    let mut spans: Vec<(i64, Instant, Instant)> = handles
        .into_iter()
        .map(|h| h.join().expect("worker panicked"))
        .collect();
    let counter: i64 = cmd("GET").arg("counter").query(&mut con).unwrap();
    assert_eq!(counter, 5);
    assert_eq!(
        overlaps.load(Ordering::SeqCst),
        0,
        "two workers were inside at once"
    );
    spans.sort_by_key(|s| s.1);
    for w in spans.windows(2) {
        assert!(
            w[1].1 >= w[0].2,
            "critical sections overlap: {:?} / {:?}",
            w[0],
            w[1]
        );
        assert!(
            w[1].0 > w[0].0,
            "tokens in grant order must increase: {} then {}",
            w[0].0,
            w[1].0
        );
    }
    assert!(
        !exists(&mut con, "counter-lock"),
        "lock key is gone when all released"
    );
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
}

// ---------------------------------------------------------------------------------------
// 2. Stress: 50 clients x 200 increments
// ---------------------------------------------------------------------------------------

#[test]
fn stress_50_clients_200_increments_each() {
    const CLIENTS: usize = 50;
    const ROUNDS: usize = 200;
    let server = Server::start();
    let mut con = conn_t(&server);
    let _: () = cmd("SET")
        .arg("stress-counter")
        .arg(0)
        .query(&mut con)
        .unwrap();
    let tokens = Arc::new(Mutex::new(Vec::with_capacity(CLIENTS * ROUNDS)));
    let inside = Arc::new(AtomicBool::new(false));
    let overlaps = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for i in 0..CLIENTS {
        let tokens = tokens.clone();
        let inside = inside.clone();
        let overlaps = overlaps.clone();
        let (_, h) = spawn_client(&server, move |con| {
            let owner = format!("client-{i}");
            for _ in 0..ROUNDS {
                let token = acquire_wait(con, "stress-lock", &owner, 10_000, 25_000)
                    .expect("DLOCK.ACQUIRE")
                    .expect("lock granted before the WAIT timeout");
                if inside.swap(true, Ordering::SeqCst) {
                    overlaps.fetch_add(1, Ordering::SeqCst);
                }
                tokens.lock().unwrap().push(token);
                let v: i64 = cmd("GET").arg("stress-counter").query(con).unwrap();
                let _: () = cmd("SET")
                    .arg("stress-counter")
                    .arg(v + 1)
                    .query(con)
                    .unwrap();
                inside.store(false, Ordering::SeqCst);
                assert_eq!(release(con, "stress-lock", &owner), 1);
            }
        });
        handles.push(h);
    }
    for h in handles {
        h.join().expect("client thread panicked");
    }
    let counter: i64 = cmd("GET").arg("stress-counter").query(&mut con).unwrap();
    assert_eq!(counter, (CLIENTS * ROUNDS) as i64);
    assert_eq!(
        overlaps.load(Ordering::SeqCst),
        0,
        "two clients were inside at once"
    );
    let tokens = tokens.lock().unwrap();
    assert_eq!(tokens.len(), CLIENTS * ROUNDS);
    assert_strictly_increasing(&tokens, "grant order");
    assert!(!exists(&mut con, "stress-lock"));
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
}

// ---------------------------------------------------------------------------------------
// 3. Ownership, EXTEND, re-entrance
// ---------------------------------------------------------------------------------------

#[test]
fn only_the_owner_releases_or_extends() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let t = try_acquire(&mut con, "own", "alice", 10_000).expect("free lock is granted");
    let before = lock_info(&mut con, "own").expect("held");
    assert_eq!(before.owner, b"alice");
    assert_eq!(before.token, t);
    assert_eq!(before.holds, 1);

    assert_eq!(
        release(&mut con, "own", "bob"),
        0,
        "another owner cannot release"
    );
    assert_eq!(
        extend(&mut con, "own", "bob", 50_000),
        0,
        "another owner cannot extend"
    );
    assert_eq!(
        try_acquire(&mut con, "own", "bob", 10_000),
        None,
        "busy lock is not granted"
    );
    assert_eq!(
        release(&mut con, "own", "alic"),
        0,
        "a prefix of the owner is another owner"
    );
    assert_eq!(release(&mut con, "own", "alice2"), 0);

    let after = lock_info(&mut con, "own").expect("still held");
    assert_eq!(
        (after.owner.as_slice(), after.token, after.holds),
        (&b"alice"[..], t, 1)
    );
    assert!(
        after.ttl_ms <= 10_000 && after.ttl_ms > 0,
        "ttl untouched: {after:?}"
    );
    let p = pttl(&mut con, "own");
    assert!(p > 0 && p <= 10_000, "PTTL not extended by bob: {p}");

    // The owner extends (TTL becomes exactly ttl_ms, longer or shorter).
    assert_eq!(extend(&mut con, "own", "alice", 50_000), 1);
    let p = pttl(&mut con, "own");
    assert!(p > 10_000 && p <= 50_000, "PTTL after EXTEND 50000: {p}");
    let i = lock_info(&mut con, "own").unwrap();
    assert!(i.ttl_ms > 10_000 && i.ttl_ms <= 50_000, "{i:?}");
    assert_eq!((i.token, i.holds), (t, 1), "EXTEND keeps token and holds");
    assert_eq!(extend(&mut con, "own", "alice", 3_000), 1);
    let p = pttl(&mut con, "own");
    assert!(
        p > 0 && p <= 3_000,
        "EXTEND sets the TTL, also shorter: {p}"
    );

    assert_eq!(release(&mut con, "own", "alice"), 1);
    assert!(!exists(&mut con, "own"), "free lock has no key");
    assert_eq!(lock_info(&mut con, "own"), None);
    assert_eq!(
        release(&mut con, "own", "alice"),
        0,
        "releasing a free lock"
    );
    assert_eq!(
        extend(&mut con, "own", "alice", 1_000),
        0,
        "extending a free lock"
    );
    assert!(!exists(&mut con, "own"), "EXTEND never creates the key");
    assert_eq!(extend(&mut con, "never", "alice", 1_000), 0);
    assert!(!exists(&mut con, "never"));
}

#[test]
fn extend_of_an_expired_lock_answers_zero_and_does_not_recreate_it() {
    let server = Server::start();
    let mut con = conn_t(&server);
    // Keep the expired key physically present until something touches it.
    let _: () = cmd("DEBUG")
        .arg("SET-ACTIVE-EXPIRE")
        .arg(0)
        .query(&mut con)
        .unwrap();
    let t = try_acquire(&mut con, "exp", "alice", 50).expect("granted");
    let acquired_ms = server_time_ms(&mut con);
    assert!(wait_until(Duration::from_secs(5), || server_time_ms(
        &mut con
    ) > acquired_ms + 80));
    assert_eq!(
        extend(&mut con, "exp", "alice", 10_000),
        0,
        "an expired lock cannot be extended"
    );
    assert!(
        !exists(&mut con, "exp"),
        "EXTEND must not re-create an expired lock"
    );
    assert_eq!(pttl(&mut con, "exp"), -2);
    assert_eq!(lock_info(&mut con, "exp"), None);
    assert_eq!(
        release(&mut con, "exp", "alice"),
        0,
        "an expired lock cannot be released"
    );
    let t2 = try_acquire(&mut con, "exp", "bob", 10_000).expect("free again");
    assert!(
        t2 > t,
        "new grant after expiry has a larger token: {t} then {t2}"
    );
}

/// A client that retries its ACQUIRE (a socket timeout, a reconnect) leaves
/// one hold: the one RELEASE frees the lock for the next owner.
#[test]
fn a_repeated_acquire_is_idempotent() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let t = try_acquire(&mut con, "retry", "worker", 30_000).expect("granted");
    for _ in 0..3 {
        assert_eq!(try_acquire(&mut con, "retry", "worker", 20_000), Some(t));
    }
    let i = lock_info(&mut con, "retry").unwrap();
    assert_eq!((i.token, i.holds), (t, 1));
    assert!(
        i.ttl_ms <= 20_000,
        "the repeat renewed the lease to its own ttl"
    );
    assert_eq!(release(&mut con, "retry", "worker"), 1);
    assert!(!exists(&mut con, "retry"), "one RELEASE frees it");
    let next = try_acquire(&mut con, "retry", "other", 1_000).expect("free at once");
    assert!(next > t);
}

#[test]
fn reentrant_acquire_same_token_and_one_release_per_hold() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let t = try_acquire(&mut con, "re", "alice", 50_000).expect("granted");
    assert_eq!(
        reenter(&mut con, "re", "alice", 20_000),
        Some(t),
        "re-entry keeps the token"
    );
    let i = lock_info(&mut con, "re").unwrap();
    assert_eq!((i.token, i.holds), (t, 2));
    let p = pttl(&mut con, "re");
    assert!(
        p > 0 && p <= 20_000,
        "re-entry resets the TTL to its ttl_ms: {p}"
    );
    assert!(i.ttl_ms > 0 && i.ttl_ms <= 20_000, "{i:?}");
    // Re-entry with WAIT does not block and returns the same token.
    let r: Option<i64> = cmd("DLOCK.ACQUIRE")
        .arg("re")
        .arg("alice")
        .arg(30_000)
        .arg("WAIT")
        .arg(0)
        .arg("REENTRANT")
        .query(&mut con)
        .unwrap();
    assert_eq!(r, Some(t));
    let i = lock_info(&mut con, "re").unwrap();
    assert_eq!(i.holds, 3);
    let p = pttl(&mut con, "re");
    assert!(p > 20_000 && p <= 30_000, "TTL reset to 30000: {p}");
    assert_eq!(try_acquire(&mut con, "re", "bob", 1_000), None);

    for left in [2, 1] {
        assert_eq!(release(&mut con, "re", "alice"), 1);
        let i = lock_info(&mut con, "re").expect("still held while holds remain");
        assert_eq!(
            (i.owner.as_slice(), i.token, i.holds),
            (&b"alice"[..], t, left)
        );
        assert_eq!(
            try_acquire(&mut con, "re", "bob", 1_000),
            None,
            "still busy with {left} holds"
        );
    }
    assert_eq!(release(&mut con, "re", "alice"), 1);
    assert_eq!(lock_info(&mut con, "re"), None);
    assert!(!exists(&mut con, "re"));
    assert_eq!(release(&mut con, "re", "alice"), 0, "no hold left");
    let t2 = try_acquire(&mut con, "re", "bob", 1_000).expect("free");
    assert!(t2 > t);
}

// ---------------------------------------------------------------------------------------
// INFO reply shape, key type, PTTL, counters
// ---------------------------------------------------------------------------------------

#[test]
fn info_reply_shape_type_and_pttl() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let v: Value = cmd("DLOCK.INFO").arg("shape").query(&mut con).unwrap();
    assert_eq!(v, Value::Nil, "DLOCK.INFO of a free lock is nil");
    let v: Value = cmd("DLOCK.ACQUIRE")
        .arg("shape")
        .arg("alice")
        .arg(10_000)
        .query(&mut con)
        .unwrap();
    let t = match v {
        Value::Int(t) => t,
        other => panic!("ACQUIRE must reply with an integer token, got {other:?}"),
    };
    let v: Value = cmd("DLOCK.ACQUIRE")
        .arg("shape")
        .arg("bob")
        .arg(10_000)
        .query(&mut con)
        .unwrap();
    assert_eq!(v, Value::Nil, "busy ACQUIRE replies nil");

    let v: Value = cmd("DLOCK.INFO").arg("shape").query(&mut con).unwrap();
    let items = match &v {
        Value::Array(items) => items.clone(),
        other => panic!("RESP2 DLOCK.INFO must be a flat array, got {other:?}"),
    };
    assert_eq!(items.len(), 10, "{v:?}");
    let names: Vec<Vec<u8>> = items
        .iter()
        .step_by(2)
        .map(|x| value_bytes(x).expect("name"))
        .collect();
    assert_eq!(
        names,
        [&b"owner"[..], b"token", b"ttl_ms", b"holds", b"waiters"].map(|s| s.to_vec())
    );
    assert_eq!(value_bytes(&items[1]).as_deref(), Some(&b"alice"[..]));
    assert_eq!(items[3], Value::Int(t));
    match items[5] {
        Value::Int(ttl) => assert!(ttl > 0 && ttl <= 10_000, "ttl_ms {ttl}"),
        ref other => panic!("ttl_ms must be an integer: {other:?}"),
    }
    assert_eq!(items[7], Value::Int(1));
    assert_eq!(items[9], Value::Int(0));

    let mut con3 = server.conn_resp3();
    let v3: Value = cmd("DLOCK.INFO").arg("shape").query(&mut con3).unwrap();
    assert!(
        matches!(v3, Value::Map(_)),
        "RESP3 DLOCK.INFO must be a map, got {v3:?}"
    );
    let i3 = parse_info(&v3).unwrap();
    assert_eq!(
        (i3.owner.as_slice(), i3.token, i3.holds, i3.waiters),
        (&b"alice"[..], t, 1, 0)
    );
    let nil3: Value = cmd("DLOCK.INFO").arg("free-key").query(&mut con3).unwrap();
    assert_eq!(nil3, Value::Nil);

    assert_eq!(key_type(&mut con, "shape"), "warden-lk");
    let info = lock_info(&mut con, "shape").unwrap();
    let p = pttl(&mut con, "shape");
    assert!(
        p <= info.ttl_ms + 2 && info.ttl_ms - p <= 1_000,
        "PTTL {p} equals the lock TTL {}",
        info.ttl_ms
    );
    assert_eq!(extend(&mut con, "shape", "alice", 40_000), 1);
    let info = lock_info(&mut con, "shape").unwrap();
    let p = pttl(&mut con, "shape");
    assert!(
        p > 10_000 && p <= info.ttl_ms + 2 && info.ttl_ms - p <= 1_000,
        "PTTL {p} / ttl_ms {}",
        info.ttl_ms
    );
}

#[test]
fn info_warden_counters() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let g0 = warden_stat(&mut con, "locks_granted");
    let c0 = warden_stat(&mut con, "locks_contended");
    let h0 = warden_stat(&mut con, "locks_handed_off");
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);

    let t = try_acquire(&mut con, "cnt", "alice", 30_000).expect("granted");
    assert_eq!(warden_stat(&mut con, "locks_granted"), g0 + 1);
    assert_eq!(warden_stat(&mut con, "locks_contended"), c0);
    assert_eq!(try_acquire(&mut con, "cnt", "bob", 30_000), None);
    assert_eq!(warden_stat(&mut con, "locks_contended"), c0 + 1);
    assert_eq!(
        warden_stat(&mut con, "locks_granted"),
        g0 + 1,
        "a refused acquire is no grant"
    );

    let (_, w) = spawn_waiter(&server, b"cnt", b"carol", 30_000, 10_000);
    wait_waiting(&mut con, 1);
    assert_eq!(
        warden_stat(&mut con, "locks_contended"),
        c0 + 2,
        "a blocking acquire found it busy"
    );
    assert_eq!(lock_info(&mut con, "cnt").unwrap().waiters, 1);

    assert_eq!(release(&mut con, "cnt", "alice"), 1);
    let (tc, _) = granted(w, "carol");
    assert!(tc > t);
    assert_eq!(warden_stat(&mut con, "locks_handed_off"), h0 + 1);
    wait_waiting(&mut con, 0);
    assert_eq!(release(&mut con, "cnt", "carol"), 1);
    assert_eq!(
        warden_stat(&mut con, "locks_handed_off"),
        h0 + 1,
        "release without waiter"
    );
    assert!(!exists(&mut con, "cnt"));
}

// ---------------------------------------------------------------------------------------
// 4. Expiry
// ---------------------------------------------------------------------------------------

#[test]
fn unreleased_lock_is_free_after_its_ttl() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let t0 = Instant::now();
    let t = try_acquire(&mut con, "lease", "crashed-client", 200).expect("granted");
    assert_eq!(
        try_acquire(&mut con, "lease", "bob", 10_000),
        None,
        "busy before the TTL"
    );
    let mut t2 = None;
    assert!(
        wait_until(Duration::from_secs(5), || {
            t2 = try_acquire(&mut con, "lease", "bob", 10_000);
            t2.is_some()
        }),
        "lock never became free after its TTL"
    );
    let elapsed = t0.elapsed();
    assert!(
        elapsed >= Duration::from_millis(195),
        "lock was free before its TTL: {elapsed:?}"
    );
    assert!(t2.unwrap() > t);
    let i = lock_info(&mut con, "lease").unwrap();
    assert_eq!(i.owner, b"bob");
}

/// A holder never releases (TTL 300 ms); a waiter with WAIT 5000 must get the lock after
/// the deadline and long before its own timeout.
fn expiry_hands_lock_to_waiter(setup: impl FnOnce(&mut Connection)) {
    let server = Server::start();
    let mut con = conn_t(&server);
    setup(&mut con);
    let c0 = warden_stat(&mut con, "locks_contended");
    // Connect the waiter first so that it surely arrives while the lock is held.
    let mut wcon = conn_t(&server);
    let t0 = Instant::now();
    let t = try_acquire(&mut con, "lease", "crashed-client", 300).expect("granted");
    let w = thread::spawn(move || {
        let r = acquire_wait(&mut wcon, "lease", "waiter", 30_000, 5_000);
        (r, Instant::now())
    });
    let (tw, at) = granted(w, "waiter on an expiring lock");
    let waited = at.duration_since(t0);
    assert!(
        waited >= Duration::from_millis(295),
        "granted before the holder's TTL: {waited:?}"
    );
    assert!(
        waited < Duration::from_millis(2_000),
        "waiter was not woken at the lease deadline (granted after {waited:?})"
    );
    assert_eq!(
        warden_stat(&mut con, "locks_contended"),
        c0 + 1,
        "the waiter found the lock busy and blocked"
    );
    assert!(tw > t, "token after expiry {tw} must exceed {t}");
    let i = lock_info(&mut con, "lease").expect("held by the waiter");
    assert_eq!(
        (i.owner.as_slice(), i.token, i.holds, i.waiters),
        (&b"waiter"[..], tw, 1, 0)
    );
    assert!(i.ttl_ms > 20_000, "waiter's own TTL applies: {i:?}");
    wait_waiting(&mut con, 0);
}

#[test]
fn expiry_wakes_waiter() {
    expiry_hands_lock_to_waiter(|_| {});
}

#[test]
fn expiry_wakes_waiter_without_active_expire() {
    expiry_hands_lock_to_waiter(|con| {
        let _: () = cmd("DEBUG")
            .arg("SET-ACTIVE-EXPIRE")
            .arg(0)
            .query(con)
            .unwrap();
    });
}

#[test]
fn expiry_wakes_waiter_among_20000_volatile_keys() {
    expiry_hands_lock_to_waiter(|con| {
        let mut p = redis::pipe();
        for i in 0..20_000 {
            p.cmd("SET")
                .arg(format!("volatile:{i}"))
                .arg("x")
                .arg("PX")
                .arg(600_000 + i)
                .ignore();
        }
        let _: () = p.query(con).unwrap();
        let n: i64 = cmd("DBSIZE").query(con).unwrap();
        assert_eq!(n, 20_000);
    });
}

// ---------------------------------------------------------------------------------------
// 5. WAIT: FIFO, timeout, disconnect, DEL, FLUSHALL, MULTI, scripts
// ---------------------------------------------------------------------------------------

#[test]
fn ten_waiters_are_served_in_arrival_order() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let t0 = try_acquire(&mut con, "fifo", "holder", 30_000).expect("granted");
    let h0 = warden_stat(&mut con, "locks_handed_off");
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut handles = Vec::new();
    for i in 0..10i64 {
        let order = order.clone();
        let (_, h) = spawn_client(&server, move |con| {
            let owner = format!("w{i}");
            let t = acquire_wait(con, "fifo", &owner, 30_000, 20_000)
                .expect("DLOCK.ACQUIRE")
                .expect("granted before the WAIT timeout");
            order.lock().unwrap().push((i, t));
            assert_eq!(release(con, "fifo", &owner), 1);
        });
        handles.push(h);
        wait_waiting(&mut con, i + 1);
        assert_eq!(lock_info(&mut con, "fifo").unwrap().waiters, i + 1);
    }
    assert_eq!(release(&mut con, "fifo", "holder"), 1);
    for h in handles {
        h.join().expect("waiter panicked");
    }
    let order = order.lock().unwrap();
    let idx: Vec<i64> = order.iter().map(|x| x.0).collect();
    assert_eq!(
        idx,
        (0..10).collect::<Vec<_>>(),
        "waiters served out of arrival order"
    );
    let mut tokens = vec![t0];
    tokens.extend(order.iter().map(|x| x.1));
    assert_strictly_increasing(&tokens, "FIFO hand-offs");
    assert_eq!(warden_stat(&mut con, "locks_handed_off"), h0 + 10);
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
    assert!(!exists(&mut con, "fifo"));
}

#[test]
fn release_hands_lock_straight_to_oldest_waiter() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let t = try_acquire(&mut con, "direct", "holder", 30_000).expect("granted");
    let (_, w1) = spawn_waiter(&server, b"direct", b"w1", 25_000, 10_000);
    wait_waiting(&mut con, 1);
    let (_, w2) = spawn_waiter(&server, b"direct", b"w2", 25_000, 10_000);
    wait_waiting(&mut con, 2);
    // An intruder pipelined right behind the RELEASE must not get the lock.
    let (r, intruder): (i64, Option<i64>) = redis::pipe()
        .cmd("DLOCK.RELEASE")
        .arg("direct")
        .arg("holder")
        .cmd("DLOCK.ACQUIRE")
        .arg("direct")
        .arg("intruder")
        .arg(1_000)
        .query(&mut con)
        .unwrap();
    assert_eq!(r, 1);
    assert_eq!(
        intruder, None,
        "the lock went to an intruder instead of the oldest waiter"
    );
    let i = lock_info(&mut con, "direct").expect("handed off, not free");
    assert_eq!((i.owner.as_slice(), i.holds, i.waiters), (&b"w1"[..], 1, 1));
    assert!(
        i.ttl_ms > 20_000 && i.ttl_ms <= 25_000,
        "the waiter's ttl applies: {i:?}"
    );
    let (t1, _) = granted(w1, "w1");
    assert_eq!(i.token, t1, "DLOCK.INFO token equals the token w1 received");
    assert!(t1 > t);
    // Any connection may release on behalf of the owner.
    assert_eq!(release(&mut con, "direct", "w1"), 1);
    let (t2, _) = granted(w2, "w2");
    assert!(t2 > t1);
    let i = lock_info(&mut con, "direct").unwrap();
    assert_eq!(
        (i.owner.as_slice(), i.token, i.waiters),
        (&b"w2"[..], t2, 0)
    );
    assert_eq!(release(&mut con, "direct", "w2"), 1);
    assert!(!exists(&mut con, "direct"));
}

#[test]
fn wait_timeout_answers_nil_and_leaves_no_trace() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let t = try_acquire(&mut con, "tmo", "holder", 30_000).expect("granted");
    let start = Instant::now();
    let (_, w) = spawn_waiter(&server, b"tmo", b"late", 10_000, 200);
    let (r, at) = w.join().unwrap();
    assert_eq!(
        r.expect("no error on timeout"),
        None,
        "WAIT timeout answers nil"
    );
    assert!(
        at.duration_since(start) >= Duration::from_millis(195),
        "did not wait: {:?}",
        at.duration_since(start)
    );
    wait_waiting(&mut con, 0);
    let i = lock_info(&mut con, "tmo").unwrap();
    assert_eq!(
        (i.owner.as_slice(), i.token, i.holds, i.waiters),
        (&b"holder"[..], t, 1, 0)
    );
    assert_eq!(release(&mut con, "tmo", "holder"), 1);
    assert!(
        !exists(&mut con, "tmo"),
        "nobody got the lock after the timed-out waiter left"
    );
    assert_eq!(warden_stat(&mut con, "locks_handed_off"), 0);
}

#[test]
fn killed_waiter_is_skipped() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let t = try_acquire(&mut con, "kill", "holder", 30_000).expect("granted");
    let (id_a, a) = spawn_waiter(&server, b"kill", b"doomed", 30_000, 20_000);
    wait_waiting(&mut con, 1);
    let (_, b) = spawn_waiter(&server, b"kill", b"survivor", 30_000, 20_000);
    wait_waiting(&mut con, 2);
    let killed: i64 = cmd("CLIENT")
        .arg("KILL")
        .arg("ID")
        .arg(id_a)
        .query(&mut con)
        .unwrap();
    assert_eq!(killed, 1);
    let (ra, _) = a.join().unwrap();
    assert!(
        ra.is_err(),
        "killed waiter's connection must be gone, got {ra:?}"
    );
    wait_waiting(&mut con, 1);
    assert_eq!(lock_info(&mut con, "kill").unwrap().waiters, 1);
    assert_eq!(release(&mut con, "kill", "holder"), 1);
    let (tb, _) = granted(b, "survivor");
    assert!(tb > t);
    let i = lock_info(&mut con, "kill").unwrap();
    assert_eq!(
        (i.owner.as_slice(), i.token, i.waiters),
        (&b"survivor"[..], tb, 0)
    );
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);

    // The only waiter killed: the next release frees the lock.
    let (id_c, c) = spawn_waiter(&server, b"kill", b"doomed2", 30_000, 20_000);
    wait_waiting(&mut con, 1);
    let killed: i64 = cmd("CLIENT")
        .arg("KILL")
        .arg("ID")
        .arg(id_c)
        .query(&mut con)
        .unwrap();
    assert_eq!(killed, 1);
    assert!(c.join().unwrap().0.is_err());
    wait_waiting(&mut con, 0);
    assert_eq!(release(&mut con, "kill", "survivor"), 1);
    assert!(
        !exists(&mut con, "kill"),
        "a killed waiter must not receive the lock"
    );
    assert_eq!(lock_info(&mut con, "kill"), None);
}

#[test]
fn del_of_lock_key_hands_it_to_next_waiter() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let t = try_acquire(&mut con, "del", "holder", 30_000).expect("granted");
    let (_, w) = spawn_waiter(&server, b"del", b"next", 25_000, 10_000);
    wait_waiting(&mut con, 1);
    let n: i64 = cmd("DEL").arg("del").query(&mut con).unwrap();
    assert_eq!(n, 1);
    let (tw, _) = granted(w, "waiter after DEL");
    assert!(tw > t);
    let i = lock_info(&mut con, "del").expect("handed to the waiter");
    assert_eq!(
        (i.owner.as_slice(), i.token, i.holds),
        (&b"next"[..], tw, 1)
    );
    assert_eq!(key_type(&mut con, "del"), "warden-lk");
    assert_eq!(
        release(&mut con, "del", "holder"),
        0,
        "the deleted holder no longer owns it"
    );
    wait_waiting(&mut con, 0);
}

#[test]
fn flushall_hands_lock_to_next_waiter() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let t = try_acquire(&mut con, "fl", "holder", 30_000).expect("granted");
    let _: () = cmd("SET").arg("other").arg("x").query(&mut con).unwrap();
    let (_, w) = spawn_waiter(&server, b"fl", b"next", 25_000, 10_000);
    wait_waiting(&mut con, 1);
    let _: () = cmd("FLUSHALL").query(&mut con).unwrap();
    let (tw, _) = granted(w, "waiter after FLUSHALL");
    assert!(tw > t);
    let i = lock_info(&mut con, "fl").expect("handed to the waiter");
    assert_eq!(
        (i.owner.as_slice(), i.token, i.holds),
        (&b"next"[..], tw, 1)
    );
    assert!(!exists(&mut con, "other"));
    wait_waiting(&mut con, 0);
}

#[test]
fn acquire_inside_multi_is_one_non_blocking_attempt() {
    let server = Server::start();
    let mut con = conn_t(&server);
    con.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let t = try_acquire(&mut con, "tx", "holder", 30_000).expect("granted");
    let (busy,): (Option<i64>,) = redis::pipe()
        .atomic()
        .cmd("DLOCK.ACQUIRE")
        .arg("tx")
        .arg("other")
        .arg(5_000)
        .arg("WAIT")
        .arg(0)
        .query(&mut con)
        .expect("EXEC must not block");
    assert_eq!(busy, None, "busy lock inside MULTI answers nil");
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
    assert_eq!(lock_info(&mut con, "tx").unwrap().waiters, 0);
    assert_eq!(release(&mut con, "tx", "holder"), 1);
    let (free,): (Option<i64>,) = redis::pipe()
        .atomic()
        .cmd("DLOCK.ACQUIRE")
        .arg("tx")
        .arg("other")
        .arg(5_000)
        .arg("WAIT")
        .arg(1_000)
        .query(&mut con)
        .unwrap();
    let t2 = free.expect("free lock inside MULTI is granted");
    assert!(t2 > t);
    let i = lock_info(&mut con, "tx").unwrap();
    assert_eq!((i.owner.as_slice(), i.token), (&b"other"[..], t2));
}

#[test]
fn acquire_inside_script_is_one_non_blocking_attempt() {
    let server = Server::start();
    let mut con = conn_t(&server);
    con.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    try_acquire(&mut con, "lua", "holder", 30_000).expect("granted");
    let script = "return redis.call('DLOCK.ACQUIRE', KEYS[1], ARGV[1], 5000, 'WAIT', 0)";
    let r: Option<i64> = cmd("EVAL")
        .arg(script)
        .arg(1)
        .arg("lua")
        .arg("other")
        .query(&mut con)
        .expect("EVAL");
    assert_eq!(r, None);
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
    assert_eq!(release(&mut con, "lua", "holder"), 1);
    let r: Option<i64> = cmd("EVAL")
        .arg(script)
        .arg(1)
        .arg("lua")
        .arg("other")
        .query(&mut con)
        .expect("EVAL");
    assert!(r.is_some());
    assert_eq!(lock_info(&mut con, "lua").unwrap().owner, b"other");
}

// ---------------------------------------------------------------------------------------
// 6. Fencing tokens on one server (restart and promotion: dlock_persistence.rs)
// ---------------------------------------------------------------------------------------

#[test]
fn tokens_increase_across_rapid_release_and_del() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let mut tokens = Vec::new();
    for i in 0..200 {
        let owner = format!("o{}", i % 3);
        tokens.push(try_acquire(&mut con, "fast", &owner, 10_000).expect("free"));
        if i % 2 == 0 {
            assert_eq!(release(&mut con, "fast", &owner), 1);
        } else {
            let n: i64 = cmd("DEL").arg("fast").query(&mut con).unwrap();
            assert_eq!(n, 1);
        }
    }
    assert_strictly_increasing(&tokens, "back-to-back grants after release/DEL");
}

#[test]
fn tokens_increase_across_release_expiry_del_and_debug_reload() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let mut tokens = Vec::new();

    tokens.push(try_acquire(&mut con, "fence", "a", 30_000).unwrap());
    assert_eq!(release(&mut con, "fence", "a"), 1);

    tokens.push(try_acquire(&mut con, "fence", "b", 50).unwrap());
    assert!(
        wait_until(Duration::from_secs(5), || !exists(&mut con, "fence")),
        "lock never expired"
    );

    tokens.push(try_acquire(&mut con, "fence", "c", 30_000).unwrap());
    let n: i64 = cmd("DEL").arg("fence").query(&mut con).unwrap();
    assert_eq!(n, 1);

    tokens.push(try_acquire(&mut con, "fence", "d", 30_000).unwrap());
    let _: () = cmd("DEBUG").arg("RELOAD").query(&mut con).unwrap();
    let i = lock_info(&mut con, "fence").expect("survives DEBUG RELOAD");
    assert_eq!(
        (i.owner.as_slice(), i.token),
        (&b"d"[..], *tokens.last().unwrap())
    );
    assert_eq!(release(&mut con, "fence", "d"), 1);
    tokens.push(try_acquire(&mut con, "fence", "e", 30_000).unwrap());

    // Free key across DEBUG RELOAD.
    assert_eq!(release(&mut con, "fence", "e"), 1);
    let _: () = cmd("DEBUG").arg("RELOAD").query(&mut con).unwrap();
    tokens.push(try_acquire(&mut con, "fence", "f", 30_000).unwrap());
    let n: i64 = cmd("DEL").arg("fence").query(&mut con).unwrap();
    assert_eq!(n, 1);
    let _: () = cmd("DEBUG").arg("RELOAD").query(&mut con).unwrap();
    tokens.push(try_acquire(&mut con, "fence", "g", 30_000).unwrap());

    assert_strictly_increasing(&tokens, "release / expiry / DEL / DEBUG RELOAD");
}

#[test]
fn tokens_increase_across_rapid_expiry() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let mut tokens = vec![try_acquire(&mut con, "blink", "o0", 1).unwrap()];
    for i in 1..30 {
        let owner = format!("o{i}");
        let mut t = None;
        assert!(wait_until(Duration::from_secs(5), || {
            t = try_acquire(&mut con, "blink", &owner, 1);
            t.is_some()
        }));
        tokens.push(t.unwrap());
    }
    assert_strictly_increasing(&tokens, "grants after 1 ms expiries");
}

// ---------------------------------------------------------------------------------------
// 9. Bad input
// ---------------------------------------------------------------------------------------

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let mut server = Server::start();
    let mut con = conn_t(&server);
    con.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let t = try_acquire(&mut con, "k", "a", 30_000).expect("granted");
    assert_eq!(reenter(&mut con, "k", "a", 30_000), Some(t));
    let _: () = cmd("SET").arg("s").arg("v").query(&mut con).unwrap();
    let _: () = cmd("RPUSH")
        .arg("l")
        .arg("x")
        .arg("y")
        .query(&mut con)
        .unwrap();
    let before = lock_info(&mut con, "k").unwrap();
    assert_eq!(before.holds, 2);
    let g0 = warden_stat(&mut con, "locks_granted");
    let c0 = warden_stat(&mut con, "locks_contended");
    let h0 = warden_stat(&mut con, "locks_handed_off");
    let mut tap = server.replication_tap();

    let bad_ttls = ["0", "-5", "-1", "abc", "1.5", "", "1e3"];
    let out_of_range_ttls = [
        "315360000001",
        "18445000000000000",
        "9223372036854775807",
        "99999999999999999999",
    ];
    let mut cases: Vec<(&str, Vec<&str>, String)> = vec![
        ("DLOCK.ACQUIRE", vec![], arity_err("dlock.acquire")),
        ("DLOCK.ACQUIRE", vec!["k"], arity_err("dlock.acquire")),
        ("DLOCK.ACQUIRE", vec!["k", "a"], arity_err("dlock.acquire")),
        ("DLOCK.RELEASE", vec![], arity_err("dlock.release")),
        ("DLOCK.RELEASE", vec!["k"], arity_err("dlock.release")),
        (
            "DLOCK.RELEASE",
            vec!["k", "a", "extra"],
            arity_err("dlock.release"),
        ),
        ("DLOCK.EXTEND", vec![], arity_err("dlock.extend")),
        ("DLOCK.EXTEND", vec!["k"], arity_err("dlock.extend")),
        ("DLOCK.EXTEND", vec!["k", "a"], arity_err("dlock.extend")),
        (
            "DLOCK.EXTEND",
            vec!["k", "a", "100", "extra"],
            arity_err("dlock.extend"),
        ),
        ("DLOCK.INFO", vec![], arity_err("dlock.info")),
        ("DLOCK.INFO", vec!["k", "extra"], arity_err("dlock.info")),
        ("DLOCK.ACQUIRE", vec!["k", "", "100"], OWNER_ERR.to_string()),
        (
            "DLOCK.ACQUIRE",
            vec!["free", "", "100"],
            OWNER_ERR.to_string(),
        ),
        (
            "DLOCK.ACQUIRE",
            vec!["free", "", "100", "WAIT", "100"],
            OWNER_ERR.to_string(),
        ),
        ("DLOCK.RELEASE", vec!["k", ""], OWNER_ERR.to_string()),
        ("DLOCK.EXTEND", vec!["k", "", "100"], OWNER_ERR.to_string()),
        (
            "DLOCK.ACQUIRE",
            vec!["k", "a", "100", "WAIT", "-1"],
            TIMEOUT_ERR.to_string(),
        ),
        (
            "DLOCK.ACQUIRE",
            vec!["k", "b", "100", "WAIT", "-1"],
            TIMEOUT_ERR.to_string(),
        ),
        (
            "DLOCK.ACQUIRE",
            vec!["k", "b", "100", "WAIT", "abc"],
            TIMEOUT_ERR.to_string(),
        ),
        (
            "DLOCK.ACQUIRE",
            vec!["k", "b", "100", "WAIT", "1.5"],
            TIMEOUT_ERR.to_string(),
        ),
        (
            "DLOCK.ACQUIRE",
            vec!["k", "b", "100", "WAIT", ""],
            TIMEOUT_ERR.to_string(),
        ),
        (
            "DLOCK.ACQUIRE",
            vec!["k", "b", "100", "WAIT", "99999999999999999999"],
            TIMEOUT_RANGE_ERR.to_string(),
        ),
        (
            "DLOCK.ACQUIRE",
            vec!["free", "a", "100", "WAIT", "-1"],
            TIMEOUT_ERR.to_string(),
        ),
        (
            "DLOCK.ACQUIRE",
            vec!["k", "b", "100", "WAIT"],
            SYNTAX_ERR.to_string(),
        ),
        (
            "DLOCK.ACQUIRE",
            vec!["free", "a", "100", "WAIT"],
            SYNTAX_ERR.to_string(),
        ),
        (
            "DLOCK.ACQUIRE",
            vec!["k", "b", "100", "NOWAIT"],
            SYNTAX_ERR.to_string(),
        ),
        (
            "DLOCK.ACQUIRE",
            vec!["free", "a", "100", "BOGUS", "1"],
            SYNTAX_ERR.to_string(),
        ),
        (
            "DLOCK.ACQUIRE",
            vec!["k", "a", "100", "WAIT", "10", "extra"],
            SYNTAX_ERR.to_string(),
        ),
        (
            "DLOCK.ACQUIRE",
            vec!["s", "a", "100"],
            WRONGTYPE.to_string(),
        ),
        (
            "DLOCK.ACQUIRE",
            vec!["l", "a", "100"],
            WRONGTYPE.to_string(),
        ),
        (
            "DLOCK.ACQUIRE",
            vec!["s", "a", "100", "WAIT", "100"],
            WRONGTYPE.to_string(),
        ),
        ("DLOCK.RELEASE", vec!["s", "a"], WRONGTYPE.to_string()),
        ("DLOCK.RELEASE", vec!["l", "a"], WRONGTYPE.to_string()),
        ("DLOCK.EXTEND", vec!["s", "a", "100"], WRONGTYPE.to_string()),
        ("DLOCK.EXTEND", vec!["l", "a", "100"], WRONGTYPE.to_string()),
        ("DLOCK.INFO", vec!["s"], WRONGTYPE.to_string()),
        ("DLOCK.INFO", vec!["l"], WRONGTYPE.to_string()),
    ];
    for ttl in bad_ttls {
        cases.push(("DLOCK.ACQUIRE", vec!["k", "a", ttl], TTL_ERR.to_string()));
        cases.push(("DLOCK.ACQUIRE", vec!["k", "b", ttl], TTL_ERR.to_string()));
        cases.push(("DLOCK.ACQUIRE", vec!["free", "a", ttl], TTL_ERR.to_string()));
        cases.push((
            "DLOCK.ACQUIRE",
            vec!["free", "a", ttl, "WAIT", "100"],
            TTL_ERR.to_string(),
        ));
        cases.push(("DLOCK.EXTEND", vec!["k", "a", ttl], TTL_ERR.to_string()));
        cases.push(("DLOCK.EXTEND", vec!["free", "a", ttl], TTL_ERR.to_string()));
    }
    for ttl in out_of_range_ttls {
        for (name, args) in [
            ("DLOCK.ACQUIRE", vec!["k", "a", ttl]),
            ("DLOCK.ACQUIRE", vec!["free", "a", ttl, "WAIT", "100"]),
            ("DLOCK.ACQUIRE", vec!["k", "b", "100", "WAIT", ttl]),
            ("DLOCK.EXTEND", vec!["k", "a", ttl]),
        ] {
            let want = if args.get(3) == Some(&"WAIT") && args[4] == ttl {
                TIMEOUT_RANGE_ERR
            } else {
                TTL_RANGE_ERR
            };
            cases.push((name, args, want.to_string()));
        }
    }

    let start = Instant::now();
    for (name, args, want) in &cases {
        let mut c = cmd(name);
        for a in args {
            c.arg(*a);
        }
        let what = format!("{name} {args:?}");
        let got = expect_err(c.query::<Value>(&mut con), &what);
        assert_eq!(&got, want, "{what}");
        server.assert_alive();

        let now = lock_info(&mut con, "k").unwrap_or_else(|| panic!("{what} deleted the lock"));
        assert_eq!(
            (&now.owner, now.token, now.holds, now.waiters),
            (&before.owner, before.token, before.holds, before.waiters),
            "{what} changed the lock"
        );
        let slack = start.elapsed().as_millis() as i64 + 1_000;
        assert!(
            now.ttl_ms <= before.ttl_ms && now.ttl_ms >= before.ttl_ms - slack,
            "{what} changed the TTL: {} -> {}",
            before.ttl_ms,
            now.ttl_ms
        );
        assert!(!exists(&mut con, "free"), "{what} created a key");
        let s: String = cmd("GET").arg("s").query(&mut con).unwrap();
        assert_eq!(s, "v", "{what}");
        assert_eq!(pttl(&mut con, "s"), -1, "{what}");
        let l: Vec<String> = cmd("LRANGE")
            .arg("l")
            .arg(0)
            .arg(-1)
            .query(&mut con)
            .unwrap();
        assert_eq!(l, ["x", "y"], "{what}");
        let n: i64 = cmd("DBSIZE").query(&mut con).unwrap();
        assert_eq!(n, 3, "{what}");
    }
    assert_eq!(
        warden_stat(&mut con, "locks_granted"),
        g0,
        "errors are no grants"
    );
    assert_eq!(
        warden_stat(&mut con, "locks_contended"),
        c0,
        "errors are no contention"
    );
    assert_eq!(warden_stat(&mut con, "locks_handed_off"), h0);
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);

    // Nothing reached the replication stream.
    let _: () = cmd("SET")
        .arg("__mark__")
        .arg("end")
        .query(&mut con)
        .unwrap();
    let mut seen = Vec::new();
    loop {
        let c = tap
            .next_command(Duration::from_secs(5))
            .expect("marker never arrived");
        if c.len() == 3 && c[0].eq_ignore_ascii_case("SET") && c[1] == "__mark__" {
            break;
        }
        if !c[0].eq_ignore_ascii_case("MULTI") && !c[0].eq_ignore_ascii_case("EXEC") {
            seen.push(c);
        }
    }
    assert!(seen.is_empty(), "refused commands propagated: {seen:?}");

    // The lock still works normally.
    assert_eq!(release(&mut con, "k", "a"), 1);
    assert_eq!(release(&mut con, "k", "a"), 1);
    assert!(!exists(&mut con, "k"));
    server.assert_alive();
}

#[test]
fn wait_option_is_case_insensitive() {
    let server = Server::start();
    let mut con = conn_t(&server);
    try_acquire(&mut con, "ci", "holder", 30_000).unwrap();
    let r: Option<i64> = cmd("DLOCK.ACQUIRE")
        .arg("ci")
        .arg("b")
        .arg(1_000)
        .arg("wait")
        .arg(50)
        .query(&mut con)
        .unwrap();
    assert_eq!(r, None);
    let r: Option<i64> = cmd("DLOCK.ACQUIRE")
        .arg("ci2")
        .arg("b")
        .arg(1_000)
        .arg("Wait")
        .arg(50)
        .query(&mut con)
        .unwrap();
    assert!(r.is_some());
}

#[test]
fn binary_keys_and_owners() {
    let mut server = Server::start();
    let mut con = conn_t(&server);
    let key: &[u8] = b"\xff\x00lock\xfe";
    let owner: &[u8] = b"\x80\x81\x00own\xc3";
    let t = try_acquire(&mut con, key, owner, 30_000).expect("granted");
    let i = lock_info(&mut con, key).unwrap();
    assert_eq!(i.owner, owner, "owner bytes round-trip exactly");
    assert_eq!(key_type(&mut con, key), "warden-lk");
    assert_eq!(
        reenter(&mut con, key, owner, 30_000),
        Some(t),
        "re-entry with the same bytes"
    );
    assert_eq!(
        try_acquire(&mut con, key, &b"\x80\x81"[..], 30_000),
        None,
        "prefix before NUL is another owner"
    );
    assert_eq!(
        try_acquire(&mut con, key, &b"\x80\x81\x00own\xc4"[..], 30_000),
        None
    );
    assert_eq!(release(&mut con, key, &b"\x80\x81"[..]), 0);
    assert_eq!(release(&mut con, key, &b"\x80\x81\x00own"[..]), 0);
    assert_eq!(extend(&mut con, key, &b"\x80\x81"[..], 60_000), 0);
    // Keys differing only after a NUL are different locks.
    let ta = try_acquire(&mut con, &b"a\x00b"[..], &b"x"[..], 30_000).expect("granted");
    let tb = try_acquire(&mut con, &b"a\x00c"[..], &b"y"[..], 30_000).expect("another key, free");
    assert!(ta > 0 && tb > 0);
    assert_eq!(lock_info(&mut con, &b"a\x00b"[..]).unwrap().owner, b"x");
    assert_eq!(lock_info(&mut con, &b"a\x00c"[..]).unwrap().owner, b"y");
    assert_eq!(lock_info(&mut con, "a").map(|i| i.owner), None);

    assert_eq!(extend(&mut con, key, owner, 60_000), 1);
    assert_eq!(release(&mut con, key, owner), 1);
    assert_eq!(lock_info(&mut con, key).unwrap().holds, 1);
    assert_eq!(release(&mut con, key, owner), 1);
    assert!(!exists(&mut con, key));
    server.assert_alive();
}

// ---------------------------------------------------------------------------------------
// 10. dlock-max-waiters
// ---------------------------------------------------------------------------------------

const TOO_MANY: &str = "ERR too many waiters for this lock";

#[test]
fn max_waiters_from_module_argument() {
    let server = Server::start_with(&[], &["dlock-max-waiters", "2"]);
    let mut con = conn_t(&server);
    let cfg: Vec<String> = cmd("CONFIG")
        .arg("GET")
        .arg("warden.dlock-max-waiters")
        .query(&mut con)
        .unwrap();
    assert_eq!(cfg, ["warden.dlock-max-waiters", "2"]);
    let t = try_acquire(&mut con, "mw", "holder", 30_000).unwrap();
    let (_, w1) = spawn_waiter(&server, b"mw", b"w1", 30_000, 10_000);
    wait_waiting(&mut con, 1);
    let (_, w2) = spawn_waiter(&server, b"mw", b"w2", 30_000, 10_000);
    wait_waiting(&mut con, 2);
    let e = expect_err(
        acquire_wait(&mut con, "mw", "w3", 30_000, 10_000),
        "third waiter",
    );
    assert_eq!(e, TOO_MANY);
    let e = expect_err(
        acquire_wait(&mut con, "mw", "w3", 30_000, 0),
        "third waiter, WAIT 0",
    );
    assert_eq!(e, TOO_MANY);
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 2);
    assert_eq!(lock_info(&mut con, "mw").unwrap().waiters, 2);
    // A non-blocking attempt is still an ordinary nil.
    assert_eq!(try_acquire(&mut con, "mw", "w3", 30_000), None);
    // The limit is per key.
    try_acquire(&mut con, "mw-other", "holder", 30_000).unwrap();
    let (_, o1) = spawn_waiter(&server, b"mw-other", b"o1", 30_000, 10_000);
    wait_waiting(&mut con, 3);

    assert_eq!(release(&mut con, "mw", "holder"), 1);
    let (t1, _) = granted(w1, "w1");
    assert!(t1 > t);
    // One slot free again: a new waiter is accepted.
    let (_, w3) = spawn_waiter(&server, b"mw", b"w3", 30_000, 10_000);
    wait_waiting(&mut con, 3);
    assert_eq!(release(&mut con, "mw", "w1"), 1);
    let (t2, _) = granted(w2, "w2");
    assert_eq!(release(&mut con, "mw", "w2"), 1);
    let (t3, _) = granted(w3, "w3");
    assert!(t1 < t2 && t2 < t3);
    assert_eq!(release(&mut con, "mw-other", "holder"), 1);
    granted(o1, "o1");
    wait_waiting(&mut con, 0);
}

#[test]
fn max_waiters_via_config_set() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("warden.dlock-max-waiters")
        .arg(1)
        .query(&mut con)
        .unwrap();
    let cfg: Vec<String> = cmd("CONFIG")
        .arg("GET")
        .arg("warden.dlock-max-waiters")
        .query(&mut con)
        .unwrap();
    assert_eq!(cfg, ["warden.dlock-max-waiters", "1"]);
    let bad: redis::RedisResult<()> = cmd("CONFIG")
        .arg("SET")
        .arg("warden.dlock-max-waiters")
        .arg("abc")
        .query(&mut con);
    assert!(bad.is_err(), "non-numeric config value is refused");
    try_acquire(&mut con, "cs", "holder", 30_000).unwrap();
    let (_, w1) = spawn_waiter(&server, b"cs", b"w1", 30_000, 10_000);
    wait_waiting(&mut con, 1);
    let e = expect_err(
        acquire_wait(&mut con, "cs", "w2", 30_000, 10_000),
        "second waiter",
    );
    assert_eq!(e, TOO_MANY);
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 1);

    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("warden.dlock-max-waiters")
        .arg(2)
        .query(&mut con)
        .unwrap();
    let (_, w2) = spawn_waiter(&server, b"cs", b"w2", 30_000, 10_000);
    wait_waiting(&mut con, 2);
    let e = expect_err(
        acquire_wait(&mut con, "cs", "w3", 30_000, 10_000),
        "third waiter",
    );
    assert_eq!(e, TOO_MANY);

    assert_eq!(release(&mut con, "cs", "holder"), 1);
    granted(w1, "w1");
    assert_eq!(release(&mut con, "cs", "w1"), 1);
    granted(w2, "w2");
    assert_eq!(release(&mut con, "cs", "w2"), 1);
    wait_waiting(&mut con, 0);
    assert!(!exists(&mut con, "cs"));
}
