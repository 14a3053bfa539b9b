//! Integration tests for the rate limiters (`RL.*`) of warden, black-box on a real
//! server: the golang.org/x/time/rate reservation scenario, redis-cell compatible GCRA
//! replies, rate syntax, idle keys expiring, COST 0 / denied calls writing nothing,
//! persistence (DEBUG RELOAD, RDB, AOF rewrite with and without the RDB preamble,
//! DUMP/RESTORE, COPY), no replay of time-dependent commands on a later clock,
//! replication (stream content and replica digests), bad input and INFO counters.

mod common;
use common::*;

use std::collections::BTreeMap;
use std::time::Duration;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

const RATE_ERR: &str =
    "ERR rate must be a non-negative number, inf, or count/period such as 100/s or 300/15m";
const BURST_ERR: &str = "ERR burst must be a non-negative integer";
const CAPACITY_ERR: &str = "ERR capacity must be a positive integer";
const LIMIT_ERR: &str = "ERR limit must be a positive integer";
const WINDOW_ERR: &str = "ERR window must be a positive integer";
const COST_ERR: &str = "ERR cost must be a non-negative integer";
const MAXWAIT_ERR: &str = "ERR maxwait must be a non-negative integer";
const MAX_BURST_ERR: &str = "ERR max_burst must be a non-negative integer";
const COUNT_ERR: &str = "ERR count must be a positive integer";
const PERIOD_ERR: &str = "ERR period must be a positive integer";
const QUANTITY_ERR: &str = "ERR quantity must be a non-negative integer";
const WINDOW_RANGE_ERR: &str = "ERR window is out of range";
const OVERFLOW_ERR: &str = "ERR rate limiter arithmetic would overflow";
const SYNTAX_ERR: &str = "ERR syntax error";
const WRONGTYPE_ERR: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const KIND_ERR: &str = "ERR key holds a different kind of rate limiter";
const MISSING_DIGEST: &str = "0000000000000000000000000000000000000000";

/// A command from text arguments (the first is the command name).
fn command(args: &[&str]) -> redis::Cmd {
    let mut c = cmd(args[0]);
    for a in &args[1..] {
        c.arg(*a);
    }
    c
}

fn try_rl(con: &mut Connection, args: &[&str]) -> redis::RedisResult<Vec<i64>> {
    command(args).query(con)
}

/// Runs an `RL.*` command that must succeed and returns its integer array.
fn rl(con: &mut Connection, args: &[&str]) -> Vec<i64> {
    try_rl(con, args).unwrap_or_else(|e| panic!("{args:?} failed: {}", err_text(&e)))
}

/// Runs a command that must fail and returns its error text.
fn rl_err(con: &mut Connection, args: &[&str]) -> String {
    match command(args).query::<Value>(con) {
        Ok(v) => panic!("{args:?} should have failed, replied {v:?}"),
        Err(e) => err_text(&e),
    }
}

/// Pipelines the commands in one round trip and returns their replies.
fn rl_pipe(con: &mut Connection, calls: &[&[&str]]) -> Vec<Vec<i64>> {
    let mut p = redis::pipe();
    for args in calls {
        p.add_command(command(args));
    }
    p.query(con)
        .unwrap_or_else(|e| panic!("pipeline {calls:?} failed: {}", err_text(&e)))
}

/// Absolute expiry in ms (-1: none, -2: no key).
fn pexpiretime<K: redis::ToRedisArgs>(con: &mut Connection, key: K) -> i64 {
    cmd("PEXPIRETIME").arg(key).query(con).expect("PEXPIRETIME")
}

fn active_expire_off(con: &mut Connection) {
    let _: () = cmd("DEBUG")
        .arg("SET-ACTIVE-EXPIRE")
        .arg(0)
        .query(con)
        .expect("DEBUG SET-ACTIVE-EXPIRE 0");
}

fn assert_near(got: i64, want: i64, tol: i64, what: &str) {
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got}, want {want} ± {tol}"
    );
}

/// Waits until no AOF rewrite is running or scheduled.
fn wait_aof_rewrite_done(con: &mut Connection) {
    assert!(
        wait_until(Duration::from_secs(20), || {
            info_field(con, "persistence", "aof_rewrite_in_progress").as_deref() == Some("0")
                && info_field(con, "persistence", "aof_rewrite_scheduled").as_deref() == Some("0")
        }),
        "AOF rewrite did not finish"
    );
}

/// Limiters of every kind in varied states (fresh, partly used, exhausted, in debt,
/// never refilling), all with long periods so none expires during a test.
/// Returns the keys written.
fn populate(con: &mut Connection) -> Vec<&'static str> {
    let calls: &[&[&str]] = &[
        &["RL.TOKEN", "p:tok", "1/h", "5"],
        &["RL.TOKEN", "p:tok", "1/h", "5", "COST", "2"],
        &["RL.TOKEN", "p:debt", "1/m", "2", "COST", "2"],
        &["RL.TOKEN", "p:debt", "1/m", "2", "MAXWAIT", "600000"],
        &[
            "RL.TOKEN", "p:debt", "1/m", "2", "COST", "2", "MAXWAIT", "600000",
        ],
        &["RL.TOKEN", "p:zero", "0", "3"],
        &["RL.LEAKY", "p:leaky", "1/h", "10", "COST", "7"],
        &["RL.LEAKY", "p:leaky", "1/h", "10", "COST", "2"],
        &["RL.WINDOW", "p:win", "10", "3600000", "COST", "4"],
        &["RL.WINDOW", "p:win", "10", "3600000", "COST", "3"],
        &["RL.GCRA", "p:gcra", "3", "1", "600"],
        &["RL.GCRA", "p:gcra", "3", "1", "600", "QUANTITY", "2"],
        &["RL.GCRA", "p:lim", "0", "1", "600"],
    ];
    for r in rl_pipe(con, calls) {
        assert_eq!(r[0], if r.len() == 4 { 1 } else { 0 }, "setup call allowed");
    }
    vec![
        "p:tok", "p:debt", "p:zero", "p:leaky", "p:win", "p:gcra", "p:lim",
    ]
}

