//! Numeric argument ranges (issue #10) of the BF and RL commands, as one table: every
//! numeric argument of BF.RESERVEX / BF.INSERTX and of the four rate limiters is tried
//! at, below and above its documented range (errors naming the argument, nothing
//! changed; inside the range a reply of the right shape), and the rate limiters take
//! every maximum at once without overflow; `-0` is not an integer for any argument (nor
//! for DLOCK's). The rules are in `tests/it/common/ranges.rs`.

use crate::bloom::support::bf_info;
use crate::common::ranges::*;
use crate::common::*;
use crate::lock::support::*;

use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// Ranges and the values tried
// ---------------------------------------------------------------------------------------

/// 10 years in seconds: the longest GCRA period.
const TEN_YEARS_S: u128 = 315_360_000;

/// The largest RL.GCRA `count`: 10^12, the largest count a rate takes.
const GCRA_MAX_COUNT: u128 = 1_000_000_000_000;

/// The largest Bloom capacity.
const MAX_BF_CAPACITY: u128 = 1_000_000_000_000;

const BF_TOO_LARGE: &str = "ERR filter would exceed bf-max-bytes";

const BF_CAPACITY: Rule = int_rule!("capacity", 1, MAX_BF_CAPACITY);

const ERROR_RATE: Rule = Rule {
    kind: RuleKind::Fraction,
    below: "ERR error rate must be a number between 0 and 1",
    above: "ERR error rate must be a number between 0 and 1",
};

const BURST: Rule = int_rule!("burst", 0, MAX_COUNT);

const RL_CAPACITY: Rule = int_rule!("capacity", 1, MAX_COUNT);

const LIMIT: Rule = int_rule!("limit", 1, MAX_COUNT);

const WINDOW: Rule = int_rule!("window", 1, TEN_YEARS_MS);

const MAX_BURST: Rule = int_rule!("max_burst", 0, MAX_COUNT);

const GCRA_COUNT: Rule = int_rule!("count", 1, GCRA_MAX_COUNT);

const PERIOD: Rule = int_rule!("period", 1, TEN_YEARS_S);

// ---------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------
// BF and RL: one table
// ---------------------------------------------------------------------------------------

/// The reply a successful call has.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Ok,
    /// An array of this many 0/1 integers.
    Items(usize),
    /// allowed, remaining, wait_ms, reset_ms.
    Four,
    /// limited, limit, remaining, retry_after_s, reset_after_s.
    Five,
}

fn check_shape(shape: Shape, v: &Value) -> Result<(), String> {
    let ok = match shape {
        Shape::Ok => matches!(v, Value::Okay) || matches!(v, Value::SimpleString(s) if s == "OK"),
        Shape::Items(n) => {
            ints(v).is_some_and(|x| x.len() == n && x.iter().all(|i| *i == 0 || *i == 1))
        }
        Shape::Four => ints(v).is_some_and(|x| {
            x.len() == 4 && (x[0] == 0 || x[0] == 1) && x[1] >= 0 && x[2] >= -1 && x[3] >= 0
        }),
        Shape::Five => ints(v).is_some_and(|x| {
            x.len() == 5
                && (x[0] == 0 || x[0] == 1)
                && x[1] >= 0
                && x[2] >= 0
                && x[3] >= -1
                && x[4] >= -1
        }),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("expected a {shape:?} reply, got {v:?}"))
    }
}

/// Checks on a successful reply: (connection, key, value, reply).
type Post = fn(&mut Connection, &str, &str, &Value) -> Result<(), String>;

/// One (command, argument) row: how to build a call around a value.
struct Row {
    what: &'static str,
    rule: Rule,
    call: fn(&str, &str) -> Vec<String>,
    shape: Shape,
    /// Errors acceptable inside the range (where the table allows one).
    in_range_errors: &'static [&'static str],
    /// A valid call creating the key, to check that an erroring call on an existing
    /// key changes nothing.
    seed: Option<fn(&str) -> Vec<String>>,
    post: Option<Post>,
}

fn four(r: &Value) -> [i64; 4] {
    let x = ints(r).expect("four integers");
    [x[0], x[1], x[2], x[3]]
}

