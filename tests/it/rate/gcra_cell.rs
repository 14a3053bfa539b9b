//! RL.GCRA takes CL.THROTTLE's arguments as redis-cell reads them, so its
//! users switch by renaming the command: the positional quantity, Rust's
//! integer forms (`+60`, `060`), and errors that name GCRA's own arguments.

use crate::common::*;

fn gcra(con: &mut Connection, args: &[&str]) -> redis::RedisResult<Vec<i64>> {
    let mut c = cmd("RL.GCRA");
    for a in args {
        c.arg(*a);
    }
    c.query(con)
}

#[test]
fn redis_cells_readme_call_works_as_written() {
    let (_s, mut con) = Server::start_conn();
    // redis-cell's README: `CL.THROTTLE user123 15 30 60 1` → 0 16 15 -1 2.
    assert_eq!(
        gcra(&mut con, &["user123", "15", "30", "60", "1"]).unwrap(),
        [0, 16, 15, -1, 2]
    );
    // The quantity defaults to 1, positional or named.
    assert_eq!(
        gcra(&mut con, &["user123", "15", "30", "60"]).unwrap(),
        [0, 16, 14, -1, 4]
    );
    assert_eq!(
        gcra(&mut con, &["user123", "15", "30", "60", "QUANTITY", "1"]).unwrap(),
        [0, 16, 13, -1, 6]
    );
    // A positional quantity of 3 takes three tokens at once.
    assert_eq!(
        gcra(&mut con, &["user123", "15", "30", "60", "3"]).unwrap(),
        [0, 16, 10, -1, 12]
    );
    // Quantity 0 only looks.
    let look = gcra(&mut con, &["user123", "15", "30", "60", "0"]).unwrap();
    assert_eq!(look[..3], [0, 16, 10]);
}

#[test]
fn integer_forms_redis_cell_accepts_are_the_same_numbers() {
    let (_s, mut con) = Server::start_conn();
    let plain = gcra(&mut con, &["a", "15", "30", "60", "2"]).unwrap();
    let signed = gcra(&mut con, &["b", "+15", "+30", "+60", "+2"]).unwrap();
    let padded = gcra(&mut con, &["c", "015", "0030", "060", "02"]).unwrap();
    assert_eq!(plain, signed);
    assert_eq!(plain, padded);
    // `-0` is 0 to Rust's parser, as to redis-cell: max_burst 0.
    assert_eq!(
        gcra(&mut con, &["z", "-0", "1", "60"]).unwrap(),
        [0, 1, 0, -1, 60]
    );
    let stored: i64 = query!(&mut con, "DBSIZE");
    assert_eq!(stored, 4);
}

#[test]
fn errors_name_gcras_arguments_and_change_nothing() {
    let (_s, mut con) = Server::start_conn();
    let cases: &[(&[&str], &str)] = &[
        (
            &["k", "-1", "30", "60"],
            "max_burst must be a non-negative integer",
        ),
        (&["k", "15", "0", "60"], "count must be a positive integer"),
        (&["k", "15", "30", "0"], "period must be a positive integer"),
        (
            &["k", "15", "30", "60", "-1"],
            "quantity must be a non-negative integer",
        ),
        (
            &["k", "15", "30", "60", "x"],
            "quantity must be a non-negative integer",
        ),
        (
            &["k", "9223372036854775807", "30", "60"],
            "max_burst is out of range",
        ),
        (
            &["k", "0009223372036854775808", "30", "60"],
            "max_burst is out of range",
        ),
        (
            &["k", "15", "99999999999999999999", "60"],
            "count is out of range",
        ),
        (&["k", "15", "30", "60", "1", "2"], "syntax error"),
        (&["k", "15", "30", "60", "QUANTITY"], "syntax error"),
        (
            &["k", "15", "30", "60", "2", "QUANTITY", "2"],
            "syntax error",
        ),
        (
            &["k", "1_5", "30", "60"],
            "max_burst must be a non-negative integer",
        ),
        (
            &["k", " 15", "30", "60"],
            "max_burst must be a non-negative integer",
        ),
    ];
    for (args, expected) in cases {
        let e = gcra(&mut con, args).expect_err(&format!("{args:?} accepted"));
        assert!(
            err_text(&e).contains(expected),
            "{args:?}: {} (wanted {expected})",
            err_text(&e)
        );
    }
    assert!(!exists(&mut con, "k"), "a refused call created the key");
}
