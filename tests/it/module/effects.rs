//! Effects replicated in the client's own call (`src/effect.rs`): a lock or
//! limiter write reaches replicas and the AOF as the call itself with its
//! effect appended (`DLOCK.ACQUIRE k o 5000@token:holds:pxat`), or as the
//! internal command where that rewrite is not used (MULTI/EXEC, scripts,
//! `warden.fast-replication 0`). Both shapes must leave replicas and a
//! reloaded AOF with exactly the master's state.

use crate::common::*;
use crate::rate::support::rl;

use std::time::Duration;

/// The state fields appended to argument `at` of `c` after `@`.
fn effect_fields(c: &[String], at: usize) -> Vec<i64> {
    let (_, state) = c[at]
        .split_once('@')
        .unwrap_or_else(|| panic!("no effect in argument {at} of {c:?}"));
    state
        .split(':')
        .map(|f| f.parse().unwrap_or_else(|_| panic!("field {f:?} of {c:?}")))
        .collect()
}

fn names(cmds: &[Vec<String>]) -> Vec<String> {
    cmds.iter().map(|c| c[0].to_ascii_uppercase()).collect()
}

/// Master, replica and tap; `fast` sets `warden.fast-replication`.
fn pair(fast: bool) -> (Server, Server, ReplicationTap, Connection) {
    let flag = if fast { "1" } else { "0" };
    let master = Server::start_with(&[], &["fast-replication", flag]);
    let replica = master.start_replica(&[], &[]);
    let tap = master.replication_tap();
    let con = master.conn();
    (master, replica, tap, con)
}

/// The replica holds what the master holds: same digest, same absolute
/// expiry of every key (it applied the master's times, not its own clock).
fn assert_replica_matches(master: &Server, replica: &Server, keys: &[&str]) {
    master.sync_replicas(1);
    let (mut m, mut r) = (master.conn(), replica.conn());
    assert_eq!(db_digest(&mut r), db_digest(&mut m), "DEBUG DIGEST");
    for k in keys {
        assert_eq!(
            pexpiretime(&mut r, k),
            pexpiretime(&mut m, k),
            "PEXPIRETIME {k}"
        );
        assert_eq!(digest(&mut r, *k), digest(&mut m, *k), "digest of {k}");
    }
}

#[test]
fn lock_and_limiter_writes_replicate_in_the_call_itself() {
    let (master, replica, mut tap, mut con) = pair(true);
    let in_place = warden_stat(&mut con, "effects_in_place");

    let t0 = server_time_ms(&mut con);
    let token: i64 = query!(&mut con, "DLOCK.ACQUIRE", "L", "o", 5000);
    let again: i64 = query!(&mut con, "DLOCK.ACQUIRE", "W", "o", 7000, "WAIT", 1000);
    let _: i64 = query!(&mut con, "DLOCK.EXTEND", "L", "o", 9000);
    rl(&mut con, &["RL.TOKEN", "t", "10/s", "5", "COST", "2"]);
    rl(&mut con, &["RL.LEAKY", "l", "10/s", "5"]);
    rl(&mut con, &["RL.WINDOW", "w", "10", "60000"]);
    rl(&mut con, &["RL.GCRA", "g", "10", "100", "60"]);
    let t1 = server_time_ms(&mut con);
    let cmds = tap.until_marker(&mut con, "__mark__", "fast");
    assert_eq!(
        names(&cmds),
        [
            "DLOCK.ACQUIRE",
            "DLOCK.ACQUIRE",
            "DLOCK.EXTEND",
            "RL.TOKEN",
            "RL.LEAKY",
            "RL.WINDOW",
            "RL.GCRA"
        ],
        "{cmds:?}"
    );
    // ACQUIRE L o 5000@token:1:pxat — the ttl typed, then the effect.
    assert_eq!(cmds[0][1..3], ["L", "o"]);
    assert!(cmds[0][3].starts_with("5000@"), "{:?}", cmds[0]);
    let f = effect_fields(&cmds[0], 3);
    assert_eq!(f[..2], [token, 1]);
    assert!((t0 + 5000..=t1 + 5000).contains(&f[2]), "pxat {f:?}");
    // The rest of the call travels as typed.
    assert_eq!(cmds[1][4..], ["WAIT", "1000"]);
    assert_eq!(effect_fields(&cmds[1], 3)[..2], [again, 1]);
    let f = effect_fields(&cmds[2], 3);
    assert!((t0 + 9000..=t1 + 9000).contains(&f[2]), "extend pxat {f:?}");
    assert!(
        cmds[3][2].starts_with("10/s@") && cmds[3][4..] == ["COST", "2"],
        "{:?}",
        cmds[3]
    );
    for c in &cmds[3..] {
        let f = effect_fields(c, 2);
        let per = if c[0].eq_ignore_ascii_case("RL.WINDOW") {
            4
        } else {
            5
        };
        assert_eq!(
            f.len() as i64,
            3 + per * f[1],
            "kind:n:limits…:pxat in {c:?}"
        );
    }
    assert_eq!(warden_stat(&mut con, "effects_in_place"), in_place + 7);
    assert_replica_matches(&master, &replica, &["L", "W", "t", "l", "w", "g"]);

    // The replica's locks are the master's: same owner and token.
    let mut r = replica.conn();
    let info: Value = query!(&mut r, "DLOCK.INFO", "L");
    assert!(format!("{info:?}").contains(&token.to_string()), "{info:?}");
    assert_eq!(warden_stat(&mut r, "replays_without_effect"), 0);
    // A denied call replicates nothing, in either shape.
    let first = rl(&mut con, &["RL.GCRA", "d", "0", "1", "3600"]);
    assert_eq!(first[0], 0, "allowed: {first:?}");
    tap.until_marker(&mut con, "__mark__", "allowed");
    let second = rl(&mut con, &["RL.GCRA", "d", "0", "1", "3600"]);
    assert_eq!(second[0], 1, "limited: {second:?}");
    let denied: Option<i64> = query!(&mut con, "DLOCK.ACQUIRE", "L", "x", 5000);
    assert_eq!(denied, None);
    assert!(tap
        .until_marker(&mut con, "__mark__", "denied")
        .iter()
        .all(|c| c[0] != "RL.GCRA" && c[0] != "DLOCK.ACQUIRE"));
}

