//! Integration tests for the filter defaults: module arguments set them, CONFIG SET
//! changes them and refuses bad values.

use crate::bloom::support::*;
use crate::common::*;

// ---------------------------------------------------------------------------------------
// Configurations
// ---------------------------------------------------------------------------------------

fn config_get(con: &mut Connection, name: &str) -> String {
    let v: Vec<String> = query!(con, "CONFIG", "GET", name);
    assert_eq!(v.len(), 2, "CONFIG GET {name}: {v:?}");
    v[1].clone()
}

fn config_set(con: &mut Connection, name: &str, value: &str) -> redis::RedisResult<()> {
    cmd("CONFIG").arg("SET").arg(name).arg(value).query(con)
}

#[test]
fn module_arguments_set_the_defaults() {
    let mut s = Server::start_with(
        &[],
        &[
            "bf-error-rate",
            "0.001",
            "bf-initial-capacity",
            "1000",
            "bf-expansion",
            "4",
            "bf-max-bytes",
            "1048576",
        ],
    );
    let mut con = s.conn();
    assert_eq!(
        config_get(&mut con, "warden.bf-error-rate").parse::<f64>(),
        Ok(0.001)
    );
    assert_eq!(config_get(&mut con, "warden.bf-initial-capacity"), "1000");
    assert_eq!(config_get(&mut con, "warden.bf-expansion"), "4");
    assert_eq!(config_get(&mut con, "warden.bf-max-bytes"), "1048576");

    for (key, c) in [("a", "BF.ADDX"), ("m", "BF.MADDX"), ("i", "BF.INSERTX")] {
        let mut command = cmd(c);
        command.arg(key);
        if c == "BF.INSERTX" {
            command.arg("ITEMS");
        }
        command.arg("x");
        let _: Value = command.query(&mut con).expect(c);
        let info = bf_info(&mut con, key);
        assert_eq!(
            (info.capacity, info.expansion, info.error_rate),
            (1000, Some(4), 0.001),
            "{c}"
        );
    }
    // Explicit options win over the defaults.
    let _: Vec<i64> = query!(&mut con, "BF.INSERTX", "i2", "ERROR", "0.02", "ITEMS", "x");
    let info = bf_info(&mut con, "i2");
    assert_eq!(
        (info.capacity, info.expansion, info.error_rate),
        (1000, Some(4), 0.02)
    );

    // bf-max-bytes caps reserves: 1M at 1% needs ~1.2 MB.
    let e = expect_err(
        &mut con,
        &command(&["BF.RESERVEX", "big", "0.01", "1000000"]),
    );
    assert_eq!(e, TOO_LARGE);
    assert!(!exists(&mut con, "big"));
    let e = expect_err(
        &mut con,
        &command(&["BF.RESERVEX", "big", "0.01", "1000000", "NONSCALING"]),
    );
    assert_eq!(e, TOO_LARGE);
    reserve(&mut con, "fits", 0.01, 500_000, &["NONSCALING"]);
    assert!(bf_info(&mut con, "fits").size <= 1_048_576);
    s.assert_alive();
}

