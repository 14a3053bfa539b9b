//! Integration tests for waiting on `DLOCK.*` locks: a lease's expiry handing the lock
//! to a waiter, `DLOCK.ACQUIRE … WAIT` (FIFO order, timeout, disconnect, DEL, FLUSHALL,
//! MULTI, scripts), the limit `dlock-max-waiters`, the fuzzer's regression of a waiter
//! whose timeout passed in the turn its holder's lease ended, and a hand-off that cannot
//! issue a token (a forged RESTORE) answering every waiter.

use crate::common::payload::{encode, parse_dump};
use crate::common::waiter::*;
use crate::common::*;
use crate::lock::record::with_token;
use crate::lock::support::*;

use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// 4. Expiry
// ---------------------------------------------------------------------------------------

#[test]
fn unreleased_lock_is_free_after_its_ttl() {
    let (_server, mut con) = lock_server();
    let t0 = Instant::now();
    let t = try_acquire(&mut con, "lease", "crashed-client", 200).expect("granted");
    assert_eq!(
        try_acquire(&mut con, "lease", "bob", 10_000),
        None,
        "busy before the TTL"
    );
    let mut t2 = None;
    assert!(
        wait_until(Duration::from_secs(5), || {
            t2 = try_acquire(&mut con, "lease", "bob", 10_000);
            t2.is_some()
        }),
        "lock never became free after its TTL"
    );
    let elapsed = t0.elapsed();
    assert!(
        elapsed >= Duration::from_millis(195),
        "lock was free before its TTL: {elapsed:?}"
    );
    assert!(t2.unwrap() > t);
    let i = lock_info(&mut con, "lease").unwrap();
    assert_eq!(i.owner, b"bob");
}

/// A holder never releases (TTL 300 ms); a waiter with WAIT 5000 must get the lock after
/// the deadline and long before its own timeout.
fn expiry_hands_lock_to_waiter(setup: impl FnOnce(&mut Connection)) {
    let (server, mut con) = lock_server();
    setup(&mut con);
    let c0 = warden_stat(&mut con, "locks_contended");
    // Connect the waiter first so that it surely arrives while the lock is held.
    let wcon = RawConn::open(server.port);
    let t0 = Instant::now();
    let t = try_acquire(&mut con, "lease", "crashed-client", 300).expect("granted");
    let w = Waiter::send(
        wcon,
        "waiter",
        &["DLOCK.ACQUIRE", "lease", "waiter", "30000", "WAIT", "5000"],
    );
    let (tw, at) = w.granted("waiter on an expiring lock");
    let waited = at.duration_since(t0);
    assert!(
        waited >= Duration::from_millis(295),
        "granted before the holder's TTL: {waited:?}"
    );
    assert!(
        waited < Duration::from_millis(2_000),
        "waiter was not woken at the lease deadline (granted after {waited:?})"
    );
    assert_eq!(
        warden_stat(&mut con, "locks_contended"),
        c0 + 1,
        "the waiter found the lock busy and blocked"
    );
    assert!(tw > t, "token after expiry {tw} must exceed {t}");
    let i = lock_info(&mut con, "lease").expect("held by the waiter");
    assert_eq!(
        (i.owner.as_slice(), i.token, i.holds, i.waiters),
        (&b"waiter"[..], tw, 1, 0)
    );
    assert!(i.ttl_ms > 20_000, "waiter's own TTL applies: {i:?}");
    wait_waiting(&mut con, 0);
}

#[test]
fn expiry_wakes_waiter() {
    expiry_hands_lock_to_waiter(|_| {});
}

#[test]
fn expiry_wakes_waiter_without_active_expire() {
    expiry_hands_lock_to_waiter(|con| {
        let _: () = query!(con, "DEBUG", "SET-ACTIVE-EXPIRE", 0);
    });
}

#[test]
fn expiry_wakes_waiter_among_20000_volatile_keys() {
    expiry_hands_lock_to_waiter(|con| {
        let mut p = redis::pipe();
        for i in 0..20_000 {
            p.cmd("SET")
                .arg(format!("volatile:{i}"))
                .arg("x")
                .arg("PX")
                .arg(600_000 + i)
                .ignore();
        }
        let _: () = p.query(con).unwrap();
        let n: i64 = query!(con, "DBSIZE");
        assert_eq!(n, 20_000);
    });
}

