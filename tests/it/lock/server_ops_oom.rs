//! The server's own operations as inputs (issue #10, SPEC "Rules every command keeps"):
//! `maxmemory` reached while clients wait in `DLOCK.ACQUIRE … WAIT` — new keys are
//! refused, held locks are still handed off and renewed.
//!
//! Every test checks that the server survives (it answers PING and its log has no
//! assertion or crash report), that every blocked waiter gets exactly one answer (read
//! on its own raw connection, with a read timeout, and nothing more arrives after it),
//! and, where a replica or the AOF is involved, that they hold exactly the master's
//! dataset (`DEBUG DIGEST`). The helpers are in
//! `tests/it/common/server_ops.rs` (the waiters in `common/waiter.rs`).

use crate::common::server_ops::*;
use crate::common::waiter::*;
use crate::common::*;
use crate::lock::support::{extend, lock_info, lock_server, release, try_acquire};

use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// maxmemory
// ---------------------------------------------------------------------------------------

/// `maxmemory` set 256 kB above used_memory (noeviction), then exceeded by a script's
/// writes: DLOCK.ACQUIRE of a new key (with or without WAIT), BF.ADDX and RL.TOKEN
/// answer OOM; but a held lock's waiter is still handed the lock at release, and a
/// 2000 ms lease's waiter at lease end, each once and with a larger token; the replica
/// holds the master's dataset; after maxmemory 0 a new key is granted again.
#[test]
fn oom_refuses_new_keys_but_hands_off_held_locks() {
    let mut s = Scene::replicated("OOM", &[]);
    let t_held = s.hold("oom:held", "a", 60_000, &[]);
    let lease_from = Instant::now();
    let t_lease = s.hold("oom:lease", "b", 2000, &[]);
    let mut waiters = s.queue(&[
        ("oom:held", "w-release", 5000, 10_000),
        ("oom:lease", "w-lease", 5000, 10_000),
    ]);
    fill_past_maxmemory(&mut s.con);
    assert_refused_oom(
        &s.master,
        &[
            &["DLOCK.ACQUIRE", "oom:new", "x", "1000"],
            &["DLOCK.ACQUIRE", "oom:new", "x", "1000", "WAIT", "1000"],
            &["BF.ADDX", "oom:f", "a"],
            &["RL.TOKEN", "oom:r", "10", "5"],
        ],
        &s.what,
    );
    let lease = Duration::from_millis(2000);
    before_lease_end(lease_from, lease, "running out of memory");
    let mut lease_end = vec![waiters.remove(1).join()];
    s.granted_between(&lease_end[0], t_lease, lease_from, Duration::ZERO, lease);
    let released_at = Instant::now();
    let released = release(&mut s.con, "oom:held", "a");
    assert_eq!(released, 1, "{}: RELEASE at OOM", s.what);
    let mut held = vec![waiters.remove(0).join()];
    let zero = Duration::ZERO;
    s.granted_between(&held[0], t_held, released_at, zero, zero);
    assert_no_second_reply(&mut lease_end, &s.what);
    assert_no_second_reply(&mut held, &s.what);
    for (key, owner) in [("oom:held", "w-release"), ("oom:lease", "w-lease")] {
        let info = lock_info(&mut s.con, key).unwrap_or_else(|| panic!("{key} is free"));
        assert_eq!(info.owner, owner.as_bytes(), "{}: holder of {key}", s.what);
    }
    s.assert_end(&[]);
    let _: () = query!(&mut s.con, "CONFIG", "SET", "maxmemory", 0);
    assert!(
        try_acquire(&mut s.con, "oom:new", "x", 1000).is_some(),
        "{}: a new key is not granted once memory is available",
        s.what
    );
    assert_healthy(&mut s.master, &s.what);
}

/// `DLOCK.EXTEND` frees nothing but grows nothing either: under maxmemory a
/// holder can still renew its lease (as `docs/operations.md` says), while new acquires
/// are refused.
///
/// (A red-team regression of issue #10's fixes.)
#[test]
fn extend_works_under_maxmemory() {
    let (_server, mut con) = lock_server();
    try_acquire(&mut con, "held", "a", 100_000).expect("granted");
    let _: () = query!(&mut con, "CONFIG", "SET", "maxmemory-policy", "noeviction");
    let _: () = query!(&mut con, "CONFIG", "SET", "maxmemory", 1);
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
    let _: () = query!(&mut con, "CONFIG", "SET", "maxmemory", 0);
}
