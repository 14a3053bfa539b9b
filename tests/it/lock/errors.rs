//! Integration tests for bad input to `DLOCK.*`: every malformed call is refused with a
//! clear error and changes nothing; the WAIT option is case-insensitive; binary keys and
//! owners work.

use crate::common::*;
use crate::lock::support::*;

use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

const TTL_ERR: &str = "ERR ttl must be a positive integer";
const TTL_RANGE_ERR: &str = "ERR ttl is out of range";
const TIMEOUT_RANGE_ERR: &str = "ERR timeout is out of range";

// ---------------------------------------------------------------------------------------
// 9. Bad input
// ---------------------------------------------------------------------------------------

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let (mut server, mut con) = lock_server();
    con.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let t = try_acquire(&mut con, "k", "a", 30_000).expect("granted");
    assert_eq!(reenter(&mut con, "k", "a", 30_000), Some(t));
    let _: () = query!(&mut con, "SET", "s", "v");
    let _: () = query!(&mut con, "RPUSH", "l", "x", "y");
    let before = lock_info(&mut con, "k").unwrap();
    assert_eq!(before.holds, 2);
    let g0 = warden_stat(&mut con, "locks_granted");
    let c0 = warden_stat(&mut con, "locks_contended");
    let h0 = warden_stat(&mut con, "locks_handed_off");
    let mut tap = server.replication_tap();

    let bad_ttls = ["0", "-5", "-1", "abc", "1.5", "", "1e3"];
    let out_of_range_ttls = [
        "315360000001",
        "18445000000000000",
        "9223372036854775807",
        "99999999999999999999",
    ];
    // The calls, then each bad ttl and each out-of-range number in every place.
    let mut cases: Vec<(Vec<&str>, String)> = refusals(
        r#"
        DLOCK.ACQUIRE                                   => ERR wrong number of arguments for 'dlock.acquire' command
        DLOCK.ACQUIRE k                                 => ERR wrong number of arguments for 'dlock.acquire' command
        DLOCK.ACQUIRE k a                               => ERR wrong number of arguments for 'dlock.acquire' command
        DLOCK.RELEASE                                   => ERR wrong number of arguments for 'dlock.release' command
        DLOCK.RELEASE k                                 => ERR wrong number of arguments for 'dlock.release' command
        DLOCK.RELEASE k a extra                         => ERR syntax error
        DLOCK.RELEASE k a TOKEN                         => ERR syntax error
        DLOCK.RELEASE k a TOKEN 1 TOKEN 1               => ERR syntax error
        DLOCK.RELEASE k a TOKEN 0                       => ERR token must be a positive integer
        DLOCK.RELEASE k a TOKEN -3                      => ERR token must be a positive integer
        DLOCK.RELEASE k a TOKEN 1.5                     => ERR token must be a positive integer
        DLOCK.RELEASE k a TOKEN ""                      => ERR token must be a positive integer
        DLOCK.RELEASE k a TOKEN 99999999999999999999    => ERR token is out of range
        DLOCK.RELEASE s a TOKEN 0                       => ERR token must be a positive integer
        DLOCK.EXTEND                                    => ERR wrong number of arguments for 'dlock.extend' command
        DLOCK.EXTEND k                                  => ERR wrong number of arguments for 'dlock.extend' command
        DLOCK.EXTEND k a                                => ERR wrong number of arguments for 'dlock.extend' command
        DLOCK.EXTEND k a 100 extra                      => ERR syntax error
        DLOCK.EXTEND k a 100 TOKEN                      => ERR syntax error
        DLOCK.EXTEND k a 100 TOKEN x                    => ERR token must be a positive integer
        DLOCK.EXTEND k a 100 TOKEN 0                    => ERR token must be a positive integer
        DLOCK.INFO                                      => ERR wrong number of arguments for 'dlock.info' command
        DLOCK.INFO k extra                              => ERR wrong number of arguments for 'dlock.info' command
        DLOCK.ACQUIRE k "" 100                          => ERR owner must not be empty
        DLOCK.ACQUIRE free "" 100                       => ERR owner must not be empty
        DLOCK.ACQUIRE free "" 100 WAIT 100              => ERR owner must not be empty
        DLOCK.RELEASE k ""                              => ERR owner must not be empty
        DLOCK.EXTEND k "" 100                           => ERR owner must not be empty
        DLOCK.ACQUIRE k a 100 WAIT -1                   => ERR timeout must be a non-negative integer
        DLOCK.ACQUIRE k b 100 WAIT -1                   => ERR timeout must be a non-negative integer
        DLOCK.ACQUIRE k b 100 WAIT abc                  => ERR timeout must be a non-negative integer
        DLOCK.ACQUIRE k b 100 WAIT 1.5                  => ERR timeout must be a non-negative integer
        DLOCK.ACQUIRE k b 100 WAIT ""                   => ERR timeout must be a non-negative integer
        DLOCK.ACQUIRE k b 100 WAIT 99999999999999999999 => ERR timeout is out of range
        DLOCK.ACQUIRE free a 100 WAIT -1                => ERR timeout must be a non-negative integer
        DLOCK.ACQUIRE k b 100 WAIT                      => ERR syntax error
        DLOCK.ACQUIRE free a 100 WAIT                   => ERR syntax error
        DLOCK.ACQUIRE k b 100 NOWAIT                    => ERR syntax error
        DLOCK.ACQUIRE free a 100 BOGUS 1                => ERR syntax error
        DLOCK.ACQUIRE k a 100 WAIT 10 extra             => ERR syntax error
        DLOCK.ACQUIRE s a 100                           => WRONGTYPE Operation against a key holding the wrong kind of value
        DLOCK.ACQUIRE l a 100                           => WRONGTYPE Operation against a key holding the wrong kind of value
        DLOCK.ACQUIRE s a 100 WAIT 100                  => WRONGTYPE Operation against a key holding the wrong kind of value
        DLOCK.RELEASE s a                               => WRONGTYPE Operation against a key holding the wrong kind of value
        DLOCK.RELEASE l a                               => WRONGTYPE Operation against a key holding the wrong kind of value
        DLOCK.EXTEND s a 100                            => WRONGTYPE Operation against a key holding the wrong kind of value
        DLOCK.EXTEND l a 100                            => WRONGTYPE Operation against a key holding the wrong kind of value
        DLOCK.INFO s                                    => WRONGTYPE Operation against a key holding the wrong kind of value
        DLOCK.INFO l                                    => WRONGTYPE Operation against a key holding the wrong kind of value
        "#,
    )
    .into_iter()
    .map(|(call, error)| (call, error.to_string()))
    .collect();
    for ttl in bad_ttls {
        for call in [
            ["DLOCK.ACQUIRE", "k", "a", ttl].to_vec(),
            ["DLOCK.ACQUIRE", "k", "b", ttl].to_vec(),
            ["DLOCK.ACQUIRE", "free", "a", ttl].to_vec(),
            ["DLOCK.ACQUIRE", "free", "a", ttl, "WAIT", "100"].to_vec(),
            ["DLOCK.EXTEND", "k", "a", ttl].to_vec(),
            ["DLOCK.EXTEND", "free", "a", ttl].to_vec(),
        ] {
            cases.push((call, TTL_ERR.to_string()));
        }
    }
    for ttl in out_of_range_ttls {
        for call in [
            ["DLOCK.ACQUIRE", "k", "a", ttl].to_vec(),
            ["DLOCK.ACQUIRE", "free", "a", ttl, "WAIT", "100"].to_vec(),
            ["DLOCK.ACQUIRE", "k", "b", "100", "WAIT", ttl].to_vec(),
            ["DLOCK.EXTEND", "k", "a", ttl].to_vec(),
        ] {
            let want = if call.get(4) == Some(&"WAIT") && call[5] == ttl {
                TIMEOUT_RANGE_ERR
            } else {
                TTL_RANGE_ERR
            };
            cases.push((call, want.to_string()));
        }
    }

    let start = Instant::now();
    for (call, want) in &cases {
        let c = command(call);
        let what = format!("{call:?}");
        let got = expect_err(c.query::<Value>(&mut con), &what);
        assert_eq!(&got, want, "{what}");
        server.assert_alive();

        let now = lock_info(&mut con, "k").unwrap_or_else(|| panic!("{what} deleted the lock"));
        assert_eq!(
            (&now.owner, now.token, now.holds, now.waiters),
            (&before.owner, before.token, before.holds, before.waiters),
            "{what} changed the lock"
        );
        let slack = start.elapsed().as_millis() as i64 + 1_000;
        assert!(
            now.ttl_ms <= before.ttl_ms && now.ttl_ms >= before.ttl_ms - slack,
            "{what} changed the TTL: {} -> {}",
            before.ttl_ms,
            now.ttl_ms
        );
        assert!(!exists(&mut con, "free"), "{what} created a key");
        let s: String = query!(&mut con, "GET", "s");
        assert_eq!(s, "v", "{what}");
        assert_eq!(pttl(&mut con, "s"), -1, "{what}");
        let l: Vec<String> = query!(&mut con, "LRANGE", "l", 0, -1);
        assert_eq!(l, ["x", "y"], "{what}");
        let n: i64 = query!(&mut con, "DBSIZE");
        assert_eq!(n, 3, "{what}");
    }
    let granted = warden_stat(&mut con, "locks_granted");
    assert_eq!(granted, g0, "errors are no grants");
    let contended = warden_stat(&mut con, "locks_contended");
    assert_eq!(contended, c0, "errors are no contention");
    assert_eq!(warden_stat(&mut con, "locks_handed_off"), h0);
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);

    // Nothing reached the replication stream.
    let seen = without_multi_exec(tap.until_marker(&mut con, "__mark__", "end"));
    assert!(seen.is_empty(), "refused commands propagated: {seen:?}");

    // The lock still works normally.
    assert_eq!(release(&mut con, "k", "a"), 1);
    assert_eq!(release(&mut con, "k", "a"), 1);
    assert!(!exists(&mut con, "k"));
    server.assert_alive();
}