// ---------------------------------------------------------------------------------------
// 5. WAIT: FIFO, timeout, disconnect, DEL, FLUSHALL, MULTI, scripts
// ---------------------------------------------------------------------------------------

#[test]
fn ten_waiters_are_served_in_arrival_order() {
    let (server, mut con) = lock_server();
    let t0 = try_acquire(&mut con, "fifo", "holder", 30_000).expect("granted");
    let h0 = warden_stat(&mut con, "locks_handed_off");
    // Each waiter releases the lock as soon as it is granted it.
    let mut waiters = Vec::new();
    for i in 0..10i64 {
        let owner = format!("w{i}");
        let steps = Steps {
            timeout: ANSWER_TIMEOUT,
            then: vec![words(&["DLOCK.RELEASE", "fifo", &owner])],
        };
        let args = lock_args("fifo", &owner, 30_000, 20_000, &[]);
        waiters.push(Waiter::send_steps(
            RawConn::open(server.port),
            &owner,
            &args,
            steps,
        ));
        wait_waiting(&mut con, i + 1);
        assert_eq!(lock_info(&mut con, "fifo").unwrap().waiters, i + 1);
    }
    assert_eq!(release(&mut con, "fifo", "holder"), 1);
    let mut order: Vec<(i64, Instant, i64)> = Vec::new();
    for (i, a) in join_all(waiters).into_iter().enumerate() {
        let t = a.token("granted before the WAIT timeout");
        assert_eq!(a.then, [Reply::Int(1)], "{} releases its lock", a.name);
        order.push((i as i64, a.at, t));
    }
    // In the order they were granted.
    order.sort_by_key(|x| x.1);
    let idx: Vec<i64> = order.iter().map(|x| x.0).collect();
    assert_eq!(
        idx,
        (0..10).collect::<Vec<_>>(),
        "waiters served out of arrival order"
    );
    let mut tokens = vec![t0];
    tokens.extend(order.iter().map(|x| x.2));
    assert_strictly_increasing(&tokens, "FIFO hand-offs");
    assert_eq!(warden_stat(&mut con, "locks_handed_off"), h0 + 10);
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
    assert!(!exists(&mut con, "fifo"));
}

#[test]
fn release_hands_lock_straight_to_oldest_waiter() {
    let (server, mut con, t) = held("direct", 30_000);
    let w1 = queued(&server, &mut con, "direct", "w1", (25_000, 10_000));
    let w2 = queued(&server, &mut con, "direct", "w2", (25_000, 10_000));
    // An intruder pipelined right behind the RELEASE must not get the lock.
    let mut p = redis::pipe();
    p.cmd("DLOCK.RELEASE").arg("direct").arg("holder");
    p.cmd("DLOCK.ACQUIRE")
        .arg("direct")
        .arg("intruder")
        .arg(1_000);
    let (r, intruder): (i64, Option<i64>) = p.query(&mut con).unwrap();
    assert_eq!(r, 1);
    assert_eq!(
        intruder, None,
        "the lock went to an intruder instead of the oldest waiter"
    );
    let i = lock_info(&mut con, "direct").expect("handed off, not free");
    assert_eq!((i.owner.as_slice(), i.holds, i.waiters), (&b"w1"[..], 1, 1));
    assert!(
        i.ttl_ms > 20_000 && i.ttl_ms <= 25_000,
        "the waiter's ttl applies: {i:?}"
    );
    let (t1, _) = w1.granted("w1");
    assert_eq!(i.token, t1, "DLOCK.INFO token equals the token w1 received");
    assert!(t1 > t);
    // Any connection may release on behalf of the owner.
    assert_eq!(release(&mut con, "direct", "w1"), 1);
    let (t2, _) = w2.granted("w2");
    assert!(t2 > t1);
    let view = lock_view(&mut con, "direct").map(|v| (v.0, v.1, v.3));
    assert_eq!(view, Some(("w2".into(), t2, 0)));
    assert_eq!(release(&mut con, "direct", "w2"), 1);
    assert!(!exists(&mut con, "direct"));
}

