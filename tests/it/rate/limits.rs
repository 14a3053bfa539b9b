//! Integration tests for several limits in one `RL.TOKEN` / `RL.WINDOW` key and for
//! changing the parameters of a live key (issue #13): the reply describes the tightest
//! limit, limits are added and dropped by position, the argument grammar stays
//! unambiguous, every family keeps what was used when its parameters change, and
//! several limits replicate as one effect. x/time/rate's own sequences are replayed
//! against the core in `src/core/bucket.rs`.

use crate::common::*;
use crate::rate::support::*;

const TOO_MANY_ERR: &str = "ERR too many limits: a key holds at most 8";

#[test]
fn a_changed_burst_keeps_the_tokens_that_were_used() {
    let (mut s, mut con) = Server::start_conn();
    // The issue's example: x/time/rate gives 9, 2, 1, 0 (raising the burst hands
    // out no tokens; it used to give 9, 1, 0, 96).
    let r = rl_pipe(
        &mut con,
        &[
            &["RL.TOKEN", "ch", "1/m", "10"],
            &["RL.TOKEN", "ch", "1/m", "3"],
            &["RL.TOKEN", "ch", "1/m", "3"],
            &["RL.TOKEN", "ch", "1/m", "100"],
            &["RL.TOKEN", "ch", "1/m", "100"],
        ],
    );
    let remaining: Vec<i64> = r.iter().map(|d| d[1]).collect();
    assert_eq!(remaining, vec![9, 2, 1, 0, 0], "{r:?}");
    assert_eq!(
        &r[4][..2],
        &[0, 0],
        "the next token is a minute away: {r:?}"
    );
    assert_near(r[4][2], 60_000, 100, "wait for it");
    assert_near(r[4][3], 100 * 60_000, 100, "reset at burst 100");
    // A new rate applies from now: the token accrued so far is kept.
    let r = rl_pipe(
        &mut con,
        &[
            &["RL.TOKEN", "r", "1/h", "2", "COST", "2"],
            &["RL.TOKEN", "r", "1/s", "2"],
        ],
    );
    assert_eq!(&r[1][..2], &[0, 0], "{r:?}");
    assert_near(r[1][2], 1_000, 50, "one token at the new rate");
    s.assert_alive();
}

#[test]
fn several_limits_decide_together_and_reply_with_the_tightest() {
    let (mut s, mut con) = Server::start_conn();
    let call: &[&str] = &["RL.TOKEN", "k", "10/s", "10", "1000/h", "3"];
    let r = rl_pipe(&mut con, &[call, call, call, call]);
    for (i, d) in r[..3].iter().enumerate() {
        assert_eq!(&d[..3], &[1, 2 - i as i64, 0], "call {i}: {r:?}");
    }
    // The per-hour limit decides: 3.6 s to its next token, though the per-second one
    // has 7 left; reset is the largest (the hour limit's 3 tokens).
    assert_eq!(&r[3][..2], &[0, 0], "{r:?}");
    assert_near(r[3][2], 3_600, 50, "wait for the tightest");
    assert_near(r[3][3], 10_800, 50, "reset of the slowest");
    let p = pttl(&mut con, "k");
    assert!(
        p > 10_000 && p <= 10_800,
        "the key lives until both are full: {p}"
    );
    // A look with only the first limit: the denied call counted against none.
    let look = rl(&mut con, &["RL.TOKEN", "k", "10/s", "10", "COST", "0"]);
    assert!(look[1] >= 7, "{look:?}");
    // With MAXWAIT the call is reserved on every limit; the wait is the largest.
    let r = rl(
        &mut con,
        &[
            "RL.TOKEN", "m", "1/s", "5", "1/m", "1", "MAXWAIT", "120000", "COST", "1",
        ],
    );
    assert_eq!(r, vec![1, 0, 0, 60_000], "first: {r:?}");
    let r = rl(
        &mut con,
        &["RL.TOKEN", "m", "1/s", "5", "1/m", "1", "MAXWAIT", "120000"],
    );
    assert_eq!(&r[..2], &[1, 0], "reserved: {r:?}");
    assert_near(r[2], 60_000, 50, "act after the per-minute wait");
    // RL.WINDOW too.
    let w: &[&str] = &["RL.WINDOW", "w", "10", "1s", "3", "1m"];
    let r = rl_pipe(&mut con, &[w, w, w, w]);
    assert_eq!(r.iter().map(|d| d[1]).collect::<Vec<_>>(), vec![2, 1, 0, 0]);
    assert_eq!(r[3][0], 0, "{r:?}");
    assert_near(
        r[3][2],
        80_000,
        100,
        "the minute window weighs 2 at 20 s in",
    );
    assert_near(r[3][3], 120_000, 100, "two minute windows");
    s.assert_alive();
}