/// A limiter with room 100 hit with cost `v` on a fresh key.
fn cost_of_100(v: &str, r: &Value) -> Result<(), String> {
    let [allowed, remaining, wait, _] = four(r);
    let c = n(v);
    let ok = if c <= 100 {
        allowed == 1 && remaining as u128 == 100 - c && wait == 0
    } else {
        allowed == 0 && wait == -1
    };
    if ok {
        Ok(())
    } else {
        Err(format!("cost {v} against room 100: got {r:?}"))
    }
}

/// `cost_of_100`, and a `COST 0` call on a fresh key creates no key.
fn cost_post(con: &mut Connection, k: &str, v: &str, r: &Value) -> Result<(), String> {
    cost_of_100(v, r)?;
    if n(v) == 0 && exists(con, k) {
        return Err("COST 0 created the key".to_string());
    }
    Ok(())
}

/// Allowed, with `room - 1` remaining.
fn allowed_one_of(room: u128, r: &Value) -> Result<(), String> {
    let [allowed, remaining, wait, _] = four(r);
    if allowed == 1 && remaining as u128 == room - 1 && wait == 0 {
        Ok(())
    } else {
        Err(format!(
            "one event against room {room}: expected [1, {}, 0, _], got {r:?}",
            room - 1
        ))
    }
}

fn gcra_allowed(max_burst: u128, r: &Value) -> Result<(), String> {
    let x = ints(r).expect("five integers");
    if x[0] == 0 && x[1] as u128 == max_burst + 1 && x[2] as u128 == max_burst {
        Ok(())
    } else {
        Err(format!(
            "first request with max_burst {max_burst}: expected [0, {}, {max_burst}, …], got {r:?}",
            max_burst + 1
        ))
    }
}

fn bf_capacity_is(con: &mut Connection, key: &str, v: &str, _: &Value) -> Result<(), String> {
    let got = bf_info(con, key).capacity;
    (got as u128 == n(v))
        .then_some(())
        .ok_or(format!("BF.INFOX Capacity is {got}, not {v}"))
}

fn bf_expansion_is(con: &mut Connection, key: &str, v: &str, _: &Value) -> Result<(), String> {
    let got = bf_info(con, key).expansion;
    (got.map(|e| e as u128) == Some(n(v)))
        .then_some(())
        .ok_or(format!("BF.INFOX Expansion rate is {got:?}, not {v}"))
}