#[test]
fn wait_option_is_case_insensitive() {
    let (_server, mut con) = lock_server();
    try_acquire(&mut con, "ci", "holder", 30_000).unwrap();
    let r: Option<i64> = query!(&mut con, "DLOCK.ACQUIRE", "ci", "b", 1_000, "wait", 50);
    assert_eq!(r, None);
    let r: Option<i64> = query!(&mut con, "DLOCK.ACQUIRE", "ci2", "b", 1_000, "Wait", 50);
    assert!(r.is_some());
}

#[test]
fn binary_keys_and_owners() {
    let (mut server, mut con) = lock_server();
    let key: &[u8] = b"\xff\x00lock\xfe";
    let owner: &[u8] = b"\x80\x81\x00own\xc3";
    let t = try_acquire(&mut con, key, owner, 30_000).expect("granted");
    let i = lock_info(&mut con, key).unwrap();
    assert_eq!(i.owner, owner, "owner bytes round-trip exactly");
    assert_eq!(key_type(&mut con, key), "warden-lk");
    assert_eq!(
        reenter(&mut con, key, owner, 30_000),
        Some(t),
        "re-entry with the same bytes"
    );
    assert_eq!(
        try_acquire(&mut con, key, &b"\x80\x81"[..], 30_000),
        None,
        "prefix before NUL is another owner"
    );
    assert_eq!(
        try_acquire(&mut con, key, &b"\x80\x81\x00own\xc4"[..], 30_000),
        None
    );
    assert_eq!(release(&mut con, key, &b"\x80\x81"[..]), 0);
    assert_eq!(release(&mut con, key, &b"\x80\x81\x00own"[..]), 0);
    assert_eq!(extend(&mut con, key, &b"\x80\x81"[..], 60_000), 0);
    // Keys differing only after a NUL are different locks.
    let ta = try_acquire(&mut con, &b"a\x00b"[..], &b"x"[..], 30_000).expect("granted");
    let tb = try_acquire(&mut con, &b"a\x00c"[..], &b"y"[..], 30_000).expect("another key, free");
    assert!(ta > 0 && tb > 0);
    assert_eq!(lock_info(&mut con, &b"a\x00b"[..]).unwrap().owner, b"x");
    assert_eq!(lock_info(&mut con, &b"a\x00c"[..]).unwrap().owner, b"y");
    assert_eq!(lock_info(&mut con, "a").map(|i| i.owner), None);

    assert_eq!(extend(&mut con, key, owner, 60_000), 1);
    assert_eq!(release(&mut con, key, owner), 1);
    assert_eq!(lock_info(&mut con, key).unwrap().holds, 1);
    assert_eq!(release(&mut con, key, owner), 1);
    assert!(!exists(&mut con, key));
    server.assert_alive();
}
