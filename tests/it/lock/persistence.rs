//! Integration tests for `DLOCK.*` state across DEBUG RELOAD, RDB/AOF restarts, AOF
//! rewrites, replication (effects with absolute times) and replica promotion.

use crate::common::waiter::*;
use crate::common::*;
use crate::lock::support::*;

use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// Helpers (the DLOCK ones are in tests/it/lock/support.rs)
// ---------------------------------------------------------------------------------------

/// What a lock looked like before a reload/restart.
struct Snapshot {
    key: Vec<u8>,
    info: LockInfo,
    pttl: i64,
    at: Instant,
}

fn snapshot(con: &mut Connection, key: &[u8]) -> Snapshot {
    let info = lock_info(con, key).expect("lock is held");
    let p = pttl(con, key);
    assert!(p > 0, "held lock has a TTL: {p}");
    Snapshot {
        key: key.to_vec(),
        info,
        pttl: p,
        at: Instant::now(),
    }
}

/// The lock has the same owner, token and holds, and its remaining TTL went down by
/// about the time that passed (never up, never much further).
fn assert_kept(con: &mut Connection, s: &Snapshot, what: &str) {
    let info =
        lock_info(con, &s.key[..]).unwrap_or_else(|| panic!("{what}: lock {:?} lost", s.key));
    assert_eq!(
        (&info.owner, info.token, info.holds),
        (&s.info.owner, s.info.token, s.info.holds),
        "{what}: lock state changed"
    );
    assert_eq!(key_type(con, &s.key[..]), "warden-lk", "{what}");
    let p = pttl(con, &s.key[..]);
    let elapsed = s.at.elapsed().as_millis() as i64;
    assert!(p <= s.pttl, "{what}: PTTL grew from {} to {p}", s.pttl);
    assert!(
        p >= s.pttl - elapsed - 1_000,
        "{what}: PTTL fell from {} to {p} in {elapsed} ms",
        s.pttl
    );
    assert!(
        info.ttl_ms <= s.pttl + 2 && info.ttl_ms >= s.pttl - elapsed - 1_000,
        "{what}: ttl_ms {}",
        info.ttl_ms
    );
}

// ---------------------------------------------------------------------------------------
// 7. DEBUG RELOAD, RDB restart, AOF rewrite + restart keep the lock
// ---------------------------------------------------------------------------------------

#[test]
fn debug_reload_keeps_owner_holds_token_and_ttl() {
    let (mut server, mut con) = lock_server();
    let owner: &[u8] = b"host:1234:\x00\xfe";
    let t = try_acquire(&mut con, "reload", owner, 60_000).unwrap();
    assert_eq!(reenter(&mut con, "reload", owner, 60_000), Some(t));
    assert_eq!(reenter(&mut con, "reload", owner, 60_000), Some(t));
    let t2 = try_acquire(&mut con, "reload2", "solo", 45_000).unwrap();
    let s1 = snapshot(&mut con, b"reload");
    let s2 = snapshot(&mut con, b"reload2");
    assert_eq!(s1.info.holds, 3);

    let _: () = query!(&mut con, "DEBUG", "RELOAD");
    server.assert_alive();
    assert_kept(&mut con, &s1, "DEBUG RELOAD");
    assert_kept(&mut con, &s2, "DEBUG RELOAD");
    assert_eq!(s2.info.token, t2);

    // The reloaded lock still behaves as a lock.
    assert_eq!(try_acquire(&mut con, "reload", "intruder", 1_000), None);
    for _ in 0..3 {
        assert_eq!(release(&mut con, "reload", owner), 1);
    }
    assert!(!exists(&mut con, "reload"));
    let t3 = try_acquire(&mut con, "reload", "next", 1_000).unwrap();
    assert!(t3 > t);
}

#[test]
fn rdb_save_and_restart_keeps_lock_state() {
    let (mut server, mut con) = lock_server();
    let t = try_acquire(&mut con, "rdb", "alice", 60_000).unwrap();
    reenter(&mut con, "rdb", "alice", 60_000).unwrap();
    let s = snapshot(&mut con, b"rdb");
    server.restart("SAVE");
    let mut con = conn_t(&server);
    assert_kept(&mut con, &s, "RDB restart");
    assert_eq!(release(&mut con, "rdb", "alice"), 1);
    assert_eq!(release(&mut con, "rdb", "alice"), 1);
    let t2 = try_acquire(&mut con, "rdb", "bob", 1_000).unwrap();
    assert!(t2 > t);
}