fn bf_error_rate_is(con: &mut Connection, key: &str, v: &str, _: &Value) -> Result<(), String> {
    let want: f64 = v.parse().expect("a number");
    let got = bf_info(con, key).error_rate;
    ((got - want).abs() <= want * 1e-9)
        .then_some(())
        .ok_or(format!("BF.INFOX Error rate is {got}, not {v}"))
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            what: "BF.RESERVEX capacity",
            rule: BF_CAPACITY,
            call: |k, v| words(&["BF.RESERVEX", k, "0.01", v]),
            shape: Shape::Ok,
            in_range_errors: &[BF_TOO_LARGE],
            seed: None,
            post: Some(bf_capacity_is),
        },
        Row {
            what: "BF.INSERTX CAPACITY",
            rule: BF_CAPACITY,
            call: |k, v| words(&["BF.INSERTX", k, "CAPACITY", v, "ITEMS", "a"]),
            shape: Shape::Items(1),
            in_range_errors: &[BF_TOO_LARGE],
            seed: Some(|k| words(&["BF.INSERTX", k, "ITEMS", "seed"])),
            post: Some(bf_capacity_is),
        },
        Row {
            what: "BF.RESERVEX error_rate",
            rule: ERROR_RATE,
            call: |k, v| words(&["BF.RESERVEX", k, v, "100"]),
            shape: Shape::Ok,
            in_range_errors: &[],
            seed: None,
            post: Some(bf_error_rate_is),
        },
        Row {
            what: "BF.INSERTX ERROR",
            rule: ERROR_RATE,
            call: |k, v| words(&["BF.INSERTX", k, "ERROR", v, "ITEMS", "a"]),
            shape: Shape::Items(1),
            in_range_errors: &[],
            seed: Some(|k| words(&["BF.INSERTX", k, "ITEMS", "seed"])),
            post: Some(bf_error_rate_is),
        },
        Row {
            what: "BF.RESERVEX EXPANSION",
            rule: EXPANSION,
            call: |k, v| words(&["BF.RESERVEX", k, "0.01", "100", "EXPANSION", v]),
            shape: Shape::Ok,
            in_range_errors: &[],
            seed: None,
            post: Some(bf_expansion_is),
        },
        Row {
            what: "BF.INSERTX EXPANSION",
            rule: EXPANSION,
            call: |k, v| words(&["BF.INSERTX", k, "EXPANSION", v, "ITEMS", "a"]),
            shape: Shape::Items(1),
            in_range_errors: &[],
            seed: Some(|k| words(&["BF.INSERTX", k, "ITEMS", "seed"])),
            post: Some(bf_expansion_is),
        },
        Row {
            what: "RL.TOKEN burst",
            rule: BURST,
            call: |k, v| words(&["RL.TOKEN", k, "10", v]),
            shape: Shape::Four,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.TOKEN", k, "10", "5"])),
            post: Some(|_, _, v, r| {
                if n(v) == 0 {
                    let [allowed, _, wait, _] = four(r);
                    (allowed == 0 && wait == -1)
                        .then_some(())
                        .ok_or(format!("burst 0: expected [0, 0, -1, _], got {r:?}"))
                } else {
                    allowed_one_of(n(v), r)
                }
            }),
        },
        Row {
            what: "RL.TOKEN COST",
            rule: COST,
            call: |k, v| words(&["RL.TOKEN", k, "10", "100", "COST", v]),
            shape: Shape::Four,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.TOKEN", k, "10", "100"])),
            post: Some(cost_post),
        },
        Row {
            what: "RL.TOKEN MAXWAIT",
            rule: MAXWAIT,
            call: |k, v| words(&["RL.TOKEN", k, "10", "100", "MAXWAIT", v]),
            shape: Shape::Four,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.TOKEN", k, "10", "100"])),
            post: Some(|_, _, _, r| allowed_one_of(100, r)),
        },
        Row {
            what: "RL.LEAKY capacity",
            rule: RL_CAPACITY,
            call: |k, v| words(&["RL.LEAKY", k, "10", v]),
            shape: Shape::Four,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.LEAKY", k, "10", "5"])),
            post: Some(|_, _, v, r| allowed_one_of(n(v), r)),
        },
        Row {
            what: "RL.LEAKY COST",
            rule: COST,
            call: |k, v| words(&["RL.LEAKY", k, "10", "100", "COST", v]),
            shape: Shape::Four,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.LEAKY", k, "10", "100"])),
            post: Some(cost_post),
        },
        Row {
            what: "RL.WINDOW limit",
            rule: LIMIT,
            call: |k, v| words(&["RL.WINDOW", k, v, "1000"]),
            shape: Shape::Four,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.WINDOW", k, "5", "1000"])),
            post: Some(|_, _, v, r| allowed_one_of(n(v), r)),
        },
        Row {
            what: "RL.WINDOW window_ms",
            rule: WINDOW,
            call: |k, v| words(&["RL.WINDOW", k, "100", v]),
            shape: Shape::Four,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.WINDOW", k, "100", "1000"])),
            post: Some(|_, _, _, r| allowed_one_of(100, r)),
        },
        Row {
            what: "RL.WINDOW COST",
            rule: COST,
            call: |k, v| words(&["RL.WINDOW", k, "100", "1000", "COST", v]),
            shape: Shape::Four,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.WINDOW", k, "100", "1000"])),
            post: Some(cost_post),
        },
        Row {
            what: "RL.GCRA max_burst",
            rule: MAX_BURST,
            call: |k, v| words(&["RL.GCRA", k, v, "10", "60"]),
            shape: Shape::Five,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.GCRA", k, "15", "10", "60"])),
            post: Some(|_, _, v, r| gcra_allowed(n(v), r)),
        },
        Row {
            what: "RL.GCRA count",
            rule: GCRA_COUNT,
            call: |k, v| words(&["RL.GCRA", k, "15", v, "60"]),
            shape: Shape::Five,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.GCRA", k, "15", "10", "60"])),
            post: Some(|_, _, _, r| gcra_allowed(15, r)),
        },
        Row {
            what: "RL.GCRA period",
            rule: PERIOD,
            call: |k, v| words(&["RL.GCRA", k, "15", "10", v]),
            shape: Shape::Five,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.GCRA", k, "15", "10", "60"])),
            post: Some(|_, _, _, r| gcra_allowed(15, r)),
        },
        Row {
            what: "RL.GCRA QUANTITY",
            rule: QUANTITY,
            call: |k, v| words(&["RL.GCRA", k, "15", "10", "60", "QUANTITY", v]),
            shape: Shape::Five,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.GCRA", k, "15", "10", "60"])),
            post: Some(|_, _, v, r| {
                let x = ints(r).expect("five integers");
                let limited = i64::from(n(v) > 16);
                (x[0] == limited && x[1] == 16).then_some(()).ok_or(format!(
                    "QUANTITY {v} against limit 16: expected [{limited}, 16, …], got {r:?}"
                ))
            }),
        },
    ]
}

