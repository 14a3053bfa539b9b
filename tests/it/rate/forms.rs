//! Rates in every decimal and exponent form a program prints, and durations
//! with units wherever a duration is taken (SPEC, Rate limiters).

use crate::common::*;
use crate::rate::support::try_rl as call;

#[test]
fn printed_floats_are_rates() {
    let (_s, mut con) = Server::start_conn();
    // Python's str(2/3), Go's FormatFloat(r, 'f', -1, 64), %g and %e forms.
    for (rate, same_as) in [
        ("0.6666666666666666", None),
        ("1e-3", Some("0.001")),
        (".5", Some("0.5")),
        ("5.", Some("5")),
        ("1e2", Some("100")),
        ("2.5e2", Some("250")),
        ("2.500000e+03", Some("2500")),
        ("1.0000000001", None),
    ] {
        let r = call(&mut con, &["RL.TOKEN", &format!("k:{rate}"), rate, "3"])
            .unwrap_or_else(|e| panic!("{rate}: {e}"));
        assert_eq!(r[..2], [1, 2], "{rate}: {r:?}");
        if let Some(plain) = same_as {
            let a = call(
                &mut con,
                &["RL.TOKEN", &format!("a:{rate}"), rate, "3", "COST", "3"],
            )
            .unwrap();
            let b = call(
                &mut con,
                &["RL.TOKEN", &format!("b:{rate}"), plain, "3", "COST", "3"],
            )
            .unwrap();
            assert_eq!(a, b, "{rate} vs {plain}");
        }
    }
    // 2/3 per second: after 3 tokens, the next one is 1.5 s away.
    let r = call(
        &mut con,
        &["RL.TOKEN", "third", "0.6666666666666666", "3", "COST", "3"],
    )
    .unwrap();
    assert_eq!(r[..2], [1, 0]);
    let denied = call(&mut con, &["RL.TOKEN", "third", "0.6666666666666666", "3"]).unwrap();
    assert_eq!(denied[0], 0);
    // The rate held is the nearest ratio to 0.6666666666666666, a hair
    // below 2/3: the wait rounds up to 1501 ms.
    assert!((1_490..=1_501).contains(&denied[2]), "wait {denied:?}");
}

#[test]
fn rates_out_of_range_get_a_range_error() {
    let (_s, mut con) = Server::start_conn();
    for rate in ["1e400", "1e-400", "1e16", "2000000000000/ms", "1e-13/ms"] {
        let e = call(&mut con, &["RL.TOKEN", "k", rate, "5"]).expect_err(rate);
        assert_eq!(err_text(&e), "ERR rate is out of range", "{rate}");
    }
    for rate in ["nan", "-1", "1e", "abc", "1.2.3"] {
        let e = call(&mut con, &["RL.LEAKY", "k", rate, "5"]).expect_err(rate);
        assert!(err_text(&e).starts_with("ERR rate must be"), "{rate}: {e}");
    }
    assert!(!exists(&mut con, "k"));
}

#[test]
fn durations_take_units() {
    let (_s, mut con) = Server::start_conn();
    // RL.WINDOW's window and RL.TOKEN's MAXWAIT.
    let a = call(&mut con, &["RL.WINDOW", "w1", "10", "1m"]).unwrap();
    let b = call(&mut con, &["RL.WINDOW", "w2", "10", "60000"]).unwrap();
    assert_eq!(a, b);
    assert!(
        pttl(&mut con, "w1") > 60_000,
        "a 1 minute window keeps its key past a minute"
    );
    call(&mut con, &["RL.TOKEN", "t", "1/m", "2", "COST", "2"]).unwrap();
    let r = call(&mut con, &["RL.TOKEN", "t", "1/m", "2", "MAXWAIT", "90s"]).unwrap();
    assert_eq!(r[0], 1, "a token 60 s away is within 90s: {r:?}");
    assert!((59_900..=60_000).contains(&r[2]), "reserved: {r:?}");
    let r = call(&mut con, &["RL.TOKEN", "t", "1/m", "2", "MAXWAIT", "1m"]).unwrap();
    assert_eq!(r[0], 0, "the next one is 120 s away: {r:?}");
    // DLOCK's ttl and WAIT.
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "l", "o", "15m");
    let left = pttl(&mut con, "l");
    assert!((899_000..=900_000).contains(&left), "PTTL {left}");
    let _: i64 = query!(&mut con, "DLOCK.EXTEND", "l", "o", "1h");
    assert!(pttl(&mut con, "l") > 3_599_000);
    let none: Option<i64> = query!(&mut con, "DLOCK.ACQUIRE", "l", "x", "1s", "WAIT", "50ms");
    assert_eq!(none, None);
    // Out of range with a unit is a range error; a bad unit is not a number.
    let e = call(&mut con, &["RL.WINDOW", "w3", "10", "3651d"]).expect_err("3651d");
    assert_eq!(err_text(&e), "ERR window is out of range");
    let e: redis::RedisError = cmd("DLOCK.ACQUIRE")
        .arg("l2")
        .arg("o")
        .arg("5y")
        .query::<i64>(&mut con)
        .unwrap_err();
    assert!(
        err_text(&e).contains("ttl must be a positive integer"),
        "{e}"
    );
    assert!(!exists(&mut con, "w3") && !exists(&mut con, "l2"));
}