#[test]
fn wait_timeout_answers_nil_and_leaves_no_trace() {
    let (server, mut con, t) = held("tmo", 30_000);
    let start = Instant::now();
    let Answer { reply, at, .. } = Waiter::lock(&server, "tmo", "late", 10_000, 200).join();
    assert_eq!(reply, Reply::Nil, "WAIT timeout answers nil");
    let waited = at.duration_since(start);
    assert!(
        waited >= Duration::from_millis(195),
        "did not wait: {waited:?}"
    );
    wait_waiting(&mut con, 0);
    let view = lock_view(&mut con, "tmo");
    assert_eq!(view, Some(("holder".into(), t, 1, 0)));
    assert_eq!(release(&mut con, "tmo", "holder"), 1);
    assert!(
        !exists(&mut con, "tmo"),
        "nobody got the lock after the timed-out waiter left"
    );
    assert_eq!(warden_stat(&mut con, "locks_handed_off"), 0);
}

/// Kills the waiter `w` (CLIENT KILL ID `id`): its connection is gone, `left`
/// waiters stay.
fn kill_now(con: &mut Connection, id: i64, w: Waiter, left: i64) {
    let killed: i64 = query!(&mut *con, "CLIENT", "KILL", "ID", id);
    assert_eq!(killed, 1);
    let r = w.join().reply;
    assert!(
        matches!(r, Reply::Closed(_)),
        "killed waiter's connection must be gone, got {r:?}"
    );
    wait_waiting(con, left);
}

#[test]
fn killed_waiter_is_skipped() {
    let (server, mut con, t) = held("kill", 30_000);
    let (id_a, a) = Waiter::with_id(
        &server,
        "doomed",
        &lock_args("kill", "doomed", 30_000, 20_000, &[]),
    );
    wait_waiting(&mut con, 1);
    let b = queued(&server, &mut con, "kill", "survivor", (30_000, 20_000));
    kill_now(&mut con, id_a, a, 1);
    assert_eq!(lock_info(&mut con, "kill").unwrap().waiters, 1);
    assert_eq!(release(&mut con, "kill", "holder"), 1);
    let (tb, _) = b.granted("survivor");
    assert!(tb > t);
    let view = lock_view(&mut con, "kill").map(|v| (v.0, v.1, v.3));
    assert_eq!(view, Some(("survivor".into(), tb, 0)));
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);

    // The only waiter killed: the next release frees the lock.
    let (id_c, c) = Waiter::with_id(
        &server,
        "doomed2",
        &lock_args("kill", "doomed2", 30_000, 20_000, &[]),
    );
    wait_waiting(&mut con, 1);
    kill_now(&mut con, id_c, c, 0);
    assert_eq!(release(&mut con, "kill", "survivor"), 1);
    assert!(
        !exists(&mut con, "kill"),
        "a killed waiter must not receive the lock"
    );
    assert_eq!(lock_info(&mut con, "kill"), None);
}

/// `key` held, a waiter `next` queued, then `op` (its reply `want`) takes the key
/// from its holder: the waiter gets the lock, with a larger token. Returns the server
/// and a connection to it.
fn key_event_hands_lock_to_next_waiter(
    key: &str,
    setup: &[&str],
    (op, want): (&[&str], Value),
) -> (Server, Connection) {
    let (server, mut con, t) = held(key, 30_000);
    if !setup.is_empty() {
        let _: () = command(setup).query(&mut con).unwrap();
    }
    let w = queued(&server, &mut con, key, "next", (25_000, 10_000));
    let got: Value = command(op).query(&mut con).unwrap();
    assert!(
        got == want || (is_ok(&got) && is_ok(&want)),
        "{op:?}: {got:?}"
    );
    let (tw, _) = w.granted(&format!("waiter after {}", op[0]));
    assert!(tw > t);
    let view = lock_view(&mut con, key).map(|v| (v.0, v.1, v.2));
    assert_eq!(view, Some(("next".into(), tw, 1)), "handed to the waiter");
    (server, con)
}

#[test]
fn del_of_lock_key_hands_it_to_next_waiter() {
    let (_server, mut con) =
        key_event_hands_lock_to_next_waiter("del", &[], (&["DEL", "del"], Value::Int(1)));
    assert_eq!(key_type(&mut con, "del"), "warden-lk");
    assert_eq!(
        release(&mut con, "del", "holder"),
        0,
        "the deleted holder no longer owns it"
    );
    wait_waiting(&mut con, 0);
}

#[test]
fn flushall_hands_lock_to_next_waiter() {
    let (_server, mut con) = key_event_hands_lock_to_next_waiter(
        "fl",
        &["SET", "other", "x"],
        (&["FLUSHALL"], Value::Okay),
    );
    assert!(!exists(&mut con, "other"));
    wait_waiting(&mut con, 0);
}

