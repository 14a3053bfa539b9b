//! Files written by an earlier warden still load: an RDB and a rewritten AOF
//! (preamble off, so made of `DLOCK._SET`, `BF._LOADX`, `RL._SET` and
//! `PEXPIREAT`) saved by the build of commit ae92b46 (before the family
//! folders, the lease-is-expiry rule and the internal-command check) are in
//! tests/fixtures/ae92b46. Loading either must give back every key as it was:
//! lock owners, tokens, holds and deadlines; filters bit for bit (their digest);
//! limiters field for field and their expiry. Limiters are now held in encoding
//! version 2 (several limits, a token bucket's burst): their digests are those of
//! the converted state, and their meaning is checked by the decisions they make.

use crate::common::*;
use crate::lock::support::*;

use std::path::PathBuf;

/// What the fixture holds, as the old build reported it when it wrote the files.
struct OldLock {
    key: &'static str,
    owner: &'static [u8],
    token: i64,
    holds: i64,
    expires_at: i64,
}

const LOCKS: &[OldLock] = &[
    OldLock {
        key: "lock:a",
        owner: b"worker-a",
        token: 1_796_104_473_788_000,
        holds: 2,
        expires_at: 2_111_464_473_793,
    },
    OldLock {
        key: "lock:b",
        owner: b"worker-b",
        token: 1_796_104_473_798_000,
        holds: 1,
        expires_at: 2_096_104_473_798,
    },
];

/// Filters and limiters: key, `DEBUG DIGEST-VALUE`, `PEXPIRETIME` (-1: none). The
/// limiters' digests are of their state as this version holds it (one limit; the
/// token bucket's burst unknown).
const VALUES: &[(&str, &str, i64)] = &[
    ("bf:scaling", "52e687ef992abd0e4a6d7f3f51498621b16250ee", -1),
    ("bf:fixed", "4025952070472df41aad98bd6f8edd2acbf7a3bd", -1),
    (
        "rl:token",
        "97ae89dc60b1310a464ef7e5c57d1347abfef2f9",
        3_372_904_473_853,
    ),
    (
        "rl:leaky",
        "f38fc63c4343fd41ec58d0ab04a3f11d1f75afb8",
        3_057_544_473_859,
    ),
    (
        "rl:window",
        "3ee273a7e9b37e5fbcb7ca1343df3474deb064ad",
        2_426_824_473_865,
    ),
    (
        "rl:gcra",
        "4ca3419a94b0329aa1c7eab08df3494a6cc99b7b",
        2_742_184_473_871,
    ),
];

fn fixture() -> PathBuf {
    repo_root().join("tests/fixtures/ae92b46")
}

/// Every key of the fixture is back, exactly; and the locks still work.
fn assert_fixture_state(server: &Server) {
    let mut con = conn_t(server);
    let size: i64 = query!(&mut con, "DBSIZE");
    assert_eq!(size, 8, "every key of the fixture");
    for l in LOCKS {
        let info = lock_info(&mut con, l.key).unwrap_or_else(|| panic!("{} lost", l.key));
        assert_eq!(
            (info.owner.as_slice(), info.token, info.holds),
            (l.owner, l.token, l.holds),
            "{}",
            l.key
        );
        assert_eq!(pexpiretime(&mut con, l.key), l.expires_at, "{}", l.key);
        let now = server_time_ms(&mut con);
        assert!(
            (info.ttl_ms - (l.expires_at - now)).abs() < 1_000,
            "{info:?}"
        );
    }
    for (key, digest, expires_at) in VALUES {
        let d: String = cmd("DEBUG")
            .arg("DIGEST-VALUE")
            .arg(*key)
            .query::<Vec<String>>(&mut con)
            .expect("DIGEST-VALUE")
            .remove(0);
        assert_eq!(&d, digest, "{key}");
        assert_eq!(pexpiretime(&mut con, key), *expires_at, "{key}");
    }
    // The limiters mean what they meant. Each was written at one event per 3650 days
    // (one token = 315360000000 ticks, 1 tick/ms) and holds: rl:token 5 tokens
    // missing (of whatever burst the call gives, as the old version read it),
    // rl:leaky a level of 4, rl:window 3 events in a 3650-day window, rl:gcra a TAT
    // 3 emission intervals ahead.
    let look = |con: &mut Connection, args: &[&str]| -> Vec<i64> {
        cmd(args[0]).arg(&args[1..]).query(con).expect("look")
    };
    let r = look(
        &mut con,
        &["RL.TOKEN", "rl:token", "1/3650d", "10", "COST", "0"],
    );
    assert_eq!(&r[..3], &[1, 5, 0], "rl:token against burst 10: {r:?}");
    let r = look(
        &mut con,
        &["RL.TOKEN", "rl:token", "1/3650d", "7", "COST", "0"],
    );
    assert_eq!(&r[..3], &[1, 2, 0], "rl:token against burst 7: {r:?}");
    let r = look(
        &mut con,
        &["RL.LEAKY", "rl:leaky", "1/3650d", "10", "COST", "0"],
    );
    assert_eq!(&r[..3], &[1, 6, 0], "rl:leaky: {r:?}");
    let r = look(
        &mut con,
        &["RL.WINDOW", "rl:window", "10", "3650d", "COST", "0"],
    );
    assert_eq!(&r[..3], &[1, 7, 0], "rl:window: {r:?}");
    let r = look(
        &mut con,
        &["RL.GCRA", "rl:gcra", "9", "1", "315360000", "0"],
    );
    assert_eq!(&r[..4], &[0, 10, 7, -1], "rl:gcra: {r:?}");
    // The first write stores the token bucket's burst: 4 left of 10 after one more.
    let r = look(&mut con, &["RL.TOKEN", "rl:token", "1/3650d", "10"]);
    assert_eq!(&r[..3], &[1, 4, 0], "rl:token used: {r:?}");
    let r = look(
        &mut con,
        &["RL.TOKEN", "rl:token", "1/3650d", "7", "COST", "0"],
    );
    assert_eq!(
        &r[..3],
        &[1, 4, 0],
        "rl:token keeps its tokens at burst 7: {r:?}"
    );
    for i in 0..350 {
        let hit: i64 = query!(&mut con, "BF.EXISTSX", "bf:scaling", format!("item-{i}"));
        assert_eq!(hit, 1, "item-{i}");
    }
    // The two holds of lock:a need two releases; a new grant exceeds old tokens.
    assert_eq!(release(&mut con, "lock:a", "worker-a"), 1);
    assert_eq!(lock_info(&mut con, "lock:a").map(|i| i.holds), Some(1));
    assert_eq!(release(&mut con, "lock:a", "worker-a"), 1);
    let t = try_acquire(&mut con, "lock:a", "new", 1_000).expect("free after two releases");
    assert!(t > LOCKS[1].token, "{t}");
}

/// An RDB saved by the earlier build loads with every key as it was.
#[test]
fn an_rdb_from_the_earlier_build_loads() {
    let mut server = Server::start();
    server.kill();
    std::fs::copy(fixture().join("dump.rdb"), server.dir.join("dump.rdb")).expect("copy");
    server.crash_and_restart();
    assert_fixture_state(&server);
}

/// A rewritten AOF (no RDB preamble) from the earlier build replays with
/// every key as it was: its internal commands are accepted while loading.
#[test]
fn an_aof_from_the_earlier_build_replays() {
    let mut server = Server::start_with(&["--appendonly", "yes"], &[]);
    server.kill();
    let dir = server.dir.join("appendonlydir");
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&fixture().join("appendonlydir"), &dir);
    server.crash_and_restart();
    assert_fixture_state(&server);
}
