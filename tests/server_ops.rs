//! The server's own operations as inputs (issue #10, SPEC "Rules every command keeps"):
//! `CLIENT PAUSE WRITE|ALL`, `CLIENT UNPAUSE`, `FAILOVER` (with a fast and with a slow
//! replica), `DEBUG SLEEP`, `REPLICAOF`, `SHUTDOWN`, `maxmemory`, a keyspace full of
//! volatile keys, and `PEXPIRE` / `PERSIST` / `RESTORE` on lock keys ("the lease is the
//! key's expiry") — each run while clients wait in `DLOCK.ACQUIRE … WAIT`.
//!
//! Every test checks that the server survives (it answers PING and its log has no
//! assertion or crash report), that every blocked waiter gets exactly one answer (read
//! on its own raw connection, with a read timeout, and nothing more arrives after it),
//! and, where a replica or the AOF is involved, that they hold exactly the master's
//! dataset (`DEBUG DIGEST`).
//!
//! Timing bounds are functional, with wide margins for a noisy machine: "not before"
//! bounds allow `EARLY`, "promptly after" bounds allow `PROMPT`.

mod common;
use common::dlock::{conn_t, lock_info, release, try_acquire, wait_waiting};
use common::*;

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// A waiter (or any raw call) without a reply after this long is hung.
const READ_TIMEOUT: Duration = Duration::from_secs(15);
/// Clock slack for "not before" bounds (client monotonic clock vs. server wall clock).
const EARLY: Duration = Duration::from_millis(25);
/// "Promptly after" an event: the contract is a few tens of ms; this is the margin.
const PROMPT: Duration = Duration::from_millis(1000);
/// How long a waiter's connection is watched for a second reply.
const QUIET: Duration = Duration::from_millis(200);

// ---------------------------------------------------------------------------------------
// A raw RESP2 connection: sees exactly the bytes the server sends (a second reply, EOF)
// ---------------------------------------------------------------------------------------

/// One RESP2 reply, or what happened instead.
#[derive(Debug, Clone, PartialEq)]
enum Reply {
    Int(i64),
    Nil,
    Status(String),
    Bulk(Vec<u8>),
    Array(Vec<Reply>),
    Error(String),
    /// The connection was closed (EOF or reset) instead of a reply.
    Closed(String),
    /// Nothing arrived within the read timeout.
    Silent,
}

impl Reply {
    fn is_error_starting(&self, prefix: &str) -> bool {
        matches!(self, Reply::Error(e) if e.starts_with(prefix))
    }
}

struct RawConn {
    r: BufReader<TcpStream>,
}

impl RawConn {
    fn open(port: u16) -> RawConn {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect raw");
        s.set_nodelay(true).expect("nodelay");
        RawConn {
            r: BufReader::new(s),
        }
    }

    /// Sends one command without reading its reply.
    fn send<A: AsRef<[u8]>>(&mut self, args: &[A]) {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            let a = a.as_ref();
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.r.get_mut().write_all(&out).expect("send command");
    }

    /// The next reply, waiting at most `timeout`.
    fn read(&mut self, timeout: Duration) -> Reply {
        self.r
            .get_ref()
            .set_read_timeout(Some(timeout.max(Duration::from_millis(1))))
            .expect("read timeout");
        match self.read_value() {
            Ok(v) => v,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Reply::Silent
            }
            Err(e) => Reply::Closed(e.to_string()),
        }
    }

    fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Reply {
        self.send(args);
        self.read(READ_TIMEOUT)
    }

    fn read_value(&mut self) -> io::Result<Reply> {
        let mut line = Vec::new();
        self.r.read_until(b'\n', &mut line)?;
        if line.is_empty() {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "EOF"));
        }
        if line.len() < 3 || !line.ends_with(b"\r\n") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("bad reply line {:?}", escape(&line)),
            ));
        }
        let body = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
        let number = |b: &str| {
            b.parse::<i64>()
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, b.to_string()))
        };
        Ok(match line[0] {
            b'+' => Reply::Status(body),
            b'-' => Reply::Error(body),
            b':' => Reply::Int(number(&body)?),
            b'$' => match number(&body)? {
                n if n < 0 => Reply::Nil,
                n => {
                    let mut buf = vec![0u8; n as usize + 2];
                    self.r.read_exact(&mut buf)?;
                    buf.truncate(n as usize);
                    Reply::Bulk(buf)
                }
            },
            b'*' => match number(&body)? {
                n if n < 0 => Reply::Nil,
                n => Reply::Array(
                    (0..n)
                        .map(|_| self.read_value())
                        .collect::<io::Result<_>>()?,
                ),
            },
            other => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("unknown reply type {:?}", other as char),
                ))
            }
        })
    }
}

// ---------------------------------------------------------------------------------------
// Waiters
// ---------------------------------------------------------------------------------------

/// A client blocked (or about to block) in `DLOCK.ACQUIRE … WAIT` on its own raw
/// connection; its thread reads the first reply.
struct Waiter {
    owner: String,
    handle: JoinHandle<Answer>,
}

/// What a waiter was answered, when, and its connection (to watch for more).
struct Answer {
    owner: String,
    reply: Reply,
    at: Instant,
    conn: RawConn,
}

/// Sends `args` on a new raw connection and reads the reply in a thread; `name`
/// labels the answer.
fn spawn_call(port: u16, name: &str, args: &[&str]) -> JoinHandle<Answer> {
    let mut conn = RawConn::open(port);
    conn.send(args);
    let owner = name.to_string();
    thread::spawn(move || {
        let reply = conn.read(READ_TIMEOUT);
        Answer {
            owner,
            reply,
            at: Instant::now(),
            conn,
        }
    })
}

fn spawn_waiter(server: &Server, key: &str, owner: &str, ttl: i64, wait: i64) -> Waiter {
    let (ttl, wait) = (ttl.to_string(), wait.to_string());
    let args = ["DLOCK.ACQUIRE", key, owner, &ttl, "WAIT", &wait];
    Waiter {
        owner: owner.to_string(),
        handle: spawn_call(server.port, owner, &args),
    }
}

/// Queues waiters `(key, owner, ttl, wait)` in order, each blocked before the next
/// is sent.
fn queue(server: &Server, con: &mut Connection, specs: &[(&str, &str, i64, i64)]) -> Vec<Waiter> {
    let base = warden_stat(con, "locks_waiting");
    specs
        .iter()
        .enumerate()
        .map(|(i, (key, owner, ttl, wait))| {
            let w = spawn_waiter(server, key, owner, *ttl, *wait);
            wait_waiting(con, base + i as i64 + 1);
            w
        })
        .collect()
}

fn join(w: Waiter) -> Answer {
    w.handle
        .join()
        .unwrap_or_else(|_| panic!("waiter thread {} panicked", w.owner))
}

/// The token a waiter was granted; fails (with the server log) on any other answer.
fn token_of(a: &Answer, server: &Server, what: &str) -> i64 {
    match &a.reply {
        Reply::Int(t) => *t,
        other => panic!(
            "{what}: waiter {} expected a token, got {other:?}; {}",
            a.owner,
            crash_cause(server)
        ),
    }
}

/// Every waiter got one answer (checked by the caller) and nothing after it: within
/// `QUIET` its connection stays silent or is closed by the server.
fn assert_no_second_reply(answers: &mut [Answer], what: &str) {
    thread::sleep(QUIET);
    for a in answers.iter_mut() {
        assert!(
            !matches!(a.reply, Reply::Silent),
            "{what}: waiter {} got no reply within {READ_TIMEOUT:?}",
            a.owner
        );
        match a.conn.read(Duration::from_millis(1)) {
            Reply::Silent | Reply::Closed(_) => {}
            more => panic!(
                "{what}: waiter {} got a second reply {more:?} after {:?}",
                a.owner, a.reply
            ),
        }
    }
}