/// `DLOCK.ACQUIRE tx other 5000 WAIT wait` inside MULTI/EXEC: its reply.
fn acquire_in_multi(con: &mut Connection, wait: i64) -> Option<i64> {
    let mut p = redis::pipe();
    p.atomic().cmd("DLOCK.ACQUIRE").arg("tx").arg("other");
    p.arg(5_000).arg("WAIT").arg(wait);
    let (reply,): (Option<i64>,) = p.query(con).expect("EXEC must not block");
    reply
}

#[test]
fn acquire_inside_multi_is_one_non_blocking_attempt() {
    let (_server, mut con, t) = held("tx", 30_000);
    con.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let busy = acquire_in_multi(&mut con, 0);
    assert_eq!(busy, None, "busy lock inside MULTI answers nil");
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
    assert_eq!(lock_info(&mut con, "tx").unwrap().waiters, 0);
    assert_eq!(release(&mut con, "tx", "holder"), 1);
    let free = acquire_in_multi(&mut con, 1_000);
    let t2 = free.expect("free lock inside MULTI is granted");
    assert!(t2 > t);
    let view = lock_view(&mut con, "tx").map(|v| (v.0, v.1));
    assert_eq!(view, Some(("other".into(), t2)));
}

#[test]
fn acquire_inside_script_is_one_non_blocking_attempt() {
    let (_server, mut con, _) = held("lua", 30_000);
    con.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let script = "return redis.call('DLOCK.ACQUIRE', KEYS[1], ARGV[1], 5000, 'WAIT', 0)";
    let eval =
        |con: &mut Connection| -> Option<i64> { query!(con, "EVAL", script, 1, "lua", "other") };
    assert_eq!(eval(&mut con), None);
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
    assert_eq!(release(&mut con, "lua", "holder"), 1);
    assert!(eval(&mut con).is_some());
    assert_eq!(lock_info(&mut con, "lua").unwrap().owner, b"other");
}

// ---------------------------------------------------------------------------------------
// 10. dlock-max-waiters
// ---------------------------------------------------------------------------------------

const TOO_MANY: &str = "ERR too many waiters for this key";

/// One more waiter on `key` (`owner`, WAIT `wait`) is refused: too many waiters.
fn assert_too_many(con: &mut Connection, key: &str, owner: &str, wait: i64) {
    let r = acquire_wait(&mut *con, key, owner, 30_000, wait);
    let e = expect_err(r, &format!("{owner} WAIT {wait}"));
    assert_eq!(e, TOO_MANY);
}

/// `warden.dlock-max-waiters` as CONFIG GET shows it.
fn max_waiters(con: &mut Connection) -> Vec<String> {
    query!(con, "CONFIG", "GET", "warden.dlock-max-waiters")
}

#[test]
fn max_waiters_from_module_argument() {
    let server = Server::start_with(&[], &["dlock-max-waiters", "2"]);
    let mut con = conn_t(&server);
    assert_eq!(max_waiters(&mut con), ["warden.dlock-max-waiters", "2"]);
    let t = try_acquire(&mut con, "mw", "holder", 30_000).unwrap();
    let w1 = queued(&server, &mut con, "mw", "w1", (30_000, 10_000));
    let w2 = queued(&server, &mut con, "mw", "w2", (30_000, 10_000));
    assert_too_many(&mut con, "mw", "w3", 10_000);
    assert_too_many(&mut con, "mw", "w3", 0);
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 2);
    assert_eq!(lock_info(&mut con, "mw").unwrap().waiters, 2);
    // A non-blocking attempt is still an ordinary nil.
    assert_eq!(try_acquire(&mut con, "mw", "w3", 30_000), None);
    // The limit is per key.
    try_acquire(&mut con, "mw-other", "holder", 30_000).unwrap();
    let o1 = queued(&server, &mut con, "mw-other", "o1", (30_000, 10_000));

    assert_eq!(release(&mut con, "mw", "holder"), 1);
    let (t1, _) = w1.granted("w1");
    assert!(t1 > t);
    // One slot free again: a new waiter is accepted.
    let w3 = queued(&server, &mut con, "mw", "w3", (30_000, 10_000));
    assert_eq!(release(&mut con, "mw", "w1"), 1);
    let (t2, _) = w2.granted("w2");
    assert_eq!(release(&mut con, "mw", "w2"), 1);
    let (t3, _) = w3.granted("w3");
    assert!(t1 < t2 && t2 < t3);
    assert_eq!(release(&mut con, "mw-other", "holder"), 1);
    o1.granted("o1");
    wait_waiting(&mut con, 0);
}