fn aof_rewrite_then_restart_keeps_locks(preamble: &str) {
    let mut server = Server::start_with(
        &["--appendonly", "yes", "--aof-use-rdb-preamble", preamble],
        &[],
    );
    let mut con = conn_t(&server);
    let bin_owner: &[u8] = b"\xc0\x00owner";
    let t1 = try_acquire(&mut con, "aof1", "alice", 60_000).unwrap();
    reenter(&mut con, "aof1", "alice", 60_000).unwrap();
    reenter(&mut con, "aof1", "alice", 60_000).unwrap();
    let t2 = try_acquire(&mut con, &b"aof\xff2"[..], bin_owner, 45_000).unwrap();
    let mut gone = Vec::new();
    for _ in 0..5 {
        gone.push(try_acquire(&mut con, "aof3", "carol", 60_000).unwrap());
        assert_eq!(release(&mut con, "aof3", "carol"), 1);
    }
    let _: () = query!(&mut con, "SET", "plain", "v");

    server.bgrewriteaof();
    let base_suffix = if preamble == "yes" {
        ".base.rdb"
    } else {
        ".base.aof"
    };
    let files: Vec<String> = std::fs::read_dir(server.dir.join("appendonlydir"))
        .expect("appendonlydir")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        files.iter().any(|f| f.ends_with(base_suffix)),
        "no {base_suffix} base file: {files:?}"
    );

    // A write after the rewrite lands in the incremental AOF.
    assert_eq!(extend(&mut con, &b"aof\xff2"[..], bin_owner, 50_000), 1);
    let s1 = snapshot(&mut con, b"aof1");
    let s2 = snapshot(&mut con, b"aof\xff2");
    assert_eq!((s1.info.token, s1.info.holds), (t1, 3));
    assert_eq!((s2.info.token, s2.info.holds), (t2, 1));
    assert!(s2.pttl > 45_000, "EXTEND applied: {}", s2.pttl);

    server.restart("NOSAVE");
    let mut con = conn_t(&server);
    assert_kept(&mut con, &s1, "AOF rewrite + restart");
    assert_kept(&mut con, &s2, "AOF rewrite + EXTEND + restart");
    assert!(!exists(&mut con, "aof3"), "a released lock stays released");
    let v: String = query!(&mut con, "GET", "plain");
    assert_eq!(v, "v");

    let t3 = try_acquire(&mut con, "aof3", "dave", 1_000).unwrap();
    assert!(t3 > *gone.iter().max().unwrap());
    for _ in 0..3 {
        assert_eq!(release(&mut con, "aof1", "alice"), 1);
    }
    let t4 = try_acquire(&mut con, "aof1", "erin", 1_000).unwrap();
    assert!(t4 > t1);
}

#[test]
fn aof_rewrite_with_rdb_preamble_keeps_locks() {
    aof_rewrite_then_restart_keeps_locks("yes");
}

#[test]
fn aof_rewrite_without_rdb_preamble_keeps_locks() {
    aof_rewrite_then_restart_keeps_locks("no");
}

// ---------------------------------------------------------------------------------------
// 6. Fencing tokens across an AOF restart and a replica promotion
// ---------------------------------------------------------------------------------------

