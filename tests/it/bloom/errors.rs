//! Integration tests for bad input to the `BF.*X` commands: every malformed call is
//! refused with a clear error and changes nothing.

use crate::bloom::support::*;
use crate::common::*;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

const BAD_RATE: &str = "ERR error rate must be a number between 0 and 1";

const BAD_CAPACITY: &str = "ERR capacity must be a positive integer";

const CAPACITY_RANGE: &str = "ERR capacity is out of range";

const BAD_EXPANSION: &str = "ERR expansion must be an integer from 1 to 32768";

const NONSCALING_EXPANSION: &str = "ERR expansion cannot be used with a non scaling filter";

const SYNTAX: &str = "ERR syntax error";

const NOT_FOUND: &str = "ERR not found";

const ITEM_EXISTS: &str = "ERR item exists";

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

fn arity(name: &str) -> String {
    format!("ERR wrong number of arguments for '{name}' command")
}

// ---------------------------------------------------------------------------------------
// 8. Bad input
// ---------------------------------------------------------------------------------------

#[test]
fn bad_input_is_refused_with_clear_errors_and_changes_nothing() {
    let (mut s, mut con) = Server::start_conn();

    let bf_rx = |args: &[&str]| {
        let mut v = vec!["BF.RESERVEX", "nokey"];
        v.extend_from_slice(args);
        v.iter().map(|s| s.to_string()).collect::<Vec<String>>()
    };
    let mut cases: Vec<(Vec<String>, String)> = Vec::new();
    let mut add = |args: Vec<String>, want: &str| cases.push((args, want.to_string()));
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<String>>();

    // Arity.
    add(words(&["BF.RESERVEX"]), &arity("bf.reservex"));
    add(words(&["BF.RESERVEX", "nokey"]), &arity("bf.reservex"));
    add(
        words(&["BF.RESERVEX", "nokey", "0.01"]),
        &arity("bf.reservex"),
    );
    add(words(&["BF.ADDX"]), &arity("bf.addx"));
    add(words(&["BF.ADDX", "nokey"]), &arity("bf.addx"));
    add(words(&["BF.ADDX", "nokey", "a", "b"]), &arity("bf.addx"));
    add(words(&["BF.MADDX"]), &arity("bf.maddx"));
    add(words(&["BF.MADDX", "nokey"]), &arity("bf.maddx"));
    add(words(&["BF.EXISTSX", "nokey"]), &arity("bf.existsx"));
    add(
        words(&["BF.EXISTSX", "nokey", "a", "b"]),
        &arity("bf.existsx"),
    );
    add(words(&["BF.MEXISTSX", "nokey"]), &arity("bf.mexistsx"));
    add(words(&["BF.CARDX"]), &arity("bf.cardx"));
    add(words(&["BF.CARDX", "nokey", "x"]), &arity("bf.cardx"));
    add(words(&["BF.INFOX"]), &arity("bf.infox"));
    add(
        words(&["BF.INFOX", "nokey", "SIZE", "x"]),
        &arity("bf.infox"),
    );
    // A word too many is the wrong number of arguments even when the field
    // before it is unknown, as it always was.
    add(
        words(&["BF.INFOX", "nokey", "FOO", "x"]),
        &arity("bf.infox"),
    );
    add(words(&["BF.INSERTX", "nokey"]), &arity("bf.insertx"));
    add(
        words(&["BF.INSERTX", "nokey", "ITEMS"]),
        &arity("bf.insertx"),
    );
    add(
        words(&["BF.INSERTX", "nokey", "CAPACITY", "10"]),
        &arity("bf.insertx"),
    );
    add(
        words(&["BF.INSERTX", "nokey", "CAPACITY", "10", "ITEMS"]),
        &arity("bf.insertx"),
    );
    add(
        words(&["BF.INSERTX", "nokey", "NONSCALING", "ITEMS"]),
        &arity("bf.insertx"),
    );

    // Error rates.
    for r in [
        "0", "0.0", "-0.01", "1", "1.0", "1.5", "nan", "NaN", "inf", "-inf", "abc", "", "1e400",
        "0.01abc", "-1e400",
    ] {
        add(bf_rx(&[r, "100"]), BAD_RATE);
        add(
            words(&["BF.INSERTX", "nokey", "ERROR", r, "ITEMS", "a"]),
            BAD_RATE,
        );
    }
    // Capacities.
    for c in ["0", "-1", "-100", "abc", "", "1.5", "1e3"] {
        add(bf_rx(&["0.01", c]), BAD_CAPACITY);
        add(
            words(&["BF.INSERTX", "nokey", "CAPACITY", c, "ITEMS", "a"]),
            BAD_CAPACITY,
        );
    }
    for c in [
        "1000000000001",
        "9223372036854775807",
        "99999999999999999999",
    ] {
        add(bf_rx(&["0.01", c]), CAPACITY_RANGE);
        add(
            words(&["BF.INSERTX", "nokey", "CAPACITY", c, "ITEMS", "a"]),
            CAPACITY_RANGE,
        );
    }
    add(bf_rx(&["0.01", "100000000000"]), TOO_LARGE);
    add(
        words(&[
            "BF.INSERTX",
            "nokey",
            "CAPACITY",
            "100000000000",
            "ITEMS",
            "a",
        ]),
        TOO_LARGE,
    );
    // Expansion.
    for e in ["0", "32769", "-1", "abc", "1.5", "", "99999999999999999999"] {
        add(bf_rx(&["0.01", "100", "EXPANSION", e]), BAD_EXPANSION);
        add(
            words(&["BF.INSERTX", "nokey", "EXPANSION", e, "ITEMS", "a"]),
            BAD_EXPANSION,
        );
    }
    add(
        bf_rx(&["0.01", "100", "EXPANSION", "2", "NONSCALING"]),
        NONSCALING_EXPANSION,
    );
    add(
        bf_rx(&["0.01", "100", "NONSCALING", "EXPANSION", "2"]),
        NONSCALING_EXPANSION,
    );
    add(
        words(&[
            "BF.INSERTX",
            "nokey",
            "EXPANSION",
            "2",
            "NONSCALING",
            "ITEMS",
            "a",
        ]),
        NONSCALING_EXPANSION,
    );
    // Unknown words and missing option values.
    add(bf_rx(&["0.01", "100", "FOO"]), SYNTAX);
    add(bf_rx(&["0.01", "100", "NONSCALING", "FOO"]), SYNTAX);
    add(bf_rx(&["0.01", "100", "EXPANSION"]), SYNTAX);
    add(bf_rx(&["0.01", "100", "ITEMS", "a"]), SYNTAX);
    add(bf_rx(&["0.01", "100", "CAPACITY", "10"]), SYNTAX);
    add(words(&["BF.INSERTX", "nokey", "FOO", "ITEMS", "a"]), SYNTAX);
    add(words(&["BF.INFOX", "nokey", "FOO"]), SYNTAX);
    // Missing keys.
    add(
        words(&["BF.INSERTX", "nokey", "NOCREATE", "ITEMS", "a"]),
        NOT_FOUND,
    );
    add(words(&["BF.INFOX", "nokey"]), NOT_FOUND);
    add(words(&["BF.INFOX", "nokey", "SIZE"]), NOT_FOUND);

    for (args, want) in &cases {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let got = expect_err(&mut con, &command(&refs));
        assert_eq!(&got, want, "{args:?}");
        assert!(!exists(&mut con, "nokey"), "{args:?} created the key");
    }

    // Non-UTF-8 bytes where numbers and words belong.
    let bin_cases: Vec<(Vec<&[u8]>, &str)> = vec![
        (
            vec![b"BF.RESERVEX", b"nokey", b"\xff\xfe", b"100"],
            BAD_RATE,
        ),
        (
            vec![b"BF.RESERVEX", b"nokey", b"0.01", b"\xff"],
            BAD_CAPACITY,
        ),
        (
            vec![b"BF.RESERVEX", b"nokey", b"0.01", b"100", b"\xffEXPANSION"],
            SYNTAX,
        ),
        (
            vec![
                b"BF.RESERVEX",
                b"nokey",
                b"0.01",
                b"100",
                b"EXPANSION",
                b"\x00",
            ],
            BAD_EXPANSION,
        ),
        (
            vec![b"BF.INSERTX", b"nokey", b"\xc3\x28", b"ITEMS", b"a"],
            SYNTAX,
        ),
    ];
    for (args, want) in &bin_cases {
        let got = expect_err(&mut con, &command(args));
        assert_eq!(got, *want, "{args:?}");
        assert!(!exists(&mut con, "nokey"));
    }

    // The same bad commands against an existing filter: an error, the filter unchanged.
    reserve(&mut con, "f", 0.01, 100, &[]);
    madd_range(&mut con, "f", "x", 0..150);
    let before = digest(&mut con, "f");
    let info = bf_info(&mut con, "f");
    for (args, _) in &cases {
        if args.len() < 2 || args[0] != "BF.RESERVEX" {
            continue;
        }
        let mut refs: Vec<&str> = args.iter().map(String::as_str).collect();
        refs[1] = "f";
        expect_err(&mut con, &command(&refs));
        assert_eq!(digest(&mut con, "f"), before, "{refs:?} changed the filter");
    }
    for args in [
        vec!["BF.RESERVEX", "f", "0.01", "100"],
        vec!["BF.RESERVEX", "f", "0.5", "7", "NONSCALING"],
        vec!["BF.RESERVEX", "f", "0.01", "100", "EXPANSION", "4"],
    ] {
        assert_eq!(
            expect_err(&mut con, &command(&args)),
            ITEM_EXISTS,
            "{args:?}"
        );
    }
    for args in [
        vec!["BF.ADDX", "f"],
        vec!["BF.ADDX", "f", "a", "b"],
        vec!["BF.MADDX", "f"],
        vec!["BF.INSERTX", "f", "ITEMS"],
        vec!["BF.INSERTX", "f", "FOO", "ITEMS", "new-item"],
        vec!["BF.INFOX", "f", "FOO"],
    ] {
        expect_err(&mut con, &command(&args));
        assert_eq!(digest(&mut con, "f"), before, "{args:?} changed the filter");
    }
    assert_eq!(bf_info(&mut con, "f"), info);

    // Keys of other types: WRONGTYPE, nothing changed.
    let _: () = query!(&mut con, "SET", "s", "v");
    let _: () = query!(&mut con, "RPUSH", "l", "v");
    let token: Option<i64> = query!(&mut con, "DLOCK.ACQUIRE", "lk", "me", 100_000);
    assert!(token.is_some());
    for key in ["s", "l", "lk"] {
        let before = digest(&mut con, key);
        for args in [
            vec!["BF.RESERVEX", key, "0.01", "100"],
            vec!["BF.ADDX", key, "a"],
            vec!["BF.MADDX", key, "a", "b"],
            vec!["BF.EXISTSX", key, "a"],
            vec!["BF.MEXISTSX", key, "a", "b"],
            vec!["BF.INSERTX", key, "ITEMS", "a"],
            vec!["BF.INSERTX", key, "NOCREATE", "ITEMS", "a"],
            vec!["BF.INFOX", key],
            vec!["BF.INFOX", key, "SIZE"],
            vec!["BF.CARDX", key],
        ] {
            assert_eq!(expect_err(&mut con, &command(&args)), WRONGTYPE, "{args:?}");
        }
        assert_eq!(digest(&mut con, key), before, "{key} changed");
    }
    // A filter key under the lock commands is WRONGTYPE too.
    let e = expect_err(&mut con, cmd("DLOCK.ACQUIRE").arg("f").arg("me").arg(1000));
    assert!(e.starts_with("WRONGTYPE"), "{e}");
    assert_eq!(digest(&mut con, "f"), before);
    s.assert_alive();
}