#[test]
fn max_waiters_via_config_set() {
    let (server, mut con, _) = held("cs", 30_000);
    let _: () = query!(&mut con, "CONFIG", "SET", "warden.dlock-max-waiters", 1);
    assert_eq!(max_waiters(&mut con), ["warden.dlock-max-waiters", "1"]);
    let bad = command(&["CONFIG", "SET", "warden.dlock-max-waiters", "abc"]);
    let bad: redis::RedisResult<()> = bad.query(&mut con);
    assert!(bad.is_err(), "non-numeric config value is refused");
    let w1 = queued(&server, &mut con, "cs", "w1", (30_000, 10_000));
    assert_too_many(&mut con, "cs", "w2", 10_000);
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 1);

    let _: () = query!(&mut con, "CONFIG", "SET", "warden.dlock-max-waiters", 2);
    let w2 = queued(&server, &mut con, "cs", "w2", (30_000, 10_000));
    assert_too_many(&mut con, "cs", "w3", 10_000);

    assert_eq!(release(&mut con, "cs", "holder"), 1);
    w1.granted("w1");
    assert_eq!(release(&mut con, "cs", "w1"), 1);
    w2.granted("w2");
    assert_eq!(release(&mut con, "cs", "w2"), 1);
    wait_waiting(&mut con, 0);
    assert!(!exists(&mut con, "cs"));
}

/// The case the fuzzer found: a holder's lease ends (its timer hands the lock to the
/// oldest waiter) in the same event-loop turn in which Redis processes that waiter's
/// own, already passed, WAIT timeout. Every blocked acquire must still get a reply —
/// its token or nil — and never hang.
#[test]
fn waiter_whose_timeout_passed_before_the_lease_ended_gets_a_reply() {
    let mut s = Server::start();
    let mut con = timed(s.conn(), Duration::from_secs(10));
    let mut lost = Vec::new();
    for trial in 0..5 {
        let key = format!("race:{trial}");
        let token: Value = query!(&mut con, "DLOCK.ACQUIRE", &key, "holder", 56);
        assert!(matches!(token, Value::Int(_)), "{token:?}");
        let mut waiters: Vec<Connection> = (0..3).map(|_| s.conn()).collect();
        for (i, (w, timeout)) in waiters.iter_mut().zip([9, 15, 42]).enumerate() {
            let c = cmd("DLOCK.ACQUIRE")
                .arg(&key)
                .arg(format!("w{i}"))
                .arg(600)
                .arg("WAIT")
                .arg(timeout)
                .get_packed_command();
            w.send_packed_command(&c).expect("send");
        }
        let started = Instant::now();
        for (i, w) in waiters.iter_mut().enumerate() {
            let left = Duration::from_millis(1_500).saturating_sub(started.elapsed());
            w.set_read_timeout(Some(left.max(Duration::from_millis(1))))
                .expect("timeout");
            match w.recv_response() {
                Ok(v) => assert!(
                    matches!(v, Value::Nil | Value::Int(_)),
                    "trial {trial} waiter {i}: {v:?}"
                ),
                Err(e) => {
                    let info: Value = query!(&mut con, "DLOCK.INFO", &key);
                    lost.push(format!(
                        "trial {trial}: DLOCK.ACQUIRE {key} w{i} 600 WAIT {} — no reply after 1.5 s ({e}); DLOCK.INFO {key}: {info:?}",
                        [9, 15, 42][i]
                    ));
                }
            }
        }
    }
    s.assert_alive();
    assert!(
        lost.is_empty(),
        "blocked acquires that never got a reply (holder lease 56 ms, waiters WAIT 9/15/42 ms):\n{}\nhanded off: {}",
        lost.join("\n"),
        warden_stat(&mut con, "locks_handed_off")
    );
}

// ---------------------------------------------------------------------------------------
// A hand-off that cannot issue a token
// ---------------------------------------------------------------------------------------

