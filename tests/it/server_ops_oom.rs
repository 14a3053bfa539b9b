//! The server's own operations as inputs (issue #10, SPEC "Rules every command keeps"):
//! `maxmemory` reached while clients wait in `DLOCK.ACQUIRE … WAIT` — new keys are
//! refused, held locks are still handed off and renewed.
//!
//! Every test checks that the server survives (it answers PING and its log has no
//! assertion or crash report), that every blocked waiter gets exactly one answer (read
//! on its own raw connection, with a read timeout, and nothing more arrives after it),
//! and, where a replica or the AOF is involved, that they hold exactly the master's
//! dataset (`DEBUG DIGEST`). The helpers are in `tests/it/common/server_ops.rs`.

use crate::common::dlock::{conn_t, extend, lock_info, release, try_acquire};
use crate::common::server_ops::*;
use crate::common::waiter::*;
use crate::common::*;

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
    let what = "OOM";
    let mut master = Server::start();
    let replica = master.start_replica(&[], &[]);
    let mut con = conn_t(&master);
    let t_held = try_acquire(&mut con, "oom:held", "a", 60_000).expect("oom:held");
    let lease_from = Instant::now();
    let t_lease = try_acquire(&mut con, "oom:lease", "b", 2000).expect("oom:lease");
    let mut waiters = queue(
        &master,
        &mut con,
        &[
            ("oom:held", "w-release", 5000, 10_000),
            ("oom:lease", "w-lease", 5000, 10_000),
        ],
    );
    fill_past_maxmemory(&mut con);
    let mut probe = RawConn::open(master.port);
    for args in [
        vec!["DLOCK.ACQUIRE", "oom:new", "x", "1000"],
        vec!["DLOCK.ACQUIRE", "oom:new", "x", "1000", "WAIT", "1000"],
        vec!["BF.ADDX", "oom:f", "a"],
        vec!["RL.TOKEN", "oom:r", "10", "5"],
    ] {
        let r = probe.call(&args);
        assert!(
            r.is_error_starting("OOM"),
            "{what}: {} answered {r:?}, expected an OOM error",
            args.join(" ")
        );
    }
    before_lease_end(
        lease_from,
        Duration::from_millis(2000),
        "running out of memory",
    );
    let mut lease = vec![waiters.remove(1).join()];
    let t = token_of(&lease[0], &master, "OOM, lease end");
    assert!(t > t_lease, "{what}: token {t} <= {t_lease}");
    let after = lease[0].at.saturating_duration_since(lease_from);
    assert!(
        after <= Duration::from_millis(2000) + PROMPT,
        "{what}: the lease-end hand-off came {after:?} after a 2000 ms lease began"
    );
    let released_at = Instant::now();
    assert_eq!(
        release(&mut con, "oom:held", "a"),
        1,
        "{what}: RELEASE at OOM"
    );
    let mut held = vec![waiters.remove(0).join()];
    let t = token_of(&held[0], &master, "OOM, release");
    assert!(t > t_held, "{what}: token {t} <= {t_held}");
    let after = held[0].at.saturating_duration_since(released_at);
    assert!(
        after <= PROMPT,
        "{what}: the hand-off at release came {after:?} after it"
    );
    assert_no_second_reply(&mut lease, what);
    assert_no_second_reply(&mut held, what);
    assert_healthy(&mut master, what);
    for (key, owner) in [("oom:held", "w-release"), ("oom:lease", "w-lease")] {
        let info = lock_info(&mut con, key).unwrap_or_else(|| panic!("{what}: {key} is free"));
        assert_eq!(info.owner, owner.as_bytes(), "{what}: holder of {key}");
    }
    assert_same_dataset(&master, &replica, &[], what);
    let _: () = query!(&mut con, "CONFIG", "SET", "maxmemory", 0);
    assert!(
        try_acquire(&mut con, "oom:new", "x", 1000).is_some(),
        "{what}: a new key is not granted once memory is available"
    );
    assert_healthy(&mut master, what);
}

/// `DLOCK.EXTEND` frees nothing but grows nothing either: under maxmemory a
/// holder can still renew its lease (as the README says), while new acquires
/// are refused.
///
/// (A red-team regression of issue #10's fixes.)
#[test]
fn extend_works_under_maxmemory() {
    let server = Server::start();
    let mut con = conn_t(&server);
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