#[test]
fn config_set_changes_defaults_and_refuses_bad_values() {
    let (mut s, mut con) = Server::start_conn();
    assert_eq!(
        config_get(&mut con, "warden.bf-error-rate").parse::<f64>(),
        Ok(0.01)
    );
    assert_eq!(config_get(&mut con, "warden.bf-initial-capacity"), "100");
    assert_eq!(config_get(&mut con, "warden.bf-expansion"), "2");
    assert_eq!(
        config_get(&mut con, "warden.bf-max-bytes"),
        (128u64 << 20).to_string()
    );

    addx(&mut con, "old", "x");
    let old = digest(&mut con, "old");

    config_set(&mut con, "warden.bf-error-rate", "0.05").expect("set rate");
    config_set(&mut con, "warden.bf-initial-capacity", "50").expect("set capacity");
    config_set(&mut con, "warden.bf-expansion", "3").expect("set expansion");
    assert_eq!(
        config_get(&mut con, "warden.bf-error-rate").parse::<f64>(),
        Ok(0.05)
    );
    addx(&mut con, "new", "x");
    let info = bf_info(&mut con, "new");
    assert_eq!(
        (info.capacity, info.expansion, info.error_rate),
        (50, Some(3), 0.05)
    );
    // Existing filters keep their parameters.
    assert_eq!(digest(&mut con, "old"), old);
    let info = bf_info(&mut con, "old");
    assert_eq!(
        (info.capacity, info.expansion, info.error_rate),
        (100, Some(2), 0.01)
    );

    // Bad values are refused and change nothing.
    for bad in ["abc", "0", "1", "-0.5", "1.5", "nan", "inf", ""] {
        assert!(
            config_set(&mut con, "warden.bf-error-rate", bad).is_err(),
            "bf-error-rate {bad:?} accepted"
        );
    }
    for bad in ["0", "-1", "abc"] {
        assert!(config_set(&mut con, "warden.bf-initial-capacity", bad).is_err());
    }
    for bad in ["0", "32769", "-1", "abc"] {
        assert!(config_set(&mut con, "warden.bf-expansion", bad).is_err());
    }
    assert!(config_set(&mut con, "warden.bf-max-bytes", "abc").is_err());
    assert_eq!(
        config_get(&mut con, "warden.bf-error-rate").parse::<f64>(),
        Ok(0.05)
    );
    assert_eq!(config_get(&mut con, "warden.bf-initial-capacity"), "50");
    assert_eq!(config_get(&mut con, "warden.bf-expansion"), "3");
    addx(&mut con, "new2", "x");
    let info = bf_info(&mut con, "new2");
    assert_eq!(
        (info.capacity, info.expansion, info.error_rate),
        (50, Some(3), 0.05)
    );

    // Defaults that make a filter too large: implicit creation fails and creates nothing.
    config_set(&mut con, "warden.bf-initial-capacity", "1000000000").expect("set capacity");
    for args in [
        vec!["BF.ADDX", "huge", "x"],
        vec!["BF.MADDX", "huge", "x", "y"],
        vec!["BF.INSERTX", "huge", "ITEMS", "x"],
    ] {
        assert_eq!(expect_err(&mut con, &command(&args)), TOO_LARGE, "{args:?}");
        assert!(!exists(&mut con, "huge"));
    }
    config_set(&mut con, "warden.bf-initial-capacity", "50").expect("set capacity");

    // bf-max-bytes at run time: growth past the cap is refused per item, nothing changed.
    config_set(&mut con, "warden.bf-max-bytes", "4096").expect("set max bytes");
    assert_eq!(config_get(&mut con, "warden.bf-max-bytes"), "4096");
    reserve(&mut con, "g", 0.01, 1000, &["EXPANSION", "2"]);
    assert_eq!(
        expect_err(&mut con, &command(&["BF.RESERVEX", "g2", "0.01", "5000"])),
        TOO_LARGE
    );
    let mut i = 0u64;
    while cardx(&mut con, "g") < 1000 {
        addx(&mut con, "g", &item("g", i));
        i += 1;
    }
    let before = digest(&mut con, "g");
    let fresh = absent_item(&mut con, "g", "fresh:");
    assert_eq!(
        expect_err(&mut con, cmd("BF.ADDX").arg("g").arg(&fresh)),
        TOO_LARGE
    );
    let v = raw(
        &mut con,
        cmd("BF.MADDX").arg("g").arg("g0").arg(&fresh).arg("g1"),
    );
    let Value::Array(a) = v else {
        panic!("MADDX past bf-max-bytes: {v:?}");
    };
    assert_eq!(a[0], Value::Int(0));
    assert_eq!(err_of(&a[1]).as_deref(), Some(TOO_LARGE));
    assert_eq!(a[2], Value::Int(0));
    assert_eq!(digest(&mut con, "g"), before);
    assert_eq!(bf_info(&mut con, "g").filters, 1);
    s.assert_alive();
}