#[test]
fn tokens_increase_across_aof_restart() {
    let mut server = Server::start_with(&["--appendonly", "yes"], &[]);
    let mut con = conn_t(&server);
    let held = try_acquire(&mut con, "held", "alice", 60_000).unwrap();
    assert_eq!(reenter(&mut con, "held", "alice", 60_000), Some(held));
    let mut freed = Vec::new();
    for i in 0..50 {
        let owner = format!("o{i}");
        freed.push(try_acquire(&mut con, "freed", &owner, 60_000).unwrap());
        assert_eq!(release(&mut con, "freed", &owner), 1);
    }
    assert_strictly_increasing(&freed, "before restart");
    let s = snapshot(&mut con, b"held");

    server.restart("NOSAVE");
    let mut con = conn_t(&server);
    assert_kept(&mut con, &s, "AOF restart");
    assert_eq!(
        try_acquire(&mut con, "held", "bob", 60_000),
        None,
        "still held after restart"
    );
    assert!(!exists(&mut con, "freed"));

    let t = try_acquire(&mut con, "freed", "new", 60_000).unwrap();
    assert!(
        t > *freed.last().unwrap(),
        "token after restart {t} <= {}",
        freed.last().unwrap()
    );
    assert_eq!(release(&mut con, "held", "alice"), 1);
    assert_eq!(release(&mut con, "held", "alice"), 1);
    let t2 = try_acquire(&mut con, "held", "bob", 60_000).unwrap();
    assert!(t2 > held);

    // And across a second restart with the newest grants only in the AOF tail.
    assert_eq!(release(&mut con, "held", "bob"), 1);
    server.restart("NOSAVE");
    let mut con = conn_t(&server);
    let t3 = try_acquire(&mut con, "held", "carol", 60_000).unwrap();
    assert!(t3 > t2);
}

#[test]
fn tokens_increase_across_replica_promotion() {
    let master = Server::start();
    let replica = master.start_replica(&[], &[]);
    let mut m = conn_t(&master);
    let mut all = Vec::new();
    for i in 0..100 {
        let owner = format!("o{i}");
        all.push(try_acquire(&mut m, "promo", &owner, 60_000).unwrap());
        assert_eq!(release(&mut m, "promo", &owner), 1);
    }
    assert_strictly_increasing(&all, "on the master");
    let held = try_acquire(&mut m, "promo-held", "alice", 60_000).unwrap();
    let deleted = try_acquire(&mut m, "promo-del", "alice", 60_000).unwrap();
    let n: i64 = query!(&mut m, "DEL", "promo-del");
    assert_eq!(n, 1);
    master.sync_replicas(1);
    let mut r = conn_t(&replica);
    let i = lock_info(&mut r, "promo-held").expect("replicated");
    assert_eq!(
        (i.owner.as_slice(), i.token, i.holds),
        (&b"alice"[..], held, 1)
    );
    let _: () = query!(&mut r, "REPLICAOF", "NO", "ONE");
    assert_eq!(
        info_field(&mut r, "replication", "role").as_deref(),
        Some("master")
    );

    let t = try_acquire(&mut r, "promo", "new", 60_000).expect("free on the promoted replica");
    assert!(
        t > *all.last().unwrap(),
        "promoted token {t} <= master's {}",
        all.last().unwrap()
    );
    let t = try_acquire(&mut r, "promo-del", "new", 60_000).expect("free on the promoted replica");
    assert!(t > deleted, "promoted token {t} <= master's {deleted}");
    assert_eq!(
        try_acquire(&mut r, "promo-held", "bob", 60_000),
        None,
        "still held by alice"
    );
    assert_eq!(release(&mut r, "promo-held", "alice"), 1);
    let t = try_acquire(&mut r, "promo-held", "bob", 60_000).unwrap();
    assert!(t > held);
}

/// A lock's DUMP is the same on master and replica after reads on the master
/// alone: a read brings the value's cached deadline up to the key's expiry
/// (after `PERSIST`, `PEXPIRE`, `RESTORE … 0`), which is not replicated, so
/// the saved bytes must not carry it (red team: they did).
#[test]
fn dump_of_a_lock_is_the_same_on_master_and_replica_after_reads() {
    let master = Server::start();
    let replica = master.start_replica(&[], &[]);
    let mut m = conn_t(&master);
    let mut r = conn_t(&replica);
    try_acquire(&mut m, "persisted", "alice", 60_000).unwrap();
    try_acquire(&mut m, "moved", "alice", 60_000).unwrap();
    let _: i64 = query!(&mut m, "PERSIST", "persisted");
    let _: i64 = query!(&mut m, "PEXPIRE", "moved", 500_000);
    let payload = dump(&mut m, "persisted");
    let _: () = query!(&mut m, "RESTORE", "restored", 0, payload);
    master.sync_replicas(1);
    for key in ["persisted", "moved", "restored"] {
        assert!(lock_info(&mut m, key).is_some(), "{key}");
        // A refused acquire reads the lock too; it replicates nothing.
        assert_eq!(try_acquire(&mut m, key, "bob", 1_000), None, "{key}");
    }
    master.sync_replicas(1);
    for key in ["persisted", "moved", "restored"] {
        assert_eq!(dump(&mut m, key), dump(&mut r, key), "DUMP {key}");
        assert_eq!(digest(&mut m, key), digest(&mut r, key), "digest {key}");
    }
}

