//! Integration tests for the rate limiters (`RL.*`) of warden, black-box on a real
//! server: redis-cell compatible GCRA replies, idle keys expiring, COST 0 / denied calls
//! writing nothing, exact partial-refill waits and INFO counters. The token bucket is in
//! `tests/it/rate/token.rs`, persistence and replication in `tests/it/rate/persistence.rs`, bad
//! input in `tests/it/rate/errors.rs`.

use crate::common::*;
use crate::rate::support::*;

use std::time::Duration;

// ---------------------------------------------------------------------------------------
// 2. GCRA replies like redis-cell's CL.THROTTLE
// ---------------------------------------------------------------------------------------

#[test]
fn gcra_matches_redis_cell_example() {
    let (mut s, mut con) = Server::start_conn();
    let call: &[&str] = &["RL.GCRA", "user123", "15", "30", "60"];
    let r = rl_pipe(&mut con, &[call, call, call]);
    assert_eq!(r[0], vec![0, 16, 15, -1, 2]);
    assert_eq!(r[1], vec![0, 16, 14, -1, 4]);
    assert_eq!(r[2], vec![0, 16, 13, -1, 6]);
    assert_eq!(key_type(&mut con, "user123"), "warden-rl");
    let p = pttl(&mut con, "user123");
    assert!(p > 5000 && p <= 6000, "PTTL {p}");

    // Large burst and rate: remaining never exceeds the limit.
    let big: &[&str] = &["RL.GCRA", "big", "6000", "6000", "1"];
    let replies = rl_pipe(&mut con, &vec![big; 50]);
    for (i, r) in replies.iter().enumerate() {
        assert_eq!(r.len(), 5, "{r:?}");
        assert_eq!(r[0], 0, "call {i} not limited: {r:?}");
        assert_eq!(r[1], 6001, "call {i} limit: {r:?}");
        assert!(
            r[2] >= 0 && r[2] <= r[1],
            "call {i}: remaining {} above limit {}",
            r[2],
            r[1]
        );
        assert_eq!(r[3], -1, "call {i} retry_after: {r:?}");
    }

    // max_burst 0: one call per period, then limited with retry_after = period.
    let one: &[&str] = &["RL.GCRA", "one", "0", "1", "60"];
    let r = rl_pipe(&mut con, &[one, one]);
    assert_eq!(r[0], vec![0, 1, 0, -1, 60]);
    assert_eq!(r[1], vec![1, 1, 0, 60, 60]);
    // QUANTITY above the limit can never pass.
    let r = rl(&mut con, &["RL.GCRA", "q", "2", "1", "60", "QUANTITY", "4"]);
    assert_eq!(&r[..4], &[1, 3, 3, -1], "quantity above limit: {r:?}");
    assert!(!exists(&mut con, "q"));
    s.assert_alive();
}

// ---------------------------------------------------------------------------------------
// 3. Idle keys disappear; COST 0 and denied calls write nothing
// ---------------------------------------------------------------------------------------

#[test]
fn idle_limiter_keys_expire_when_full_again() {
    let (mut s, mut con) = Server::start_conn();
    let calls: &[(&[&str], i64)] = &[
        (&["RL.TOKEN", "it", "10/s", "5"], 100),
        (&["RL.LEAKY", "il", "10/s", "5"], 100),
        (&["RL.WINDOW", "iw", "5", "100"], 200),
        (&["RL.GCRA", "ig", "0", "10", "1"], 100),
    ];
    for (args, max_pttl) in calls {
        let r = rl(&mut con, args);
        let key = args[1];
        assert_eq!(key_type(&mut con, key), "warden-rl", "{args:?}");
        let p = pttl(&mut con, key);
        assert!(
            p > 0 && p <= *max_pttl,
            "{args:?}: PTTL {p}, want 1..={max_pttl} (reply {r:?})"
        );
        if r.len() == 4 {
            assert!(p <= r[3], "{args:?}: PTTL {p} beyond reset_ms {}", r[3]);
        }
    }
    // Several calls push the expiry out to when the bucket is full again.
    let r = rl(&mut con, &["RL.TOKEN", "it3", "10/s", "5", "COST", "3"]);
    assert_near(r[3], 300, 5, "reset after 3 tokens");
    let p = pttl(&mut con, "it3");
    assert!(p > 0 && p <= 300, "PTTL {p}");
    for key in ["it", "il", "iw", "ig", "it3"] {
        assert!(
            wait_until(Duration::from_secs(5), || !exists(&mut con, key)),
            "{key} still exists after it was full again"
        );
    }
    s.assert_alive();
}