#[test]
fn transactions_scripts_and_the_switch_replicate_the_internal_command() {
    let (master, replica, mut tap, mut con) = pair(true);
    let before = warden_stat(&mut con, "effects_as_commands");

    let _: Value = redis::pipe()
        .atomic()
        .cmd("DLOCK.ACQUIRE")
        .arg("m")
        .arg("o")
        .arg(5000)
        .cmd("RL.TOKEN")
        .arg("mt")
        .arg("10/s")
        .arg(5)
        .query(&mut con)
        .unwrap();
    let cmds = tap.until_marker(&mut con, "__mark__", "multi");
    assert_eq!(
        names(&cmds),
        ["MULTI", "DLOCK._SET", "RL._SET", "EXEC"],
        "{cmds:?}"
    );

    let _: i64 = query!(
        &mut con,
        "EVAL",
        "return redis.call('DLOCK.ACQUIRE', KEYS[1], 'o', 5000)",
        1,
        "e"
    );
    let cmds = tap.until_marker(&mut con, "__mark__", "eval");
    assert!(names(&cmds).contains(&"DLOCK._SET".to_string()), "{cmds:?}");
    assert!(
        !names(&cmds).contains(&"DLOCK.ACQUIRE".to_string()),
        "{cmds:?}"
    );

    let library = "#!lua name=wardentest\n\
        redis.register_function('take', function(keys, args) \
        return redis.call('RL.GCRA', keys[1], 5, 10, 60) end)";
    let _: String = query!(&mut con, "FUNCTION", "LOAD", library);
    let _: Value = query!(&mut con, "FCALL", "take", 1, "f");
    let cmds = tap.until_marker(&mut con, "__mark__", "fcall");
    assert!(names(&cmds).contains(&"RL._SET".to_string()), "{cmds:?}");
    assert!(!names(&cmds).contains(&"RL.GCRA".to_string()), "{cmds:?}");

    // The switch: every effect as its internal command.
    let _: () = query!(&mut con, "CONFIG", "SET", "warden.fast-replication", 0);
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "s", "o", 5000);
    rl(&mut con, &["RL.TOKEN", "st", "10/s", "5"]);
    let cmds = tap.until_marker(&mut con, "__mark__", "switch");
    assert_eq!(names(&cmds), ["DLOCK._SET", "RL._SET"], "{cmds:?}");
    assert_eq!(warden_stat(&mut con, "effects_as_commands"), before + 6);
    assert_replica_matches(&master, &replica, &["m", "mt", "e", "f", "s", "st"]);
}

#[test]
fn clients_cannot_send_the_replicated_form() {
    let (_s, mut con) = Server::start_conn();
    let far = server_time_ms(&mut con) + 86_400_000;
    let forged = [
        vec![
            "DLOCK.ACQUIRE".to_string(),
            "k".into(),
            "o".into(),
            format!("5000@99:1:{far}"),
        ],
        vec![
            "DLOCK.EXTEND".to_string(),
            "k".into(),
            "o".into(),
            format!("5000@99:1:{far}"),
        ],
        vec![
            "RL.TOKEN".to_string(),
            "r".into(),
            format!("10/s@1:1:1:1:1:{far}"),
            "5".into(),
        ],
        vec![
            "RL.GCRA".to_string(),
            "g".into(),
            format!("5@4:1:1:1:1:{far}"),
            "1".into(),
            "1".into(),
        ],
    ];
    for args in &forged {
        let mut c = cmd(&args[0]);
        for a in &args[1..] {
            c.arg(a.as_str());
        }
        let r: redis::RedisResult<Value> = c.query(&mut con);
        let e = r.expect_err(&format!("{args:?} accepted"));
        assert!(
            err_text(&e).contains("must be") || err_text(&e).contains("rate"),
            "{args:?}: {e}"
        );
    }
    assert_eq!(db_digest(&mut con), "0".repeat(40), "a forged call wrote");
}