// ---------------------------------------------------------------------------------------
// 8. Replication: same state on the replica; only absolute times in the stream
// ---------------------------------------------------------------------------------------

/// Writes a marker key and returns every command propagated before it (MULTI/EXEC left out).
fn step(tap: &mut ReplicationTap, con: &mut Connection, label: &str) -> Vec<Vec<String>> {
    without_multi_exec(tap.until_marker(con, "__tap_mark__", label))
}

/// Checks a lock effect: `DLOCK._SET key owner token:holds:pxat_ms`, or the
/// client's own ACQUIRE / EXTEND carrying it as `ttl@token:holds:pxat_ms`;
/// returns pxat.
fn assert_set(
    c: &[String],
    key: &str,
    owner: &str,
    token: i64,
    holds: i64,
    pxat: (i64, i64),
) -> i64 {
    let name = c[0].to_ascii_uppercase();
    let text = match name.as_str() {
        "DLOCK._SET" => c.get(3).map(String::as_str),
        "DLOCK.ACQUIRE" | "DLOCK.EXTEND" => {
            c.get(3).and_then(|a| a.split_once('@')).map(|(_, s)| s)
        }
        _ => None,
    };
    let text = text.unwrap_or_else(|| panic!("expected a lock effect, got {c:?}"));
    assert!(
        name != "DLOCK._SET" || c.len() == 4,
        "DLOCK._SET key owner token:holds:pxat_ms: {c:?}"
    );
    assert_eq!((c[1].as_str(), c[2].as_str()), (key, owner), "{c:?}");
    let state: Vec<i64> = text
        .split(':')
        .map(|f| {
            f.parse()
                .unwrap_or_else(|_| panic!("state field {f:?} in {c:?}"))
        })
        .collect();
    assert_eq!(state.len(), 3, "token:holds:pxat_ms in {c:?}");
    assert_eq!(state[0], token, "token in {c:?}");
    assert_eq!(state[1], holds, "holds in {c:?}");
    let at = state[2];
    assert!(
        at >= pxat.0 && at <= pxat.1,
        "pxat {at} outside [{}, {}]: {c:?}",
        pxat.0,
        pxat.1
    );
    at
}

/// Runs `f` and returns its result and the absolute deadline window for a `ttl` it set.
fn with_deadline_window<T>(
    con: &mut Connection,
    ttl: i64,
    f: impl FnOnce(&mut Connection) -> T,
) -> (T, (i64, i64)) {
    let before = server_time_ms(con);
    let r = f(con);
    let after = server_time_ms(con);
    (r, (before + ttl - 5, after + ttl + 5))
}

fn only(cmds: Vec<Vec<String>>, what: &str) -> Vec<String> {
    assert_eq!(
        cmds.len(),
        1,
        "{what}: expected exactly one propagated command, got {cmds:?}"
    );
    cmds.into_iter().next().unwrap()
}

