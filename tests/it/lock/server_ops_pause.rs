//! The server's own operations as inputs (issue #10, SPEC "Rules every command keeps"):
//! `CLIENT PAUSE WRITE|ALL` and `CLIENT UNPAUSE` while clients wait in
//! `DLOCK.ACQUIRE … WAIT` — a lease ending during the pause (one lock, thirty locks),
//! an early UNPAUSE, a key-event hand-off racing a pause — and RL / BF calls waiting
//! out a write pause.
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
use crate::lock::support::{conn_t, lock_server, release};

use std::thread;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// CLIENT PAUSE / UNPAUSE
// ---------------------------------------------------------------------------------------

const PAUSE: Duration = Duration::from_millis(1500);
const PAUSE_HOLDER_TTL: Duration = Duration::from_millis(500);

/// CLIENT PAUSE 1500 `mode` while a holder's 500 ms lease ends, with a replica and
/// the AOF on: the server survives; the first waiter, whose WAIT (800 ms) passes
/// during the pause, gets nil (once, not before its timeout) and is skipped; the
/// second (WAIT 10000) is granted exactly once, not before the pause ends and
/// promptly after it, with a token above the holder's; the replica holds the master's
/// dataset, and an AOF restart gives the same digest.
fn pause_while_lease_ends(mode: &str) {
    let what = format!("CLIENT PAUSE {} {mode}", PAUSE.as_millis());
    let mut s = Scene::replicated(&what, &["--appendonly", "yes"]);
    let held_at = Instant::now();
    let ttl = PAUSE_HOLDER_TTL.as_millis() as i64;
    let t0 = s.hold("pause:k", "holder", ttl, &[]);
    let w = s.queue(&[
        ("pause:k", "w-800ms", 10_000, 800),
        ("pause:k", "waiter", 10_000, 10_000),
    ]);
    let paused_at = s.pause(PAUSE.as_millis() as u64, mode, held_at, PAUSE_HOLDER_TTL);
    let mut answers = join_all(w);
    let listing = show_answers(&answers, paused_at);
    assert_eq!(
        answers[0].reply,
        Reply::Nil,
        "{what}: the waiter whose WAIT passed during the pause; all:\n{listing}\n{}",
        crash_cause(&s.master)
    );
    let wait_800 = Duration::from_millis(800);
    assert_not_before(&answers[0], held_at, wait_800, &what);
    let token = s.granted_between(&answers[1], t0, paused_at, PAUSE, PAUSE);
    assert_no_second_reply(&mut answers, &what);
    s.assert_holder("pause:k", "waiter", token);
    s.assert_end(&["pause:k"]);
    s.replay_aof();
    s.assert_holder("pause:k", "waiter", token);
    assert_healthy(&mut s.master, &what);
}

#[test]
fn pause_write_while_lease_ends_hands_off_after_the_pause() {
    pause_while_lease_ends("WRITE");
}

#[test]
fn pause_all_while_lease_ends_hands_off_after_the_pause() {
    pause_while_lease_ends("ALL");
}

/// CLIENT PAUSE 1500 WRITE while the 1000 ms leases of 30 locks end, each with a
/// waiter: every waiter is granted exactly once, none before the pause ends and all
/// promptly after it, each key then held by its own waiter with a larger token; the
/// replica holds the master's dataset.
#[test]
fn pause_while_thirty_leases_end() {
    let mut s = Scene::replicated("CLIENT PAUSE WRITE over 30 lease ends", &[]);
    let keys: Vec<String> = (0..30).map(|i| format!("thirty:{i}")).collect();
    let owners: Vec<String> = (0..30).map(|i| format!("w{i}")).collect();
    let held_at = Instant::now();
    let tokens: Vec<i64> = keys
        .iter()
        .map(|k| s.hold(k, "holder", 1000, &[]))
        .collect();
    let specs: Vec<(&str, &str, i64, i64)> = keys
        .iter()
        .zip(&owners)
        .map(|(k, o)| (k.as_str(), o.as_str(), 5000, 10_000))
        .collect();
    let w = s.queue(&specs);
    let lease = Duration::from_millis(1000);
    let paused_at = s.pause(PAUSE.as_millis() as u64, "WRITE", held_at, lease);
    let mut answers = join_all(w);
    for (i, a) in answers.iter().enumerate() {
        let token = s.granted_between(a, tokens[i], paused_at, PAUSE, PAUSE);
        s.assert_holder(&keys[i], &owners[i], token);
    }
    assert_no_second_reply(&mut answers, &s.what);
    let key_refs: Vec<&str> = keys.iter().map(|k| k.as_str()).collect();
    s.assert_end(&key_refs);
}

