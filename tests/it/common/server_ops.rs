//! Helpers of the server-operations tests (`tests/server_ops_*.rs`, issue #10): raw
//! RESP2 connections that see exactly what the server sends (a second reply, EOF),
//! clients blocked in `DLOCK.ACQUIRE … WAIT` or `CACHE.GET … LEASE … WAIT` on their
//! own threads and their answers, and checks of a server (alive, a clean log, the replica's dataset equal to the
//! master's).
//!
//! Timing bounds are functional, with wide margins for a noisy machine: "not before"
//! bounds allow `EARLY`, "promptly after" bounds allow `PROMPT`.

use super::cache::{cache_set, wait_for_waiters, Leased};
use super::cluster::Redirect;
use super::dlock::{lock_info, wait_waiting};
use super::*;

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// A waiter (or any raw call) without a reply after this long is hung.
pub const READ_TIMEOUT: Duration = Duration::from_secs(15);
/// Clock slack for "not before" bounds (client monotonic clock vs. server wall clock).
pub const EARLY: Duration = Duration::from_millis(25);
/// "Promptly after" an event: the contract is a few tens of ms; this is the margin.
pub const PROMPT: Duration = Duration::from_millis(1000);
/// How long a waiter's connection is watched for a second reply.
pub const QUIET: Duration = Duration::from_millis(200);

// ---------------------------------------------------------------------------------------
// A raw RESP2 connection: sees exactly the bytes the server sends (a second reply, EOF)
// ---------------------------------------------------------------------------------------

/// One RESP2 reply, or what happened instead.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
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
    pub fn is_error_starting(&self, prefix: &str) -> bool {
        matches!(self, Reply::Error(e) if e.starts_with(prefix))
    }

    /// The `[value or nil, lease]` of a `CACHE.GET … LEASE`; None for any other reply.
    pub fn leased(&self) -> Option<Leased> {
        let Reply::Array(a) = self else {
            return None;
        };
        let value = match a.first()? {
            Reply::Nil => None,
            Reply::Bulk(b) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => return None,
        };
        match a.as_slice() {
            [_, Reply::Int(token)] => Some((value, *token)),
            _ => None,
        }
    }

    /// The cluster redirect an error reply asks for (`MOVED 42 127.0.0.1:7001`,
    /// `ASK …`); None for any other reply.
    pub fn redirect(&self) -> Option<Redirect> {
        let Reply::Error(e) = self else {
            return None;
        };
        let f: Vec<&str> = e.split_whitespace().collect();
        let [kind, slot, addr] = f.as_slice() else {
            return None;
        };
        let slot: u16 = slot.parse().ok()?;
        let port: u16 = addr.rsplit(':').next()?.parse().ok()?;
        match *kind {
            "MOVED" => Some(Redirect::Moved { slot, port }),
            "ASK" => Some(Redirect::Ask { slot, port }),
            _ => None,
        }
    }
}

/// A raw RESP2 connection: sees exactly the bytes the server sends (a second reply,
/// EOF).
pub struct RawConn {
    r: BufReader<TcpStream>,
}

impl RawConn {
    /// Connects to the server on `port`.
    pub fn open(port: u16) -> RawConn {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect raw");
        s.set_nodelay(true).expect("nodelay");
        RawConn {
            r: BufReader::new(s),
        }
    }

    /// Sends one command without reading its reply.
    pub fn send(&mut self, args: &[&str]) {
        self.r
            .get_mut()
            .write_all(&resp(args))
            .expect("send command");
    }

