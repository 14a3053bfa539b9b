//! Clients blocked in a command (`DLOCK.ACQUIRE … WAIT`, `CACHE.GET … LEASE …
//! WAIT`, any write held back by a pause), one type for every test: a `Waiter` sends
//! its command on its own raw RESP2 connection and a thread reads the first reply
//! into an `Answer` (the reply, when it came, and the connection, to watch for a
//! second reply). The raw connection sees exactly the bytes the server sends, so a
//! second reply or a closed connection shows.

use super::cluster::Redirect;
use super::*;
use crate::cache::support::{cache_info, wait_for_waiters, Leased};
use crate::lock::support::wait_waiting;

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// A raw call without a reply after this long is hung.
pub const READ_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a waiter's answer is waited for: longer than any test keeps one blocked
/// (a slot migration takes up to 20 s).
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
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

    /// The local (client-side) port of this connection.
    pub fn local_port(&self) -> u16 {
        self.r.get_ref().local_addr().expect("local address").port()
    }

    /// This connection's `CLIENT ID` (for `CLIENT KILL ID`, `CLIENT UNBLOCK`).
    pub fn client_id(&mut self) -> i64 {
        match self.call(&["CLIENT", "ID"]) {
            Reply::Int(id) => id,
            other => panic!("CLIENT ID answered {other:?}"),
        }
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

/// A client blocked (or about to block) in a command on its own raw connection; its
/// thread reads the first reply. `name` labels it in failures (the lock owner, the
/// command).
pub struct Waiter {
    pub name: String,
    handle: JoinHandle<Answer>,
}

/// What a waiter was answered, when, and its connection (to watch for more);
/// `then`, the replies to its `Steps::then` commands.
pub struct Answer {
    pub name: String,
    pub reply: Reply,
    pub at: Instant,
    pub conn: RawConn,
    pub then: Vec<Reply>,
}

/// What a waiter's thread does besides reading the first reply: how long it waits
/// for it (silent that long, `Reply::Silent`, it is hung), and the commands it
/// sends once it is granted a token — a holder's steps, on its own connection,
/// before the next waiter can be served; their replies are `Answer::then`.
pub struct Steps {
    pub timeout: Duration,
    pub then: Vec<Vec<String>>,
}

impl Waiter {
    /// Sends `args` on `conn` (opened beforehand, e.g. to know its CLIENT ID) and
    /// reads the reply in a thread.
    pub fn send<S: AsRef<str>>(conn: RawConn, name: &str, args: &[S]) -> Waiter {
        let steps = Steps {
            timeout: ANSWER_TIMEOUT,
            then: Vec::new(),
        };
        Waiter::send_steps(conn, name, args, steps)
    }

    /// `Waiter::send`, with the thread taking `steps`.
    pub fn send_steps<S: AsRef<str>>(
        mut conn: RawConn,
        name: &str,
        args: &[S],
        steps: Steps,
    ) -> Waiter {
        let args: Vec<&str> = args.iter().map(|a| a.as_ref()).collect();
        conn.send(&args);
        let owner = name.to_string();
        let handle = thread::spawn(move || {
            let reply = conn.read(steps.timeout);
            let at = Instant::now();
            let mut then = Vec::new();
            if matches!(reply, Reply::Int(_)) {
                for c in &steps.then {
                    let c: Vec<&str> = c.iter().map(String::as_str).collect();
                    then.push(conn.call(&c));
                }
            }
            Answer {
                name: owner,
                reply,
                at,
                conn,
                then,
            }
        });
        Waiter {
            name: name.to_string(),
            handle,
        }
    }

    /// Sends `args` on a new raw connection to `server`, read in a thread.
    pub fn call<S: AsRef<str>>(server: &Server, name: &str, args: &[S]) -> Waiter {
        Waiter::send(RawConn::open(server.port), name, args)
    }

    /// `Waiter::call`, and the CLIENT ID of its connection (to kill or unblock it).
    pub fn with_id<S: AsRef<str>>(server: &Server, name: &str, args: &[S]) -> (i64, Waiter) {
        let mut conn = RawConn::open(server.port);
        (conn.client_id(), Waiter::send(conn, name, args))
    }

    /// `DLOCK.ACQUIRE key owner ttl WAIT wait`.
    pub fn lock(server: &Server, key: &str, owner: &str, ttl: i64, wait: i64) -> Waiter {
        Waiter::lock_kind(server, key, owner, ttl, wait, &[])
    }

    /// `DLOCK.ACQUIRE key owner ttl WAIT wait <kind…>` (`SHARED`, `LIMIT n`,
    /// `REENTRANT` or nothing).
    pub fn lock_kind(
        server: &Server,
        key: &str,
        owner: &str,
        ttl: i64,
        wait: i64,
        kind: &[&str],
    ) -> Waiter {
        Waiter::call(server, owner, &lock_args(key, owner, ttl, wait, kind))
    }

    /// `CACHE.GET key [MINVERSION min] LEASE lease_ms WAIT timeout_ms` (no MINVERSION
    /// when `min` is 0, its default); `name` labels the answer.
    pub fn cache(
        server: &Server,
        name: &str,
        key: &str,
        min: i64,
        lease_ms: i64,
        timeout_ms: i64,
    ) -> Waiter {
        Waiter::call(server, name, &cache_args(key, min, lease_ms, timeout_ms))
    }

    /// The waiter's answer (its thread's result).
    pub fn join(self) -> Answer {
        self.handle
            .join()
            .unwrap_or_else(|_| panic!("waiter thread {} panicked", self.name))
    }

    /// Whether the waiter has been answered.
    pub fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }

    /// The token the waiter was granted and when; fails on any other answer.
    pub fn granted(self, what: &str) -> (i64, Instant) {
        let a = self.join();
        (a.token(what), a.at)
    }
}

