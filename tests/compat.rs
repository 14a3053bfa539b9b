//! Files written by an earlier warden still load: an RDB and a rewritten AOF
//! (preamble off, so made of `DLOCK._SET`, `BF._LOADX`, `RL._SET` and
//! `PEXPIREAT`) saved by the build of commit ae92b46 (before the family
//! folders, the lease-is-expiry rule and the internal-command check) are in
//! tests/fixtures/ae92b46. Loading either must give back every key as it was:
//! lock owners, tokens, holds and deadlines; filters bit for bit (their digest);
//! limiters field for field and their expiry.

mod common;
use common::dlock::*;
use common::*;

use std::path::Path;

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

/// Filters and limiters: key, `DEBUG DIGEST-VALUE`, `PEXPIRETIME` (-1: none).
const VALUES: &[(&str, &str, i64)] = &[
    ("bf:scaling", "52e687ef992abd0e4a6d7f3f51498621b16250ee", -1),
    ("bf:fixed", "4025952070472df41aad98bd6f8edd2acbf7a3bd", -1),
    (
        "rl:token",
        "608daffbea6b6b5206db7a5a9c0f8c64d9f66b75",
        3_372_904_473_853,
    ),
    (
        "rl:leaky",
        "4111efe2250b830957983547797f3c68381744fb",
        3_057_544_473_859,
    ),
    (
        "rl:window",
        "c95591a7dc99b1bffcc14249fc79198018f9dd54",
        2_426_824_473_865,
    ),
    (
        "rl:gcra",
        "c73acf9143beb637ba4bd882a9aa7ee6513be92c",
        2_742_184_473_871,
    ),
];

fn fixture() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/ae92b46"
    ))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read fixture dir") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy fixture");
    }
}

/// Every key of the fixture is back, exactly; and the locks still work.
fn assert_fixture_state(server: &Server) {
    let mut con = conn_t(server);
    let size: i64 = cmd("DBSIZE").query(&mut con).unwrap();
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
    for i in 0..350 {
        let hit: i64 = cmd("BF.EXISTSX")
            .arg("bf:scaling")
            .arg(format!("item-{i}"))
            .query(&mut con)
            .unwrap();
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