#[test]
fn limits_are_added_full_and_dropped_by_position() {
    let (mut s, mut con) = Server::start_conn();
    rl(&mut con, &["RL.TOKEN", "k", "1/h", "5", "COST", "4"]);
    // A second limit starts full; the first keeps its one token.
    let r = rl(&mut con, &["RL.TOKEN", "k", "1/h", "5", "1/m", "10"]);
    assert_eq!(&r[..3], &[1, 0, 0], "{r:?}");
    let r = rl(
        &mut con,
        &["RL.TOKEN", "k", "1/h", "5", "1/m", "10", "COST", "0"],
    );
    assert_eq!(r[1], 0, "{r:?}");
    // Limits match by position: the per-hour limit dropped, the per-minute one
    // now first continues the per-hour state at a new rate and burst.
    let r = rl(&mut con, &["RL.TOKEN", "k", "1/m", "10", "COST", "0"]);
    assert_eq!(r[1], 0, "position 0 is the per-hour state: {r:?}");
    // Eight limits are the most.
    let mut eight = vec!["RL.TOKEN", "e"];
    for _ in 0..8 {
        eight.extend(["1/h", "3"]);
    }
    assert_eq!(&rl(&mut con, &eight)[..3], &[1, 2, 0]);
    let mut nine = eight.clone();
    nine.extend(["1/h", "3"]);
    let d0 = digest(&mut con, "e");
    assert_eq!(rl_err(&mut con, &nine), TOO_MANY_ERR);
    assert_eq!(digest(&mut con, "e"), d0, "an error changes nothing");
    s.assert_alive();
}

#[test]
fn the_limit_list_and_the_options_never_mix_up() {
    let (mut s, mut con) = Server::start_conn();
    let ok: &[&[&str]] = &[
        &["RL.TOKEN", "a", "10", "5", "inf", "0", "COST", "2"],
        &[
            "RL.TOKEN", "a", "10", "5", "INF", "0", "maxwait", "10", "cost", "1",
        ],
        &["RL.TOKEN", "a", "10", "5", "1e2", "5", ".5", "1"],
        &["RL.WINDOW", "b", "5", "1000", "10", "1m", "COST", "1"],
    ];
    for args in ok {
        rl(&mut con, args);
    }
    let refused = &refusals(
        r#"
        # A rate without its burst, a limit without its window.
        RL.TOKEN x 10 5 20               => ERR syntax error
        RL.TOKEN x 10 5 20 COST 1        => ERR burst must be a non-negative integer
        RL.WINDOW x 5 1000 7             => ERR syntax error
        # Limits after the options, unknown words, options twice.
        RL.TOKEN x 10 5 COST 1 20 5      => ERR syntax error
        RL.TOKEN x 10 5 FOO 5            => ERR syntax error
        RL.TOKEN x 10 5 COST 1 COST 1    => ERR syntax error
        RL.WINDOW x 5 1000 COST 1 5 1000 => ERR syntax error
        RL.WINDOW x 5 1000 MAXWAIT 5     => ERR syntax error
        # A later limit is checked like the first.
        RL.TOKEN x 10 5 -1 5             => ERR rate must be a non-negative number, inf, or count/period such as 100/s or 300/15m
        RL.TOKEN x 10 5 1e400 5          => ERR rate is out of range
        RL.TOKEN x 10 5 10 -5            => ERR burst must be a non-negative integer
        RL.WINDOW x 5 1000 0 1000        => ERR limit must be a positive integer
        RL.WINDOW x 5 1000 5 0           => ERR window must be a positive integer
        # A burst position holding a keyword is a burst.
        RL.TOKEN x 10 COST 1             => ERR burst must be a non-negative integer
        "#,
    );
    for (args, want) in refused {
        assert_eq!(rl_err(&mut con, args), *want, "{args:?}");
    }
    assert!(!exists(&mut con, "x"), "a refused call created the key");
    s.assert_alive();
}

