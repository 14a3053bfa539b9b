//! `DLOCK.GUARD key owner token command [arg ...]` (issue #15, SPEC "Fenced writes"): the
//! command runs only while `owner` holds `key` with `token`, in the same step; otherwise
//! `FENCED …` and nothing runs. It runs with the caller's ACL and the OOM rule, replicates
//! as it would alone, declares its keys, and refuses blocking, administrative,
//! transaction, internal and nested commands. Cluster routing is in `tests/it/module/cluster.rs`.

use crate::common::server_ops::assert_same_dataset;
use crate::common::*;
use crate::lock::support::*;

use redis::{cmd, Connection, Value};
use std::time::Duration;

/// `DLOCK.GUARD key owner token` followed by `words`.
fn guard(key: &str, owner: &str, token: i64, words: &[&str]) -> redis::Cmd {
    let mut c = cmd("DLOCK.GUARD");
    c.arg(key).arg(owner).arg(token);
    for w in words {
        c.arg(*w);
    }
    c
}

fn guarded(con: &mut Connection, c: &redis::Cmd) -> redis::RedisResult<Value> {
    c.query(con)
}

fn error_of(con: &mut Connection, c: &redis::Cmd, what: &str) -> String {
    match guarded(con, c) {
        Err(e) => err_text(&e),
        Ok(v) => panic!("{what}: expected an error, got {v:?}"),
    }
}

fn counter(con: &mut Connection) -> Option<i64> {
    cmd("GET").arg("counter").query(con).unwrap()
}

const FENCED: &str = "FENCED lk is not held by this owner with this token";

#[test]
fn the_command_runs_only_for_the_current_holder_and_token() {
    let (_server, mut con) = lock_server();
    let t = try_acquire(&mut con, "lk", "w1", 30_000).expect("granted");
    let v = guarded(&mut con, &guard("lk", "w1", t, &["INCR", "counter"])).unwrap();
    assert_eq!(v, Value::Int(1));
    let v = guarded(&mut con, &guard("lk", "w1", t, &["incrby", "counter", "4"])).unwrap();
    assert_eq!(v, Value::Int(5), "command names are case-insensitive");

    // Another owner, another token, a token of no grant: fenced, nothing ran.
    for (owner, token) in [("w2", t), ("w1", t - 1), ("w1", t + 1), ("w1", 1)] {
        let e = error_of(
            &mut con,
            &guard("lk", owner, token, &["INCR", "counter"]),
            owner,
        );
        assert_eq!(e, FENCED, "{owner} {token}");
    }
    assert_eq!(counter(&mut con), Some(5));

    // A reply of any shape passes through, errors of the command included.
    let v = guarded(
        &mut con,
        &guard("lk", "w1", t, &["MGET", "counter", "none"]),
    )
    .unwrap();
    assert_eq!(
        v,
        Value::Array(vec![Value::BulkString(b"5".to_vec()), Value::Nil])
    );
    let _: () = query!(&mut con, "RPUSH", "list", "x");
    let e = error_of(
        &mut con,
        &guard("lk", "w1", t, &["INCR", "list"]),
        "INCR list",
    );
    assert!(e.starts_with("WRONGTYPE"), "{e}");

    // Released: fenced. Free key: fenced, and the key is not created.
    assert_eq!(release(&mut con, "lk", "w1"), 1);
    let e = error_of(
        &mut con,
        &guard("lk", "w1", t, &["INCR", "counter"]),
        "released",
    );
    assert_eq!(e, FENCED);
    assert!(!exists(&mut con, "lk"));
    assert_eq!(counter(&mut con), Some(5));

    // The same owner name granted again: the old token is fenced, the new one runs.
    let t2 = try_acquire(&mut con, "lk", "w1", 30_000).expect("granted again");
    assert!(t2 > t);
    let e = error_of(
        &mut con,
        &guard("lk", "w1", t, &["INCR", "counter"]),
        "old grant",
    );
    assert_eq!(e, FENCED);
    let v = guarded(&mut con, &guard("lk", "w1", t2, &["INCR", "counter"])).unwrap();
    assert_eq!(v, Value::Int(6));
}

