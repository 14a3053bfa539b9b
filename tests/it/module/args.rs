//! Module arguments (`loadmodule … name value`) take the forms `CONFIG SET
//! warden.<name>` takes, and a refused one is named in the log with where it
//! came from.

use crate::common::peer_redis::defrag_server_or_skip;
use crate::common::*;
use std::path::PathBuf;

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
        assert!(!warden_loaded(&mut con), "{refused:?} left warden loaded");
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

fn warden_loaded(con: &mut Connection) -> bool {
    let list: Vec<Value> = query!(con, "MODULE", "LIST");
    format!("{list:?}").contains("warden")
}

/// What `MODULE LOADEX … CONFIG` naming no configuration of the module (a
/// typo) does on a server (`binary_version`'s name, major, minor), as
/// `docs/operations.md` (Configuration) warns: `None` for a crash, else
/// `Some(whether warden stays loaded)` after an error reply.
fn loadex_typo_outcome(server: &(String, u32, u32)) -> Option<bool> {
    match (server.0.as_str(), server.1, server.2) {
        ("redis", 7, 0) => Some(true),
        ("redis", 7, 2 | 4) | ("valkey", 8 | 9, _) => None,
        ("redis", major, _) if major >= 8 => Some(false),
        _ => panic!("{server:?}: a server docs/operations.md says nothing of"),
    }
}

/// Pins a server bug `docs/operations.md` warns of (Configuration), on the
/// server under test and on the defragmenting peer (Redis 7.4 or 7.2, which
/// crash, where `make test` runs Debian's 7.0, which does not): a `MODULE
/// LOADEX … CONFIG` naming no configuration of the module crashes Redis 7.2
/// and 7.4 and Valkey 8 and 9 for any module with data types (RedisBloom
/// too). After OnLoad succeeds the server unloads the module, and its
/// `moduleUnload` refuses a module with data types by writing its reason
/// through a null pointer. warden cannot see the unapplied name from OnLoad;
/// `ARGS` (which warden checks) has no such failure. Redis 8 refuses the call
/// and goes on without warden; Redis 7.0 refuses it and keeps warden loaded.
#[test]
fn a_mistyped_loadex_config_does_what_the_docs_say() {
    let mut binaries = vec![PathBuf::from(server_binary())];
    binaries.extend(defrag_server_or_skip());
    for binary in &binaries {
        let version = binary_version(binary);
        let expected = loadex_typo_outcome(&version);
        let mut s = Server::start_bare(Some(binary));
        let mut con = s.conn();
        let path = module_path().display().to_string();
        let r: redis::RedisResult<()> = cmd("MODULE")
            .arg("LOADEX")
            .arg(&path)
            .arg(&["CONFIG", "warden.nosuch", "1"])
            .query(&mut con);
        assert!(r.is_err(), "{version:?}: {r:?}");
        let crashed = wait_until(std::time::Duration::from_secs(2), || !s.is_alive());
        let log = s.log_tail(100_000);
        assert!(
            log.contains("Loadex configurations were not applied"),
            "{version:?}\n{log}"
        );
        match expected {
            None => assert!(
                crashed && log.contains("crashed by signal"),
                "{version:?} no longer crashes here: update the warning in docs/operations.md\n{log}"
            ),
            Some(stays) => {
                assert!(!crashed, "{version:?} crashed\n{log}");
                assert_eq!(warden_loaded(&mut con), stays, "{version:?}: warden loaded");
            }
        }
    }
}

/// Every setting the module registers (`CONFIG GET warden.*`) appears in
/// `redis.conf.example` as a commented line with its default, and in the
/// configuration table of `docs/operations.md` with that default.
#[test]
fn every_setting_is_in_the_example_config_and_the_operations_page_with_its_default() {
    let (_s, mut con) = Server::start_conn();
    let all: Vec<String> = query!(&mut con, "CONFIG", "GET", "warden.*");
    assert!(all.len() >= 32, "{all:?}");
    let root = repo_root();
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
    let root = repo_root();
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
