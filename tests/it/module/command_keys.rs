//! Key declarations: `COMMAND INFO` of every public command declares its one
//! key at argument 1 and its read/write flag, and `COMMAND GETKEYS` finds it
//! (what Redis Cluster routing and ACL key patterns rely on; one server is
//! enough).

use crate::common::*;

/// The public commands and whether they are read-only.
const COMMANDS: &[(&str, bool)] = &[
    ("dlock.acquire", false),
    ("dlock.release", false),
    ("dlock.extend", false),
    ("dlock.info", true),
    ("bf.reservex", false),
    ("bf.addx", false),
    ("bf.maddx", false),
    ("bf.existsx", true),
    ("bf.mexistsx", true),
    ("bf.insertx", false),
    ("bf.infox", true),
    ("bf.cardx", true),
    ("rl.token", false),
    ("rl.leaky", false),
    ("rl.window", false),
    ("rl.gcra", false),
    ("cache.set", false),
    ("cache.get", false),
    ("cache.info", true),
];

/// `COMMAND INFO` of every command declares one key at argument 1 (first 1,
/// last 1, step 1) and the read/write flag; `COMMAND GETKEYS` finds that key.
#[test]
fn command_info_declares_the_key_of_every_command() {
    let (_server, mut con) = Server::start_conn();
    let mut problems = Vec::new();
    for &(name, readonly) in COMMANDS {
        let v: Value = query!(&mut con, "COMMAND", "INFO", name);
        let Value::Array(outer) = &v else {
            panic!("COMMAND INFO {name}: {v:?}");
        };
        let Some(Value::Array(info)) = outer.first() else {
            problems.push(format!("{name}: COMMAND INFO knows nothing: {v:?}"));
            continue;
        };
        let keys: Vec<Option<i64>> = (3..6).map(|i| info.get(i).and_then(int_of)).collect();
        if keys != vec![Some(1), Some(1), Some(1)] {
            problems.push(format!(
                "{name}: first/last/step are {keys:?}, expected [1, 1, 1]"
            ));
        }
        let flags: Vec<String> = match info.get(2) {
            Some(Value::Array(f)) => f.iter().filter_map(text_of).collect(),
            Some(Value::Set(f)) => f.iter().filter_map(text_of).collect(),
            other => {
                problems.push(format!("{name}: flags are {other:?}"));
                continue;
            }
        };
        let want = if readonly { "readonly" } else { "write" };
        if !flags.iter().any(|f| f == want) {
            problems.push(format!("{name}: flags {flags:?} lack {want}"));
        }
        let mut getkeys = cmd("COMMAND");
        getkeys.arg("GETKEYS").arg(name).arg("the-key");
        let extra: &[&str] = match name {
            "dlock.acquire" | "dlock.extend" => &["owner", "1000"],
            "dlock.release" => &["owner"],
            "bf.reservex" => &["0.01", "100"],
            "bf.addx" | "bf.existsx" | "bf.maddx" | "bf.mexistsx" => &["item"],
            "bf.insertx" => &["ITEMS", "item"],
            "rl.token" | "rl.leaky" => &["10", "5"],
            "rl.window" => &["10", "1000"],
            "rl.gcra" => &["5", "10", "60"],
            "cache.set" => &["value", "1000"],
            "cache.get" => &["LEASE", "1000"],
            _ => &[],
        };
        getkeys.arg(extra);
        match getkeys.query::<Vec<String>>(&mut con) {
            Ok(k) if k == vec!["the-key".to_string()] => {}
            other => problems.push(format!("{name}: COMMAND GETKEYS gives {other:?}")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