#[test]
fn cost_zero_and_denied_calls_write_nothing() {
    let (mut s, mut con) = Server::start_conn();
    // COST 0 / QUANTITY 0 on missing keys: a look at a full limiter, no key.
    let r = rl(&mut con, &["RL.TOKEN", "z", "1", "5", "COST", "0"]);
    assert_eq!(r, vec![1, 5, 0, 0], "token look");
    let r = rl(
        &mut con,
        &["RL.TOKEN", "z", "1", "5", "COST", "0", "MAXWAIT", "1000"],
    );
    assert_eq!(r, vec![1, 5, 0, 0], "token look with MAXWAIT");
    let r = rl(&mut con, &["RL.LEAKY", "z", "1", "5", "COST", "0"]);
    assert_eq!(r, vec![1, 5, 0, 0], "leaky look");
    let r = rl(&mut con, &["RL.WINDOW", "z", "5", "1000", "COST", "0"]);
    assert_eq!(r, vec![1, 5, 0, 0], "window look");
    let r = rl(&mut con, &["RL.GCRA", "z", "5", "1", "60", "QUANTITY", "0"]);
    assert_eq!(&r[..4], &[0, 6, 6, -1], "gcra look: {r:?}");
    assert!(!exists(&mut con, "z"), "COST 0 created a key");
    let keys: i64 = query!(&mut con, "DBSIZE");
    assert_eq!(keys, 0);

    // Exhausted limiters with long periods.
    let setup: &[&[&str]] = &[
        &["RL.TOKEN", "t", "1/h", "2", "COST", "2"],
        &["RL.LEAKY", "l", "1/h", "2", "COST", "2"],
        &["RL.WINDOW", "w", "2", "3600000", "COST", "2"],
        &["RL.GCRA", "g", "1", "1", "3600", "QUANTITY", "2"],
    ];
    for r in rl_pipe(&mut con, setup) {
        assert_eq!(r[0], if r.len() == 4 { 1 } else { 0 }, "setup: {r:?}");
    }
    let looks_and_denials: &[&[&str]] = &[
        &["RL.TOKEN", "t", "1/h", "2"],
        &["RL.TOKEN", "t", "1/h", "2", "MAXWAIT", "1000"],
        &["RL.TOKEN", "t", "1/h", "2", "COST", "0"],
        &["RL.LEAKY", "l", "1/h", "2"],
        &["RL.LEAKY", "l", "1/h", "2", "COST", "0"],
        &["RL.WINDOW", "w", "2", "3600000"],
        &["RL.WINDOW", "w", "2", "3600000", "COST", "0"],
        &["RL.GCRA", "g", "1", "1", "3600"],
        &["RL.GCRA", "g", "1", "1", "3600", "QUANTITY", "0"],
    ];
    for args in looks_and_denials {
        let key = args[1];
        let (d0, p0) = (digest(&mut con, key), pttl(&mut con, key));
        assert_ne!(d0, MISSING_DIGEST);
        let r = rl(&mut con, args);
        let cost0 = args.contains(&"0");
        if !cost0 {
            let denied = if r.len() == 4 { r[0] == 0 } else { r[0] == 1 };
            assert!(denied, "{args:?} should be denied: {r:?}");
        }
        assert_eq!(digest(&mut con, key), d0, "{args:?} changed the state");
        let p1 = pttl(&mut con, key);
        assert!(
            p1 <= p0 && p1 > p0 - 1000,
            "{args:?} changed PTTL {p0} -> {p1}"
        );
    }
    // Sanity: the digest does see state changes.
    let d0 = digest(&mut con, "t");
    rl(
        &mut con,
        &["RL.TOKEN", "t", "1/h", "2", "MAXWAIT", "7200000"],
    );
    assert_ne!(
        digest(&mut con, "t"),
        d0,
        "an allowed call changes the digest"
    );
    s.assert_alive();
}

// ---------------------------------------------------------------------------------------
// 4. Deterministic partial-refill and weighting arithmetic
// ---------------------------------------------------------------------------------------

