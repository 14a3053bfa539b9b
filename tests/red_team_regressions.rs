//! Regressions found by red-team runs against issue #10's fixes: each test is
//! one finding, reproduced as it was reported.

mod common;
use common::dlock::*;
use common::payload::{encode, parse_dump, Field};
use common::*;

use std::time::{Duration, Instant};

/// A hand-off that cannot issue a token (the key's record carries the largest
/// token, from a forged RESTORE) answers the waiter it took from the queue
/// with the error, as it does every other waiter: none is left blocked.
#[test]
fn a_failed_hand_off_answers_the_waiter_it_took() {
    let server = Server::start();
    let mut con = conn_t(&server);
    try_acquire(&mut con, "model", "x", 100_000).expect("granted");
    let dump: Vec<u8> = cmd("DUMP").arg("model").query(&mut con).unwrap();
    let mut forged = parse_dump(&dump);
    forged.fields[1] = Field::U(1 << 62);
    let _: () = cmd("RESTORE")
        .arg("k")
        .arg(0)
        .arg(encode(&forged))
        .query(&mut con)
        .expect("restore");
    let (_, first) = spawn_waiter(&server, b"k", b"w1", 1_000, 0);
    let (_, second) = spawn_waiter(&server, b"k", b"w2", 1_000, 0);
    wait_waiting(&mut con, 2);
    assert_eq!(release(&mut con, "k", "x"), 1);
    for (name, h) in [("w1", first), ("w2", second)] {
        let (reply, _) = h.join().expect("waiter thread");
        match reply {
            Err(e) => assert!(
                err_text(&e).contains("exhausted"),
                "{name}: {}",
                err_text(&e)
            ),
            Ok(t) => panic!("{name}: {t:?} instead of the exhausted-tokens error"),
        }
    }
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
}

/// `DLOCK.EXTEND` frees nothing but grows nothing either: under maxmemory a
/// holder can still renew its lease (as the README says), while new acquires
/// are refused.
#[test]
fn extend_works_under_maxmemory() {
    let server = Server::start();
    let mut con = conn_t(&server);
    try_acquire(&mut con, "held", "a", 100_000).expect("granted");
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("noeviction")
        .query(&mut con)
        .unwrap();
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(1)
        .query(&mut con)
        .unwrap();
    let refused = cmd("DLOCK.ACQUIRE")
        .arg("new")
        .arg("b")
        .arg(1000)
        .query::<Option<i64>>(&mut con)
        .expect_err("new locks are refused at OOM");
    assert!(
        err_text(&refused).starts_with("OOM"),
        "{}",
        err_text(&refused)
    );
    assert_eq!(extend(&mut con, "held", "a", 200_000), 1);
    assert!(pttl(&mut con, "held") > 100_000);
    assert_eq!(release(&mut con, "held", "a"), 1);
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(0)
        .query(&mut con)
        .unwrap();
}

/// `-0` is not an integer for any argument, as in Redis itself.
#[test]
fn minus_zero_is_not_a_number() {
    let server = Server::start();
    let mut con = conn_t(&server);
    try_acquire(&mut con, "held", "a", 100_000).expect("granted");
    for (args, want) in [
        (
            vec!["DLOCK.ACQUIRE", "held", "b", "100", "WAIT", "-0"],
            "ERR timeout must be a non-negative integer",
        ),
        (
            vec!["DLOCK.ACQUIRE", "k", "b", "-0"],
            "ERR ttl must be a positive integer",
        ),
        (
            vec!["RL.TOKEN", "rl", "1/s", "-0"],
            "ERR burst must be a non-negative integer",
        ),
        (
            vec!["RL.TOKEN", "rl", "1/s", "5", "COST", "-0"],
            "ERR cost must be a non-negative integer",
        ),
        (
            vec!["RL.GCRA", "g", "-0", "1", "60"],
            "ERR max_burst must be a non-negative integer",
        ),
    ] {
        let mut c = cmd(args[0]);
        for a in &args[1..] {
            c.arg(*a);
        }
        let start = Instant::now();
        let err = c.query::<Value>(&mut con).expect_err("refused");
        assert_eq!(err_text(&err), want, "{args:?}");
        assert!(start.elapsed() < Duration::from_secs(2), "{args:?} blocked");
    }
    assert!(!exists(&mut con, "k") && !exists(&mut con, "rl") && !exists(&mut con, "g"));
}

/// Total physical memory of this machine in bytes (Linux /proc/meminfo).
fn physical_memory() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").expect("/proc/meminfo");
    let kb: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("MemTotal");
    kb * 1024
}

/// With `bf-max-bytes` at its largest (1 TiB), a filter larger than the
/// machine's memory is still refused, not allocated (the kernel would kill
/// the server).
#[test]
fn a_filter_larger_than_the_machine_is_refused() {
    let mut server = Server::start();
    let mut con = conn_t(&server);
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("warden.bf-max-bytes")
        .arg(1_099_511_627_776u64)
        .query(&mut con)
        .unwrap();
    // About 9.6 bits per item at 1 %: twice this machine's memory (capped at
    // the capacity range, whose filter is over 1 TiB and refused as well).
    let capacity = (physical_memory() * 2 * 8 / 9).min(1_000_000_000_000);
    let err = cmd("BF.RESERVEX")
        .arg("huge")
        .arg(0.01)
        .arg(capacity)
        .arg("NONSCALING")
        .query::<String>(&mut con)
        .expect_err("refused");
    assert_eq!(err_text(&err), "ERR filter would exceed bf-max-bytes");
    assert!(!exists(&mut con, "huge"));
    server.assert_alive();
}