#[test]
fn replica_mirrors_mixed_workload_and_stream_has_absolute_times() {
    let master = Server::start();
    let replica = master.start_replica(&[], &[]);
    let mut tap = master.replication_tap();
    let mut m = conn_t(&master);
    let mut all_cmds: Vec<Vec<String>> = Vec::new();
    let mut record = |cmds: &Vec<Vec<String>>| all_cmds.extend(cmds.iter().cloned());

    // Grant.
    let (t1, w) = with_deadline_window(&mut m, 61_234, |c| try_acquire(c, "L1", "a", 61_234));
    let t1 = t1.expect("granted");
    let cmds = step(&mut tap, &mut m, "grant");
    record(&cmds);
    assert_set(&only(cmds, "grant"), "L1", "a", t1, 1, w);

    // Re-entry.
    let (r, w) = with_deadline_window(&mut m, 42_345, |c| reenter(c, "L1", "a", 42_345));
    assert_eq!(r, Some(t1));
    let cmds = step(&mut tap, &mut m, "reenter");
    record(&cmds);
    let px_reenter = assert_set(&only(cmds, "re-entry"), "L1", "a", t1, 2, w);

    // Partial release: dropping a hold does not depend on time, so it is
    // replicated as the command itself (a replica applies it without a clock).
    assert_eq!(release(&mut m, "L1", "a"), 1);
    let cmds = step(&mut tap, &mut m, "partial");
    record(&cmds);
    assert_eq!(only(cmds, "partial release"), ["DLOCK.RELEASE", "L1", "a"]);
    assert_eq!(lock_info(&mut m, "L1").map(|i| i.holds), Some(1));
    // The clock is read before PTTL: read after, a slow reply (a loaded
    // machine) would move the bound below the time left.
    let now = server_time_ms(&mut m);
    let left = pttl(&mut m, "L1");
    assert!(
        left <= px_reenter - now + 5,
        "deadline kept: {left} ms left"
    );

    // Extend.
    let (r, w) = with_deadline_window(&mut m, 53_456, |c| extend(c, "L1", "a", 53_456));
    assert_eq!(r, 1);
    let cmds = step(&mut tap, &mut m, "extend");
    record(&cmds);
    assert_set(&only(cmds, "extend"), "L1", "a", t1, 1, w);

    // Failed acquire / release / extend and reads replicate nothing.
    assert_eq!(try_acquire(&mut m, "L1", "b", 9_999), None);
    assert_eq!(acquire_wait(&mut m, "L1", "b", 9_999, 100).unwrap(), None);
    assert_eq!(release(&mut m, "L1", "b"), 0);
    assert_eq!(extend(&mut m, "L1", "b", 9_999), 0);
    assert_eq!(extend(&mut m, "nothere", "a", 9_999), 0);
    assert_eq!(release(&mut m, "nothere", "a"), 0);
    assert!(lock_info(&mut m, "L1").is_some());
    let cmds = step(&mut tap, &mut m, "failed");
    assert!(cmds.is_empty(), "failed operations propagated {cmds:?}");
    let late: Vec<_> = tap
        .drain(Duration::from_millis(300))
        .into_iter()
        .filter(|c| !is_multi_exec(c))
        .collect();
    assert!(
        late.is_empty(),
        "failed operations propagated later: {late:?}"
    );

    // Full release without waiters: the release itself.
    assert_eq!(release(&mut m, "L1", "a"), 1);
    let cmds = step(&mut tap, &mut m, "release");
    record(&cmds);
    assert_eq!(only(cmds, "full release"), ["DLOCK.RELEASE", "L1", "a"]);

    // Hand-off on release.
    let (tc, w) = with_deadline_window(&mut m, 61_234, |c| try_acquire(c, "L2", "c", 61_234));
    let tc = tc.expect("granted");
    let cmds = step(&mut tap, &mut m, "grant-L2");
    record(&cmds);
    assert_set(&only(cmds, "grant L2"), "L2", "c", tc, 1, w);
    let waiter = Waiter::lock(&master, "L2", "d", 24_680, 10_000);
    wait_waiting(&mut m, 1);
    let cmds = step(&mut tap, &mut m, "blocked");
    assert!(cmds.is_empty(), "a blocked acquire propagated {cmds:?}");
    let (td, w) = with_deadline_window(&mut m, 24_680, |c| {
        assert_eq!(release(c, "L2", "c"), 1);
        waiter.granted("hand-off").0
    });
    assert!(td > tc);
    let cmds = step(&mut tap, &mut m, "handoff");
    record(&cmds);
    let (last, rest) = cmds
        .split_last()
        .unwrap_or_else(|| panic!("hand-off propagated nothing"));
    assert_set(last, "L2", "d", td, 1, w);
    assert!(
        rest.iter()
            .all(|c| c[0].eq_ignore_ascii_case("DEL") && c[1] == "L2"),
        "unexpected commands before the hand-off: {rest:?}"
    );

    // A lock with two holds.
    let (tg, w) = with_deadline_window(&mut m, 61_234, |c| try_acquire(c, "L4", "g", 61_234));
    let tg = tg.expect("granted");
    assert_eq!(reenter(&mut m, "L4", "g", 61_234), Some(tg));
    let cmds = step(&mut tap, &mut m, "L4");
    record(&cmds);
    assert_eq!(cmds.len(), 2, "grant + re-entry: {cmds:?}");
    assert_set(&cmds[0], "L4", "g", tg, 1, w);
    assert_set(&cmds[1], "L4", "g", tg, 2, (w.0, w.1 + 1_000));

    // Expiry without waiters: Redis propagates the deletion.
    let (te, w) = with_deadline_window(&mut m, 150, |c| try_acquire(c, "L3", "e", 150));
    let te = te.expect("granted");
    let cmds = step(&mut tap, &mut m, "grant-L3");
    record(&cmds);
    assert_set(&only(cmds, "grant L3"), "L3", "e", te, 1, w);
    assert!(
        wait_until(Duration::from_secs(5), || !exists(&mut m, "L3")),
        "L3 never expired"
    );
    let cmds = step(&mut tap, &mut m, "expired-L3");
    record(&cmds);
    let c = only(cmds, "expiry of L3");
    assert!(
        (c[0].eq_ignore_ascii_case("DEL") || c[0].eq_ignore_ascii_case("UNLINK"))
            && c[1..] == ["L3".to_string()],
        "expected DEL L3, got {c:?}"
    );

    // Expiry with a waiter: hand-off.
    let (tf, wf) = with_deadline_window(&mut m, 150, |c| try_acquire(c, "L5", "f", 150));
    let tf = tf.expect("granted");
    let waiter = Waiter::lock(&master, "L5", "h", 35_791, 5_000);
    let cmds = step(&mut tap, &mut m, "grant-L5");
    record(&cmds);
    assert_set(&only(cmds, "grant L5"), "L5", "f", tf, 1, wf);
    let (th, _) = waiter.granted("expiry hand-off");
    let after = server_time_ms(&mut m);
    assert!(th > tf);
    let cmds = step(&mut tap, &mut m, "expiry-handoff");
    record(&cmds);
    let (last, rest) = cmds
        .split_last()
        .unwrap_or_else(|| panic!("expiry hand-off propagated nothing"));
    assert_set(last, "L5", "h", th, 1, (wf.0 + 35_791, after + 35_791 + 5));
    assert!(
        rest.iter().all(|c| (c[0].eq_ignore_ascii_case("DEL")
            || c[0].eq_ignore_ascii_case("UNLINK"))
            && c[1..] == ["L5".to_string()]),
        "unexpected commands before the expiry hand-off: {rest:?}"
    );

    // Nothing propagated carries a relative TTL alone, and no time-dependent
    // DLOCK command is re-run verbatim: ACQUIRE and EXTEND travel only with
    // their effect appended to the ttl (RELEASE is not time-dependent on a
    // replica).
    for c in &all_cmds {
        for ttl in ["61234", "42345", "53456", "24680", "35791", "150"] {
            assert!(
                !c[1..].iter().any(|a| a == ttl),
                "relative ttl {ttl} propagated in {c:?}"
            );
        }
        let name = c[0].to_ascii_uppercase();
        assert!(
            !["DLOCK.ACQUIRE", "DLOCK.EXTEND"].contains(&name.as_str())
                || c.get(3).is_some_and(|ttl| ttl.contains('@')),
            "command propagated without its effect: {c:?}"
        );
    }

    // The replica has the same locks.
    master.sync_replicas(1);
    let mut r = conn_t(&replica);
    for key in ["L1", "L2", "L3", "L4", "L5"] {
        let mi = lock_info(&mut m, key);
        let ri = lock_info(&mut r, key);
        if let Some((a, b)) = same_holder(&mi, &ri, &format!("{key} on master and replica")) {
            assert!(
                b.ttl_ms <= a.ttl_ms + 20 && b.ttl_ms >= a.ttl_ms - 1_000,
                "{key} ttl {a:?} / {b:?}"
            );
            let mp = pttl(&mut m, key);
            let rp = pttl(&mut r, key);
            assert!(
                (mp - rp).abs() <= 1_000,
                "{key} PTTL master {mp} replica {rp}"
            );
            assert_eq!(key_type(&mut r, key), "warden-lk");
        }
    }
    let l2 = lock_info(&mut r, "L2").expect("L2 on the replica");
    assert_eq!((l2.owner.as_slice(), l2.token), (&b"d"[..], td));
    let l4 = lock_info(&mut r, "L4").expect("L4 on the replica");
    assert_eq!(
        (l4.owner.as_slice(), l4.token, l4.holds),
        (&b"g"[..], tg, 2)
    );
    let l5 = lock_info(&mut r, "L5").expect("L5 on the replica");
    assert_eq!((l5.owner.as_slice(), l5.token), (&b"h"[..], th));
    assert!(!exists(&mut r, "L1") && !exists(&mut r, "L3"));

    let zero = "0".repeat(40);
    for key in ["L2", "L4", "L5"] {
        let md: Vec<String> = query!(&mut m, "DEBUG", "DIGEST-VALUE", key);
        let rd: Vec<String> = query!(&mut r, "DEBUG", "DIGEST-VALUE", key);
        assert_eq!(
            md, rd,
            "DEBUG DIGEST-VALUE {key} differs between master and replica"
        );
        assert_ne!(
            md[0], zero,
            "DEBUG DIGEST-VALUE {key} ignores the lock value"
        );
    }
    let md: Vec<String> = query!(&mut m, "DEBUG", "DIGEST-VALUE", "L2", "L4");
    assert_ne!(md[0], md[1], "different locks have different digests");
    let md: String = query!(&mut m, "DEBUG", "DIGEST");
    let rd: String = query!(&mut r, "DEBUG", "DIGEST");
    assert_eq!(md, rd, "DEBUG DIGEST differs between master and replica");

    // The replica refuses lock writes but answers DLOCK.INFO.
    let e: redis::RedisResult<Option<i64>> = cmd("DLOCK.ACQUIRE")
        .arg("L9")
        .arg("z")
        .arg(1_000)
        .query(&mut r);
    assert!(e.is_err(), "a replica must refuse DLOCK.ACQUIRE");
    assert!(!exists(&mut r, "L9"));
}