/// The red-team scenario of the issue: a holder with a 3 ms lease that pauses past it
/// cannot write, while the next holder can.
#[test]
fn a_holder_paused_past_its_lease_cannot_write() {
    let (_server, mut con) = lock_server();
    let t = try_acquire(&mut con, "lk", "slow", 3).expect("granted");
    std::thread::sleep(Duration::from_millis(20));
    let t2 = try_acquire(&mut con, "lk", "fast", 30_000).expect("the lease ended");
    let e = error_of(
        &mut con,
        &guard("lk", "slow", t, &["SET", "counter", "stale"]),
        "slow",
    );
    assert_eq!(e, FENCED);
    let v = guarded(&mut con, &guard("lk", "fast", t2, &["SET", "counter", "7"])).unwrap();
    assert_eq!(v, Value::Okay);
    assert_eq!(counter(&mut con), Some(7));
    // A lease that lapsed with nobody after it fences too.
    let t3 = try_acquire(&mut con, "lk2", "slow", 3).expect("granted");
    std::thread::sleep(Duration::from_millis(20));
    let e = error_of(
        &mut con,
        &guard("lk2", "slow", t3, &["INCR", "counter"]),
        "lapsed",
    );
    assert_eq!(e, "FENCED lk2 is not held by this owner with this token");
    assert_eq!(counter(&mut con), Some(7));
}

#[test]
fn bad_input_and_refused_commands_change_nothing() {
    let (server, mut con) = lock_server();
    let t = try_acquire(&mut con, "lk", "w1", 30_000).expect("granted");
    let _: () = query!(&mut con, "SET", "str", "v");
    let ts = t.to_string();
    let arity = "ERR wrong number of arguments for 'dlock.guard' command";
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec!["lk", "w1", &ts], arity.to_string()),
        (vec!["lk", "w1"], arity.to_string()),
        (
            vec!["lk", "", &ts, "INCR", "counter"],
            "ERR owner must not be empty".into(),
        ),
        (
            vec!["lk", "w1", "0", "INCR", "counter"],
            "ERR token must be a positive integer".into(),
        ),
        (
            vec!["lk", "w1", "x", "INCR", "counter"],
            "ERR token must be a positive integer".into(),
        ),
        (
            vec!["lk", "w1", "99999999999999999999", "INCR", "counter"],
            "ERR token is out of range".into(),
        ),
        (
            vec!["lk", "w1", &ts, "NOSUCH", "counter"],
            "ERR unknown command 'nosuch'".into(),
        ),
        (
            vec!["lk", "w1", &ts, "INCR"],
            "ERR wrong number of arguments for 'incr' command".into(),
        ),
        (
            vec!["str", "w1", &ts, "INCR", "counter"],
            "WRONGTYPE Operation against a key holding the wrong kind of value".into(),
        ),
    ];
    let refused: &[(&[&str], &str)] = &[
        (&["BLPOP", "list", "0"], "it can block"),
        (&["BRPOPLPUSH", "a", "b", "0"], "it can block"),
        // Redis 7.0 flags WAIT `noscript`, Valkey `blocking`: refused either way.
        (&["WAIT", "1", "0"], "*"),
        (
            &["CONFIG", "SET", "maxmemory", "1"],
            "it is an administrative command",
        ),
        // No key: they reach the whole database or server, past the lock's slot.
        (&["FLUSHALL"], "it names no key"),
        (&["FLUSHDB", "ASYNC"], "it names no key"),
        (&["SWAPDB", "0", "1"], "it names no key"),
        (&["KEYS", "*"], "it names no key"),
        (&["SCAN", "0"], "it names no key"),
        (&["RANDOMKEY"], "it names no key"),
        (&["DBSIZE"], "it names no key"),
        (&["PUBLISH", "ch", "m"], "it names no key"),
        (&["DEBUG", "SLEEP", "0"], "it is an administrative command"),
        (&["SHUTDOWN"], "it is an administrative command"),
        (
            &["REPLICAOF", "127.0.0.1", "1"],
            "it is an administrative command",
        ),
        (&["MULTI"], "it cannot run inside another command"),
        (&["EXEC"], "it cannot run inside another command"),
        (
            &["WATCH", "counter"],
            "it cannot run inside another command",
        ),
        (&["SUBSCRIBE", "ch"], "it cannot run inside another command"),
        (
            &["DLOCK._SET", "lk", "w1", "1:1:1"],
            "it is a module's internal command",
        ),
        (&["RL._SET", "r", "x"], "it is a module's internal command"),
        (
            &["CACHE._META", "c", "x"],
            "it is a module's internal command",
        ),
        (
            &["DLOCK.ACQUIRE", "other", "w1", "100", "WAIT", "0"],
            "it can block",
        ),
    ];
    let mut cases = cases;
    for (words, why) in refused {
        let mut args = vec!["lk", "w1", ts.as_str()];
        args.extend_from_slice(words);
        let name = words[0].to_lowercase();
        cases.push((args, format!("ERR DLOCK.GUARD cannot run '{name}': {why}")));
    }
    let nested = format!("DLOCK.GUARD lk w1 {t} INCR counter");
    let mut nested_args = vec!["lk", "w1", ts.as_str()];
    nested_args.extend(nested.split(' '));
    cases.push((
        nested_args,
        "ERR DLOCK.GUARD cannot run 'dlock.guard': DLOCK.GUARD does not nest".into(),
    ));
    let digest = db_digest(&mut con);
    let mut tap = server.replication_tap();
    let mut failures = Vec::new();
    for (args, want) in &cases {
        let mut c = cmd("DLOCK.GUARD");
        for a in args {
            c.arg(*a);
        }
        let matches = |got: &str| match want.strip_suffix('*') {
            Some(prefix) => got.starts_with(prefix),
            None => got == want,
        };
        match guarded(&mut con, &c) {
            Err(e) if matches(&err_text(&e)) => {}
            other => failures.push(format!(
                "DLOCK.GUARD {args:?}: want {want:?}, got {other:?}"
            )),
        }
    }
    report("bad DLOCK.GUARD calls", failures);
    assert_eq!(
        db_digest(&mut con),
        digest,
        "a refused GUARD changed the dataset"
    );
    let seen = without_multi_exec(tap.until_marker(&mut con, "__mark__", "refused"));
    assert!(
        seen.iter().all(|c| c[0].eq_ignore_ascii_case("SELECT")),
        "refused calls replicate nothing: {seen:?}"
    );
    assert_eq!(lock_info(&mut con, "lk").map(|i| i.token), Some(t));
}

