//! Integration tests for the token bucket `RL.TOKEN`: the golang.org/x/time/rate
//! reservation scenario (MAXWAIT), edge cases (infinite and zero rates, zero burst, a cost
//! above the burst) and the rate syntax forms that set the refill period.

use crate::common::*;
use crate::rate::support::*;

// ---------------------------------------------------------------------------------------
// 1. The golang.org/x/time/rate reservation scenario
// ---------------------------------------------------------------------------------------

#[test]
fn token_maxwait_reservations_follow_x_time_rate() {
    let (mut s, mut con) = Server::start_conn();
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
    let (mut s, mut con) = Server::start_conn();
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
    let (mut s, mut con) = Server::start_conn();
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