#[test]
fn partial_refill_waits_are_exact() {
    let (mut s, mut con) = Server::start_conn();
    // A token bucket and a leaky bucket of 2 per 3 s, used up: one more in 1.5 s.
    for (name, key, what) in [("RL.TOKEN", "t", "token"), ("RL.LEAKY", "l", "leaky")] {
        let use_all: &[&str] = &[name, key, "2/3s", "2", "COST", "2"];
        let r = rl_pipe(&mut con, &[use_all, &use_all[..4]]);
        assert_eq!(r[0], vec![1, 0, 0, 3000], "{what}: all used");
        assert_eq!(&r[1][..2], &[0, 0], "{what} denied: {r:?}");
        assert_near(r[1][2], 1500, 20, &format!("{what} wait for one of 2/3s"));
        if name == "RL.TOKEN" {
            assert_near(r[1][3], 3000, 20, "token reset");
        }
    }

    // Leaky: level 3 of 3 draining 1/s; 2 more fit once the level is 1.
    let r = rl_pipe(
        &mut con,
        &[
            &["RL.LEAKY", "l2", "1/s", "3", "COST", "3"],
            &["RL.LEAKY", "l2", "1/s", "3", "COST", "2"],
            &["RL.LEAKY", "l2", "1/s", "3", "COST", "4"],
        ],
    );
    assert_eq!(r[0], vec![1, 0, 0, 3000]);
    assert_eq!(&r[1][..2], &[0, 0], "{r:?}");
    assert_near(r[1][2], 2000, 20, "leaky wait for 2 of 3");
    assert_eq!(r[2], vec![0, 0, -1, r[2][3]], "cost above capacity");

    // Sliding window of 1 s, 10 counted at its start: one more fits once the
    // previous window weighs 9, i.e. 100 ms into the next window.
    let w: &[&str] = &["RL.WINDOW", "w", "10", "1000"];
    let mut calls = vec![w; 10];
    calls.push(&["RL.WINDOW", "w", "10", "1000", "COST", "11"]);
    let r = rl_pipe(&mut con, &calls);
    for (i, d) in r[..10].iter().enumerate() {
        assert_eq!(&d[..3], &[1, 9 - i as i64, 0], "window call {i}: {d:?}");
        assert_near(d[3], 2000, 20, "window reset");
    }
    let denied = rl(&mut con, w);
    assert_eq!(&denied[..2], &[0, 0], "window full: {denied:?}");
    assert_near(denied[2], 1100, 25, "window wait into the next window");
    assert_eq!(&r[10][..3], &[0, 0, -1], "cost above limit: {:?}", r[10]);
    let p = pttl(&mut con, "w");
    assert!(
        p > 0 && p <= 2000,
        "window key expires 2 windows after start: {p}"
    );

    // Window: all 2 used; in the next window 1 fits when the previous weighs 1.
    let r = rl_pipe(
        &mut con,
        &[
            &["RL.WINDOW", "w2", "2", "1000", "COST", "2"],
            &["RL.WINDOW", "w2", "2", "1000"],
        ],
    );
    assert_eq!(&r[0][..3], &[1, 0, 0]);
    assert_near(r[1][2], 1500, 20, "window wait for half a window");
    s.assert_alive();
}

// ---------------------------------------------------------------------------------------
// 9. INFO counters
// ---------------------------------------------------------------------------------------

#[test]
fn info_counts_allowed_and_denied_calls() {
    let (mut s, mut con) = Server::start_conn();
    let a0 = warden_stat(&mut con, "rl_allowed");
    let d0 = warden_stat(&mut con, "rl_denied");
    let calls: &[&[&str]] = &[
        &["RL.TOKEN", "t", "1/h", "2"],              // allowed
        &["RL.TOKEN", "t", "1/h", "2"],              // allowed
        &["RL.TOKEN", "t", "1/h", "2"],              // denied
        &["RL.LEAKY", "l", "1/h", "1"],              // allowed
        &["RL.LEAKY", "l", "1/h", "1"],              // denied
        &["RL.WINDOW", "w", "1", "3600000"],         // allowed
        &["RL.WINDOW", "w", "1", "3600000"],         // denied
        &["RL.GCRA", "g", "0", "1", "3600"],         // allowed
        &["RL.GCRA", "g", "0", "1", "3600"],         // denied
        &["RL.TOKEN", "c", "1/h", "2", "COST", "3"], // denied (never)
    ];
    rl_pipe(&mut con, calls);
    assert_eq!(warden_stat(&mut con, "rl_allowed") - a0, 5, "allowed");
    assert_eq!(warden_stat(&mut con, "rl_denied") - d0, 5, "denied");
    // Errors are not decisions.
    rl_err(&mut con, &["RL.TOKEN", "t", "abc", "2"]);
    assert_eq!(warden_stat(&mut con, "rl_allowed") - a0, 5);
    assert_eq!(warden_stat(&mut con, "rl_denied") - d0, 5);
    s.assert_alive();
}