/// Scripts and functions are refused: run from a module they crash the server when
/// the module was itself called from a script, and a guarded script past
/// `busy-reply-threshold` leaves its client unprotected (red team). A script may call
/// DLOCK.GUARD, though; and keys requests of deeply nested GUARD arguments stay
/// bounded.
#[test]
fn scripts_are_refused_and_nesting_cannot_exhaust_the_stack() {
    let (mut server, mut con) = lock_server();
    let t = try_acquire(&mut con, "lk", "w1", 30_000).expect("granted");
    let script = "return redis.call('INCRBY', KEYS[1], ARGV[1])";
    let sha: String = query!(&mut con, "SCRIPT", "LOAD", script);
    let lib = "#!lua name=guardlib\nredis.register_function('bump', function(keys, args) return redis.call('INCR', keys[1]) end)";
    let _: String = query!(&mut con, "FUNCTION", "LOAD", lib);
    for words in [
        vec!["EVAL", script, "1", "counter", "3"],
        vec!["EVALSHA", sha.as_str(), "1", "counter", "4"],
        vec!["FCALL", "bump", "1", "counter"],
        vec!["FCALL_RO", "bump", "1", "counter"],
    ] {
        let e = error_of(&mut con, &guard("lk", "w1", t, &words), words[0]);
        let want = format!(
            "ERR DLOCK.GUARD cannot run '{}': it cannot run inside another command",
            words[0].to_lowercase()
        );
        assert_eq!(e, want);
    }
    // The crash the red team found: a script calling DLOCK.GUARD … EVAL.
    let nested =
        format!("return redis.call('DLOCK.GUARD', 'lk', 'w1', '{t}', 'EVAL', 'return 1', '0')");
    let r: redis::RedisResult<Value> = cmd("EVAL").arg(nested).arg(0).query(&mut con);
    assert!(r.is_err(), "{r:?}");
    server.assert_alive();
    // A script may guard its own writes.
    let via_lua: i64 = query!(
        &mut con,
        "EVAL",
        "return redis.call('DLOCK.GUARD', KEYS[1], ARGV[1], ARGV[2], 'INCR', KEYS[2])",
        2,
        "lk",
        "counter",
        "w1",
        t
    );
    assert_eq!(via_lua, 1);
    // Keys of 5,000 nested GUARDs: answered (the lock key, then the first nested one's),
    // the server stays up.
    let mut getkeys = cmd("COMMAND");
    getkeys.arg("GETKEYS");
    for _ in 0..5000 {
        getkeys.arg("DLOCK.GUARD").arg("lk").arg("w1").arg(t);
    }
    getkeys.arg("SET").arg("x").arg("1");
    let keys: Vec<String> = getkeys.query(&mut con).unwrap();
    assert_eq!(keys, ["lk", "lk"]);
    let e = error_of(
        &mut con,
        &guard("lk", "w1", t, &["SPUBLISH", "ch", "m"]),
        "SPUBLISH",
    );
    assert!(e.contains("shard channel"), "{e}");
    server.assert_alive();
}