/// CLIENT PAUSE 10000 WRITE, the holder's 500 ms lease ends (the key reads as
/// expired), then CLIENT UNPAUSE early: nothing is handed off while paused (the waiter
/// has no answer, and a DLOCK.ACQUIRE of another key sent during the pause is held
/// back); after UNPAUSE the waiter is granted promptly, exactly once, the held-back
/// ACQUIRE is granted, and the replica holds the master's dataset.
#[test]
fn unpause_early_serves_the_waiter_promptly() {
    let mut s = Scene::replicated("CLIENT UNPAUSE", &[]);
    let held_at = Instant::now();
    let t0 = s.hold("unpause:k", "holder", 500, &[]);
    let mut w = s.queue(&[("unpause:k", "waiter", 10_000, 10_000)]);
    s.pause(10_000, "WRITE", held_at, Duration::from_millis(500));
    let mut held_back = RawConn::open(s.master.port);
    held_back.send(&["DLOCK.ACQUIRE", "unpause:other", "x", "5000"]);
    s.wait_lease_over("unpause:k");
    // Give a module that does not defer time to (wrongly) hand the lock off.
    thread::sleep(Duration::from_millis(300));
    assert_healthy(&mut s.master, &s.what);
    assert!(
        !w[0].is_finished(),
        "{}: the waiter was answered while writes were paused",
        s.what
    );
    assert_eq!(
        held_back.read(Duration::from_millis(1)),
        Reply::Silent,
        "{}: a write command ran while writes were paused",
        s.what
    );
    let unpaused_at = Instant::now();
    let _: () = query!(&mut s.con, "CLIENT", "UNPAUSE");
    let mut answers = vec![w.remove(0).join()];
    s.granted_between(&answers[0], t0, unpaused_at, Duration::ZERO, Duration::ZERO);
    assert!(
        matches!(held_back.read(READ_TIMEOUT), Reply::Int(_)),
        "{}: the ACQUIRE held back by the pause was not granted after it",
        s.what
    );
    assert_no_second_reply(&mut answers, &s.what);
    s.assert_end(&["unpause:k", "unpause:other"]);
}

/// A hand-off started by a keyspace change just before a pause: `DEL` (then
/// `FLUSHALL`) of a held lock and `CLIENT PAUSE 1000 WRITE` run in one
/// `MULTI`/`EXEC`, so the hand-off the key event schedules comes due while writes
/// are paused on every server. (A plain pipeline is not enough: Redis 7.4 runs a
/// client's `FLUSHALL` in the background and replies, and reads the next command,
/// only after the event loop has run the hand-off.) The waiter is granted after the
/// pause ends (not during it) and promptly after, exactly once, with a larger token;
/// the replica holds the master's dataset.
#[test]
fn key_event_hand_off_waits_for_a_pause() {
    let pause = Duration::from_millis(1000);
    let mut s = Scene::replicated("key event, then CLIENT PAUSE WRITE", &[]);
    for op in [vec!["DEL", "ev:k"], vec!["FLUSHALL"]] {
        s.what = format!("{} then CLIENT PAUSE WRITE", op[0]);
        let t0 = s.hold("ev:k", "holder", 60_000, &[]);
        let owner = format!("w-{}", op[0]);
        let w = s.queue(&[("ev:k", &owner, 5000, 10_000)]);
        let mut p = redis::pipe();
        p.atomic();
        p.cmd(op[0]).arg(&op[1..]).ignore();
        p.cmd("CLIENT").arg("PAUSE").arg(1000).arg("WRITE").ignore();
        let paused_at = Instant::now();
        let sent: redis::RedisResult<()> = p.query(&mut s.con);
        if let Err(e) = sent {
            panic!("{}: {e}; {}", s.what, crash_cause(&s.master));
        }
        let mut answers = join_all(w);
        let token = s.granted_between(&answers[0], t0, paused_at, pause, pause);
        assert_no_second_reply(&mut answers, &s.what);
        s.assert_holder("ev:k", &owner, token);
        s.assert_end(&["ev:k"]);
        assert_eq!(release(&mut s.con, "ev:k", &owner), 1);
    }
}