#[test]
fn every_family_keeps_what_was_used_when_its_parameters_change() {
    let (mut s, mut con) = Server::start_conn();
    // Leaky: the level stays; a lower capacity forgives nothing.
    let r = rl_pipe(
        &mut con,
        &[
            &["RL.LEAKY", "l", "1/h", "10", "COST", "8"],
            &["RL.LEAKY", "l", "1/h", "5", "COST", "0"],
            &["RL.LEAKY", "l", "1/h", "20", "COST", "12"],
        ],
    );
    assert_eq!(
        &r[1][..2],
        &[0, 0],
        "level 8 of 5: even a look is over: {r:?}"
    );
    assert_near(r[1][2], 3 * 3_600_000, 100, "until the level is 5");
    assert_eq!(&r[2][..2], &[1, 0], "level 8 + 12 of 20: {r:?}");
    // Window: a new limit is a new threshold for the same count; a new window
    // length keeps the counts.
    let r = rl_pipe(
        &mut con,
        &[
            &["RL.WINDOW", "w", "10", "1h", "COST", "6"],
            &["RL.WINDOW", "w", "5", "1h"],
            &["RL.WINDOW", "w", "10", "2h", "COST", "0"],
        ],
    );
    assert_eq!(&r[1][..2], &[0, 0], "6 counted against 5: {r:?}");
    assert_eq!(r[2][1], 4, "the 6 still count in a 2 h window: {r:?}");
    // GCRA keeps its TAT: one call per 60 s spent, then 2 per 60 s (an interval of
    // 30 s, which is also the tolerance at max_burst 0): the TAT is still 60 s away,
    // so the retry is 60 + 30 - 30 = 60 s, not the 30 s a conversion in tokens gave.
    let r = rl_pipe(
        &mut con,
        &[
            &["RL.GCRA", "g", "0", "1", "60"],
            &["RL.GCRA", "g", "0", "2", "60"],
        ],
    );
    assert_eq!(r[0], vec![0, 1, 0, -1, 60]);
    assert_eq!(r[1], vec![1, 1, 0, 60, 60], "{r:?}");
    s.assert_alive();
}

#[test]
fn several_limits_replicate_as_one_effect() {
    let (mut master, mut replica, mut con) = Server::start_replicated();
    let before = warden_stat(&mut con, "effects_in_place");
    // Eight limits with the longest numbers a call writes.
    let mut args = vec!["RL.TOKEN", "big"];
    for rate in [
        "0.6666666666666666",
        "1e-9",
        "1000000000000/ms",
        "inf",
        "0",
        "7/3650d",
        "999999999999/1d",
        "1/ms",
    ] {
        args.extend([rate, "1000000000000000"]);
    }
    args.extend(["COST", "1000"]);
    let r = rl(&mut con, &args);
    assert_eq!(r[0], 1, "{r:?}");
    rl(
        &mut con,
        &["RL.WINDOW", "win", "5", "1m", "3", "1h", "COST", "2"],
    );
    rl(
        &mut con,
        &["RL.TOKEN", "two", "100", "10", "1000/h", "1000"],
    );
    assert_eq!(
        warden_stat(&mut con, "effects_in_place") - before,
        3,
        "each call carried its effect in place"
    );
    master.sync_replicas(1);
    let mut rcon = replica.conn();
    for k in ["big", "win", "two"] {
        assert_eq!(digest(&mut rcon, k), digest(&mut con, k), "{k}");
    }
    assert_eq!(db_digest(&mut rcon), db_digest(&mut con));
    replica.assert_alive();
    master.assert_alive();
}