#[test]
fn the_callers_acl_applies_to_the_command_and_its_keys() {
    let server = Server::start();
    let mut admin = conn_t(&server);
    let _: () = query!(
        &mut admin, "ACL", "SETUSER", "worker", "on", ">pw", "~lk", "~counter", "+@all", "-lpush"
    );
    let mut con = conn_t(&server);
    let _: () = query!(&mut con, "AUTH", "worker", "pw");
    let t = try_acquire(&mut con, "lk", "w1", 30_000).expect("granted");
    let v = guarded(&mut con, &guard("lk", "w1", t, &["INCR", "counter"])).unwrap();
    assert_eq!(v, Value::Int(1));
    // A key outside the user's patterns: refused before anything runs.
    let e = error_of(
        &mut con,
        &guard("lk", "w1", t, &["INCR", "secret"]),
        "secret key",
    );
    assert!(e.starts_with("NOPERM"), "{e}");
    // A command the user may not run.
    let e = error_of(
        &mut con,
        &guard("lk", "w1", t, &["LPUSH", "counter", "x"]),
        "lpush",
    );
    assert!(e.starts_with("NOPERM"), "{e}");
    assert!(!exists(&mut admin, "secret"));
    assert_eq!(counter(&mut admin), Some(1));
    // COMMAND GETKEYS lists the lock key and the command's keys.
    let keys: Vec<String> = query!(
        &mut admin,
        "COMMAND",
        "GETKEYS",
        "DLOCK.GUARD",
        "lk",
        "w1",
        t,
        "MSET",
        "a",
        "1",
        "b",
        "2"
    );
    assert_eq!(keys, ["lk", "a", "b"]);
}

#[test]
fn out_of_memory_refuses_writes_but_not_reads() {
    let (_server, mut con) = lock_server();
    let t = try_acquire(&mut con, "lk", "w1", 60_000).expect("granted");
    let _: () = query!(&mut con, "SET", "counter", "1");
    let used = used_memory(&mut con);
    ok(
        &mut con,
        cmd("CONFIG")
            .arg("SET")
            .arg("maxmemory-policy")
            .arg("noeviction"),
    );
    ok(
        &mut con,
        cmd("CONFIG").arg("SET").arg("maxmemory").arg(used / 2),
    );
    let e = error_of(&mut con, &guard("lk", "w1", t, &["SET", "big", "v"]), "OOM");
    assert!(e.starts_with("OOM"), "{e}");
    assert!(!exists(&mut con, "big"));
    let v = guarded(&mut con, &guard("lk", "w1", t, &["GET", "counter"])).unwrap();
    assert_eq!(v, Value::BulkString(b"1".to_vec()));
    ok(&mut con, cmd("CONFIG").arg("SET").arg("maxmemory").arg(0));
}