    /// The next reply, waiting at most `timeout`.
    pub fn read(&mut self, timeout: Duration) -> Reply {
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

    /// Sends one command and reads its reply, waiting at most `READ_TIMEOUT`.
    pub fn call(&mut self, args: &[&str]) -> Reply {
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

/// A client blocked (or about to block) in `DLOCK.ACQUIRE … WAIT` or `CACHE.GET …
/// WAIT` on its own raw connection; its thread reads the first reply.
pub struct Waiter {
    pub owner: String,
    pub handle: JoinHandle<Answer>,
}

/// What a waiter was answered, when, and its connection (to watch for more).
pub struct Answer {
    pub owner: String,
    pub reply: Reply,
    pub at: Instant,
    pub conn: RawConn,
}

/// Sends `args` on a new raw connection and reads the reply in a thread; `name`
/// labels the answer.
pub fn spawn_call(port: u16, name: &str, args: &[&str]) -> JoinHandle<Answer> {
    let mut conn = RawConn::open(port);
    conn.send(args);
    read_in_thread(conn, name)
}

/// Reads the next reply of `conn` (a command already sent) in a thread; `name`
/// labels the answer.
pub fn read_in_thread(mut conn: RawConn, name: &str) -> JoinHandle<Answer> {
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

/// `DLOCK.ACQUIRE key owner ttl WAIT wait <kind…>` (`SHARED`, `LIMIT n` or nothing)
/// on a new raw connection, read in a thread.
pub fn spawn_kind_waiter(
    server: &Server,
    key: &str,
    owner: &str,
    ttl: i64,
    wait: i64,
    kind: &[&str],
) -> Waiter {
    let (ttl, wait) = (ttl.to_string(), wait.to_string());
    let mut args = vec!["DLOCK.ACQUIRE", key, owner, &ttl, "WAIT", &wait];
    args.extend_from_slice(kind);
    Waiter {
        owner: owner.to_string(),
        handle: spawn_call(server.port, owner, &args),
    }
}

/// A raw client blocked (or about to block) in `CACHE.GET key MINVERSION min LEASE
/// lease_ms WAIT timeout_ms`.
pub fn raw_cache_waiter(
    server: &Server,
    key: &str,
    min: i64,
    lease_ms: i64,
    timeout_ms: i64,
) -> RawConn {
    let mut c = RawConn::open(server.port);
    let (min, lease, timeout) = (
        min.to_string(),
        lease_ms.to_string(),
        timeout_ms.to_string(),
    );
    c.send(&[
        "CACHE.GET",
        key,
        "MINVERSION",
        &min,
        "LEASE",
        &lease,
        "WAIT",
        &timeout,
    ]);
    c
}

/// `raw_cache_waiter` read in a thread; `name` labels the answer.
pub fn spawn_cache_waiter(
    server: &Server,
    name: &str,
    key: &str,
    min: i64,
    lease_ms: i64,
    timeout_ms: i64,
) -> Waiter {
    let conn = raw_cache_waiter(server, key, min, lease_ms, timeout_ms);
    Waiter {
        owner: name.to_string(),
        handle: read_in_thread(conn, name),
    }
}

/// A client that waits on `server` for the refresh of `key` (`MINVERSION min`) is
/// answered `[value, 0]` when the refresher stores `value` (`VERSION min`) with the
/// live lease `token`.
pub fn assert_refresh_answers_a_waiter(
    server: &Server,
    key: &str,
    min: i64,
    token: i64,
    value: &str,
) {
    let mut con = timed(server.conn(), READ_TIMEOUT);
    let queued = super::cache::cache_info(&mut con, key).map_or(0, |i| i["waiters"]);
    let mut waiter = raw_cache_waiter(server, key, min, 5_000, 10_000);
    wait_for_waiters(&mut con, key, queued + 1);
    let (min, token) = (min.to_string(), token.to_string());
    let opts = ["VERSION", min.as_str(), "LEASE", token.as_str()];
    assert_eq!(
        cache_set(&mut con, key, value, 60_000, &opts),
        1,
        "the refresh of {key} with lease {token}"
    );
    let r = waiter.read(READ_TIMEOUT);
    assert_eq!(
        r.leased(),
        Some((Some(value.to_string()), 0)),
        "the waiter for the refresh of {key}: {r:?}"
    );
}

/// Queues waiters `(key, owner, ttl, wait)` in order, each blocked before the next
/// is sent.
pub fn queue(
    server: &Server,
    con: &mut Connection,
    specs: &[(&str, &str, i64, i64)],
) -> Vec<Waiter> {
    let specs: Vec<KindWaiter> = specs
        .iter()
        .map(|&(key, owner, ttl, wait)| (key, owner, ttl, wait, &[][..]))
        .collect();
    queue_kinds(server, con, &specs)
}

/// A waiter of `queue_kinds`: key, owner, ttl, wait and kind (`SHARED`, `LIMIT n`).
pub type KindWaiter<'a> = (&'a str, &'a str, i64, i64, &'a [&'a str]);

/// Queues waiters of any lock kind in order, each blocked before the next is sent.
pub fn queue_kinds(server: &Server, con: &mut Connection, specs: &[KindWaiter]) -> Vec<Waiter> {
    let base = warden_stat(con, "locks_waiting");
    specs
        .iter()
        .enumerate()
        .map(|(i, &(key, owner, ttl, wait, kind))| {
            let w = spawn_kind_waiter(server, key, owner, ttl, wait, kind);
            wait_waiting(con, base + i as i64 + 1);
            w
        })
        .collect()
}

/// The waiter's answer (its thread's result).
pub fn join(w: Waiter) -> Answer {
    w.handle
        .join()
        .unwrap_or_else(|_| panic!("waiter thread {} panicked", w.owner))
}

/// The token a waiter was granted; fails (with the server log) on any other answer.
pub fn token_of(a: &Answer, server: &Server, what: &str) -> i64 {
    match &a.reply {
        Reply::Int(t) => *t,
        other => panic!(
            "{what}: waiter {} expected a token, got {other:?}; {}",
            a.owner,
            crash_cause(server)
        ),
    }
}

/// Every waiter was answered `-UNBLOCKED …` (its server turned replica), once:
/// nothing more arrives after it. `since` dates the listing in a failure.
pub fn assert_each_unblocked(answers: &mut [Answer], since: Instant, what: &str) {
    let listing = show_answers(answers, since);
    for a in answers.iter() {
        assert!(
            a.reply.is_error_starting("UNBLOCKED"),
            "{what}: waiter {} answered {:?}, expected UNBLOCKED; all:\n{listing}",
            a.owner,
            a.reply
        );
    }
    assert_no_second_reply(answers, what);
}

/// Every waiter got one answer (checked by the caller) and nothing after it: within
/// `QUIET` its connection stays silent or is closed by the server.
pub fn assert_no_second_reply(answers: &mut [Answer], what: &str) {
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

/// The answers, each with its time after `t0`, for failure messages.
pub fn show_answers(answers: &[Answer], t0: Instant) -> String {
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
pub fn crash_cause(server: &Server) -> String {
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
pub fn assert_clean_log(server: &Server, what: &str) {
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
pub fn assert_healthy(server: &mut Server, what: &str) {
    assert!(
        server.is_alive(),
        "{what}: server on port {} died; {}",
        server.port,
        crash_cause(server)
    );
    server.assert_alive();
    assert_clean_log(server, what);
}

/// INFO replication's `role`: `master` or `slave`.
pub fn role(con: &mut Connection) -> String {
    info_field(con, "replication", "role").unwrap_or_default()
}

/// Waits until `replica` holds exactly `master`'s dataset: every write the master
/// propagated is applied and `DEBUG DIGEST` is equal. `keys` are read on the master
/// first, so that keys whose lease has passed are expired there (and the DEL
/// propagated) rather than in between the two digests.
pub fn assert_same_dataset(master: &Server, replica: &Server, keys: &[&str], what: &str) {
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
pub struct Checks(pub Vec<String>);

impl Checks {
    pub fn check(&mut self, ok: bool, msg: impl FnOnce() -> String) {
        if !ok {
            self.0.push(msg());
        }
    }

    pub fn note(&mut self, r: Result<(), String>) {
        if let Err(e) = r {
            self.0.push(e);
        }
    }

    pub fn finish(self, what: &str) {
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
pub fn ttl_is_pttl(con: &mut Connection, key: &str) -> Result<i64, String> {
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

/// Waits (2 s) until the replica on `rcon` has `key`: the setup's last write.
pub fn wait_applied(rcon: &mut Connection, key: &str, what: &str) {
    let applied = wait_until(Duration::from_secs(2), || exists(&mut *rcon, key));
    assert!(applied, "{what}: the replica never applied the setup");
}

/// Sends `DEBUG SLEEP secs` to `server` on a raw connection (its `OK` is read
/// later) and gives the server 50 ms to fall asleep.
pub fn put_to_sleep(server: &Server, secs: &str) -> RawConn {
    let mut c = RawConn::open(server.port);
    c.send(&["DEBUG", "SLEEP", secs]);
    thread::sleep(Duration::from_millis(50));
    c
}

/// `FAILOVER TIMEOUT timeout_ms`.
pub fn failover(con: &mut Connection, timeout_ms: u64) {
    let _: () = cmd("FAILOVER")
        .arg("TIMEOUT")
        .arg(timeout_ms)
        .query(con)
        .expect("FAILOVER");
}

/// Waits (10 s) until a `FAILOVER` has made `master` (on `con`) a replica and
/// `replica` (on `rcon`) the master; both must be alive with clean logs.
pub fn assert_roles_swap(
    master: &mut Server,
    replica: &mut Server,
    con: &mut Connection,
    rcon: &mut Connection,
    what: &str,
) {
    let swapped = wait_until(Duration::from_secs(10), || {
        !master.is_alive()
            || !replica.is_alive()
            || (role(&mut *con) == "slave" && role(&mut *rcon) == "master")
    });
    assert_healthy(master, what);
    assert_healthy(replica, what);
    assert!(
        swapped,
        "{what}: roles did not swap (old master {:?}, failover state {:?}); log:\n{}",
        role(con),
        info_field(con, "replication", "master_failover_state"),
        master.log_tail(20)
    );
}

/// Sleeps until `t` (not at all if it has passed).
pub fn sleep_until(t: Instant) {
    thread::sleep(t.saturating_duration_since(Instant::now()));
}

/// `CLIENT PAUSE ms mode`.
pub fn client_pause(con: &mut Connection, ms: u64, mode: &str) {
    let _: () = cmd("CLIENT")
        .arg("PAUSE")
        .arg(ms)
        .arg(mode)
        .query(con)
        .expect("CLIENT PAUSE");
}

/// Fails with a clear message when the test's own setup was too slow for its premise.
pub fn premise(ok: bool, what: &str) {
    assert!(
        ok,
        "test premise broken (machine too slow?): {what} — not a module failure"
    );
}

/// The test's next step comes at least 100 ms before a lease of `lease` that began
/// at `held_at` ends (a premise of the test, not a module check).
pub fn before_lease_end(held_at: Instant, lease: Duration, step: &str) {
    let spent = held_at.elapsed();
    premise(
        spent + Duration::from_millis(100) < lease,
        &format!("{step} comes {spent:?} into a {lease:?} lease, not before its end"),
    );
}

/// Sets `maxmemory` 256 kB above used_memory (noeviction) and writes past it with a
/// script (a script checks OOM once, before it starts); fails unless a SET then
/// answers OOM.
pub fn fill_past_maxmemory(con: &mut Connection) {
    let used: i64 = info_field(con, "memory", "used_memory")
        .and_then(|v| v.parse().ok())
        .expect("used_memory");
    for (name, value) in [
        ("maxmemory-policy", "noeviction".to_string()),
        ("maxmemory", (used + 256 * 1024).to_string()),
    ] {
        let _: () = cmd("CONFIG")
            .arg("SET")
            .arg(name)
            .arg(value)
            .query(con)
            .expect("CONFIG SET");
    }
    let _: () = cmd("EVAL")
        .arg("for i = 1, 20000 do redis.call('SET', 'fill:' .. i, string.rep('x', 100)) end")
        .arg(0)
        .query(con)
        .expect("fill past maxmemory");
    let probe = cmd("SET").arg("probe").arg(1).query::<()>(con);
    premise(
        probe.is_err_and(|e| err_text(&e).starts_with("OOM")),
        "the server is out of memory after the fill",
    );
}