#[test]
fn the_aof_replays_effects_without_reading_the_clock() {
    // `appendfsync always`: the file is written before each reply. With
    // `everysec` a slow fsync (a busy disk when suites run in parallel) lets
    // the server postpone the write, and the file read below missed lines.
    let mut server = Server::start_with(
        &[
            "--appendonly",
            "yes",
            "--aof-use-rdb-preamble",
            "no",
            "--appendfsync",
            "always",
        ],
        &[],
    );
    let mut con = server.conn();
    let token: i64 = query!(&mut con, "DLOCK.ACQUIRE", "L", "o", 600_000);
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "L", "o", 700_000, "REENTRANT");
    rl(&mut con, &["RL.TOKEN", "t", "1/m", "5", "COST", "3"]);
    rl(&mut con, &["RL.GCRA", "g", "5", "1", "60"]);
    let digest_before = db_digest(&mut con);
    let expiries: Vec<i64> = ["L", "t", "g"]
        .iter()
        .map(|k| pexpiretime(&mut con, k))
        .collect();
    let aof: String = std::fs::read_dir(server.dir.join("appendonlydir"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".incr."))
        .map(|e| String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into_owned())
        .collect();
    assert!(
        aof.contains(&format!("600000@{token}:1:")),
        "AOF lacks the marked ACQUIRE:\n{aof}"
    );
    assert!(
        aof.contains("700000@") && aof.contains("1/m@"),
        "AOF:\n{aof}"
    );
    assert!(!aof.contains("DLOCK._SET"), "AOF:\n{aof}");

    // Replayed a little later, the state is the one written, to the millisecond.
    std::thread::sleep(Duration::from_millis(30));
    server.restart("NOSAVE");
    let mut con = server.conn();
    assert_eq!(
        db_digest(&mut con),
        digest_before,
        "digest after AOF replay"
    );
    let after: Vec<i64> = ["L", "t", "g"]
        .iter()
        .map(|k| pexpiretime(&mut con, k))
        .collect();
    assert_eq!(after, expiries, "expiries after AOF replay");
    assert_eq!(warden_stat(&mut con, "replays_without_effect"), 0);
    let holds: i64 = query!(&mut con, "DLOCK.RELEASE", "L", "o");
    assert_eq!(holds, 1);
    assert!(exists(&mut con, "L"), "two holds were replayed");
}

#[test]
fn a_replayed_call_without_its_effect_is_counted() {
    // An AOF whose ACQUIRE lacks the effect (as if a master's rewrite were
    // lost): applied on the loading server's clock, and counted.
    let server = Server::start_plain_aof();
    let mut con = server.conn();
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "seed", "o", 600_000);
    let dir = server.dir.join("appendonlydir");
    let incr = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| e.file_name().to_string_lossy().contains(".incr."))
        .expect("incremental AOF")
        .path();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&incr)
        .unwrap();
    std::io::Write::write_all(
        &mut file,
        b"*4\r\n$13\r\nDLOCK.ACQUIRE\r\n$5\r\nplain\r\n$1\r\no\r\n$6\r\n600000\r\n",
    )
    .unwrap();
    drop(file);
    let _: () = query!(&mut con, "DEBUG", "LOADAOF");
    assert!(exists(&mut con, "seed"));
    assert!(
        exists(&mut con, "plain"),
        "the unmarked ACQUIRE was applied"
    );
    assert_eq!(warden_stat(&mut con, "replays_without_effect"), 1);
    assert!(
        server.log_tail(200).contains("without its effect"),
        "{}",
        server.log_tail(20)
    );
}

#[test]
fn a_chained_replica_applies_the_new_shape() {
    let master = Server::start();
    let replica = master.start_replica(&[], &[]);
    let sub = replica.start_replica(&[], &[]);
    let mut con = master.conn();
    for i in 0..20 {
        let key = format!("k{i}");
        let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", &key, "o", 60_000 + i);
        rl(&mut con, &["RL.TOKEN", &format!("r{i}"), "5/s", "3"]);
    }
    master.sync_replicas(1);
    replica.sync_replicas(1);
    let (mut r, mut s) = (replica.conn(), sub.conn());
    let d = db_digest(&mut con);
    assert_eq!(db_digest(&mut r), d);
    assert_eq!(db_digest(&mut s), d);
    assert_eq!(pexpiretime(&mut s, "k7"), pexpiretime(&mut con, "k7"));
    assert_eq!(warden_stat(&mut s, "replays_without_effect"), 0);
}