/// A forged `RESTORE` payload carrying the largest token (one such key made
/// every ACQUIRE on every key answer "tokens are exhausted") is refused, and
/// one already in a file (an older version took it) raises only its own
/// key's floor: other keys are still granted with ordinary tokens, and once
/// the forged lease is over its key is an ordinary one again.
#[test]
fn a_forged_token_cannot_stop_grants_on_other_keys() {
    let (_server, mut con) = lock_server();
    try_acquire(&mut con, "model", "m", 60_000).expect("granted");
    let dump: Vec<u8> = query!(&mut con, "DUMP", "model");
    let forged = crate::common::payload::parse_dump(&dump);
    let forged = crate::lock::record::with_token(&forged, 1 << 62);
    let payload = crate::common::payload::encode(&forged);
    let refused: redis::RedisResult<()> = cmd("RESTORE")
        .arg("forged")
        .arg(0)
        .arg(&payload)
        .query(&mut con);
    assert!(expect_err(refused, "a forged token").contains("Bad data format"));
    assert!(!exists(&mut con, "forged"));
    // The same RESTORE replayed from an AOF an older version wrote.
    let deadline = (now_ms() + 2_000).to_string();
    let server = crate::common::aof::server_replaying(&[
        &[b"RESTORE", b"forged", b"0", &payload],
        &[b"PEXPIREAT", b"forged", deadline.as_bytes()],
    ]);
    let mut con = conn_t(&server);
    assert_eq!(lock_info(&mut con, "forged").unwrap().token, 1 << 62);
    let before = try_acquire(&mut con, "first", "o", 60_000).expect("granted");
    let other = try_acquire(&mut con, "other", "o", 60_000).expect("other keys are granted");
    assert!(other > before && other < 1 << 61, "ordinary token: {other}");
    assert!(wait_until(Duration::from_secs(4), || !exists(
        &mut con, "forged"
    )));
    // Once its lease is over, the forged key is an ordinary one again.
    let fresh = try_acquire(&mut con, "forged", "x", 1000).expect("free after its lease");
    assert!(fresh > other && fresh < 1 << 61, "{fresh}");
    let again = try_acquire(&mut con, "other2", "o", 60_000).expect("still granted");
    assert!(again > fresh);
}