/// RL.TOKEN, BF.ADDX, BF.RESERVEX and DLOCK.ACQUIRE sent during CLIENT PAUSE 800
/// WRITE wait out the pause like any write command, then complete with their normal
/// replies (exactly one each); BF.EXISTSX and DLOCK.INFO (read-only) answer during
/// the pause; the replica then holds the master's dataset.
#[test]
fn limiter_and_filter_calls_wait_out_a_write_pause() {
    let what = "RL/BF during CLIENT PAUSE WRITE";
    let pause = Duration::from_millis(800);
    let mut master = Server::start();
    let replica = master.start_replica(&[], &[]);
    let mut con = conn_t(&master);
    let added: i64 = query!(&mut con, "BF.ADDX", "ops:f", "a");
    assert_eq!(added, 1);
    let first: Vec<i64> = query!(&mut con, "RL.TOKEN", "ops:r", 10, 5);
    assert_eq!(first[0], 1, "RL.TOKEN on a new key is allowed");

    let paused_at = Instant::now();
    client_pause(&mut con, pause.as_millis() as u64, "WRITE");
    let writes: Vec<(&str, Vec<&str>)> = vec![
        ("BF.ADDX", vec!["BF.ADDX", "ops:f", "b"]),
        ("RL.TOKEN", vec!["RL.TOKEN", "ops:r", "10", "5"]),
        ("BF.RESERVEX", vec!["BF.RESERVEX", "ops:g", "0.01", "100"]),
        ("DLOCK.ACQUIRE", vec!["DLOCK.ACQUIRE", "ops:l", "x", "5000"]),
    ];
    let handles: Vec<Waiter> = writes
        .iter()
        .map(|(name, args)| Waiter::call(&master, name, args))
        .collect();
    // Reads are not paused.
    let mut reader = RawConn::open(master.port);
    let seen = reader.call(&["BF.EXISTSX", "ops:f", "a"]);
    let info = reader.call(&["DLOCK.INFO", "ops:l"]);
    let read_at = Instant::now();
    assert_eq!(seen, Reply::Int(1), "{what}: BF.EXISTSX during the pause");
    assert_eq!(info, Reply::Nil, "{what}: DLOCK.INFO during the pause");
    assert!(
        read_at < paused_at + pause - Duration::from_millis(100),
        "{what}: read-only commands waited for the write pause ({:?})",
        read_at - paused_at
    );

    for h in handles {
        let Answer {
            name,
            reply,
            at,
            conn: mut c,
            ..
        } = h.join();
        let after = at.saturating_duration_since(paused_at);
        assert!(
            after + EARLY >= pause,
            "{what}: {name} answered {reply:?} {after:?} into a {pause:?} write pause"
        );
        assert!(
            after <= pause + PROMPT,
            "{what}: {name} answered only {after:?} after a {pause:?} pause"
        );
        let ok = match name.as_str() {
            "BF.ADDX" => reply == Reply::Int(1),
            "RL.TOKEN" => {
                matches!(&reply, Reply::Array(v) if v.len() == 4 && v[0] == Reply::Int(1))
            }
            "BF.RESERVEX" => reply == Reply::Status("OK".into()),
            _ => matches!(reply, Reply::Int(_)),
        };
        assert!(ok, "{what}: unexpected reply to {name}: {reply:?}");
        thread::sleep(Duration::from_millis(20));
        assert_eq!(
            c.read(Duration::from_millis(1)),
            Reply::Silent,
            "{what}: {name} got a second reply"
        );
    }
    assert_healthy(&mut master, what);
    assert_same_dataset(&master, &replica, &[], what);
    let mut rc = replica.conn();
    let on_replica: i64 = query!(&mut rc, "BF.EXISTSX", "ops:f", "b");
    assert_eq!(
        on_replica, 1,
        "{what}: the paused BF.ADDX reached the replica"
    );
}

/// The server's CPU time so far, in clock ticks (`utime + stime` of
/// `/proc/<pid>/stat`; Linux counts them at 100 a second).
fn server_cpu_ticks(con: &mut redis::Connection) -> u64 {
    let info: String = query!(con, "INFO", "server");
    let pid = info
        .lines()
        .find_map(|l| l.strip_prefix("process_id:"))
        .unwrap()
        .trim()
        .to_owned();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name, which ends with the last ')'.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// A write pause with many keys' waiters queued keeps the server idle: the
/// once-a-second look at each key with waiters keeps its pace while writes
/// wait. (Red team: each key re-armed a 5 ms timer for as long as the pause
/// lasted, 69% of a CPU for 2,000 keys.)
#[test]
fn a_write_pause_with_many_waited_keys_keeps_the_server_idle() {
    const KEYS: usize = 400;
    let (server, mut con) = lock_server();
    let mut pipe = redis::pipe();
    for i in 0..KEYS {
        pipe.cmd("DLOCK.ACQUIRE")
            .arg(format!("k{i}"))
            .arg("h")
            .arg(600_000);
    }
    let _: Vec<i64> = pipe.query(&mut con).unwrap();
    let waiters: Vec<RawConn> = (0..KEYS)
        .map(|i| {
            let mut raw = RawConn::open(server.port);
            raw.send(&[
                "DLOCK.ACQUIRE",
                &format!("k{i}"),
                "w",
                "600000",
                "WAIT",
                "0",
            ]);
            raw
        })
        .collect();
    premise(
        wait_until(Duration::from_secs(10), || {
            warden_stat(&mut con, "locks_waiting") == KEYS as i64
        }),
        "every waiter queued",
    );
    client_pause(&mut con, 4_000, "WRITE");
    thread::sleep(Duration::from_millis(1_200)); // every key's look has come due
    let before = server_cpu_ticks(&mut con);
    thread::sleep(Duration::from_secs(2));
    let used = server_cpu_ticks(&mut con) - before;
    let _: () = query!(&mut con, "CLIENT", "UNPAUSE");
    assert!(
        used <= 20,
        "the paused server used {used} of 200 clock ticks with {KEYS} waited keys"
    );
    assert_eq!(warden_stat(&mut con, "locks_waiting"), KEYS as i64);
    drop(waiters);
}