fn show(answers: &[Answer], t0: Instant) -> String {
    answers
        .iter()
        .map(|a| {
            format!(
                "  {}: {:?} at +{} ms",
                a.owner,
                a.reply,
                a.at.saturating_duration_since(t0).as_millis()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

// ---------------------------------------------------------------------------------------
// Server checks
// ---------------------------------------------------------------------------------------

/// What the server log says about a crash (the assertion or signal and the backtrace),
/// or "no crash report in the log".
fn crash_cause(server: &Server) -> String {
    let log = server.log_tail(1_000_000);
    let mut out: Vec<&str> = Vec::new();
    let mut in_trace = false;
    for line in log.lines() {
        if line.contains("==> ") || line.contains("crashed by signal") || line.contains("Guru") {
            out.push(line);
        }
        if line.starts_with("Backtrace:") {
            in_trace = true;
            continue;
        }
        if in_trace {
            if line.trim().is_empty() || out.len() > 20 {
                in_trace = false;
            } else {
                out.push(line);
            }
        }
    }
    if out.is_empty() {
        "no crash report in the log".to_string()
    } else {
        format!(
            "server on port {} crashed:\n{}",
            server.port,
            out.join("\n")
        )
    }
}

/// The server log has no assertion failure or crash report.
fn assert_clean_log(server: &Server, what: &str) {
    let log = server.log_tail(1_000_000);
    for bad in [
        "ASSERTION",
        "crashed by signal",
        "Guru Meditation",
        "BUG REPORT",
    ] {
        assert!(
            !log.contains(bad),
            "{what}: server log (port {}) reports {bad:?}: {}",
            server.port,
            crash_cause(server)
        );
    }
}

/// Alive, answering PING, and a clean log.
fn assert_healthy(server: &mut Server, what: &str) {
    assert!(
        server.is_alive(),
        "{what}: server on port {} died; {}",
        server.port,
        crash_cause(server)
    );
    server.assert_alive();
    assert_clean_log(server, what);
}

/// A replica of `master` that already receives the master's writes as they happen.
/// After a diskless sync the master holds writes back until the replica's first ACK
/// (sent once a second), so one write is waited for here.
fn streaming_replica(master: &Server) -> Server {
    let replica = master.start_replica(&[], &[]);
    let _: () = cmd("SET")
        .arg("replica:linked")
        .arg(1)
        .query(&mut master.conn())
        .expect("SET");
    master.sync_replicas(1);
    replica
}

fn role(con: &mut Connection) -> String {
    info_field(con, "replication", "role").unwrap_or_default()
}

/// Waits until `replica` holds exactly `master`'s dataset: every write the master
/// propagated is applied and `DEBUG DIGEST` is equal. `keys` are read on the master
/// first, so that keys whose lease has passed are expired there (and the DEL
/// propagated) rather than in between the two digests.
fn assert_same_dataset(master: &Server, replica: &Server, keys: &[&str], what: &str) {
    let mut mc = master.conn();
    let mut rc = replica.conn();
    let mut last = (String::new(), String::new());
    let same = wait_until(Duration::from_secs(5), || {
        for k in keys {
            exists(&mut mc, k);
        }
        master.sync_replicas(1);
        last = (db_digest(&mut mc), db_digest(&mut rc));
        last.0 == last.1
    });
    assert!(
        same,
        "{what}: DEBUG DIGEST differs: master (port {}) {} vs replica (port {}) {}\nmaster log:\n{}\nreplica log:\n{}",
        master.port,
        last.0,
        replica.port,
        last.1,
        master.log_tail(15),
        replica.log_tail(15)
    );
}

/// Independent checks of one test: each failure is noted and the test goes on, so a
/// report lists every broken expectation, not only the first.
#[derive(Default)]
struct Checks(Vec<String>);

impl Checks {
    fn check(&mut self, ok: bool, msg: impl FnOnce() -> String) {
        if !ok {
            self.0.push(msg());
        }
    }

    fn note(&mut self, r: Result<(), String>) {
        if let Err(e) = r {
            self.0.push(e);
        }
    }

    fn finish(self, what: &str) {
        assert!(
            self.0.is_empty(),
            "{what}: {} check(s) failed:\n  - {}",
            self.0.len(),
            self.0.join("\n  - ")
        );
    }
}

/// DLOCK.INFO's ttl_ms equals the key's PTTL (read around it; -1 for both when the
/// key has no expiry). Returns ttl_ms, or what differs.
fn ttl_is_pttl(con: &mut Connection, key: &str) -> Result<i64, String> {
    let before = pttl(&mut *con, key);
    let info = lock_info(&mut *con, key).ok_or_else(|| format!("{key} is not held"))?;
    let after = pttl(&mut *con, key);
    let same = if before == -1 || after == -1 {
        before == -1 && after == -1 && info.ttl_ms == -1
    } else {
        after - 10 <= info.ttl_ms && info.ttl_ms <= before + 10
    };
    if same {
        Ok(info.ttl_ms)
    } else {
        Err(format!(
            "DLOCK.INFO ttl_ms {} is not the key's PTTL ({before} .. {after})",
            info.ttl_ms
        ))
    }
}

fn sleep_until(t: Instant) {
    thread::sleep(t.saturating_duration_since(Instant::now()));
}

fn client_pause(con: &mut Connection, ms: u64, mode: &str) {
    let _: () = cmd("CLIENT")
        .arg("PAUSE")
        .arg(ms)
        .arg(mode)
        .query(con)
        .expect("CLIENT PAUSE");
}

/// Fails with a clear message when the test's own setup was too slow for its premise.
fn premise(ok: bool, what: &str) {
    assert!(
        ok,
        "test premise broken (machine too slow?): {what} — not a module failure"
    );
}

/// The test's next step comes at least 100 ms before a lease of `lease` that began
/// at `held_at` ends (a premise of the test, not a module check).
fn before_lease_end(held_at: Instant, lease: Duration, step: &str) {
    let spent = held_at.elapsed();
    premise(
        spent + Duration::from_millis(100) < lease,
        &format!("{step} comes {spent:?} into a {lease:?} lease, not before its end"),
    );
}

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
    let mut master = Server::start_with(&["--appendonly", "yes"], &[]);
    let mut replica = master.start_replica(&[], &[]);
    let mut con = conn_t(&master);
    let held_at = Instant::now();
    let ttl = PAUSE_HOLDER_TTL.as_millis() as i64;
    let t0 = try_acquire(&mut con, "pause:k", "holder", ttl).expect("holder gets the lock");
    let w = queue(
        &master,
        &mut con,
        &[
            ("pause:k", "w-800ms", 10_000, 800),
            ("pause:k", "waiter", 10_000, 10_000),
        ],
    );
    let paused_at = Instant::now();
    client_pause(&mut con, PAUSE.as_millis() as u64, mode);
    before_lease_end(held_at, PAUSE_HOLDER_TTL, "CLIENT PAUSE");
    let mut answers: Vec<Answer> = w.into_iter().map(join).collect();
    let listing = show(&answers, paused_at);
    assert_eq!(
        answers[0].reply,
        Reply::Nil,
        "{what}: the waiter whose WAIT passed during the pause; all:\n{listing}\n{}",
        crash_cause(&master)
    );
    let timed_out = answers[0].at.saturating_duration_since(held_at);
    assert!(
        timed_out + EARLY >= Duration::from_millis(800),
        "{what}: WAIT 800 answered nil after {timed_out:?}"
    );
    let token = token_of(&answers[1], &master, &what);
    assert!(token > t0, "{what}: waiter token {token} <= holder's {t0}");
    let after = answers[1].at.saturating_duration_since(paused_at);
    assert!(
        after + EARLY >= PAUSE,
        "{what}: the waiter was granted {after:?} after the pause began: the hand-off did not wait for the pause to end"
    );
    assert!(
        after <= PAUSE + PROMPT,
        "{what}: the waiter was granted only {after:?} after the pause began (pause {PAUSE:?})"
    );
    assert_no_second_reply(&mut answers, &what);
    assert_healthy(&mut master, &what);
    let info = lock_info(&mut con, "pause:k").expect("the waiter holds the lock");
    assert_eq!((info.owner.as_slice(), info.token), (&b"waiter"[..], token));
    assert_same_dataset(&master, &replica, &["pause:k"], &what);
    assert_healthy(&mut replica, &what);

    let before = db_digest(&mut con);
    master.restart("NOSAVE");
    let mut con = master.conn();
    assert_eq!(
        db_digest(&mut con),
        before,
        "{what}: the dataset replayed from the AOF differs"
    );
    let info = lock_info(&mut con, "pause:k").expect("the waiter holds the lock after AOF replay");
    assert_eq!((info.owner.as_slice(), info.token), (&b"waiter"[..], token));
    assert_healthy(&mut master, &what);
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
    let what = "CLIENT PAUSE WRITE over 30 lease ends";
    let n = 30;
    let mut master = Server::start();
    let replica = master.start_replica(&[], &[]);
    let mut con = conn_t(&master);
    let keys: Vec<String> = (0..n).map(|i| format!("thirty:{i}")).collect();
    let owners: Vec<String> = (0..n).map(|i| format!("w{i}")).collect();
    let held_at = Instant::now();
    let tokens: Vec<i64> = keys
        .iter()
        .map(|k| try_acquire(&mut con, k, "holder", 1000).expect("holder"))
        .collect();
    let specs: Vec<(&str, &str, i64, i64)> = keys
        .iter()
        .zip(&owners)
        .map(|(k, o)| (k.as_str(), o.as_str(), 5000, 10_000))
        .collect();
    let w = queue(&master, &mut con, &specs);
    let paused_at = Instant::now();
    client_pause(&mut con, PAUSE.as_millis() as u64, "WRITE");
    before_lease_end(held_at, Duration::from_millis(1000), "CLIENT PAUSE");
    let mut answers: Vec<Answer> = w.into_iter().map(join).collect();
    let listing = show(&answers, paused_at);
    for (i, a) in answers.iter().enumerate() {
        let token = token_of(a, &master, what);
        assert!(
            token > tokens[i],
            "{what}: {} token {token} <= {}",
            a.owner,
            tokens[i]
        );
        let after = a.at.saturating_duration_since(paused_at);
        assert!(
            after + EARLY >= PAUSE && after <= PAUSE + PROMPT,
            "{what}: {} granted {after:?} after a {PAUSE:?} pause began; all:\n{listing}",
            a.owner
        );
    }
    assert_no_second_reply(&mut answers, what);
    assert_healthy(&mut master, what);
    for (k, o) in keys.iter().zip(&owners) {
        let info = lock_info(&mut con, k).unwrap_or_else(|| panic!("{what}: {k} is free"));
        assert_eq!(info.owner, o.as_bytes(), "{what}: holder of {k}");
    }
    let key_refs: Vec<&str> = keys.iter().map(|k| k.as_str()).collect();
    assert_same_dataset(&master, &replica, &key_refs, what);
}

/// CLIENT PAUSE 10000 WRITE, the holder's 500 ms lease ends (the key reads as
/// expired), then CLIENT UNPAUSE early: nothing is handed off while paused (the waiter
/// has no answer, and a DLOCK.ACQUIRE of another key sent during the pause is held
/// back); after UNPAUSE the waiter is granted promptly, exactly once, the held-back
/// ACQUIRE is granted, and the replica holds the master's dataset.
#[test]
fn unpause_early_serves_the_waiter_promptly() {
    let what = "CLIENT UNPAUSE";
    let mut master = Server::start();
    let replica = master.start_replica(&[], &[]);
    let mut con = conn_t(&master);
    let held_at = Instant::now();
    let t0 = try_acquire(&mut con, "unpause:k", "holder", 500).expect("holder gets the lock");
    let mut w = queue(
        &master,
        &mut con,
        &[("unpause:k", "waiter", 10_000, 10_000)],
    );
    client_pause(&mut con, 10_000, "WRITE");
    before_lease_end(held_at, Duration::from_millis(500), "CLIENT PAUSE");
    let mut held_back = RawConn::open(master.port);
    held_back.send(&["DLOCK.ACQUIRE", "unpause:other", "x", "5000"]);
    let lease_over = wait_until(Duration::from_secs(3), || {
        !master.is_alive() || cmd("PTTL").arg("unpause:k").query::<i64>(&mut con).ok() == Some(-2)
    });
    assert_healthy(&mut master, what);
    assert!(lease_over, "{what}: the 500 ms lease never ended");
    // Give a module that does not defer time to (wrongly) hand the lock off.
    thread::sleep(Duration::from_millis(300));
    assert_healthy(&mut master, what);
    assert!(
        !w[0].handle.is_finished(),
        "{what}: the waiter was answered while writes were paused"
    );
    assert_eq!(
        held_back.read(Duration::from_millis(1)),
        Reply::Silent,
        "{what}: a write command ran while writes were paused"
    );
    let unpaused_at = Instant::now();
    let _: () = cmd("CLIENT")
        .arg("UNPAUSE")
        .query(&mut con)
        .expect("CLIENT UNPAUSE");
    let mut answers = vec![join(w.remove(0))];
    let token = token_of(&answers[0], &master, what);
    assert!(token > t0, "{what}: waiter token {token} <= holder's {t0}");
    let after = answers[0].at.saturating_duration_since(unpaused_at);
    assert!(
        after <= PROMPT,
        "{what}: the waiter was granted {after:?} after UNPAUSE"
    );
    assert!(
        matches!(held_back.read(READ_TIMEOUT), Reply::Int(_)),
        "{what}: the ACQUIRE held back by the pause was not granted after it"
    );
    assert_no_second_reply(&mut answers, what);
    assert_healthy(&mut master, what);
    assert_same_dataset(&master, &replica, &["unpause:k", "unpause:other"], what);
}

/// A hand-off started by a keyspace change just before a pause: `DEL` (then
/// `FLUSHALL`) of a held lock and `CLIENT PAUSE 1000 WRITE` arrive in one pipeline, so
/// the hand-off the key event schedules comes due while writes are paused. The waiter
/// is granted after the pause ends (not during it) and promptly after, exactly once,
/// with a larger token; the replica holds the master's dataset.
#[test]
fn key_event_hand_off_waits_for_a_pause() {
    let pause = Duration::from_millis(1000);
    let mut master = Server::start();
    let replica = master.start_replica(&[], &[]);
    let mut con = conn_t(&master);
    for op in [vec!["DEL", "ev:k"], vec!["FLUSHALL"]] {
        let what = format!("{} then CLIENT PAUSE WRITE", op[0]);
        let what = what.as_str();
        let t0 = try_acquire(&mut con, "ev:k", "holder", 60_000).expect("ev:k");
        let owner = format!("w-{}", op[0]);
        let w = queue(&master, &mut con, &[("ev:k", &owner, 5000, 10_000)]);
        let mut p = redis::pipe();
        p.cmd(op[0]).arg(&op[1..]).ignore();
        p.cmd("CLIENT")
            .arg("PAUSE")
            .arg(pause.as_millis() as u64)
            .arg("WRITE")
            .ignore();
        let paused_at = Instant::now();
        let sent: redis::RedisResult<()> = p.query(&mut con);
        if let Err(e) = sent {
            panic!("{what}: {e}; {}", crash_cause(&master));
        }
        let mut answers: Vec<Answer> = w.into_iter().map(join).collect();
        let token = token_of(&answers[0], &master, what);
        assert!(token > t0, "{what}: token {token} <= {t0}");
        let after = answers[0].at.saturating_duration_since(paused_at);
        assert!(
            after + EARLY >= pause,
            "{what}: the waiter was granted {after:?} into a {pause:?} write pause"
        );
        assert!(
            after <= pause + PROMPT,
            "{what}: the waiter was granted only {after:?} after a {pause:?} pause began"
        );
        assert_no_second_reply(&mut answers, what);
        assert_healthy(&mut master, what);
        let info = lock_info(&mut con, "ev:k").expect("the waiter holds ev:k");
        assert_eq!(
            (info.owner, info.token),
            (owner.clone().into_bytes(), token)
        );
        assert_same_dataset(&master, &replica, &["ev:k"], what);
        assert_eq!(release(&mut con, "ev:k", &owner), 1);
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
    let added: i64 = cmd("BF.ADDX")
        .arg("ops:f")
        .arg("a")
        .query(&mut con)
        .expect("BF.ADDX");
    assert_eq!(added, 1);
    let first: Vec<i64> = cmd("RL.TOKEN")
        .arg("ops:r")
        .arg(10)
        .arg(5)
        .query(&mut con)
        .expect("RL.TOKEN");
    assert_eq!(first[0], 1, "RL.TOKEN on a new key is allowed");

    let paused_at = Instant::now();
    client_pause(&mut con, pause.as_millis() as u64, "WRITE");
    let writes: Vec<(&str, Vec<&str>)> = vec![
        ("BF.ADDX", vec!["BF.ADDX", "ops:f", "b"]),
        ("RL.TOKEN", vec!["RL.TOKEN", "ops:r", "10", "5"]),
        ("BF.RESERVEX", vec!["BF.RESERVEX", "ops:g", "0.01", "100"]),
        ("DLOCK.ACQUIRE", vec!["DLOCK.ACQUIRE", "ops:l", "x", "5000"]),
    ];
    let handles: Vec<JoinHandle<Answer>> = writes
        .iter()
        .map(|(name, args)| spawn_call(master.port, name, args))
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
            owner: name,
            reply,
            at,
            conn: mut c,
        } = h.join().expect("writer thread");
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
    let on_replica: i64 = cmd("BF.EXISTSX")
        .arg("ops:f")
        .arg("b")
        .query(&mut rc)
        .expect("BF.EXISTSX on the replica");
    assert_eq!(
        on_replica, 1,
        "{what}: the paused BF.ADDX reached the replica"
    );
}

// ---------------------------------------------------------------------------------------
// FAILOVER
// ---------------------------------------------------------------------------------------

/// `FAILOVER TIMEOUT 3000` on a master with waiters — two behind a 60 s lease (WAIT
/// 10000 and WAIT 1000), one behind a 500 ms lease — optionally with the replica busy
/// in `DEBUG SLEEP 2`. With the slow replica the short lease always ends while the
/// failover pauses writes; with a fast one it does when the replica's once-a-second
/// ACK comes after it, else it ends just after the master turned replica. After: the
/// roles have swapped, both servers are alive with clean logs, every waiter got
/// exactly one answer and none was granted (the old master only paused and then
/// turned replica: `UNBLOCKED …`, or nil for the 1 s WAIT), the datasets are equal,
/// and the new master grants the ended lease to a new owner with a larger token.
fn failover_with_waiters(slow_replica: bool) {
    let what = if slow_replica {
        "FAILOVER with a replica in DEBUG SLEEP 2"
    } else {
        "FAILOVER"
    };
    let mut master = Server::start();
    let mut replica = streaming_replica(&master);
    let mut con = conn_t(&master);
    let mut rcon = replica.conn();
    let held_at = Instant::now();
    let t_long = try_acquire(&mut con, "fo:long", "holder", 60_000).expect("fo:long");
    let t_short = try_acquire(&mut con, "fo:short", "holder", 500).expect("fo:short");
    let waiters = queue(
        &master,
        &mut con,
        &[
            ("fo:long", "w-long", 5000, 10_000),
            ("fo:short", "w-short", 5000, 10_000),
            ("fo:long", "w-1s", 5000, 1000),
        ],
    );
    // The replica has applied every write (fo:short is the last one) before it sleeps:
    // it acknowledges its offset once a second, so one ACK right after the sleep must
    // find it caught up for the failover to go through within its timeout.
    let applied = wait_until(Duration::from_secs(2), || exists(&mut rcon, "fo:short"));
    assert!(applied, "{what}: the replica never applied the setup");
    let mut sleeper = slow_replica.then(|| {
        let mut c = RawConn::open(replica.port);
        c.send(&["DEBUG", "SLEEP", "2"]);
        thread::sleep(Duration::from_millis(50));
        c
    });
    let failover_at = Instant::now();
    before_lease_end(held_at, Duration::from_millis(500), "FAILOVER");
    let _: () = cmd("FAILOVER")
        .arg("TIMEOUT")
        .arg(3000)
        .query(&mut con)
        .expect("FAILOVER");
    let swapped = wait_until(Duration::from_secs(10), || {
        !master.is_alive()
            || !replica.is_alive()
            || (role(&mut con) == "slave" && role(&mut rcon) == "master")
    });
    assert_healthy(&mut master, what);
    assert_healthy(&mut replica, what);
    assert!(
        swapped,
        "{what}: roles did not swap (old master {:?}, failover state {:?}); log:\n{}",
        role(&mut con),
        info_field(&mut con, "replication", "master_failover_state"),
        master.log_tail(20)
    );
    let mut answers: Vec<Answer> = waiters.into_iter().map(join).collect();
    let listing = show(&answers, failover_at);
    for a in &answers {
        let ok = match a.owner.as_str() {
            "w-1s" => a.reply == Reply::Nil || a.reply.is_error_starting("UNBLOCKED"),
            _ => a.reply.is_error_starting("UNBLOCKED"),
        };
        assert!(
            ok,
            "{what}: waiter {} answered {:?} (expected UNBLOCKED{}); all:\n{listing}\nold master log:\n{}",
            a.owner,
            a.reply,
            if a.owner == "w-1s" { " or nil" } else { "" },
            master.log_tail(20)
        );
    }
    assert_no_second_reply(&mut answers, what);
    if let Some(c) = sleeper.as_mut() {
        assert_eq!(c.read(READ_TIMEOUT), Reply::Status("OK".into()));
    }
    assert_healthy(&mut master, what);
    assert_healthy(&mut replica, what);
    assert_eq!(
        warden_stat(&mut con, "locks_waiting"),
        0,
        "{what}: waiters left queued on the old master"
    );
    assert_same_dataset(&replica, &master, &["fo:long", "fo:short"], what);
    let info = lock_info(&mut rcon, "fo:long").expect("fo:long is still held on the new master");
    assert_eq!(
        (info.owner.as_slice(), info.token),
        (&b"holder"[..], t_long)
    );
    let mut rcon = conn_t(&replica);
    let t = try_acquire(&mut rcon, "fo:short", "after", 5000)
        .unwrap_or_else(|| panic!("{what}: the ended lease is not free on the new master"));
    assert!(
        t > t_short,
        "{what}: token {t} after promotion <= {t_short}"
    );
    assert_same_dataset(&replica, &master, &["fo:long", "fo:short"], what);
    assert_healthy(&mut master, what);
    assert_healthy(&mut replica, what);
}

#[test]
fn failover_with_waiters_and_a_fast_replica() {
    failover_with_waiters(false);
}

#[test]
fn failover_with_waiters_and_a_slow_replica() {
    failover_with_waiters(true);
}

/// `FAILOVER TIMEOUT 1000` while the replica is in `DEBUG SLEEP 2`, so the failover is
/// aborted and the master stays master; a 500 ms lease ends while the failover pauses
/// writes. The waiter is granted exactly once, after the abort (not while writes are
/// paused) and promptly after it (the abort itself is noticed within a second), with
/// a larger token; the replica holds the master's dataset once it wakes.
#[test]
fn aborted_failover_hands_off_after_it() {
    let what = "FAILOVER TIMEOUT 1000, aborted";
    let mut master = Server::start();
    let mut replica = streaming_replica(&master);
    let mut con = conn_t(&master);
    let mut rcon = replica.conn();
    let held_at = Instant::now();
    let t0 = try_acquire(&mut con, "fa:k", "holder", 500).expect("fa:k");
    let w = queue(&master, &mut con, &[("fa:k", "waiter", 5000, 10_000)]);
    let applied = wait_until(Duration::from_secs(2), || exists(&mut rcon, "fa:k"));
    assert!(applied, "{what}: the replica never applied the setup");
    let mut sleeper = RawConn::open(replica.port);
    sleeper.send(&["DEBUG", "SLEEP", "2"]);
    thread::sleep(Duration::from_millis(50));
    let failover_at = Instant::now();
    let _: () = cmd("FAILOVER")
        .arg("TIMEOUT")
        .arg(1000)
        .query(&mut con)
        .expect("FAILOVER");
    before_lease_end(held_at, Duration::from_millis(500), "FAILOVER");
    let mut answers: Vec<Answer> = w.into_iter().map(join).collect();
    let token = token_of(&answers[0], &master, what);
    assert!(token > t0, "{what}: token {token} <= {t0}");
    let after = answers[0].at.saturating_duration_since(failover_at);
    assert!(
        after + EARLY >= Duration::from_millis(1000),
        "{what}: the waiter was granted {after:?} after FAILOVER, before its 1000 ms timeout"
    );
    assert!(
        after <= Duration::from_millis(2000) + PROMPT,
        "{what}: the waiter was granted only {after:?} after FAILOVER"
    );
    assert_no_second_reply(&mut answers, what);
    assert_healthy(&mut master, what);
    assert_eq!(role(&mut con), "master", "{what}: the master's role");
    let log = master.log_tail(1_000_000);
    premise(
        log.contains("FAILOVER to any replica aborted"),
        "the failover was aborted",
    );
    assert_eq!(sleeper.read(READ_TIMEOUT), Reply::Status("OK".into()));
    let info = lock_info(&mut con, "fa:k").expect("the waiter holds fa:k");
    assert_eq!((info.owner.as_slice(), info.token), (&b"waiter"[..], token));
    assert_same_dataset(&master, &replica, &["fa:k"], what);
    assert_healthy(&mut replica, what);
}

// ---------------------------------------------------------------------------------------
// DEBUG SLEEP, REPLICAOF, SHUTDOWN
// ---------------------------------------------------------------------------------------

/// DEBUG SLEEP 1 on the master while a 500 ms lease ends: the waiter is granted right
/// after the sleep (within `PROMPT`) with a token above the holder's; a waiter whose
/// WAIT (500 ms) passed during the sleep gets nil; each gets exactly one reply; the
/// replica holds the master's dataset.
#[test]
fn debug_sleep_while_a_lease_ends() {
    let what = "DEBUG SLEEP 1";
    let mut master = Server::start();
    let replica = master.start_replica(&[], &[]);
    let mut con = conn_t(&master);
    let held_at = Instant::now();
    let t0 = try_acquire(&mut con, "sleep:k", "holder", 500).expect("sleep:k");
    try_acquire(&mut con, "sleep:long", "holder", 60_000).expect("sleep:long");
    let waiters = queue(
        &master,
        &mut con,
        &[
            ("sleep:k", "w-lease", 5000, 10_000),
            ("sleep:long", "w-timeout", 5000, 500),
        ],
    );
    let mut sleeper = RawConn::open(master.port);
    before_lease_end(held_at, Duration::from_millis(500), "DEBUG SLEEP");
    let slept = sleeper.call(&["DEBUG", "SLEEP", "1"]);
    let woke_at = Instant::now();
    assert_eq!(slept, Reply::Status("OK".into()));
    let mut answers: Vec<Answer> = waiters.into_iter().map(join).collect();
    let token = token_of(&answers[0], &master, what);
    assert!(token > t0, "{what}: waiter token {token} <= holder's {t0}");
    let late = answers[0].at.saturating_duration_since(woke_at);
    assert!(
        late <= PROMPT,
        "{what}: the waiter was granted {late:?} after the sleep ended"
    );
    assert_eq!(
        answers[1].reply,
        Reply::Nil,
        "{what}: the waiter whose WAIT passed during the sleep"
    );
    assert_no_second_reply(&mut answers, what);
    assert_healthy(&mut master, what);
    let info = lock_info(&mut con, "sleep:k").expect("the waiter holds sleep:k");
    assert_eq!(
        (info.owner.as_slice(), info.token),
        (&b"w-lease"[..], token)
    );
    assert_eq!(
        lock_info(&mut con, "sleep:long").map(|i| i.waiters),
        Some(0)
    );
    assert_same_dataset(&master, &replica, &["sleep:k"], what);
}

/// REPLICAOF <another server> on a master with waiters (two behind a 60 s lease, one
/// behind a 600 ms lease): each waiter gets exactly one `UNBLOCKED` error and none is
/// granted; the server stays up and, after the short lease would have ended, holds
/// exactly the new master's dataset (the module wrote nothing as a replica); an
/// ACQUIRE sent to it is refused (READONLY); after REPLICAOF NO ONE a fresh ACQUIRE is
/// granted with a token above every earlier one.
#[test]
fn replicaof_turns_waiters_into_one_error_each() {
    let what = "REPLICAOF";
    let mut master = Server::start();
    let mut other = Server::start();
    let mut ocon = conn_t(&other);
    try_acquire(&mut ocon, "ro:other", "o", 60_000).expect("ro:other");
    let mut con = conn_t(&master);
    let held_at = Instant::now();
    let t_long = try_acquire(&mut con, "ro:long", "holder", 60_000).expect("ro:long");
    let t_short = try_acquire(&mut con, "ro:short", "holder", 600).expect("ro:short");
    let waiters = queue(
        &master,
        &mut con,
        &[
            ("ro:long", "w1", 5000, 10_000),
            ("ro:long", "w2", 5000, 10_000),
            ("ro:short", "w3", 5000, 10_000),
        ],
    );
    let turned_at = Instant::now();
    before_lease_end(held_at, Duration::from_millis(600), "REPLICAOF");
    let _: () = cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(other.port)
        .query(&mut con)
        .expect("REPLICAOF");
    let mut answers: Vec<Answer> = waiters.into_iter().map(join).collect();
    let listing = show(&answers, turned_at);
    for a in &answers {
        assert!(
            a.reply.is_error_starting("UNBLOCKED"),
            "{what}: waiter {} answered {:?}, expected UNBLOCKED; all:\n{listing}",
            a.owner,
            a.reply
        );
    }
    assert_no_second_reply(&mut answers, what);
    let up = wait_until(Duration::from_secs(10), || {
        info_field(&mut con, "replication", "master_link_status").as_deref() == Some("up")
    });
    assert!(up, "{what}: the link to the new master never came up");
    // Let the short lease's deadline pass while this server is a replica.
    let lease_end = held_at + Duration::from_millis(900);
    sleep_until(lease_end);
    assert_healthy(&mut master, what);
    assert_same_dataset(&other, &master, &["ro:other"], what);
    assert_eq!(
        lock_info(&mut con, "ro:long"),
        None,
        "synced from the new master"
    );
    assert_eq!(
        lock_info(&mut con, "ro:other").map(|i| i.owner),
        Some(b"o".to_vec())
    );
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
    let mut refused = RawConn::open(master.port);
    let r = refused.call(&["DLOCK.ACQUIRE", "ro:long", "x", "1000", "WAIT", "1000"]);
    assert!(
        r.is_error_starting("READONLY"),
        "{what}: ACQUIRE on a replica answered {r:?}"
    );
    let _: () = cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(&mut con)
        .expect("REPLICAOF NO ONE");
    let t = try_acquire(&mut con, "ro:long", "again", 1000)
        .unwrap_or_else(|| panic!("{what}: no grant after REPLICAOF NO ONE"));
    assert!(
        t > t_long.max(t_short),
        "{what}: token {t} after the role changes is not above {}",
        t_long.max(t_short)
    );
    assert_healthy(&mut master, what);
    assert_healthy(&mut other, what);
}

/// CLIENT PAUSE 5000 WRITE, a 500 ms lease ends (its hand-off must wait), then
/// REPLICAOF <another server> during the pause, then CLIENT UNPAUSE: the waiter gets
/// exactly one `UNBLOCKED` error and is never granted; the server, now a replica,
/// writes nothing of its own after the pause — its dataset is the new master's
/// (digest) — and stays up with a clean log.
#[test]
fn replicaof_during_a_pause_drops_the_deferred_hand_off() {
    let what = "CLIENT PAUSE, lease end, REPLICAOF, UNPAUSE";
    let mut master = Server::start();
    let mut other = Server::start();
    let mut ocon = conn_t(&other);
    try_acquire(&mut ocon, "pr:other", "o", 60_000).expect("pr:other");
    let mut con = conn_t(&master);
    let held_at = Instant::now();
    try_acquire(&mut con, "pr:k", "holder", 500).expect("pr:k");
    let w = queue(&master, &mut con, &[("pr:k", "waiter", 5000, 10_000)]);
    client_pause(&mut con, 5000, "WRITE");
    before_lease_end(held_at, Duration::from_millis(500), "CLIENT PAUSE");
    let lease_over = wait_until(Duration::from_secs(3), || {
        !master.is_alive() || cmd("PTTL").arg("pr:k").query::<i64>(&mut con).ok() == Some(-2)
    });
    assert_healthy(&mut master, what);
    assert!(lease_over, "{what}: the 500 ms lease never ended");
    // Let a deferred hand-off retry a few times while paused.
    thread::sleep(Duration::from_millis(100));
    let _: () = cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(other.port)
        .query(&mut con)
        .expect("REPLICAOF");
    let mut answers: Vec<Answer> = w.into_iter().map(join).collect();
    assert!(
        answers[0].reply.is_error_starting("UNBLOCKED"),
        "{what}: the waiter answered {:?}, expected UNBLOCKED; {}",
        answers[0].reply,
        crash_cause(&master)
    );
    assert_no_second_reply(&mut answers, what);
    let up = wait_until(Duration::from_secs(10), || {
        info_field(&mut con, "replication", "master_link_status").as_deref() == Some("up")
    });
    assert!(up, "{what}: the link to the new master never came up");
    let _: () = cmd("CLIENT")
        .arg("UNPAUSE")
        .query(&mut con)
        .expect("CLIENT UNPAUSE");
    // Give a module that retries deferred writes time to (wrongly) write as a replica.
    thread::sleep(Duration::from_millis(200));
    assert_healthy(&mut master, what);
    assert_same_dataset(&other, &master, &["pr:other"], what);
    assert_eq!(
        lock_info(&mut con, "pr:k"),
        None,
        "{what}: pr:k on the replica"
    );
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
    assert_healthy(&mut other, what);
}

/// DEBUG RELOAD (save, flush, load) while a client waits behind a 600 ms lease: the
/// reload keeps the lock (same digest, holder and token) and the flush it does hands
/// nothing to the waiter; the waiter is granted exactly once at the lease end (not
/// before, promptly after), with a larger token.
#[test]
fn debug_reload_keeps_the_lock_and_its_waiter() {
    let what = "DEBUG RELOAD";
    let mut server = Server::start();
    let mut con = conn_t(&server);
    let held_at = Instant::now();
    let t0 = try_acquire(&mut con, "rl:k", "holder", 600).expect("rl:k");
    let mut w = queue(&server, &mut con, &[("rl:k", "waiter", 5000, 10_000)]);
    let before = db_digest(&mut con);
    let _: () = cmd("DEBUG")
        .arg("RELOAD")
        .query(&mut con)
        .expect("DEBUG RELOAD");
    before_lease_end(held_at, Duration::from_millis(600), "DEBUG RELOAD");
    assert_eq!(db_digest(&mut con), before, "{what}: the reloaded dataset");
    let info = lock_info(&mut con, "rl:k").expect("rl:k is held after the reload");
    assert_eq!(
        (info.owner.as_slice(), info.token, info.waiters),
        (&b"holder"[..], t0, 1)
    );
    assert!(
        !w[0].handle.is_finished() || held_at.elapsed() >= Duration::from_millis(600),
        "{what}: the waiter was answered before the lease ended"
    );
    let mut answers = vec![join(w.remove(0))];
    let token = token_of(&answers[0], &server, what);
    assert!(token > t0, "{what}: token {token} <= {t0}");
    let after = answers[0].at.saturating_duration_since(held_at);
    assert!(
        after + EARLY >= Duration::from_millis(600),
        "{what}: the waiter was granted {after:?} into a 600 ms lease"
    );
    assert!(
        after <= Duration::from_millis(600) + PROMPT,
        "{what}: the waiter was granted only {after:?} after a 600 ms lease began"
    );
    assert_no_second_reply(&mut answers, what);
    assert_healthy(&mut server, what);
}

/// `SHUTDOWN <mode>` with clients blocked (WAIT 0 and WAIT 10000) behind a 60 s
/// lease: the SHUTDOWN caller and every waiter see the connection closed (or an
/// error), never a token or a hang; the process exits with "ready to exit" and no
/// assertion in its log. With SAVE, a restart loads the same dataset (digest), the
/// holder still holds the lock, nobody is queued, and the lock is handed to a new
/// waiter on release. With NOSAVE the lock is gone and a new grant's token is still
/// above the old one.
fn shutdown_with_waiters(mode: &str) {
    let what = format!("SHUTDOWN {mode}");
    let what = what.as_str();
    let mut server = Server::start();
    let mut con = conn_t(&server);
    let t0 = try_acquire(&mut con, "down:k", "holder", 60_000).expect("down:k");
    let waiters = queue(
        &server,
        &mut con,
        &[
            ("down:k", "w-forever", 5000, 0),
            ("down:k", "w-10s", 5000, 10_000),
        ],
    );
    let before = db_digest(&mut con);
    let mut caller = RawConn::open(server.port);
    let r = caller.call(&["SHUTDOWN", mode]);
    assert!(
        matches!(r, Reply::Closed(_)),
        "{what}: SHUTDOWN answered {r:?}; log:\n{}",
        server.log_tail(20)
    );
    let exited = wait_until(Duration::from_secs(10), || !server.is_alive());
    assert!(exited, "{what}: the server still runs");
    let answers: Vec<Answer> = waiters.into_iter().map(join).collect();
    for a in &answers {
        assert!(
            matches!(a.reply, Reply::Closed(_) | Reply::Error(_)),
            "{what}: waiter {} answered {:?}, expected the connection to close",
            a.owner,
            a.reply
        );
    }
    let log = server.log_tail(1_000_000);
    assert!(
        log.contains("ready to exit, bye bye"),
        "{what}: no clean exit in the log:\n{}",
        server.log_tail(30)
    );
    assert_clean_log(&server, what);
    if mode == "SAVE" {
        assert!(
            log.contains("DB saved on disk"),
            "{what}: no RDB saved:\n{}",
            server.log_tail(30)
        );
    }

    server.crash_and_restart(); // only starts it again: the process has exited
    let mut con = conn_t(&server);
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
    if mode == "SAVE" {
        assert_eq!(
            db_digest(&mut con),
            before,
            "{what}: the reloaded dataset differs"
        );
        let info = lock_info(&mut con, "down:k").expect("the holder still holds down:k");
        assert_eq!((info.owner.as_slice(), info.token), (&b"holder"[..], t0));
        let w = queue(&server, &mut con, &[("down:k", "after", 5000, 10_000)]);
        assert_eq!(release(&mut con, "down:k", "holder"), 1);
        let mut a: Vec<Answer> = w.into_iter().map(join).collect();
        let t = token_of(&a[0], &server, what);
        assert!(t > t0, "{what}: token {t} after restart <= {t0}");
        assert_no_second_reply(&mut a, what);
    } else {
        assert_eq!(
            lock_info(&mut con, "down:k"),
            None,
            "{what}: nothing was saved"
        );
        let t = try_acquire(&mut con, "down:k", "after", 5000).expect("down:k is free");
        assert!(
            t > t0,
            "{what}: token {t} after a restart without data <= {t0}"
        );
    }
    assert_healthy(&mut server, what);
}

#[test]
fn shutdown_nosave_with_waiters_exits_cleanly() {
    shutdown_with_waiters("NOSAVE");
}

#[test]
fn shutdown_save_with_waiters_exits_cleanly_and_keeps_the_lock() {
    shutdown_with_waiters("SAVE");
}

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
    let used: i64 = info_field(&mut con, "memory", "used_memory")
        .and_then(|v| v.parse().ok())
        .expect("used_memory");
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("noeviction")
        .query(&mut con)
        .expect("maxmemory-policy");
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(used + 256 * 1024)
        .query(&mut con)
        .expect("maxmemory");
    // A script checks OOM once, before it starts: this one writes past the limit.
    let _: () = cmd("EVAL")
        .arg("for i = 1, 20000 do redis.call('SET', 'oom:fill:' .. i, string.rep('x', 100)) end")
        .arg(0)
        .query(&mut con)
        .expect("fill past maxmemory");
    let probe = cmd("SET").arg("oom:probe").arg(1).query::<()>(&mut con);
    premise(
        probe
            .as_ref()
            .is_err_and(|e| err_text(e).starts_with("OOM")),
        "the server is out of memory after the fill",
    );
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
    let mut lease = vec![join(waiters.remove(1))];
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
    let mut held = vec![join(waiters.remove(0))];
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
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(0)
        .query(&mut con)
        .expect("maxmemory 0");
    assert!(
        try_acquire(&mut con, "oom:new", "x", 1000).is_some(),
        "{what}: a new key is not granted once memory is available"
    );
    assert_healthy(&mut master, what);
}

// ---------------------------------------------------------------------------------------
// Lease ends among many keys
// ---------------------------------------------------------------------------------------

/// A lease that was itself handed off ends among 200 000 keys with a TTL: A holds the
/// lock (30 s), W1 and W2 wait, A releases → W1 gets it for 300 ms and does nothing →
/// W2 is granted after W1's lease ends (not before) and within 1 s of W1's grant —
/// not whenever active expiry happens to sample the key.
#[test]
fn handed_off_lease_ends_on_time_among_200k_volatile_keys() {
    let what = "lease end among 200k volatile keys";
    let mut server = Server::start();
    let mut con = conn_t(&server);
    let _: () = cmd("DEBUG")
        .arg("POPULATE")
        .arg(200_000)
        .arg("vol")
        .arg(8)
        .query(&mut con)
        .expect("DEBUG POPULATE");
    let _: () = cmd("EVAL")
        .arg("for i = 0, 199999 do redis.call('PEXPIRE', 'vol:' .. i, 600000) end")
        .arg(0)
        .query(&mut con)
        .expect("PEXPIRE loop");
    let expires = info_field(&mut con, "keyspace", "db0").unwrap_or_default();
    assert!(
        expires.contains("expires=200000"),
        "volatile keys: {expires}"
    );
    let t_a = try_acquire(&mut con, "many:k", "a", 30_000).expect("many:k");
    let waiters = queue(
        &server,
        &mut con,
        &[("many:k", "w1", 300, 10_000), ("many:k", "w2", 300, 10_000)],
    );
    let released_at = Instant::now();
    assert_eq!(release(&mut con, "many:k", "a"), 1);
    let mut answers: Vec<Answer> = waiters.into_iter().map(join).collect();
    let listing = show(&answers, released_at);
    let (t1, t2) = match (&answers[0].reply, &answers[1].reply) {
        (Reply::Int(t1), Reply::Int(t2)) => (*t1, *t2),
        _ => panic!(
            "{what}: W1 and W2 must both be granted (W1 holds for 300 ms, W2 waits up to 10 s); answers after the release:\n{listing}\n{}",
            crash_cause(&server)
        ),
    };
    assert!(
        t_a < t1 && t1 < t2,
        "{what}: tokens {t_a}, {t1}, {t2} not increasing"
    );
    let w2_after_release = answers[1].at.saturating_duration_since(released_at);
    assert!(
        w2_after_release + EARLY >= Duration::from_millis(300),
        "{what}: W2 was granted {w2_after_release:?} after the release, before W1's 300 ms lease ended:\n{listing}"
    );
    let gap = answers[1].at.saturating_duration_since(answers[0].at);
    assert!(
        gap < Duration::from_millis(1000),
        "{what}: W2 was granted {gap:?} after W1 (W1's lease: 300 ms):\n{listing}"
    );
    assert_no_second_reply(&mut answers, what);
    assert_healthy(&mut server, what);
}

// ---------------------------------------------------------------------------------------
// The lease is the key's expiry
// ---------------------------------------------------------------------------------------

/// PEXPIRE lengthening a held lock's lease (600 ms → 2000 ms): DLOCK.INFO ttl_ms is
/// the PTTL; past the old deadline the owner still holds it (another owner is refused);
/// another owner is granted only after the new deadline, with a larger token; the
/// replica holds the master's dataset.
#[test]
fn pexpire_moves_the_lease() {
    let what = "PEXPIRE 2000 on a 600 ms lock";
    let mut master = Server::start();
    let replica = master.start_replica(&[], &[]);
    let mut con = conn_t(&master);
    let mut c = Checks::default();
    let t = try_acquire(&mut con, "px:k", "a", 600).expect("px:k");
    let moved_at = Instant::now();
    let n: i64 = cmd("PEXPIRE")
        .arg("px:k")
        .arg(2000)
        .query(&mut con)
        .expect("PEXPIRE");
    assert_eq!(n, 1);
    c.note(ttl_is_pttl(&mut con, "px:k").map(|_| ()));
    sleep_until(moved_at + Duration::from_millis(900));
    let other = try_acquire(&mut con, "px:k", "b", 1000);
    c.check(other.is_none(), || {
        format!("another owner got the lock (token {other:?}) 900 ms after PEXPIRE 2000, past the old deadline, before the new one")
    });
    if other.is_none() {
        let info = lock_info(&mut con, "px:k");
        c.check(
            info.as_ref().map(|i| (i.owner.as_slice(), i.token)) == Some((&b"a"[..], t)),
            || format!("DLOCK.INFO past the old deadline: {info:?}"),
        );
        c.note(ttl_is_pttl(&mut con, "px:k").map(|_| ()));
        let mut got = None;
        let granted = wait_until(Duration::from_secs(3), || {
            got = try_acquire(&mut con, "px:k", "b", 1000);
            got.is_some()
        });
        let at = moved_at.elapsed();
        c.check(granted, || "the lock never became free".to_string());
        c.check(at + EARLY >= Duration::from_millis(2000), || {
            format!("another owner was granted {at:?} after PEXPIRE 2000")
        });
        let t_b = got.unwrap_or(i64::MAX);
        c.check(t_b > t, || format!("token {t_b} <= {t}"));
    }
    assert_same_dataset(&master, &replica, &["px:k"], what);
    assert_healthy(&mut master, what);
    c.finish(what);
}

/// PEXPIRE shortening a held lock's lease (30 s → 500 ms) while a client waits, with
/// active expiry off (so only the module's own timer can act): DLOCK.INFO ttl_ms is
/// the PTTL, and the waiter is granted at the new deadline — not before, and within
/// `PROMPT` after — exactly once, with a larger token; the replica holds the master's
/// dataset.
#[test]
fn pexpire_shortening_the_lease_serves_the_waiter() {
    let what = "PEXPIRE 500 on a 30 s lock with a waiter";
    let mut master = Server::start();
    let replica = master.start_replica(&[], &[]);
    let mut con = conn_t(&master);
    let mut c = Checks::default();
    let _: () = cmd("DEBUG")
        .arg("SET-ACTIVE-EXPIRE")
        .arg(0)
        .query(&mut con)
        .expect("DEBUG SET-ACTIVE-EXPIRE");
    let t = try_acquire(&mut con, "pxs:k", "a", 30_000).expect("pxs:k");
    let w = queue(&master, &mut con, &[("pxs:k", "w", 5000, 10_000)]);
    let moved_at = Instant::now();
    let n: i64 = cmd("PEXPIRE")
        .arg("pxs:k")
        .arg(500)
        .query(&mut con)
        .expect("PEXPIRE");
    assert_eq!(n, 1);
    c.note(ttl_is_pttl(&mut con, "pxs:k").map(|_| ()));
    let mut answers: Vec<Answer> = w.into_iter().map(join).collect();
    let after = answers[0].at.saturating_duration_since(moved_at);
    match answers[0].reply {
        Reply::Int(token) => {
            c.check(token > t, || format!("token {token} <= {t}"));
            c.check(after + EARLY >= Duration::from_millis(500), || {
                format!("waiter granted {after:?} after PEXPIRE 500, before the new deadline")
            });
            c.check(after <= Duration::from_millis(500) + PROMPT, || {
                format!("waiter granted only {after:?} after PEXPIRE 500")
            });
        }
        ref other => c.check(false, || {
            format!(
                "waiter answered {other:?} {after:?} after PEXPIRE 500 (WAIT 10000), not granted at the new deadline; {}",
                crash_cause(&master)
            )
        }),
    }
    assert_no_second_reply(&mut answers, what);
    assert_healthy(&mut master, what);
    assert_same_dataset(&master, &replica, &["pxs:k"], what);
    c.finish(what);
}

/// PERSIST on a held lock (600 ms lease): PTTL and DLOCK.INFO ttl_ms are -1, and past
/// the old deadline the owner still holds it — a waiter keeps waiting and another
/// owner is refused — until the owner releases it, which hands it to the waiter once.
#[test]
fn persist_keeps_the_lock_until_released() {
    let what = "PERSIST on a held lock";
    let mut server = Server::start();
    let mut con = conn_t(&server);
    let mut c = Checks::default();
    let held_at = Instant::now();
    let t = try_acquire(&mut con, "persist:k", "a", 600).expect("persist:k");
    let n: i64 = cmd("PERSIST")
        .arg("persist:k")
        .query(&mut con)
        .expect("PERSIST");
    assert_eq!(n, 1);
    c.note(ttl_is_pttl(&mut con, "persist:k").map(|_| ()));
    let mut w = queue(&server, &mut con, &[("persist:k", "w", 5000, 10_000)]);
    sleep_until(held_at + Duration::from_millis(900));
    assert_healthy(&mut server, what);
    let early = w[0].handle.is_finished();
    c.check(!early, || {
        "the waiter was answered past the old deadline, while the lock has no expiry".to_string()
    });
    let other = try_acquire(&mut con, "persist:k", "b", 1000);
    c.check(other.is_none(), || {
        format!("another owner got a lock that has no expiry (token {other:?})")
    });
    let info = lock_info(&mut con, "persist:k");
    let seen = info
        .as_ref()
        .map(|i| (i.owner.as_slice(), i.token, i.ttl_ms, i.waiters));
    c.check(seen == Some((&b"a"[..], t, -1, 1)), || {
        format!("DLOCK.INFO past the old deadline: {info:?}, expected owner a, token {t}, ttl_ms -1, 1 waiter")
    });
    let released_at = Instant::now();
    let released = release(&mut con, "persist:k", "a");
    c.check(released == 1, || {
        format!("the owner's RELEASE answered {released}")
    });
    let mut answers = vec![join(w.remove(0))];
    match answers[0].reply {
        Reply::Int(token) => {
            c.check(token > t, || format!("token {token} <= {t}"));
            let after = answers[0].at.saturating_duration_since(released_at);
            c.check(early || after <= PROMPT, || {
                format!("waiter granted {after:?} after the release")
            });
        }
        ref other => c.check(false, || format!("the waiter answered {other:?}")),
    }
    assert_no_second_reply(&mut answers, what);
    assert_healthy(&mut server, what);
    c.finish(what);
}

/// `RESTORE key 5000 <DUMP of a lock with a 60 s lease>`: the RESTORE ttl is the
/// lease — PTTL ≈ 5000 and DLOCK.INFO ttl_ms = PTTL — with owner and token kept, and
/// another owner is refused.
#[test]
fn restore_with_a_ttl_sets_the_lease() {
    let what = "RESTORE key 5000 <60 s lock>";
    let mut server = Server::start();
    let mut con = conn_t(&server);
    let mut c = Checks::default();
    let t = try_acquire(&mut con, "rs:k", "a", 60_000).expect("rs:k");
    let dump: Vec<u8> = cmd("DUMP").arg("rs:k").query(&mut con).expect("DUMP");
    let _: () = cmd("DEL").arg("rs:k").query(&mut con).expect("DEL");
    let _: () = cmd("RESTORE")
        .arg("rs:k")
        .arg(5000)
        .arg(dump)
        .query(&mut con)
        .expect("RESTORE");
    let p = pttl(&mut con, "rs:k");
    c.check((4000..=5000).contains(&p), || {
        format!("PTTL {p} after RESTORE … 5000")
    });
    match ttl_is_pttl(&mut con, "rs:k") {
        Ok(ttl) => c.check(ttl <= 5000, || format!("DLOCK.INFO ttl_ms {ttl}")),
        Err(e) => c.check(false, || e),
    }
    let info = lock_info(&mut con, "rs:k");
    c.check(
        info.as_ref().map(|i| (i.owner.as_slice(), i.token)) == Some((&b"a"[..], t)),
        || format!("DLOCK.INFO after RESTORE: {info:?}, expected owner a, token {t}"),
    );
    let other = try_acquire(&mut con, "rs:k", "b", 1000);
    c.check(other.is_none(), || {
        format!("another owner got the restored lock (token {other:?})")
    });
    assert_healthy(&mut server, what);
    c.finish(what);
}