/// The effects replicate as the command would on its own: INCR as INCR, SET … EX with
/// the absolute time Redis gives it, a fenced call as nothing; the replica and an AOF
/// replay end with the master's dataset.
#[test]
fn effects_replicate_as_the_command_alone() {
    let mut server = Server::start_plain_aof();
    let mut replica = server.start_streaming_replica();
    let mut con = conn_t(&server);
    let t = try_acquire(&mut con, "lk", "w1", 600_000).expect("granted");
    let mut tap = server.replication_tap();
    let _ = guarded(&mut con, &guard("lk", "w1", t, &["INCR", "counter"])).unwrap();
    let _ = guarded(
        &mut con,
        &guard("lk", "w1", t, &["SET", "s", "v", "EX", "100"]),
    )
    .unwrap();
    let _ = guarded(&mut con, &guard("lk", "w2", t, &["INCR", "counter"])).unwrap_err();
    let _ = guarded(&mut con, &guard("lk", "w1", t, &["GET", "counter"])).unwrap();
    let seen: Vec<Vec<String>> = without_multi_exec(tap.until_marker(&mut con, "__mark__", "fx"))
        .into_iter()
        .filter(|c| !c[0].eq_ignore_ascii_case("SELECT"))
        .collect();
    assert_eq!(
        seen.len(),
        2,
        "two writes, nothing for the fenced call or the read: {seen:?}"
    );
    assert_eq!(seen[0], ["INCR", "counter"]);
    assert_eq!(seen[1][..3], ["SET", "s", "v"]);
    assert!(
        seen[1][3].eq_ignore_ascii_case("PXAT") || seen[1][3].eq_ignore_ascii_case("EXAT"),
        "SET … EX replicates with an absolute time: {:?}",
        seen[1]
    );
    assert!(!seen
        .iter()
        .any(|c| c[0].eq_ignore_ascii_case("DLOCK.GUARD")));
    // warden's own commands, guarded: their effects replicate as the internal
    // command (the arguments are shared with DLOCK.GUARD's, never rewritten).
    let v = guarded(
        &mut con,
        &guard("lk", "w1", t, &["RL.TOKEN", "r", "1/h", "5"]),
    )
    .unwrap();
    assert_eq!(ints(&v).map(|r| r[0]), Some(1), "allowed: {v:?}");
    let v = guarded(
        &mut con,
        &guard("lk", "w1", t, &["DLOCK.EXTEND", "lk", "w1", "900000"]),
    );
    assert_eq!(v.unwrap(), Value::Int(1));
    assert!(
        !std::fs::read_to_string(server.dir.join("redis.log"))
            .unwrap()
            .contains("in-place string modify"),
        "a guarded command tried to rewrite a shared argument"
    );
    let digest = db_digest(&mut con);
    assert_same_dataset(&server, &replica, &["lk", "s", "r"], "guarded writes");
    replica.assert_alive();
    drop(replica);
    server.restart("NOSAVE");
    let mut con = server.conn();
    assert_eq!(db_digest(&mut con), digest, "AOF replay");
    assert_eq!(counter(&mut con), Some(1));
}

/// Commands whose keys move (their first key is 0 in `COMMAND INFO`) and
/// subcommands with a key run guarded; an unknown subcommand gets the
/// server's own error, not a refusal.
#[test]
fn commands_with_movable_keys_and_keyed_subcommands_run() {
    let (_server, mut con) = lock_server();
    let t = try_acquire(&mut con, "lk", "w1", 30_000).expect("granted");
    let _: i64 = query!(&mut con, "RPUSH", "list", "a", "b");
    let popped: Value = guarded(
        &mut con,
        &guard("lk", "w1", t, &["LMPOP", "1", "list", "LEFT"]),
    )
    .expect("LMPOP runs guarded");
    assert_eq!(
        popped,
        Value::Array(vec![
            Value::BulkString(b"list".to_vec()),
            Value::Array(vec![Value::BulkString(b"a".to_vec())]),
        ])
    );
    let encoding: String = guard("lk", "w1", t, &["OBJECT", "ENCODING", "list"])
        .query(&mut con)
        .expect("OBJECT ENCODING runs guarded");
    let direct: String = query!(&mut con, "OBJECT", "ENCODING", "list");
    assert_eq!(encoding, direct);
    let e = error_of(
        &mut con,
        &guard("lk", "w1", t, &["OBJECT", "NOSUCH", "list"]),
        "OBJECT NOSUCH",
    );
    assert!(e.starts_with("ERR unknown subcommand"), "{e}");
    let e = error_of(
        &mut con,
        &guard("lk", "w1", t, &["CLIENT", "LIST"]),
        "CLIENT LIST",
    );
    assert!(e.starts_with("ERR DLOCK.GUARD cannot run 'client'"), "{e}");
}

/// GUARD inside MULTI: the check and the command still run together.
#[test]
fn guard_inside_a_transaction() {
    let (_server, mut con) = lock_server();
    let t = try_acquire(&mut con, "lk", "w1", 30_000).expect("granted");
    let (a, b): (i64, i64) = redis::pipe()
        .atomic()
        .add_command(guard("lk", "w1", t, &["INCR", "counter"]))
        .add_command(guard("lk", "w1", t, &["INCR", "counter"]))
        .query(&mut con)
        .unwrap();
    assert_eq!((a, b), (1, 2));
    let e: redis::RedisResult<(i64,)> = redis::pipe()
        .atomic()
        .add_command(guard("lk", "w2", t, &["INCR", "counter"]))
        .query(&mut con);
    assert!(e.is_err_and(|e| err_text(&e) == FENCED));
}