/// Runs every value of every row whose name starts with one of `prefixes`.
fn run_rows(prefixes: &[&str]) -> Vec<String> {
    let (_server, mut con) = lock_server();
    let mut failures = Vec::new();
    let mut k = 0;
    for row in rows()
        .into_iter()
        .filter(|r| prefixes.iter().any(|p| r.what.starts_with(p)))
    {
        for v in row.rule.values(&[]) {
            k += 1;
            let key = format!("key:{k}");
            let c = command(&(row.call)(&key, &v));
            let what = format!("{} {v}: {}", row.what, show(&c));
            let reply = got(redis::ConnectionLike::req_command(&mut con, &c));
            match (reply, row.rule.error_for(&v)) {
                (Got::Reply(r), None) => {
                    if let Err(e) = check_shape(row.shape, &r) {
                        failures.push(format!("{what}: {e}"));
                    } else if let Some(post) = row.post {
                        if let Err(e) = post(&mut con, &key, &v, &r) {
                            failures.push(format!("{what}: {e}"));
                        }
                    }
                }
                (Got::Error(e), None) if row.in_range_errors.contains(&e.as_str()) => {
                    if exists(&mut con, &key) {
                        failures.push(format!("{what}: answered `{e}` but created the key"));
                    }
                }
                (Got::Error(e), None) => failures.push(format!(
                    "{what}: in range, but answered `{e}` (BUG: an in-range value refused)"
                )),
                (Got::Error(e), Some(want)) if e == want => {
                    if exists(&mut con, &key) {
                        failures.push(format!("{what}: answered `{e}` but created the key"));
                    }
                }
                (other, Some(want)) => {
                    failures.push(format!("{what}: expected `{want}`, got {other:?}"));
                    let _: i64 = query!(&mut con, "DEL", &key);
                }
                (other, None) => failures.push(format!("{what}: expected a reply, got {other:?}")),
            }

            // An existing key must come out of an erroring call unchanged.
            let (Some(seed), Some(want)) = (row.seed, row.rule.error_for(&v)) else {
                continue;
            };
            let existing = format!("key:{k}:existing");
            let seed = command(&seed(&existing));
            if let Some(e) = err_of(&raw(&mut con, &seed)) {
                failures.push(format!("{}: seed call failed: {e}", show(&seed)));
                continue;
            }
            let before = digest(&mut con, &existing);
            let before_ttl = pttl(&mut con, &existing);
            let c = command(&(row.call)(&existing, &v));
            let reply = got(redis::ConnectionLike::req_command(&mut con, &c));
            let after = digest(&mut con, &existing);
            let after_ttl = pttl(&mut con, &existing);
            match reply {
                Got::Error(e) if e == want => {
                    if after != before || after_ttl > before_ttl {
                        failures.push(format!(
                            "{} on an existing key: answered `{e}` but changed it \
                             (PTTL {before_ttl} -> {after_ttl})",
                            show(&c)
                        ));
                    }
                }
                other => failures.push(format!(
                    "{} on an existing key: expected `{want}`, got {other:?}",
                    show(&c)
                )),
            }
        }
    }
    failures
}

