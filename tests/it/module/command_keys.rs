//! Key declarations of every command the module registers (`COMMAND LIST
//! FILTERBY MODULE warden`, so no family can be left out): `COMMAND INFO`
//! declares the keys its `COMMAND DOCS` names and exactly one of the
//! `readonly` / `write` flags, `COMMAND GETKEYS` finds those keys in a valid
//! call drawn from the docs (what Redis Cluster routing and ACL key patterns
//! rely on), and a `readonly` command changes no key.

use crate::common::docs::*;
use crate::common::fuzz_calls::{build, show_call, valid_call};
use crate::common::payload::Rng;
use crate::common::*;

use std::time::Duration;

/// Valid calls drawn per command.
const CALLS: usize = 40;

/// A command's first/last/step key positions, as `COMMAND INFO` gives them.
fn key_range(con: &mut Connection, name: &str) -> (i64, i64, i64) {
    let v: Value = query!(con, "COMMAND", "INFO", name);
    let row = match &v {
        Value::Array(outer) => match outer.first() {
            Some(Value::Array(row)) => row.clone(),
            _ => panic!("COMMAND INFO {name} knows nothing: {v:?}"),
        },
        _ => panic!("COMMAND INFO {name}: {v:?}"),
    };
    let int = |i: usize| row.get(i).and_then(int_of).unwrap_or(-1);
    (int(3), int(4), int(5))
}

fn getkeys(con: &mut Connection, name: &str, call: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, String> {
    let mut c = cmd("COMMAND");
    c.arg("GETKEYS").arg(name);
    for w in call {
        c.arg(&w[..]);
    }
    c.query::<Vec<Vec<u8>>>(con).map_err(|e| err_text(&e))
}

/// Every registered command declares the keys its docs name (first key at the
/// docs' first key argument, a step of 1 for a single key) and exactly one of
/// `readonly` and `write`; for drawn valid calls `COMMAND GETKEYS` returns
/// those keys (all of them, first, for a command with movable keys).
#[test]
fn every_command_declares_the_keys_its_docs_name() {
    let (_server, mut con) = Server::start_conn();
    let names: Vec<String> = query!(&mut con, "COMMAND", "LIST", "FILTERBY", "MODULE", "warden");
    assert!(names.len() >= 40, "the module registers {names:?}");
    let mut rng = Rng(0x6e75_c0de);
    let (mut problems, mut checked) = (Vec::new(), 0);
    for name in &names {
        let docs = command_docs(&mut con, name);
        let flags = command_flags(&mut con, name);
        let keys = key_range(&mut con, name);
        let has = |f: &str| flags.iter().any(|x| x == f);
        if has("readonly") == has("write") {
            problems.push(format!(
                "{name}: flags {flags:?} need one of readonly, write"
            ));
        }
        let at = key_positions(&docs);
        let want = match at.first() {
            None => (0, 0, 0),
            Some(&first) if !has("movablekeys") && at.len() == 1 => {
                (first as i64 + 1, first as i64 + 1, 1)
            }
            Some(&first) => (first as i64 + 1, keys.1, keys.2),
        };
        if keys != want {
            problems.push(format!(
                "{name}: COMMAND INFO first/last/step {keys:?}, docs say {want:?}"
            ));
        }
        if at.is_empty() {
            continue;
        }
        for _ in 0..CALLS {
            let call = valid_call(&mut rng, name, &docs);
            let want: Vec<Vec<u8>> = at.iter().map(|&i| call[i].clone()).collect();
            match getkeys(&mut con, name, &call) {
                Ok(keys) if has("movablekeys") && keys.starts_with(&want) => {}
                Ok(keys) if keys == want => {}
                other => problems.push(format!(
                    "{}: COMMAND GETKEYS gives {other:?}, docs name {want:?}",
                    show_call(name.as_bytes(), &call)
                )),
            }
            checked += 1;
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked > 0);
}

/// A `readonly` command changes nothing: drawn valid calls of every readonly
/// command, on keys every public write command has filled with drawn valid
/// calls (and their expiries removed), leave every key as it was.
#[test]
fn readonly_commands_change_no_key() {
    let (_server, mut con) = Server::start_conn();
    let mut rng = Rng(0x0ead_0417);
    let public = public_commands(&mut con);
    let flagged = |con: &mut Connection, flag: &str| -> Vec<String> {
        public
            .iter()
            .filter(|n| command_flags(con, n).iter().any(|f| f == flag))
            .cloned()
            .collect()
    };
    let (writers, readers) = (flagged(&mut con, "write"), flagged(&mut con, "readonly"));
    assert!(!readers.is_empty() && !writers.is_empty());
    for name in &writers {
        let docs = command_docs(&mut con, name);
        for _ in 0..CALLS {
            let call = valid_call(&mut rng, name, &docs);
            let _: redis::RedisResult<Value> = build(name.as_bytes(), &call).query(&mut con);
        }
    }
    // No key may expire while the readers run: expiries removed, and the keys
    // that had already expired gone (the digest stops changing).
    let keys: Vec<String> = query!(&mut con, "KEYS", "*");
    for k in &keys {
        let _: i64 = query!(&mut con, "PERSIST", k);
    }
    let mut before: String = query!(&mut con, "DEBUG", "DIGEST");
    let settled = wait_until(Duration::from_secs(10), || {
        std::thread::sleep(Duration::from_millis(200));
        let now: String = query!(&mut con, "DEBUG", "DIGEST");
        std::mem::replace(&mut before, now.clone()) == now
    });
    assert!(settled, "the data set keeps changing with no command");
    assert_ne!(before, "0".repeat(40), "the writes made no key");
    let mut problems = Vec::new();
    for name in &readers {
        let docs = command_docs(&mut con, name);
        for _ in 0..CALLS {
            let call = valid_call(&mut rng, name, &docs);
            let reply: redis::RedisResult<Value> = build(name.as_bytes(), &call).query(&mut con);
            let after: String = query!(&mut con, "DEBUG", "DIGEST");
            if after != before {
                problems.push(format!(
                    "{} -> {reply:?} changed the data set",
                    show_call(name.as_bytes(), &call)
                ));
                break;
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
