//! Module arguments (`loadmodule … name value`) take the forms `CONFIG SET
//! warden.<name>` takes, and a refused one is named in the log with where it
//! came from.

use crate::common::peer_redis::redis_7_2_or_skip;
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

/// `MODULE LOADEX` at run time: a module argument warden refuses (`ARGS`)
/// and a `CONFIG` value out of range are refused with the server still up
/// and warden not loaded; good ones load it with their values.
#[test]
fn loadex_refuses_bad_arguments_and_values_and_the_server_goes_on() {
    let mut s = Server::start_bare(None);
    let mut con = s.conn();
    let path = module_path().display().to_string();
    let loaded = |con: &mut Connection| -> bool {
        let list: Vec<Value> = query!(con, "MODULE", "LIST");
        format!("{list:?}").contains("warden")
    };
    for refused in [
        vec!["ARGS", "nosuch", "1"],
        vec!["ARGS", "cache-max-value-bytes", "1tb"],
        vec!["CONFIG", "warden.bf-max-bytes", "1"],
    ] {
        let r: redis::RedisResult<()> = cmd("MODULE")
            .arg("LOADEX")
            .arg(&path)
            .arg(&refused)
            .query(&mut con);
        assert!(r.is_err(), "{refused:?} loaded");
        s.assert_alive();
        assert!(!loaded(&mut con), "{refused:?} left warden loaded");
    }
    ok(
        &mut con,
        cmd("MODULE").arg("LOADEX").arg(&path).arg(&[
            "CONFIG",
            "warden.bf-max-bytes",
            "2mb",
            "ARGS",
            "dlock-max-waiters",
            "7",
        ]),
    );
    assert_eq!(config_get(&mut con, "warden.bf-max-bytes"), "2097152");
    assert_eq!(config_get(&mut con, "warden.dlock-max-waiters"), "7");
    let token: Option<i64> = query!(&mut con, "DLOCK.ACQUIRE", "k", "me", 1000);
    assert!(token.is_some());
}

/// Pins a server bug `docs/operations.md` warns of (Configuration): on Redis 7.2 (and Valkey 8.1 and
/// 9.1, not run here) a `MODULE LOADEX … CONFIG` naming no configuration
/// of the module (a typo) crashes the server for any module with data types
/// (RedisBloom too): after
/// OnLoad succeeds the server unloads the module, and its `moduleUnload`
/// refuses a module with data types by writing its reason through a null
/// pointer. warden cannot see the unapplied name from OnLoad; `ARGS` (which
/// warden checks) has no such failure.
#[test]
fn a_mistyped_loadex_config_crashes_redis_7_2() {
    let Some(binary) = redis_7_2_or_skip() else {
        return;
    };
    let mut s = Server::start_bare(Some(&binary));
    let mut con = s.conn();
    let path = module_path().display().to_string();
    let r: redis::RedisResult<()> = cmd("MODULE")
        .arg("LOADEX")
        .arg(&path)
        .arg(&["CONFIG", "warden.nosuch", "1"])
        .query(&mut con);
    assert!(r.is_err());
    let crashed = wait_until(std::time::Duration::from_secs(5), || !s.is_alive());
    let log = s.log_tail(100_000);
    assert!(
        crashed
            && log.contains("Loadex configurations were not applied")
            && log.contains("moduleUnload"),
        "Redis 7.2.6 no longer crashes here: update the warning in docs/operations.md\n{log}"
    );
}

/// Every setting the module registers (`CONFIG GET warden.*`) appears in
/// `redis.conf.example` as a commented line with its default, and in the
/// configuration table of `docs/operations.md` with that default.
#[test]
fn every_setting_is_in_the_example_config_and_the_operations_page_with_its_default() {
    let (_s, mut con) = Server::start_conn();
    let all: Vec<String> = query!(&mut con, "CONFIG", "GET", "warden.*");
    assert!(all.len() >= 32, "{all:?}");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = std::fs::read_to_string(root.join("redis.conf.example")).expect("example");
    let page = std::fs::read_to_string(root.join("docs/operations.md")).expect("operations");
    let mut missing = Vec::new();
    for pair in all.chunks(2) {
        let (name, default) = (&pair[0], &pair[1]);
        let short = name.trim_start_matches("warden.");
        if !example.lines().any(|l| l == format!("# {name} {default}")) {
            missing.push(format!("redis.conf.example: `# {name} {default}`"));
        }
        let row = format!("| `{short}` | {default}");
        if !page.lines().any(|l| l.starts_with(&row)) {
            missing.push(format!("docs/operations.md: a row starting `{row}`"));
        }
    }
    assert!(missing.is_empty(), "missing:\n{}", missing.join("\n"));
}

/// Every field of INFO's `warden` section (each family's declaration) is
/// named in the INFO section of `docs/operations.md`.
#[test]
fn every_info_field_is_in_the_operations_page() {
    let (_s, mut con) = Server::start_conn();
    let info: String = query!(&mut con, "INFO", "warden");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/operations.md")).expect("operations");
    let section = page
        .split("\n## INFO\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("an INFO section");
    let fields: Vec<&str> = info
        .lines()
        .filter_map(|l| l.split_once(':').map(|(name, _)| name))
        .filter(|name| name.starts_with("warden_") && *name != "warden_version")
        .collect();
    assert!(fields.len() > 20, "{fields:?}");
    let missing: Vec<&&str> = fields
        .iter()
        .filter(|f| !section.contains(&format!("`{f}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "not in the INFO section of docs/operations.md: {missing:?}"
    );
}