type Snapshot = BTreeMap<&'static str, (String, i64)>;

fn snapshot(con: &mut Connection, keys: &[&'static str]) -> Snapshot {
    keys.iter()
        .map(|k| {
            assert_eq!(key_type(con, *k), "warden-rl", "TYPE {k}");
            (*k, (digest(con, *k), pttl(con, *k)))
        })
        .collect()
}

/// Every key keeps its digest, and its PTTL is not longer than before (-1 stays -1).
fn assert_same_state(con: &mut Connection, before: &Snapshot, when: &str) {
    for (k, (d, p)) in before {
        assert_eq!(key_type(con, *k), "warden-rl", "{when}: TYPE {k}");
        assert_eq!(&digest(con, *k), d, "{when}: digest of {k}");
        let now = pttl(con, *k);
        if *p == -1 {
            assert_eq!(now, -1, "{when}: {k} had no expiry");
        } else {
            assert!(
                now > 0 && now <= *p,
                "{when}: PTTL of {k} was {p}, now {now}"
            );
        }
    }
}

/// The decisions a populated dataset must still make (long periods, so they do not
/// depend on how much time passed in a test).
fn assert_populated_decisions(con: &mut Connection, when: &str) {
    // p:lim is limited for about 600 s.
    let g = rl(con, &["RL.GCRA", "p:lim", "0", "1", "600"]);
    assert_eq!(g[0], 1, "{when}: p:lim still limited: {g:?}");
    assert!(g[3] > 500 && g[3] <= 600, "{when}: p:lim retry: {g:?}");
    // p:debt owes tokens: a plain call is denied.
    let t = rl(con, &["RL.TOKEN", "p:debt", "1/m", "2"]);
    assert_eq!(t[0], 0, "{when}: p:debt denied: {t:?}");
    assert!(t[2] > 60_000, "{when}: p:debt wait: {t:?}");
    // p:zero never refills: 2 tokens left, then nothing, forever.
    let z = rl(con, &["RL.TOKEN", "p:zero", "0", "3", "COST", "3"]);
    assert_eq!(z, vec![0, 2, -1, -1], "{when}: p:zero");
    // p:leaky holds 9 of 10.
    let l = rl(con, &["RL.LEAKY", "p:leaky", "1/h", "10", "COST", "2"]);
    assert_eq!(&l[..2], &[0, 1], "{when}: p:leaky: {l:?}");
    // p:win counted 7 of 10.
    let w = rl(con, &["RL.WINDOW", "p:win", "10", "3600000", "COST", "4"]);
    assert_eq!(&w[..2], &[0, 3], "{when}: p:win: {w:?}");
}

// ---------------------------------------------------------------------------------------
// 1. The golang.org/x/time/rate reservation scenario
// ---------------------------------------------------------------------------------------

#[test]
fn token_maxwait_reservations_follow_x_time_rate() {
    let mut s = Server::start();
    let mut con = s.conn();
    let call: &[&str] = &["RL.TOKEN", "k", "1", "2", "MAXWAIT", "100000"];
    let replies = rl_pipe(&mut con, &[call, call, call, call, call]);
    let want_wait = [0, 0, 1000, 2000, 3000];
    for (i, r) in replies.iter().enumerate() {
        assert_eq!(r.len(), 4, "call {i}: {r:?}");
        assert_eq!(r[0], 1, "call {i} allowed: {r:?}");
        assert_eq!(
            r[1],
            if i == 0 { 1 } else { 0 },
            "call {i} remaining: {r:?}"
        );
        assert!(
            r[2] <= want_wait[i] && r[2] >= want_wait[i] - 20,
            "call {i}: wait_ms {} should be about {} (replies {replies:?})",
            r[2],
            want_wait[i]
        );
        // Full again when the debt is paid and the burst refilled: (i + 1) s.
        assert_near(r[3], 1000 * (i as i64 + 1), 20, "reset_ms");
    }
    // The bucket owes 3 tokens: without MAXWAIT the next token is 4 s away; with a
    // MAXWAIT of 500 ms the call could be reserved 500 ms earlier.
    let r = rl_pipe(
        &mut con,
        &[
            &["RL.TOKEN", "k", "1", "2"],
            &["RL.TOKEN", "k", "1", "2", "MAXWAIT", "500"],
            &["RL.TOKEN", "k", "1", "2", "MAXWAIT", "0"],
        ],
    );
    assert_eq!(&r[0][..2], &[0, 0], "denied in debt: {r:?}");
    assert_near(r[0][2], 4000, 30, "retry without MAXWAIT");
    assert_eq!(&r[1][..2], &[0, 0], "denied with short MAXWAIT: {r:?}");
    assert_near(r[1][2], 3500, 30, "retry with MAXWAIT 500");
    assert_eq!(&r[2][..2], &[0, 0], "MAXWAIT 0 is no wait: {r:?}");
    assert_near(r[2][2], 4000, 30, "retry with MAXWAIT 0");
    for d in &r {
        assert_near(d[3], 5000, 30, "denied calls leave reset_ms");
    }
    // A reservation that fits MAXWAIT exactly is taken.
    let ok = rl(&mut con, &["RL.TOKEN", "k", "1", "2", "MAXWAIT", "100000"]);
    assert_eq!(ok[0], 1, "{ok:?}");
    assert!(ok[2] > 3900 && ok[2] <= 4000, "{ok:?}");
    s.assert_alive();
}

#[test]
fn token_edge_cases_inf_zero_burst_zero_rate_cost_above_burst() {
    let mut s = Server::start();
    let mut con = s.conn();
    // inf allows everything and writes no key.
    for cost in ["1", "1000000", "0"] {
        let r = rl(&mut con, &["RL.TOKEN", "inf", "inf", "0", "COST", cost]);
        assert_eq!((r[0], r[2]), (1, 0), "inf COST {cost}: {r:?}");
        assert!(!exists(&mut con, "inf"), "inf wrote a key");
    }
    let r = rl(&mut con, &["RL.TOKEN", "inf", "inf", "5"]);
    assert_eq!((r[0], r[2], r[3]), (1, 0, 0), "inf: {r:?}");
    assert!(!exists(&mut con, "inf"));
    // burst 0 denies everything else, for ever.
    let r = rl(&mut con, &["RL.TOKEN", "b0", "1000/s", "0"]);
    assert_eq!(&r[..3], &[0, 0, -1], "burst 0: {r:?}");
    let r = rl(
        &mut con,
        &["RL.TOKEN", "b0", "1000/s", "0", "MAXWAIT", "100000"],
    );
    assert_eq!(&r[..3], &[0, 0, -1], "burst 0 with MAXWAIT: {r:?}");
    assert!(!exists(&mut con, "b0"));
    // cost above burst can never pass, even with MAXWAIT.
    let r = rl(&mut con, &["RL.TOKEN", "c", "1", "2", "COST", "3"]);
    assert_eq!(r, vec![0, 2, -1, 0], "cost above burst");
    let r = rl(
        &mut con,
        &["RL.TOKEN", "c", "1", "2", "COST", "3", "MAXWAIT", "100000"],
    );
    assert_eq!(r, vec![0, 2, -1, 0], "cost above burst with MAXWAIT");
    assert!(!exists(&mut con, "c"));
    // rate 0: the burst is spent once, never refilled; the key never expires.
    let r = rl(&mut con, &["RL.TOKEN", "z", "0", "2"]);
    assert_eq!(r, vec![1, 1, 0, -1], "rate 0 first call");
    assert_eq!(pttl(&mut con, "z"), -1, "rate 0 key has no expiry");
    let r = rl(&mut con, &["RL.TOKEN", "z", "0", "2"]);
    assert_eq!(r, vec![1, 0, 0, -1], "rate 0 second call");
    let r = rl(&mut con, &["RL.TOKEN", "z", "0", "2", "MAXWAIT", "100000"]);
    assert_eq!(r, vec![0, 0, -1, -1], "rate 0 empty");
    s.assert_alive();
}

#[test]
fn rate_syntax_forms_set_the_refill_period() {
    let mut s = Server::start();
    let mut con = s.conn();
    // (rate, ms to refill one token with burst 1)
    let cases: &[(&str, i64, i64)] = &[
        ("100", 10, 10),
        ("0.5", 2000, 2000),
        ("100/s", 10, 10),
        ("100/m", 600, 600),
        ("300/15m", 3000, 3000),
        ("5/ms", 0, 1),
        ("2/h", 1_800_000, 1_800_000),
        ("1/d", 86_400_000, 86_400_000),
    ];
    for (i, (rate, lo, hi)) in cases.iter().enumerate() {
        let key = format!("r{i}");
        let r = rl(&mut con, &["RL.TOKEN", &key, rate, "1"]);
        assert_eq!(&r[..3], &[1, 0, 0], "rate {rate}: {r:?}");
        assert!(
            r[3] >= *lo && r[3] <= *hi,
            "rate {rate}: reset_ms {} not in {lo}..={hi}",
            r[3]
        );
        if *lo >= 1000 {
            let p = pttl(&mut con, &key);
            assert!(p > 0 && p <= r[3], "rate {rate}: PTTL {p}, reset {}", r[3]);
        }
        // LEAKY parses the same syntax.
        let l = rl(&mut con, &["RL.LEAKY", &format!("l{i}"), rate, "1"]);
        assert_eq!(&l[..3], &[1, 0, 0], "leaky rate {rate}: {l:?}");
        assert!(l[3] >= *lo && l[3] <= *hi, "leaky rate {rate}: {l:?}");
    }
    s.assert_alive();
}

// ---------------------------------------------------------------------------------------
// 2. GCRA replies like redis-cell's CL.THROTTLE
// ---------------------------------------------------------------------------------------

#[test]
fn gcra_matches_redis_cell_example() {
    let mut s = Server::start();
    let mut con = s.conn();
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
    let mut s = Server::start();
    let mut con = s.conn();
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
    let mut s = Server::start();
    let mut con = s.conn();
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
    let keys: i64 = cmd("DBSIZE").query(&mut con).expect("DBSIZE");
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
    let mut s = Server::start();
    let mut con = s.conn();
    let r = rl_pipe(
        &mut con,
        &[
            &["RL.TOKEN", "t", "2/3s", "2", "COST", "2"],
            &["RL.TOKEN", "t", "2/3s", "2"],
        ],
    );
    assert_eq!(r[0], vec![1, 0, 0, 3000], "token spend all");
    assert_eq!(&r[1][..2], &[0, 0], "token denied: {r:?}");
    assert_near(r[1][2], 1500, 20, "token wait for one of 2/3s");
    assert_near(r[1][3], 3000, 20, "token reset");

    let r = rl_pipe(
        &mut con,
        &[
            &["RL.LEAKY", "l", "2/3s", "2", "COST", "2"],
            &["RL.LEAKY", "l", "2/3s", "2"],
        ],
    );
    assert_eq!(r[0], vec![1, 0, 0, 3000], "leaky fill");
    assert_eq!(&r[1][..2], &[0, 0], "leaky denied: {r:?}");
    assert_near(r[1][2], 1500, 20, "leaky wait for one of 2/3s");

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
// 5. Persistence
// ---------------------------------------------------------------------------------------

#[test]
fn persistence_debug_reload_rdb_restart_dump_restore_copy() {
    let mut s = Server::start();
    let mut con = s.conn();
    active_expire_off(&mut con);
    let keys = populate(&mut con);
    let before = snapshot(&mut con, &keys);
    let all = db_digest(&mut con);

    let _: () = cmd("DEBUG").arg("RELOAD").query(&mut con).expect("RELOAD");
    assert_same_state(&mut con, &before, "DEBUG RELOAD");
    assert_eq!(db_digest(&mut con), all, "DEBUG RELOAD: DEBUG DIGEST");

    s.restart("SAVE");
    let mut con = s.conn();
    active_expire_off(&mut con);
    assert_same_state(&mut con, &before, "RDB restart");
    assert_eq!(db_digest(&mut con), all, "RDB restart: DEBUG DIGEST");

    // DUMP / RESTORE (with the same absolute expiry) and COPY keep the state and the
    // expiry. DEBUG DIGEST-VALUE notes whether a key has an expiry, so the restored
    // key gets the original's.
    for k in &keys {
        let at = pexpiretime(&mut con, *k);
        let payload: Vec<u8> = cmd("DUMP").arg(*k).query(&mut con).expect("DUMP");
        let restored = format!("{k}:restored");
        let mut restore = cmd("RESTORE");
        restore.arg(&restored).arg(at.max(0)).arg(&payload);
        if at > 0 {
            restore.arg("ABSTTL");
        }
        let _: () = restore.query(&mut con).expect("RESTORE");
        assert_eq!(key_type(&mut con, &restored), "warden-rl");
        assert_eq!(digest(&mut con, &restored), before[k].0, "RESTORE {k}");
        assert_eq!(pexpiretime(&mut con, &restored), at, "RESTORE {k} expiry");

        let copy = format!("{k}:copy");
        let n: i64 = cmd("COPY")
            .arg(*k)
            .arg(&copy)
            .query(&mut con)
            .expect("COPY");
        assert_eq!(n, 1);
        assert_eq!(digest(&mut con, &copy), before[k].0, "COPY {k}");
        assert_eq!(pexpiretime(&mut con, &copy), at, "COPY {k} expiry");
    }

    // A call on the copy leaves the original alone.
    let r = rl(&mut con, &["RL.TOKEN", "p:tok:copy", "1/h", "5"]);
    assert_eq!(&r[..2], &[1, 1], "copy used: {r:?}");
    assert_eq!(digest(&mut con, "p:tok"), before["p:tok"].0);
    assert_ne!(digest(&mut con, "p:tok:copy"), before["p:tok"].0);
    let r = rl(&mut con, &["RL.TOKEN", "p:tok:restored", "1/h", "5"]);
    assert_eq!(&r[..2], &[1, 1], "restored used: {r:?}");

    assert_populated_decisions(&mut con, "after RDB restart");
    s.assert_alive();
}

fn aof_rewrite_round_trip(preamble: &str) {
    let mut s = Server::start_with(
        &["--appendonly", "yes", "--aof-use-rdb-preamble", preamble],
        &[],
    );
    let mut con = s.conn();
    active_expire_off(&mut con);
    wait_aof_rewrite_done(&mut con);
    let keys = populate(&mut con);
    let before = snapshot(&mut con, &keys);
    let all = db_digest(&mut con);

    let _: Value = cmd("BGREWRITEAOF").query(&mut con).expect("BGREWRITEAOF");
    wait_aof_rewrite_done(&mut con);
    s.restart("NOSAVE");
    let mut con = s.conn();
    active_expire_off(&mut con);
    assert_same_state(&mut con, &before, &format!("AOF preamble {preamble}"));
    assert_eq!(
        db_digest(&mut con),
        all,
        "AOF preamble {preamble}: DEBUG DIGEST"
    );

    // Calls after the rewrite go to the new incremental file and also survive.
    let r = rl(&mut con, &["RL.TOKEN", "p:tok", "1/h", "5"]);
    assert_eq!(&r[..2], &[1, 1], "{r:?}");
    let mid = snapshot(&mut con, &keys);
    let all2 = db_digest(&mut con);
    s.restart("NOSAVE");
    let mut con = s.conn();
    active_expire_off(&mut con);
    assert_same_state(&mut con, &mid, &format!("AOF preamble {preamble}, incr"));
    assert_eq!(db_digest(&mut con), all2);
    assert_populated_decisions(&mut con, &format!("AOF preamble {preamble}"));
    s.assert_alive();
}

#[test]
fn persistence_aof_rewrite_with_rdb_preamble() {
    aof_rewrite_round_trip("yes");
}

#[test]
fn persistence_aof_rewrite_without_rdb_preamble() {
    aof_rewrite_round_trip("no");
}

// ---------------------------------------------------------------------------------------
// 6. No replay on a later clock
// ---------------------------------------------------------------------------------------

#[test]
fn aof_load_does_not_replay_on_a_later_clock() {
    let mut s = Server::start_with(
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
        &[],
    );
    let mut con = s.conn();
    active_expire_off(&mut con);
    wait_aof_rewrite_done(&mut con);
    let g: &[&str] = &["RL.GCRA", "g", "0", "1", "60"];
    let t: &[&str] = &["RL.TOKEN", "t", "1/m", "3"];
    let r = rl_pipe(&mut con, &[g, g, t, t, t, t]);
    assert_eq!(r[0], vec![0, 1, 0, -1, 60], "gcra first");
    assert_eq!(r[1], vec![1, 1, 0, 60, 60], "gcra limited");
    assert_eq!(&r[4][..3], &[1, 0, 0], "token last");
    assert_eq!(&r[5][..2], &[0, 0], "token denied");
    let before = snapshot(&mut con, &["g", "t"]);
    let all = db_digest(&mut con);

    std::thread::sleep(Duration::from_secs(2));
    s.restart("NOSAVE");
    let mut con = s.conn();
    active_expire_off(&mut con);
    assert_same_state(&mut con, &before, "AOF load 2 s later");
    assert_eq!(db_digest(&mut con), all, "AOF load: DEBUG DIGEST");

    // The decisions the master would have made now, not those of a replay at load.
    let r = rl(&mut con, g);
    assert_eq!(&r[..3], &[1, 1, 0], "gcra still limited: {r:?}");
    assert!(
        r[3] >= 50 && r[3] <= 58,
        "gcra retry_after {} should be about 58 s (60 = replayed at load)",
        r[3]
    );
    let r = rl(&mut con, t);
    assert_eq!(&r[..2], &[0, 0], "token still empty: {r:?}");
    assert!(
        r[2] >= 40_000 && r[2] <= 58_100,
        "token wait {} should be at most 58 s (about 60 s = replayed at load)",
        r[2]
    );

    // The AOF holds effects, not the time-dependent commands.
    let mut text = Vec::new();
    for e in std::fs::read_dir(s.dir.join("appendonlydir")).expect("appendonlydir") {
        let p = e.expect("entry").path();
        text.extend(std::fs::read(&p).expect("read AOF").to_ascii_uppercase());
    }
    // Each allowed call is there once: as `RL._SET`, or as the call itself
    // with its effect appended (`arg@state`); denied calls are not.
    let count = |needle: &[u8]| text.windows(needle.len()).filter(|w| w == &needle).count();
    let calls = count(b"RL.GCRA") + count(b"RL.TOKEN");
    assert_eq!(
        calls + count(b"RL._SET"),
        4,
        "allowed calls in the AOF (1 GCRA, 3 TOKEN)"
    );
    assert_eq!(
        count(b"@"),
        calls,
        "an RL call in the AOF without its effect"
    );
    s.assert_alive();
}

// ---------------------------------------------------------------------------------------
// 7. Replication
// ---------------------------------------------------------------------------------------

enum Expect {
    /// Allowed: exactly one RL._SET, its pxat = call time + reset.
    Set,
    /// Denied, a look, or an inf rate: nothing propagated.
    Nothing,
}

#[test]
fn replication_sends_absolute_state_and_replicas_match() {
    let mut master = Server::start();
    let mut replica = master.start_replica(&[], &[]);
    let mut con = master.conn();
    active_expire_off(&mut con);
    let mut tap = master.replication_tap();

    use Expect::*;
    let steps: &[(&[&str], Expect)] = &[
        (&["RL.TOKEN", "rt", "1/m", "2"], Set),
        (&["RL.TOKEN", "rt", "1/m", "2"], Set),
        (&["RL.TOKEN", "rt", "1/m", "2"], Nothing),
        (&["RL.TOKEN", "rt", "1/m", "2", "COST", "0"], Nothing),
        (&["RL.TOKEN", "rt", "1/m", "2", "MAXWAIT", "120000"], Set),
        (&["RL.TOKEN", "rt", "1/m", "2", "MAXWAIT", "1000"], Nothing),
        (&["RL.TOKEN", "rz", "0", "3"], Set),
        (&["RL.TOKEN", "rinf", "inf", "1"], Nothing),
        (&["RL.LEAKY", "rl", "1/m", "2"], Set),
        (&["RL.LEAKY", "rl", "1/m", "2"], Set),
        (&["RL.LEAKY", "rl", "1/m", "2"], Nothing),
        (&["RL.LEAKY", "rl", "1/m", "2", "COST", "0"], Nothing),
        (&["RL.WINDOW", "rw", "2", "60000"], Set),
        (&["RL.WINDOW", "rw", "2", "60000"], Set),
        (&["RL.WINDOW", "rw", "2", "60000"], Nothing),
        (&["RL.WINDOW", "rw", "2", "60000", "COST", "0"], Nothing),
        (&["RL.GCRA", "rg", "1", "1", "60"], Set),
        (&["RL.GCRA", "rg", "1", "1", "60"], Set),
        (&["RL.GCRA", "rg", "1", "1", "60"], Nothing),
        (&["RL.GCRA", "rg", "1", "1", "60", "QUANTITY", "0"], Nothing),
    ];
    let mut kinds: BTreeMap<&str, String> = BTreeMap::new();
    let mut layout_violations: Vec<String> = Vec::new();
    for (args, expect) in steps {
        let t0 = server_time_ms(&mut con);
        let r = rl(&mut con, args);
        let t1 = server_time_ms(&mut con);
        let gcra = args[0] == "RL.GCRA";
        let allowed = if gcra { r[0] == 0 } else { r[0] == 1 };
        match expect {
            Set => {
                assert!(allowed, "{args:?} should be allowed: {r:?}");
                let c = tap
                    .next_command(Duration::from_secs(5))
                    .unwrap_or_else(|| panic!("{args:?}: nothing propagated"));
                let c = if c[0].eq_ignore_ascii_case("MULTI") {
                    tap.next_command(Duration::from_secs(5))
                        .expect("after MULTI")
                } else {
                    c
                };
                assert_eq!(c[1], args[1], "{c:?}");
                // The contract: `RL._SET key kind:f1:f2:f3:f4:pxat_ms` (one packed
                // state argument, cheap to build on the hot path), or the call
                // itself with that state appended to its first parameter.
                let state = if c[0].eq_ignore_ascii_case("RL._SET") {
                    if c.len() != 3 {
                        layout_violations.push(format!("{args:?} -> {c:?}"));
                    }
                    c[2..].join(":")
                } else {
                    assert!(c[0].eq_ignore_ascii_case(args[0]), "{args:?}: {c:?}");
                    assert_eq!(c.len(), args.len(), "{args:?}: {c:?}");
                    assert_eq!(c[3..], args[3..], "{args:?}: {c:?}");
                    let (first, state) = c[2]
                        .split_once('@')
                        .unwrap_or_else(|| panic!("{args:?} propagated without its effect: {c:?}"));
                    assert_eq!(first, args[2], "{c:?}");
                    state.to_string()
                };
                let fields: Vec<String> = state.split(':').map(String::from).collect();
                assert_eq!(fields.len(), 6, "kind f1 f2 f3 f4 pxat: {c:?}");
                let kind = kinds
                    .entry(args[0])
                    .or_insert_with(|| fields[0].clone())
                    .clone();
                assert_eq!(fields[0], kind, "{args:?}: kind changed: {c:?}");
                let pxat: i64 = fields[5].parse().expect("pxat integer");
                let (reset, tol) = if gcra { (r[4] * 1000, 1000) } else { (r[3], 2) };
                if reset == -1 {
                    assert_eq!(pxat, -1, "{args:?}: never idle, no expiry: {c:?}");
                } else {
                    assert!(
                        pxat >= t0 + reset - tol && pxat <= t1 + reset + tol,
                        "{args:?}: pxat {pxat} not near {t0}..{t1} + reset {reset}: {c:?}"
                    );
                }
                // Only one command per call.
                {
                    let more = tap.drain(Duration::from_millis(50));
                    let more: Vec<_> = more
                        .into_iter()
                        .filter(|c| !c[0].eq_ignore_ascii_case("EXEC"))
                        .collect();
                    assert!(more.is_empty(), "{args:?} propagated more: {more:?}");
                }
            }
            Nothing => {
                let got = tap.drain(Duration::from_millis(300));
                assert!(got.is_empty(), "{args:?} ({r:?}) propagated {got:?}");
            }
        }
    }
    let distinct: std::collections::BTreeSet<&String> = kinds.values().collect();
    assert_eq!(distinct.len(), 4, "one kind per command: {kinds:?}");
    assert!(!exists(&mut con, "rinf"));

    // Waits on replication offsets (the tap never acknowledges one, so it is not counted).
    master.sync_replicas(1);
    let mut rcon = replica.conn();
    assert_eq!(
        db_digest(&mut rcon),
        db_digest(&mut con),
        "DEBUG DIGEST differs between master and replica"
    );
    for k in ["rt", "rz", "rl", "rw", "rg"] {
        assert_eq!(key_type(&mut rcon, k), "warden-rl", "replica TYPE {k}");
        assert_eq!(digest(&mut rcon, k), digest(&mut con, k), "digest {k}");
    }
    assert_eq!(pttl(&mut rcon, "rz"), -1);
    replica.assert_alive();
    master.assert_alive();
    assert!(
        layout_violations.is_empty(),
        "RL._SET must be `RL._SET key kind:f1:f2:f3:f4:pxat_ms` (3 arguments); got:\n{}",
        layout_violations.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// 8. Bad input
// ---------------------------------------------------------------------------------------

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let mut s = Server::start();
    let mut con = s.conn();
    // A live limiter of each kind, long periods.
    let setup: &[&[&str]] = &[
        &["RL.TOKEN", "tk", "1/h", "5"],
        &["RL.LEAKY", "lk", "1/h", "5"],
        &["RL.WINDOW", "wk", "5", "3600000"],
        &["RL.GCRA", "gk", "5", "1", "3600"],
    ];
    rl_pipe(&mut con, setup);
    let live = |name: &str| match name {
        "RL.TOKEN" => "tk",
        "RL.LEAKY" => "lk",
        "RL.WINDOW" => "wk",
        _ => "gk",
    };

    let mut cases: Vec<(Vec<&str>, &str)> = Vec::new();
    for rate in ["1e400", "1e-400"] {
        cases.push((vec!["RL.TOKEN", rate, "5"], "ERR rate is out of range"));
        cases.push((vec!["RL.LEAKY", rate, "5"], "ERR rate is out of range"));
    }
    for rate in ["10/", "/s", "5/0s", "-1", "abc", "nan", "", "5/0"] {
        cases.push((vec!["RL.TOKEN", rate, "5"], RATE_ERR));
        cases.push((vec!["RL.LEAKY", rate, "5"], RATE_ERR));
    }
    for burst in ["-1", "1.5", "abc", ""] {
        cases.push((vec!["RL.TOKEN", "1/h", burst], BURST_ERR));
        cases.push((vec!["RL.GCRA", burst, "1", "3600"], MAX_BURST_ERR));
    }
    for capacity in ["0", "-1", "1.5", "abc"] {
        cases.push((vec!["RL.LEAKY", "1/h", capacity], CAPACITY_ERR));
    }
    for limit in ["0", "-1", "abc", "1.5"] {
        cases.push((vec!["RL.WINDOW", limit, "3600000"], LIMIT_ERR));
    }
    for window in ["0", "-1", "abc", "1.5"] {
        cases.push((vec!["RL.WINDOW", "5", window], WINDOW_ERR));
    }
    for bad in ["0", "-1", "abc"] {
        cases.push((vec!["RL.GCRA", "5", bad, "3600"], COUNT_ERR));
        cases.push((vec!["RL.GCRA", "5", "1", bad], PERIOD_ERR));
    }
    for cost in ["-1", "abc", "1.5"] {
        cases.push((vec!["RL.TOKEN", "1/h", "5", "COST", cost], COST_ERR));
        cases.push((vec!["RL.LEAKY", "1/h", "5", "COST", cost], COST_ERR));
        cases.push((vec!["RL.WINDOW", "5", "3600000", "COST", cost], COST_ERR));
        cases.push((
            vec!["RL.GCRA", "5", "1", "3600", "QUANTITY", cost],
            QUANTITY_ERR,
        ));
    }
    for maxwait in ["-1", "abc"] {
        cases.push((
            vec!["RL.TOKEN", "1/h", "5", "MAXWAIT", maxwait],
            MAXWAIT_ERR,
        ));
    }
    let syntax: &[&[&str]] = &[
        &["RL.TOKEN", "1/h", "5", "FOO", "1"],
        &["RL.TOKEN", "1/h", "5", "COST"],
        &["RL.TOKEN", "1/h", "5", "MAXWAIT"],
        &["RL.TOKEN", "1/h", "5", "COST", "1", "MAXWAIT"],
        &["RL.LEAKY", "1/h", "5", "MAXWAIT", "5"],
        &["RL.LEAKY", "1/h", "5", "COST"],
        &["RL.WINDOW", "5", "3600000", "FOO", "1"],
        &["RL.WINDOW", "5", "3600000", "COST"],
        &["RL.GCRA", "5", "1", "3600", "COST", "1"],
        &["RL.GCRA", "5", "1", "3600", "QUANTITY"],
    ];
    for a in syntax {
        cases.push((a.to_vec(), SYNTAX_ERR));
    }

    for (rest, want) in &cases {
        let name = rest[0];
        // On a missing key: the error, and still no key.
        let mut args = vec![name, "nokey"];
        args.extend_from_slice(&rest[1..]);
        assert_eq!(rl_err(&mut con, &args), *want, "{args:?}");
        assert!(!exists(&mut con, "nokey"), "{args:?} created the key");
        // On a live limiter of the right kind: the error, state unchanged.
        let key = live(name);
        let (d0, p0) = (digest(&mut con, key), pttl(&mut con, key));
        args[1] = key;
        assert_eq!(rl_err(&mut con, &args), *want, "{args:?}");
        assert_eq!(digest(&mut con, key), d0, "{args:?} changed {key}");
        assert!(pttl(&mut con, key) <= p0, "{args:?} extended {key}");
    }

    // In range, but the exact arithmetic does not fit.
    let overflow: &[&[&str]] = &[
        &[
            "RL.TOKEN",
            "nokey",
            "0.000000001",
            "1000000000000000",
            "COST",
            "1000000000000000",
        ],
        &[
            "RL.TOKEN",
            "nokey",
            "1/d",
            "1000000000000000",
            "COST",
            "1000000000000000",
            "MAXWAIT",
            "315360000000",
        ],
        &[
            "RL.LEAKY",
            "nokey",
            "1/999999999s",
            "1000000000000000",
            "COST",
            "1000000000000000",
        ],
    ];
    for args in overflow {
        assert_eq!(rl_err(&mut con, args), OVERFLOW_ERR, "{args:?}");
        assert!(!exists(&mut con, "nokey"), "{args:?} created the key");
    }
    // Above the range, however many digits.
    let e = rl_err(
        &mut con,
        &["RL.TOKEN", "nokey", "1/h", "99999999999999999999"],
    );
    assert_eq!(e, "ERR burst is out of range");
    let e = rl_err(
        &mut con,
        &[
            "RL.TOKEN",
            "nokey",
            "1/h",
            "5",
            "COST",
            "99999999999999999999",
        ],
    );
    assert_eq!(e, "ERR cost is out of range");

    // Wrong arity, with the lower-case command name.
    let arity: &[(&[&str], &str)] = &[
        (&["RL.TOKEN"], "rl.token"),
        (&["RL.TOKEN", "nokey"], "rl.token"),
        (&["RL.TOKEN", "nokey", "1"], "rl.token"),
        (&["RL.LEAKY", "nokey", "1"], "rl.leaky"),
        (&["RL.LEAKY"], "rl.leaky"),
        (&["RL.WINDOW", "nokey", "5"], "rl.window"),
        (&["RL.WINDOW"], "rl.window"),
        (&["RL.GCRA", "nokey", "1", "2"], "rl.gcra"),
        (&["RL.GCRA", "nokey"], "rl.gcra"),
        (&["RL.GCRA"], "rl.gcra"),
    ];
    for (args, name) in arity {
        assert_eq!(
            rl_err(&mut con, args),
            format!("ERR wrong number of arguments for '{name}' command"),
            "{args:?}"
        );
        assert!(!exists(&mut con, "nokey"));
    }

    // Keys of other types.
    let _: () = cmd("SET").arg("str").arg("v").query(&mut con).expect("SET");
    let _: () = cmd("RPUSH")
        .arg("list")
        .arg("a")
        .query(&mut con)
        .expect("RPUSH");
    for other in ["str", "list"] {
        for (name, rest) in [
            ("RL.TOKEN", &["1/h", "5"][..]),
            ("RL.LEAKY", &["1/h", "5"][..]),
            ("RL.WINDOW", &["5", "3600000"][..]),
            ("RL.GCRA", &["5", "1", "3600"][..]),
        ] {
            let mut args = vec![name, other];
            args.extend_from_slice(rest);
            assert_eq!(rl_err(&mut con, &args), WRONGTYPE_ERR, "{args:?}");
            args.extend_from_slice(&[
                if name == "RL.GCRA" {
                    "QUANTITY"
                } else {
                    "COST"
                },
                "0",
            ]);
            assert_eq!(rl_err(&mut con, &args), WRONGTYPE_ERR, "{args:?}");
        }
    }
    let v: String = cmd("GET").arg("str").query(&mut con).expect("GET");
    assert_eq!(v, "v");
    let l: Vec<String> = cmd("LRANGE")
        .arg("list")
        .arg(0)
        .arg(-1)
        .query(&mut con)
        .expect("LRANGE");
    assert_eq!(l, vec!["a"]);

    // A key of one limiter kind used by another command.
    let commands: [(&str, &[&str]); 4] = [
        ("RL.TOKEN", &["1/h", "5"]),
        ("RL.LEAKY", &["1/h", "5"]),
        ("RL.WINDOW", &["5", "3600000"]),
        ("RL.GCRA", &["5", "1", "3600"]),
    ];
    for (owner, _) in &commands {
        let key = live(owner);
        let d0 = digest(&mut con, key);
        for (name, rest) in &commands {
            if name == owner {
                continue;
            }
            let mut args = vec![*name, key];
            args.extend_from_slice(rest);
            assert_eq!(rl_err(&mut con, &args), KIND_ERR, "{args:?}");
            assert_eq!(digest(&mut con, key), d0, "{args:?} changed {key}");
        }
    }

    // The internal set-state command with garbage must not crash the server.
    let garbage: &[&[&str]] = &[
        &["RL._SET"],
        &["RL._SET", "junk"],
        &["RL._SET", "junk", "x", "a", "b", "c", "d", "e"],
        &["RL._SET", "junk", "99", "1", "2", "3", "4", "-1"],
        &["RL._SET", "junk", "-1", "1", "2", "3", "4", "-1"],
        &["RL._SET", "str", "0", "1", "2", "3", "4", "-1"],
        &["RL._SET", "junk", "9:1:2:3:4:-1"],
        &["RL._SET", "junk", "1:-5:2:3:4:-1"],
        &["RL._SET", "junk", "4:0:0:0:0:-1"],
        &[
            "RL._SET",
            "junk",
            "1:1:340282366920938463463374607431768211455:1:1:-1",
        ],
        &["RL._SET", "junk", "1:1:1:0:1:-1"],
        &["RL._SET", "junk", "1:1:1:1:1"],
    ];
    for args in garbage {
        let _ = command(args).query::<Value>(&mut con);
        s.assert_alive();
    }
    s.assert_alive();
}

#[test]
fn window_beyond_ten_years_is_out_of_range() {
    // Two windows of ~2^62 ms past now would not fit in a 64-bit ms clock; the
    // range (at most ten years) keeps every expiry representable.
    let mut s = Server::start();
    let mut con = s.conn();
    for window in ["9223372036854775807", "4611686018427387904", "315360000001"] {
        let args = ["RL.WINDOW", "huge", "5", window];
        let got = command(&args).query::<Vec<i64>>(&mut con);
        let state = (exists(&mut con, "huge"), pttl(&mut con, "huge"));
        match got {
            Err(e) => assert_eq!(err_text(&e), WINDOW_RANGE_ERR, "{args:?}"),
            Ok(r) => panic!(
                "{args:?}: want `{WINDOW_RANGE_ERR}`, got reply {r:?} (key exists {}, PTTL {})",
                state.0, state.1
            ),
        }
        assert!(!state.0, "{args:?} created a key");
    }
    s.assert_alive();
}

#[test]
fn non_utf8_keys_work() {
    let mut s = Server::start();
    let mut con = s.conn();
    let calls: [(&str, &[&str], &[u8]); 4] = [
        ("RL.TOKEN", &["1/h", "5"], b"t\xff\xfe\x00\x80"),
        ("RL.LEAKY", &["1/h", "5"], b"l\xff\xfe\x00\x80"),
        ("RL.WINDOW", &["5", "3600000"], b"w\xff\xfe\x00\x80"),
        ("RL.GCRA", &["4", "1", "3600"], b"g\xff\xfe\x00\x80"),
    ];
    for (name, rest, key) in calls {
        for i in 0..2 {
            let mut c = cmd(name);
            c.arg(key);
            for a in rest {
                c.arg(*a);
            }
            let r: Vec<i64> = c.query(&mut con).unwrap_or_else(|e| panic!("{name}: {e}"));
            if name == "RL.GCRA" {
                assert_eq!(&r[..3], &[0, 5, 4 - i], "{name}: {r:?}");
            } else {
                assert_eq!(&r[..3], &[1, 4 - i, 0], "{name}: {r:?}");
            }
        }
        assert_eq!(key_type(&mut con, key), "warden-rl");
        let p = pttl(&mut con, key);
        assert!(p > 0, "{name} PTTL {p}");
        assert_ne!(digest(&mut con, key), MISSING_DIGEST);
    }
    let _: () = cmd("DEBUG").arg("RELOAD").query(&mut con).expect("RELOAD");
    for (_, _, key) in calls {
        assert_eq!(key_type(&mut con, key), "warden-rl");
    }
    s.assert_alive();
}

// ---------------------------------------------------------------------------------------
// 9. INFO counters
// ---------------------------------------------------------------------------------------

#[test]
fn info_counts_allowed_and_denied_calls() {
    let mut s = Server::start();
    let mut con = s.conn();
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