/// The words of `DLOCK.ACQUIRE key owner ttl WAIT wait <kind…>`.
pub fn lock_args(key: &str, owner: &str, ttl: i64, wait: i64, kind: &[&str]) -> Vec<String> {
    let mut args = words(&["DLOCK.ACQUIRE", key, owner]);
    args.extend([ttl.to_string(), "WAIT".into(), wait.to_string()]);
    args.extend(words(kind));
    args
}

/// The words of `CACHE.GET key [MINVERSION min] LEASE lease_ms WAIT timeout_ms` (no
/// MINVERSION when `min` is 0, its default).
pub fn cache_args(key: &str, min: i64, lease_ms: i64, timeout_ms: i64) -> Vec<String> {
    let mut args = words(&["CACHE.GET", key]);
    if min != 0 {
        args.extend(["MINVERSION".into(), min.to_string()]);
    }
    args.extend(["LEASE".into(), lease_ms.to_string()]);
    args.extend(["WAIT".into(), timeout_ms.to_string()]);
    args
}

impl Answer {
    /// The granted token; fails on any other answer.
    pub fn token(&self, what: &str) -> i64 {
        match self.reply {
            Reply::Int(t) => t,
            ref other => panic!("{what}: waiter {} got {other:?}, not a token", self.name),
        }
    }

    /// The `[value or nil, lease]` of a cache waiter; fails on any other answer.
    pub fn lease(&self) -> Leased {
        self.reply.leased().unwrap_or_else(|| {
            panic!(
                "cache waiter {} got {:?}, not [value, lease]",
                self.name, self.reply
            )
        })
    }

    /// Fails unless the answer came less than `limit` after `since`.
    pub fn assert_within(&self, since: Instant, limit: Duration, what: &str) {
        let after = self.at.saturating_duration_since(since);
        assert!(
            after < limit,
            "{what}: {} answered {after:?} after it",
            self.name
        );
    }

    /// The text of an error answer; fails on any other answer.
    pub fn error(&self) -> &str {
        match &self.reply {
            Reply::Error(e) => e,
            other => panic!("waiter {} got {other:?}, not an error", self.name),
        }
    }
}

/// Every waiter's answer, in order.
pub fn join_all(waiters: Vec<Waiter>) -> Vec<Answer> {
    waiters.into_iter().map(Waiter::join).collect()
}

/// Queues lock waiters `(key, owner, ttl, wait)` in order, each blocked before the
/// next is sent.
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

/// Queues lock waiters of any kind in order, each blocked before the next is sent.
pub fn queue_kinds(server: &Server, con: &mut Connection, specs: &[KindWaiter]) -> Vec<Waiter> {
    let base = warden_stat(con, "locks_waiting");
    specs
        .iter()
        .enumerate()
        .map(|(i, &(key, owner, ttl, wait, kind))| {
            let w = Waiter::lock_kind(server, key, owner, ttl, wait, kind);
            wait_waiting(con, base + i as i64 + 1);
            w
        })
        .collect()
}

/// Queues cache waiters `(key, name, min, lease_ms, timeout_ms)` in order, each
/// blocked before the next is sent.
pub fn queue_cache(
    server: &Server,
    con: &mut Connection,
    specs: &[(&str, &str, i64, i64, i64)],
) -> Vec<Waiter> {
    specs
        .iter()
        .map(|&(key, name, min, lease_ms, timeout_ms)| {
            cache_queued(server, con, (key, name), min, (lease_ms, timeout_ms))
        })
        .collect()
}

/// `Waiter::cache`, returned once it waits (CACHE.INFO `waiters` of `key` grew by
/// one).
pub fn cache_queued(
    server: &Server,
    con: &mut Connection,
    (key, name): (&str, &str),
    min: i64,
    (lease_ms, timeout_ms): (i64, i64),
) -> Waiter {
    let queued = cache_info(con, key).map_or(0, |i| i["waiters"]);
    let w = Waiter::cache(server, name, key, min, lease_ms, timeout_ms);
    wait_for_waiters(con, key, queued + 1);
    w
}

/// Every waiter was answered `-UNBLOCKED …` (its server turned replica), once:
/// nothing more arrives after it. `since` dates the listing in a failure.
pub fn assert_each_unblocked(answers: &mut [Answer], since: Instant, what: &str) {
    let listing = show_answers(answers, since);
    for a in answers.iter() {
        assert!(
            a.reply.is_error_starting("UNBLOCKED"),
            "{what}: waiter {} answered {:?}, expected UNBLOCKED; all:\n{listing}",
            a.name,
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
            "{what}: waiter {} got no reply within {ANSWER_TIMEOUT:?}",
            a.name
        );
        match a.conn.read(Duration::from_millis(1)) {
            Reply::Silent | Reply::Closed(_) => {}
            more => panic!(
                "{what}: waiter {} got a second reply {more:?} after {:?}",
                a.name, a.reply
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
                a.name,
                a.reply,
                a.at.saturating_duration_since(t0).as_millis()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