/// BF.RESERVEX / BF.INSERTX capacity (1..=1e12), error rate (0 < e < 1) and EXPANSION
/// (1..=32768), each at 0, 1, max, max+1, -1, i64::MAX, u64::MAX, beyond u64, 1.5 and
/// text (error rates also at 0.5, 0.999999, 1e-6, 1.0000001, nan, inf): inside the range
/// OK / one 0-1 entry and BF.INFOX shows the value (capacity 1e12 may answer
/// `filter would exceed bf-max-bytes` instead, creating nothing); outside it the exact
/// error, no key created, and an existing filter unchanged (BF.INSERTX).
#[test]
fn bloom_argument_ranges() {
    report("BF ranges", run_rows(&["BF."]));
}

/// RL.TOKEN burst / COST / MAXWAIT and RL.LEAKY capacity / COST at 0, 1, max, max+1,
/// -1, i64::MAX, u64::MAX, beyond u64, 1.5 and text: inside the range four integers
/// with the expected decision (a full bucket of `burst` passes one event leaving
/// burst−1; a cost above the room is denied with wait −1; COST 0 creates no key);
/// outside it the exact error naming the argument, no key created, and an existing
/// limiter unchanged (same digest, PTTL not extended).
#[test]
fn token_and_leaky_argument_ranges() {
    report(
        "RL.TOKEN / RL.LEAKY ranges",
        run_rows(&["RL.TOKEN", "RL.LEAKY"]),
    );
}

/// RL.WINDOW limit / window_ms / COST and RL.GCRA max_burst / count / period /
/// QUANTITY over the same values: inside the range the expected decision (four integers;
/// GCRA's five like CL.THROTTLE: not limited, limit max_burst+1, remaining max_burst);
/// outside it the exact error naming the argument, no key created, and an existing
/// limiter unchanged.
#[test]
fn window_and_gcra_argument_ranges() {
    report(
        "RL.WINDOW / RL.GCRA ranges",
        run_rows(&["RL.WINDOW", "RL.GCRA"]),
    );
}

/// Every rate-limiter argument at its maximum in one call, with a fast (10/s) and a slow
/// (1/d; GCRA: 1 per 10 years) rate, and a second call on the state that stored: each
/// answers a well-formed reply, and a key that exists expires at its reported reset_ms
/// (PTTL within 1 s of it). `ERR rate limiter arithmetic would overflow` is accepted
/// only for the two calls whose exact reset (10^15 events at one a day: 8.64e22 ms)
/// cannot be an i64 of milliseconds — and then no key may exist — while a slow call
/// whose reset fits (10^6 events at one a day) must succeed.
#[test]
fn rate_limiters_take_every_maximum_at_once() {
    const OVERFLOW: &str = "ERR rate limiter arithmetic would overflow";
    let (_server, mut con) = lock_server();
    let max = MAX_COUNT.to_string();
    let count = GCRA_MAX_COUNT.to_string();
    let ten_years = TEN_YEARS_MS.to_string();
    let period = TEN_YEARS_S.to_string();
    // (call, reply shape, whether the overflow error is acceptable)
    let calls: Vec<(Vec<String>, Shape, bool)> = vec![
        (
            words(&[
                "RL.TOKEN", "t", "10", &max, "COST", &max, "MAXWAIT", &ten_years,
            ]),
            Shape::Four,
            false,
        ),
        (
            words(&[
                "RL.TOKEN", "t1", "1/d", &max, "COST", &max, "MAXWAIT", &ten_years,
            ]),
            Shape::Four,
            true,
        ),
        (
            words(&[
                "RL.TOKEN", "t2", "1/d", "1000000", "COST", "1000000", "MAXWAIT", &ten_years,
            ]),
            Shape::Four,
            false,
        ),
        (
            words(&["RL.LEAKY", "l", "10", &max, "COST", &max]),
            Shape::Four,
            false,
        ),
        (
            words(&["RL.LEAKY", "l1", "1/d", &max, "COST", &max]),
            Shape::Four,
            true,
        ),
        (
            words(&["RL.LEAKY", "l2", "1/d", "1000000", "COST", "1000000"]),
            Shape::Four,
            false,
        ),
        (
            words(&["RL.WINDOW", "w", &max, &ten_years, "COST", &max]),
            Shape::Four,
            false,
        ),
        (
            words(&["RL.GCRA", "g", &max, &count, &period, "QUANTITY", &max]),
            Shape::Five,
            false,
        ),
        (
            words(&["RL.GCRA", "g1", &max, "1", &period, "QUANTITY", "1"]),
            Shape::Five,
            false,
        ),
    ];
    let mut failures = Vec::new();
    for (call, shape, overflow_ok) in &calls {
        for round in ["first", "second"] {
            let c = command(call);
            let mut reply = None;
            match got(redis::ConnectionLike::req_command(&mut con, &c)) {
                Got::Reply(r) => {
                    if let Err(e) = check_shape(*shape, &r) {
                        failures.push(format!("{} ({round} call): {e}", show(&c)));
                    }
                    reply = Some(r);
                }
                Got::Error(e) if *overflow_ok && e == OVERFLOW => {
                    if exists(&mut con, &call[1]) {
                        failures.push(format!(
                            "{} ({round} call): answered `{e}` but the key exists",
                            show(&c)
                        ));
                    }
                }
                other => failures.push(format!(
                    "{} ({round} call): in range, expected a reply, got {other:?}",
                    show(&c)
                )),
            }
            // A limiter key expires when it is full again: at reset_ms.
            let p = pttl(&mut con, &call[1]);
            if let Some([_, _, _, reset]) = reply
                .as_ref()
                .and_then(ints)
                .and_then(|x| <[i64; 4]>::try_from(x).ok())
            {
                if p != -2 && (p - reset).abs() > 1_000 {
                    failures.push(format!(
                        "{} ({round} call): PTTL {p} is not reset_ms {reset}",
                        show(&c)
                    ));
                }
            }
        }
    }
    report("rate limiters at their maxima", failures);
}

