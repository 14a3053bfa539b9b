//! Integration tests for the distributed locks (`DLOCK.*`) of warden: mutual
//! exclusion, ownership, EXTEND, re-entrance, the DLOCK.INFO reply, INFO counters and
//! fencing tokens on one server. Waiting (expiry, WAIT, dlock-max-waiters) is in
//! `tests/it/lock/waiting.rs`, bad input in `tests/it/lock/errors.rs`, replication and
//! persistence in `tests/it/lock/persistence.rs`.

use crate::common::server_ops::assert_same_dataset;
use crate::common::waiter::*;
use crate::common::*;
use crate::lock::support::*;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// 1. Seed scenario: 5 workers, one shared counter
// ---------------------------------------------------------------------------------------

#[test]
fn seed_five_workers_increment_counter_without_overlap() {
    let (server, mut con) = lock_server();
    let _: () = query!(&mut con, "SET", "counter", 0);
    let inside = Arc::new(AtomicBool::new(false));
    let overlaps = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for i in 1..=5 {
        let inside = inside.clone();
        let overlaps = overlaps.clone();
        let h = spawn_client(&server, move |con| {
            let owner = format!("worker{i}");
            let token = wait_granted(con, "counter-lock", &owner, (10_000, 10_000));
            let granted_at = Instant::now();
            if inside.swap(true, Ordering::SeqCst) {
                overlaps.fetch_add(1, Ordering::SeqCst);
            }
            let v: i64 = query!(con, "GET", "counter");
            thread::sleep(Duration::from_millis(20));
            let _: () = query!(con, "SET", "counter", v + 1);
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
    let counter: i64 = query!(&mut con, "GET", "counter");
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
    let (server, mut con) = lock_server();
    let _: () = query!(&mut con, "SET", "stress-counter", 0);
    let tokens = Arc::new(Mutex::new(Vec::with_capacity(CLIENTS * ROUNDS)));
    let inside = Arc::new(AtomicBool::new(false));
    let overlaps = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for i in 0..CLIENTS {
        let tokens = tokens.clone();
        let inside = inside.clone();
        let overlaps = overlaps.clone();
        let h = spawn_client(&server, move |con| {
            let owner = format!("client-{i}");
            for _ in 0..ROUNDS {
                let token = wait_granted(con, "stress-lock", &owner, (10_000, 25_000));
                if inside.swap(true, Ordering::SeqCst) {
                    overlaps.fetch_add(1, Ordering::SeqCst);
                }
                tokens.lock().unwrap().push(token);
                let v: i64 = query!(con, "GET", "stress-counter");
                let _: () = query!(con, "SET", "stress-counter", v + 1);
                inside.store(false, Ordering::SeqCst);
                assert_eq!(release(con, "stress-lock", &owner), 1);
            }
        });
        handles.push(h);
    }
    for h in handles {
        h.join().expect("client thread panicked");
    }
    let counter: i64 = query!(&mut con, "GET", "stress-counter");
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
    let (_server, mut con) = lock_server();
    let t = try_acquire(&mut con, "own", "alice", 10_000).expect("free lock is granted");
    let before = lock_info(&mut con, "own").expect("held");
    assert_eq!(before.owner, b"alice");
    assert_eq!(before.token, t);
    assert_eq!(before.holds, 1);

    // Another owner can neither release nor extend.
    assert_eq!(release(&mut con, "own", "bob"), 0);
    assert_eq!(extend(&mut con, "own", "bob", 50_000), 0);
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
    // A free lock can neither be released nor extended.
    assert_eq!(release(&mut con, "own", "alice"), 0);
    assert_eq!(extend(&mut con, "own", "alice", 1_000), 0);
    assert!(!exists(&mut con, "own"), "EXTEND never creates the key");
    assert_eq!(extend(&mut con, "never", "alice", 1_000), 0);
    assert!(!exists(&mut con, "never"));
}

/// SPEC: `TOKEN t` on RELEASE and EXTEND acts only on the grant that carried `t`. A
/// stale process that reuses an owner name (a restarted worker with the same
/// host:pid) cannot free or extend the newer grant; denied calls replicate nothing; the
/// current token's RELEASE and EXTEND work and reach the replica.
#[test]
fn a_token_from_an_older_grant_neither_releases_nor_extends_the_newer_one() {
    let server = Server::start();
    let mut replica = server.start_streaming_replica();
    let mut con = conn_t(&server);
    let old = try_acquire(&mut con, "tok", "host:7", 50).expect("granted");
    assert!(wait_until(Duration::from_secs(2), || !exists(
        &mut con, "tok"
    )));
    let new = try_acquire(&mut con, "tok", "host:7", 60_000).expect("granted again");
    assert!(new > old);
    let mut tap = server.replication_tap();
    let with_token = |c: &str, token: i64, ttl: Option<i64>| {
        let mut call = cmd(c);
        call.arg("tok").arg("host:7");
        if let Some(ttl) = ttl {
            call.arg(ttl);
        }
        call.arg("TOKEN").arg(token);
        call
    };
    let extended: i64 = with_token("DLOCK.EXTEND", old, Some(1_000))
        .query(&mut con)
        .unwrap();
    let released: i64 = with_token("DLOCK.RELEASE", old, None)
        .query(&mut con)
        .unwrap();
    let other: i64 = with_token("DLOCK.RELEASE", new + 1, None)
        .query(&mut con)
        .unwrap();
    assert_eq!(
        (extended, released, other),
        (0, 0, 0),
        "stale tokens act on nothing"
    );
    let info = lock_info(&mut con, "tok").expect("still held");
    assert_eq!((info.token, info.holds), (new, 1));
    assert!(
        info.ttl_ms > 50_000,
        "the lease was not shortened: {info:?}"
    );
    let seen = without_multi_exec(tap.until_marker(&mut con, "__mark__", "denied"));
    let writes: Vec<_> = seen.iter().filter(|c| c[0].starts_with("DLOCK")).collect();
    assert!(
        writes.is_empty(),
        "denied calls replicate nothing: {seen:?}"
    );

    let extended: i64 = with_token("DLOCK.EXTEND", new, Some(5_000))
        .query(&mut con)
        .unwrap();
    assert_eq!(extended, 1);
    let p = pttl(&mut con, "tok");
    assert!(p > 0 && p <= 5_000, "EXTEND … TOKEN set the lease: {p}");
    let released: i64 = with_token("DLOCK.RELEASE", new, None)
        .query(&mut con)
        .unwrap();
    assert_eq!(released, 1);
    assert!(!exists(&mut con, "tok"));
    assert_same_dataset(&server, &replica, &["tok"], "released by token");
    assert!(!exists(&mut replica.conn(), "tok"));
    replica.assert_alive();
}

#[test]
fn extend_of_an_expired_lock_answers_zero_and_does_not_recreate_it() {
    let (_server, mut con) = lock_server();
    // Keep the expired key physically present until something touches it.
    let _: () = query!(&mut con, "DEBUG", "SET-ACTIVE-EXPIRE", 0);
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
    let (_server, mut con) = lock_server();
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
    let (_server, mut con) = lock_server();
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
    let r: Option<i64> = query!(
        &mut con,
        "DLOCK.ACQUIRE",
        "re",
        "alice",
        30_000,
        "WAIT",
        0,
        "REENTRANT"
    );
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
    let (server, mut con) = lock_server();
    let v: Value = query!(&mut con, "DLOCK.INFO", "shape");
    assert_eq!(v, Value::Nil, "DLOCK.INFO of a free lock is nil");
    let v: Value = query!(&mut con, "DLOCK.ACQUIRE", "shape", "alice", 10_000);
    let t = match v {
        Value::Int(t) => t,
        other => panic!("ACQUIRE must reply with an integer token, got {other:?}"),
    };
    let v: Value = query!(&mut con, "DLOCK.ACQUIRE", "shape", "bob", 10_000);
    assert_eq!(v, Value::Nil, "busy ACQUIRE replies nil");

    let v: Value = query!(&mut con, "DLOCK.INFO", "shape");
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
    let v3: Value = query!(&mut con3, "DLOCK.INFO", "shape");
    assert!(
        matches!(v3, Value::Map(_)),
        "RESP3 DLOCK.INFO must be a map, got {v3:?}"
    );
    let i3 = parse_info(&v3).unwrap();
    assert_eq!(
        (i3.owner.as_slice(), i3.token, i3.holds, i3.waiters),
        (&b"alice"[..], t, 1, 0)
    );
    let nil3: Value = query!(&mut con3, "DLOCK.INFO", "free-key");
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
    let (server, mut con) = lock_server();
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

    let w = Waiter::lock(&server, "cnt", "carol", 30_000, 10_000);
    wait_waiting(&mut con, 1);
    assert_eq!(
        warden_stat(&mut con, "locks_contended"),
        c0 + 2,
        "a blocking acquire found it busy"
    );
    assert_eq!(lock_info(&mut con, "cnt").unwrap().waiters, 1);

    assert_eq!(release(&mut con, "cnt", "alice"), 1);
    let (tc, _) = w.granted("carol");
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
// 6. Fencing tokens on one server (restart and promotion: dlock_persistence.rs)
// ---------------------------------------------------------------------------------------

#[test]
fn tokens_increase_across_rapid_release_and_del() {
    let (_server, mut con) = lock_server();
    let mut tokens = Vec::new();
    for i in 0..200 {
        let owner = format!("o{}", i % 3);
        tokens.push(try_acquire(&mut con, "fast", &owner, 10_000).expect("free"));
        if i % 2 == 0 {
            assert_eq!(release(&mut con, "fast", &owner), 1);
        } else {
            let n: i64 = query!(&mut con, "DEL", "fast");
            assert_eq!(n, 1);
        }
    }
    assert_strictly_increasing(&tokens, "back-to-back grants after release/DEL");
}

#[test]
fn tokens_increase_across_release_expiry_del_and_debug_reload() {
    let (_server, mut con) = lock_server();
    let mut tokens = Vec::new();

    tokens.push(try_acquire(&mut con, "fence", "a", 30_000).unwrap());
    assert_eq!(release(&mut con, "fence", "a"), 1);

    tokens.push(try_acquire(&mut con, "fence", "b", 50).unwrap());
    assert!(
        wait_until(Duration::from_secs(5), || !exists(&mut con, "fence")),
        "lock never expired"
    );

    tokens.push(try_acquire(&mut con, "fence", "c", 30_000).unwrap());
    let n: i64 = query!(&mut con, "DEL", "fence");
    assert_eq!(n, 1);

    tokens.push(try_acquire(&mut con, "fence", "d", 30_000).unwrap());
    let _: () = query!(&mut con, "DEBUG", "RELOAD");
    let i = lock_info(&mut con, "fence").expect("survives DEBUG RELOAD");
    assert_eq!(
        (i.owner.as_slice(), i.token),
        (&b"d"[..], *tokens.last().unwrap())
    );
    assert_eq!(release(&mut con, "fence", "d"), 1);
    tokens.push(try_acquire(&mut con, "fence", "e", 30_000).unwrap());

    // Free key across DEBUG RELOAD.
    assert_eq!(release(&mut con, "fence", "e"), 1);
    let _: () = query!(&mut con, "DEBUG", "RELOAD");
    tokens.push(try_acquire(&mut con, "fence", "f", 30_000).unwrap());
    let n: i64 = query!(&mut con, "DEL", "fence");
    assert_eq!(n, 1);
    let _: () = query!(&mut con, "DEBUG", "RELOAD");
    tokens.push(try_acquire(&mut con, "fence", "g", 30_000).unwrap());

    assert_strictly_increasing(&tokens, "release / expiry / DEL / DEBUG RELOAD");
}

#[test]
fn tokens_increase_across_rapid_expiry() {
    let (_server, mut con) = lock_server();
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