/// A hand-off that cannot issue a token (the key's record carries the largest
/// token, from a forged RESTORE an older version took into its AOF) answers
/// the waiter it took from the queue with the error, as it does every other
/// waiter: none is left blocked.
///
/// (A red-team regression of issue #10's fixes.)
#[test]
fn a_failed_hand_off_answers_the_waiter_it_took() {
    let (_model, mut con) = lock_server();
    try_acquire(&mut con, "model", "x", 100_000).expect("granted");
    let dump: Vec<u8> = query!(&mut con, "DUMP", "model");
    let forged = encode(&with_token(&parse_dump(&dump), 1 << 62));
    let server = crate::common::aof::server_replaying(&[&[b"RESTORE", b"k", b"0", &forged]]);
    let mut con = conn_t(&server);
    let first = Waiter::lock(&server, "k", "w1", 1_000, 0);
    let second = Waiter::lock(&server, "k", "w2", 1_000, 0);
    wait_waiting(&mut con, 2);
    assert_eq!(release(&mut con, "k", "x"), 1);
    for h in [first, second] {
        let a = h.join();
        match a.reply {
            Reply::Error(e) => assert!(e.contains("exhausted"), "{}: {e}", a.name),
            t => panic!("{}: {t:?} instead of the exhausted-tokens error", a.name),
        }
    }
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
}

/// A lock key overwritten by another command (`SET`) answers its waiters
/// within warden's once-a-second look, not when the old lease would have
/// ended (Redis 7.0 sends the overwrite as a string event only).
#[test]
fn a_lock_overwritten_by_another_command_answers_its_waiters() {
    let (server, mut con) = lock_server();
    try_acquire(&mut con, "ow", "holder", 600_000).expect("granted");
    let w = Waiter::lock(&server, "ow", "w", 10_000, 0);
    wait_waiting(&mut con, 1);
    let at = Instant::now();
    let _: () = query!(&mut con, "SET", "ow", "text");
    let a = w.join();
    assert!(a.reply.is_error_starting("WRONGTYPE"), "{:?}", a.reply);
    a.assert_within(at, Duration::from_secs(3), "the overwrite");
    wait_waiting(&mut con, 0);
}

/// warden's periodic look covers every key with waiters at once and passes
/// the others by: of 30 held keys with a waiter each, the 15 overwritten by
/// `SET` answer WRONGTYPE within the look; the 15 still held keep waiting
/// through further looks and are granted at their release; and the look
/// leaves no trace in the keyspace statistics (no hit or miss counted).
#[test]
fn the_periodic_look_answers_every_overwritten_key_and_passes_the_others_by() {
    let (server, mut con) = lock_server();
    let keys: Vec<String> = (0..30).map(|i| format!("look:{i}")).collect();
    let mut waiters = Vec::new();
    for key in &keys {
        try_acquire(&mut con, key, "holder", 600_000).expect("granted");
        waiters.push(Waiter::lock(&server, key, "w", 10_000, 0));
    }
    wait_waiting(&mut con, 30);
    let stat = |con: &mut Connection, field: &str| -> i64 {
        info_field(con, "stats", field)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("INFO stats {field}"))
    };
    let (hits, misses) = (
        stat(&mut con, "keyspace_hits"),
        stat(&mut con, "keyspace_misses"),
    );
    let at = Instant::now();
    let (overwritten, held): (Vec<_>, Vec<_>) = keys
        .iter()
        .zip(waiters)
        .enumerate()
        .partition(|(i, _)| i % 2 == 0);
    for (_, (key, _)) in &overwritten {
        let _: () = query!(&mut con, "SET", key.as_str(), "text");
    }
    let answers = join_all(overwritten.into_iter().map(|(_, (_, w))| w).collect());
    for a in &answers {
        a.assert_within(at, Duration::from_secs(3), "the overwrite");
        assert!(a.error().starts_with("WRONGTYPE"), "{}", a.error());
    }
    // Two more looks pass the held keys by.
    std::thread::sleep(Duration::from_millis(2_100));
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 15);
    for (_, (key, w)) in &held {
        assert!(!w.is_finished(), "{key}: answered while its lock is held");
    }
    assert_eq!(
        (
            stat(&mut con, "keyspace_hits"),
            stat(&mut con, "keyspace_misses")
        ),
        (hits, misses),
        "the periodic look counted keyspace hits or misses"
    );
    for (_, (key, w)) in held {
        assert_eq!(release(&mut con, key.as_str(), "holder"), 1, "{key}");
        w.join().token(key);
    }
    wait_waiting(&mut con, 0);
}
