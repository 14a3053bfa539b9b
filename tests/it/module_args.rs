//! Module arguments (`loadmodule … name value`) take the forms `CONFIG SET
//! warden.<name>` takes, and a refused one is named in the log with where it
//! came from.

use crate::common::*;

fn config_get(con: &mut Connection, name: &str) -> String {
    let v: Vec<String> = query!(con, "CONFIG", "GET", name);
    assert_eq!(v.len(), 2, "CONFIG GET {name}: {v:?}");
    v[1].clone()
}

#[test]
fn memory_arguments_take_units_as_config_set_does() {
    let s = Server::start_with(
        &[],
        &["cache-max-value-bytes", "1mb", "bf-max-bytes", "2MB"],
    );
    let mut con = s.conn();
    assert_eq!(
        config_get(&mut con, "warden.cache-max-value-bytes"),
        "1048576"
    );
    assert_eq!(config_get(&mut con, "warden.bf-max-bytes"), "2097152");
    // The same text through CONFIG SET, and the limit it sets holds.
    ok(
        &mut con,
        cmd("CONFIG")
            .arg("SET")
            .arg("warden.cache-max-value-bytes")
            .arg("1kb"),
    );
    assert_eq!(config_get(&mut con, "warden.cache-max-value-bytes"), "1024");
    let stored: i64 = query!(&mut con, "CACHE.SET", "fits", "v".repeat(1024), 60_000);
    assert_eq!(stored, 1);
    let big: redis::RedisResult<i64> = cmd("CACHE.SET")
        .arg("big")
        .arg("v".repeat(1025))
        .arg(60_000)
        .query(&mut con);
    let e = big.expect_err("a value above the limit");
    assert!(
        e.to_string().contains("larger than cache-max-value-bytes"),
        "{e}"
    );
    for (name, value, want) in [
        ("bf-max-bytes", "4k", "4000"),
        ("bf-max-bytes", "3gb", "3221225472"),
    ] {
        let s = Server::start_with(&[], &[name, value]);
        let mut con = s.conn();
        assert_eq!(
            config_get(&mut con, &format!("warden.{name}")),
            want,
            "{value}"
        );
    }
}

#[test]
fn a_refused_argument_is_named_with_its_source() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["cache-max-value-bytes", "1tb"],
            "module argument 'cache-max-value-bytes' must be a byte count",
        ),
        (
            &["cache-max-value-bytes", "1gb"],
            "module argument 'cache-max-value-bytes' must be a byte count (units as in CONFIG SET: 64mb) from 1 to 536870912",
        ),
        (
            &["dlock-max-waiters", "1k"],
            "module argument 'dlock-max-waiters' must be an integer from 1 to 10000000",
        ),
        (&["bf-error-rate", "2"], "module argument 'bf-error-rate': "),
        (&["nosuch", "1"], "unknown module argument 'nosuch'"),
        (&["bf-max-bytes"], "module arguments must be name value pairs"),
    ];
    for (args, want) in cases {
        let log = Server::start_refused(args);
        assert!(
            log.contains(&format!("warden: ERR {want}")),
            "{args:?}: want {want:?} in the log:\n{log}"
        );
    }
}
