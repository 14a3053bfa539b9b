//! Integration tests for bad input to the rate limiters (`RL.*`): every malformed call is
//! refused with a clear error and changes nothing, a window beyond ten years is out of
//! range, and non-UTF-8 keys work.

use crate::common::*;
use crate::rate::support::*;

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

// ---------------------------------------------------------------------------------------
// 8. Bad input
// ---------------------------------------------------------------------------------------

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let (mut s, mut con) = Server::start_conn();
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
    let _: () = query!(&mut con, "SET", "str", "v");
    let _: () = query!(&mut con, "RPUSH", "list", "a");
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
    let v: String = query!(&mut con, "GET", "str");
    assert_eq!(v, "v");
    let l: Vec<String> = query!(&mut con, "LRANGE", "list", 0, -1);
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
    let (mut s, mut con) = Server::start_conn();
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
    let (mut s, mut con) = Server::start_conn();
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
    let _: () = query!(&mut con, "DEBUG", "RELOAD");
    for (_, _, key) in calls {
        assert_eq!(key_type(&mut con, key), "warden-rl");
    }
    s.assert_alive();
}