const MAX_EXPANSION: u128 = 32_768;

const EXPANSION: Rule = Rule::int(
    1,
    MAX_EXPANSION,
    "ERR expansion must be an integer from 1 to 32768",
    "ERR expansion must be an integer from 1 to 32768",
);

const COST: Rule = int_rule!("cost", 0, MAX_COUNT);

const MAXWAIT: Rule = int_rule!("maxwait", 0, TEN_YEARS_MS);

const QUANTITY: Rule = int_rule!("quantity", 0, MAX_COUNT);

fn n(v: &str) -> u128 {
    v.parse().expect("an in-range value is an integer")
}

// ---------------------------------------------------------------------------------------
// -0 is not an integer
// ---------------------------------------------------------------------------------------

/// `-0` is not an integer for any argument, as in Redis itself — except
/// `RL.GCRA`'s, which reads integers as redis-cell's `CL.THROTTLE` does (Rust's
/// syntax, where `-0` is 0; issue #13, `rate_gcra_cell.rs`).
///
/// (A red-team regression of issue #10's fixes.)
#[test]
fn minus_zero_is_not_a_number() {
    let (_server, mut con) = lock_server();
    try_acquire(&mut con, "held", "a", 100_000).expect("granted");
    for (args, want) in [
        (
            vec!["DLOCK.ACQUIRE", "held", "b", "100", "WAIT", "-0"],
            "ERR timeout must be a non-negative integer",
        ),
        (
            vec!["DLOCK.ACQUIRE", "k", "b", "-0"],
            "ERR ttl must be a positive integer",
        ),
        (
            vec!["RL.TOKEN", "rl", "1/s", "-0"],
            "ERR burst must be a non-negative integer",
        ),
        (
            vec!["RL.TOKEN", "rl", "1/s", "5", "COST", "-0"],
            "ERR cost must be a non-negative integer",
        ),
    ] {
        let mut c = cmd(args[0]);
        for a in &args[1..] {
            c.arg(*a);
        }
        let start = Instant::now();
        let err = c.query::<Value>(&mut con).expect_err("refused");
        assert_eq!(err_text(&err), want, "{args:?}");
        assert!(start.elapsed() < Duration::from_secs(2), "{args:?} blocked");
    }
    assert!(!exists(&mut con, "k") && !exists(&mut con, "rl") && !exists(&mut con, "g"));
}
