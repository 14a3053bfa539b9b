//! A deterministic, grammar-driven command fuzzer for every warden command, run against
//! a master with a replica (`--propagation-error-behavior panic`, so an effect the
//! replica rejects kills it and the test notices).
//!
//! Fuzzed commands (random arities, non-UTF-8 and empty bytes, extreme numbers, option
//! words in random order, case and number, keys of the wrong type) are interleaved with
//! valid traffic (locks acquired, waited for and released, filters added to, limiters
//! called), MULTI blocks, scripts and native key operations (DEL, COPY, RENAME, DUMP /
//! RESTORE, MOVE, SWAPDB, expiries) on a small keyspace. Every reply must parse; the
//! servers must stay up; at the end the replica's `DEBUG DIGEST` equals the master's,
//! and `DEBUG RELOAD` leaves it unchanged.
//!
//! `WARDEN_FUZZ_SEED` (default fixed) and `WARDEN_FUZZ_COMMANDS` (default 20000) control
//! a run. `DLOCK.ACQUIRE … WAIT` is only ever sent with a timeout of at most 50 ms
//! outside MULTI and scripts, so nothing can block for long.
//!
//! The grammar is `COMMAND DOCS`: the shape of every call (which arguments, in which
//! order, which options, choices and repeats) is drawn from the command's argument tree,
//! read once from the master at the start (`common/docs.rs`, drawn by
//! `common/fuzz_calls.rs`'s `draw`), so the fuzzer, the docs and the parser share the
//! one declaration in `src/`. The values (key space, generators by command and argument
//! name) are each family's `tests/it/<family>/fuzz_values.rs`, gathered with the
//! shared ones and the mutations in `common/grammar.rs`, the reply shapes in
//! `common/fuzz_calls.rs`; this file drives them. The regression the fuzzer found for
//! blocked acquires is in `tests/it/lock/waiting.rs`.

use crate::common::docs::{docs_of, DocArg};
use crate::common::fuzz_calls::*;
use crate::common::grammar::*;
use crate::common::payload::Rng;
use crate::common::*;
use crate::lock::fuzz_values::LOCK_KEYS;

use redis::ConnectionLike;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// Reads and writes of every fuzz connection time out after this.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

const DEFAULT_SEED: u64 = 0x00f0_22ed_2026_0001;

const DEFAULT_COMMANDS: u64 = 20_000;

/// Filters on the fuzzed master are capped (the replica applies what it is sent).
const BF_MAX_BYTES: &str = "4194304";

/// A blocked acquire (WAIT of at most 50 ms, a holder lease of at most 220 ms) has
/// answered long before this.
const WAITER_REPLY: Duration = Duration::from_millis(1_500);

/// Unanswered waiters recorded before waiter rounds avoid the timing that loses them.
const MAX_LOST: usize = 3;

/// Which server and protocol a command goes to.
#[derive(Clone, Copy, Debug, PartialEq)]
enum To {
    Master,
    Master3,
    Replica,
}

struct Fuzz {
    rng: Rng,
    seed: u64,
    m: Server,
    r: Server,
    con: Connection,
    con3: Connection,
    rcon: Connection,
    waiters: Vec<Connection>,
    history: VecDeque<String>,
    sent: u64,
    errors: u64,
    internal: Vec<String>,
    odd_codes: Vec<String>,
    wrong_shapes: Vec<String>,
    /// Every command's `COMMAND DOCS` arguments, read from the master at the start:
    /// the shape of every call.
    docs: HashMap<String, Vec<DocArg>>,
    /// Blocked acquires that never got a reply.
    lost: Vec<String>,
    /// Error replies by message.
    by_message: HashMap<String, u64>,
    /// Valid calls sent, and how many of them answered an error.
    valid: (u64, u64),
    /// Acquires sent with WAIT from the waiter connections.
    blocked_waits: u64,
}

impl Fuzz {
    fn note(&mut self, to: To, text: String) {
        if self.history.len() == 25 {
            self.history.pop_front();
        }
        self.history.push_back(format!("{to:?}: {text}"));
    }

    /// Panics with everything needed to reproduce a failure.
    fn fail(&mut self, what: &str) -> ! {
        let m_alive = self.m.is_alive();
        let r_alive = self.r.is_alive();
        panic!(
            "fuzz failure (seed {:#x}, after {} commands): {what}\n\
             master alive: {m_alive}, replica alive: {r_alive}\n\
             last commands:\n  {}\n\
             master log tail:\n{}\n\
             replica log tail:\n{}",
            self.seed,
            self.sent,
            self.history
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join("\n  "),
            self.m.log_tail(30),
            self.r.log_tail(30),
        )
    }

    fn send(&mut self, to: To, name: &[u8], args: &[Vec<u8>]) -> Value {
        let text = show_call(name, args);
        self.note(to, text.clone());
        self.sent += 1;
        let c = build(name, args);
        let res = match to {
            To::Master => self.con.req_command(&c),
            To::Master3 => self.con3.req_command(&c),
            To::Replica => self.rcon.req_command(&c),
        };
        match res {
            Ok(v) => {
                self.inspect(&text, &v);
                v
            }
            Err(e) => self.fail(&format!(
                "no valid reply to {to:?} `{text}`: {e} (kind {:?})",
                e.kind()
            )),
        }
    }

    /// Counts errors and records the ones a warden command must never send.
    fn inspect(&mut self, text: &str, v: &Value) {
        let mut errs = Vec::new();
        errors_in(v, &mut errs);
        self.errors += errs.len() as u64;
        for e in errs {
            let short: String = e.chars().take(70).collect();
            *self.by_message.entry(short).or_default() += 1;
            let code = e.split(' ').next().unwrap_or("");
            if e.contains("internal error in warden") {
                if self.internal.len() < 20 {
                    self.internal.push(format!("{text} -> {e}"));
                }
            } else if !matches!(
                code,
                "ERR"
                    | "WRONGTYPE"
                    | "READONLY"
                    | "EXECABORT"
                    | "NOSCRIPT"
                    | "BUSYKEY"
                    | "OOM"
                    | "FENCED"
            ) && self.odd_codes.len() < 20
            {
                self.odd_codes.push(format!("{text} -> {e}"));
            }
        }
    }

    fn expect(&mut self, shape: Shape, to: To, name: &str, args: &[Vec<u8>]) -> Value {
        let v = self.send(to, name.as_bytes(), args);
        self.valid.0 += 1;
        if err_of(&v).is_some() {
            self.valid.1 += 1;
        }
        if err_of(&v).is_none() && !fits(shape, &v) && self.wrong_shapes.len() < 20 {
            self.wrong_shapes.push(format!(
                "{} -> {v:?} (want {shape:?})",
                show_call(name.as_bytes(), args)
            ));
        }
        v
    }

    fn target(&mut self) -> To {
        match self.rng.below(20) {
            0 => To::Replica,
            1..=3 => To::Master3,
            _ => To::Master,
        }
    }

    /// One fuzzed warden command.
    fn fuzzed(&mut self, in_tx: bool) -> (Vec<u8>, Vec<Vec<u8>>) {
        let now = now_ms();
        let name = self.rng.pick(&COMMANDS);
        let g = Gen {
            p: 5 + self.rng.below(45),
            now,
        };
        let mut args = draw(&g, &mut self.rng, name, &self.docs[name]);
        if self.rng.chance(2, 5) {
            mutate(&mut self.rng, &mut args);
        }
        if self.rng.chance(1, 50) {
            args.clear();
        }
        if !in_tx {
            sanitize_wait(&mut self.rng, &mut args);
        }
        let name = if self.rng.chance(1, 4) {
            rand_case(&mut self.rng, name)
        } else {
            b(name)
        };
        (name, args)
    }

    fn fuzz_step(&mut self) {
        let to = self.target();
        let (name, args) = self.fuzzed(false);
        self.send(to, &name, &args);
    }

    /// A valid call of a random command.
    fn valid_step(&mut self) {
        let g = Gen {
            p: 0,
            now: now_ms(),
        };
        let to = if self.rng.chance(1, 8) {
            To::Master3
        } else {
            To::Master
        };
        let name = self.rng.pick(&COMMANDS);
        if name.ends_with("_SET")
            || name.ends_with("_SETS")
            || name == "BF._LOADX"
            || name == "BF._ADDATX"
        {
            // The internal commands with well-formed states.
            let args = draw(&g, &mut self.rng, name, &self.docs[name]);
            self.send(to, name.as_bytes(), &args);
            return;
        }
        let args = draw(&g, &mut self.rng, name, &self.docs[name]);
        let shape = match name {
            "DLOCK.ACQUIRE" => Shape::TokenOrNil,
            "DLOCK.RELEASE" | "DLOCK.EXTEND" | "BF.ADDX" | "BF.EXISTSX" => Shape::Int01,
            "DLOCK.INFO" => Shape::LockInfo,
            "BF.RESERVEX" => Shape::Ok,
            "BF.MADDX" | "BF.MEXISTSX" => Shape::Flags(args.len() - 1),
            "BF.INSERTX" => {
                let at = args
                    .iter()
                    .position(|a| a.eq_ignore_ascii_case(b"ITEMS"))
                    .expect("ITEMS");
                Shape::Flags(args.len() - at - 1)
            }
            "BF.INFOX" if args.len() == 1 => Shape::FilterInfo,
            "BF.CARDX" => Shape::IntNonNeg,
            "BF.SCANDUMPX" => Shape::Chunk,
            "BF.LOADCHUNKX" => Shape::Ok,
            "CF.RESERVEX" | "CF.COMPACTX" => Shape::Ok,
            "CF.ADDX" | "CF.ADDNXX" | "CF.EXISTSX" | "CF.DELX" => Shape::Int01,
            "CF.MEXISTSX" => Shape::Flags(args.len() - 1),
            "CF.COUNTX" => Shape::IntNonNeg,
            "CF.SCANDUMPX" => Shape::Chunk,
            "CF.LOADCHUNKX" => Shape::Ok,
            "RL.TOKEN" | "RL.LEAKY" | "RL.WINDOW" => Shape::Four,
            "RL.GCRA" => Shape::Five,
            "CACHE.SET" => Shape::Int01,
            "CACHE.GET" => Shape::CacheGet,
            "CACHE.INFO" => Shape::CacheInfo,
            "CACHE._SET" | "CACHE._META" => Shape::Ok,
            _ => Shape::Any,
        };
        let mut args = args;
        sanitize_wait(&mut self.rng, &mut args);
        let v = self.expect(shape, to, name, &args);
        // Fuzzed writes give keys other types (or a filter being loaded) now and then:
        // valid traffic takes the key back.
        if let Some(e) = err_of(&v) {
            if e.starts_with("WRONGTYPE")
                || e.contains("different kind")
                || e.contains("still being loaded")
            {
                self.send(To::Master, b"DEL", &args[..1]);
            }
        }
    }

    /// Locks with waiters: a holder, one to three blocked acquires with WAIT of at most
    /// 50 ms on other connections, then a release, DEL, expiry, rename or fuzzed command.
    /// Every waiter must answer (a token or nil) within `WAITER_REPLY`. After
    /// `MAX_LOST` waiters went unanswered, rounds keep to timings where a waiter's
    /// timeout cannot fall due before a hand-off that is still pending, so that a run
    /// with that bug still finishes (and fails at the end).
    fn waiter_round(&mut self) {
        let careful = self.lost.len() >= MAX_LOST;
        let key = b(self.rng.pick(LOCK_KEYS));
        let holder = b(self.rng.pick(&["o1", "o2"]));
        let ttl = if careful {
            1 + self.rng.below(5)
        } else {
            20 + self.rng.below(200)
        };
        let got = self.expect(
            Shape::TokenOrNil,
            To::Master,
            "DLOCK.ACQUIRE",
            &[key.clone(), holder.clone(), b(&ttl.to_string())],
        );
        if careful && !matches!(got, Value::Int(_)) {
            // Held by someone whose lease may end at any time: not a careful round.
            return;
        }
        let n = 1 + self.rng.below(self.waiters.len());
        let mut pending = Vec::new();
        for w in 0..n {
            let timeout = if careful {
                10 + self.rng.below(41)
            } else {
                1 + self.rng.below(50)
            };
            let owner = format!("w{w}");
            let lease = if careful {
                1_000 + self.rng.below(1_000)
            } else {
                50 + self.rng.below(2_000)
            };
            let args = vec![
                key.clone(),
                b(&owner),
                b(&lease.to_string()),
                b("WAIT"),
                b(&timeout.to_string()),
            ];
            let text = show_call(b"DLOCK.ACQUIRE", &args);
            self.note(To::Master, format!("(waiter {w}) {text}"));
            self.sent += 1;
            let packed = build(b"DLOCK.ACQUIRE", &args).get_packed_command();
            if let Err(e) = self.waiters[w].send_packed_command(&packed) {
                self.fail(&format!("waiter {w} cannot send `{text}`: {e}"));
            }
            pending.push((w, text));
        }
        self.blocked_waits += n as u64;
        std::thread::sleep(Duration::from_millis(self.rng.below(3) as u64));
        let action = if careful {
            self.rng.below(3)
        } else {
            self.rng.below(12)
        };
        let action_text = match action {
            0..=4 => {
                self.expect(
                    Shape::Int01,
                    To::Master,
                    "DLOCK.RELEASE",
                    &[key.clone(), holder],
                );
                "release by the holder"
            }
            5 => {
                self.send(To::Master, b"DEL", std::slice::from_ref(&key));
                "DEL"
            }
            6 => {
                self.send(To::Master, b"UNLINK", std::slice::from_ref(&key));
                "UNLINK"
            }
            7 => {
                self.send(To::Master, b"PEXPIRE", &[key.clone(), b("1")]);
                "PEXPIRE 1"
            }
            8 => {
                let owner = b(self.rng.pick(&["w0", "w1", "o1"]));
                self.expect(
                    Shape::Int01,
                    To::Master,
                    "DLOCK.RELEASE",
                    &[key.clone(), owner],
                );
                "release by another owner"
            }
            9 => {
                let (name, args) = self.fuzzed(false);
                self.send(To::Master, &name, &args);
                "a fuzzed command"
            }
            10 => {
                let other = b(self.rng.pick(LOCK_KEYS));
                self.send(To::Master, b"RENAME", &[key.clone(), other]);
                "RENAME"
            }
            _ => "nothing (the lease runs out)",
        };
        let sent_at = Instant::now();
        for (w, text) in pending {
            let left = WAITER_REPLY
                .saturating_sub(sent_at.elapsed())
                .max(Duration::from_millis(1));
            let _ = self.waiters[w].set_read_timeout(Some(left));
            let reply = self.waiters[w].recv_response();
            let _ = self.waiters[w].set_read_timeout(Some(READ_TIMEOUT));
            match reply {
                Ok(v) => {
                    self.inspect(&text, &v);
                    if err_of(&v).is_none() && !fits(Shape::TokenOrNil, &v) {
                        self.wrong_shapes.push(format!("{text} -> {v:?}"));
                    }
                    if matches!(v, Value::Int(_)) && self.rng.chance(1, 2) {
                        let owner = b(&format!("w{w}"));
                        self.expect(
                            Shape::Int01,
                            To::Master,
                            "DLOCK.RELEASE",
                            &[key.clone(), owner],
                        );
                    }
                }
                Err(e) if e.is_timeout() || e.is_io_error() => {
                    if !self.m.is_alive() {
                        self.fail(&format!("master died while waiter {w} waited: `{text}`"));
                    }
                    let mut con = self.m.conn();
                    let info = cmd("DLOCK.INFO").arg(&key).query::<Value>(&mut con);
                    self.lost.push(format!(
                        "waiter {w} `{text}` (holder `{}` ttl {ttl} ms, then {action_text}): \
                         no reply within {WAITER_REPLY:?} ({e}); DLOCK.INFO now: {info:?}; \
                         warden_locks_handed_off {}",
                        String::from_utf8_lossy(&key),
                        warden_stat(&mut con, "locks_handed_off"),
                    ));
                    // The connection is out of step: replace it.
                    self.waiters[w] = timed(self.m.conn(), READ_TIMEOUT);
                }
                Err(e) => self.fail(&format!("waiter {w} got no valid reply to `{text}`: {e}")),
            }
        }
    }

    /// MULTI with fuzzed and valid commands (WAIT of any value is allowed in here: the
    /// command makes one non-blocking attempt), then EXEC or DISCARD.
    fn multi_block(&mut self) {
        let to = if self.rng.chance(1, 4) {
            To::Master3
        } else {
            To::Master
        };
        self.send(to, b"MULTI", &[]);
        for _ in 0..1 + self.rng.below(6) {
            let (name, mut args) = self.fuzzed(true);
            if self.rng.chance(1, 3) {
                // A WAIT 0 / huge WAIT, which must not block inside MULTI.
                args = vec![
                    b(self.rng.pick(LOCK_KEYS)),
                    b("o9"),
                    b("1000"),
                    b("WAIT"),
                    b(self.rng.pick(&["0", "9223372036854775807", "100000"])),
                ];
                self.send(to, b"DLOCK.ACQUIRE", &args);
            } else {
                self.send(to, &name, &args);
            }
        }
        let end: &[u8] = if self.rng.chance(1, 8) {
            b"DISCARD"
        } else {
            b"EXEC"
        };
        self.send(to, end, &[]);
    }

    /// A script running a fuzzed warden command (no blocking inside scripts either).
    fn script(&mut self) {
        let (name, mut args) = self.fuzzed(true);
        if self.rng.chance(1, 4) {
            args = vec![
                b(self.rng.pick(LOCK_KEYS)),
                b("o8"),
                b("500"),
                b("WAIT"),
                b("0"),
            ];
        }
        let mut full = vec![b("return redis.pcall(unpack(ARGV))"), b("0"), name];
        let name_upper = String::from_utf8_lossy(&full[2]).to_ascii_uppercase();
        if self.rng.chance(1, 4) && name_upper == "DLOCK.ACQUIRE" {
            full[0] = b("return redis.call(unpack(ARGV))");
        }
        full.extend(args);
        self.send(To::Master, b"EVAL", &full);
    }

    /// Native commands on the keyspace, including wrong-type keys.
    fn native_step(&mut self) {
        let k = any_key(&mut self.rng);
        let k2 = any_key(&mut self.rng);
        match self.rng.below(20) {
            0 => {
                self.send(To::Master, b"SET", &[b("str:0"), b("v")]);
            }
            1 => {
                self.send(To::Master, b"RPUSH", &[b("list:0"), b("a"), b("b")]);
            }
            2 => {
                self.send(To::Master, b"HSET", &[b("hash:0"), b("f"), b("v")]);
            }
            3 => {
                self.send(To::Master, b"DEL", &[k]);
            }
            4 => {
                self.send(To::Master, b"COPY", &[k, k2, b("REPLACE")]);
            }
            5 => {
                self.send(To::Master, b"RENAME", &[k, k2]);
            }
            6 => {
                let ms = (10 + self.rng.below(500)).to_string();
                self.send(To::Master, b"PEXPIRE", &[k, b(&ms)]);
            }
            7 => {
                self.send(To::Master, b"PERSIST", &[k]);
            }
            8 | 9 => {
                let v = self.send(To::Master, b"DUMP", &[k]);
                if let Value::BulkString(p) = v {
                    let ttl = if self.rng.chance(1, 2) { "0" } else { "100000" };
                    self.send(To::Master, b"RESTORE", &[k2, b(ttl), p, b("REPLACE")]);
                }
            }
            10 => {
                // Valkey 8.1.8 leaves the connection on the destination database
                // after MOVE when any module subscribes to keyspace events
                // (valkey-io/valkey#4024; 9.1.2 has the fix): not a warden bug.
                if !move_switches_db() {
                    self.send(To::Master, b"MOVE", &[k, b("1")]);
                }
            }
            11 => {
                self.send(To::Master, b"TYPE", std::slice::from_ref(&k));
                self.send(To::Master, b"MEMORY", &[b("USAGE"), k]);
            }
            12 => {
                self.send(To::Master, b"DEBUG", &[b("DIGEST-VALUE"), k]);
            }
            13 => {
                self.send(To::Master, b"OBJECT", &[b("ENCODING"), k]);
            }
            14 => {
                self.send(To::Replica, b"DEBUG", &[b("DIGEST-VALUE"), k]);
            }
            15 => {
                self.send(To::Master, b"WAIT", &[b("1"), b("20")]);
            }
            16 => {
                self.send(To::Master, b"PTTL", &[k]);
            }
            17 if self.rng.chance(1, 20) => {
                self.send(To::Master, b"SWAPDB", &[b("0"), b("1")]);
            }
            18 if self.rng.chance(1, 40) => {
                let what: &[u8] = if self.rng.chance(1, 2) {
                    b"FLUSHDB"
                } else {
                    b"FLUSHALL"
                };
                self.send(To::Master, what, &[]);
            }
            _ => {
                self.send(To::Master, b"EXISTS", &[k]);
            }
        }
    }

    /// Both servers are up and the replica's link is up.
    fn check_alive(&mut self) {
        if !self.m.is_alive() || !self.r.is_alive() {
            self.fail("a server died");
        }
        self.m.assert_alive();
        self.r.assert_alive();
        let mut rc = self.r.conn();
        let link = info_field(&mut rc, "replication", "master_link_status");
        if link.as_deref() != Some("up") {
            self.fail(&format!("replica link is {link:?}"));
        }
    }
}

/// Whether the server has valkey-io/valkey#4024: after `MOVE` (or `COPY … DB`)
/// the connection stays on the destination database while a module subscribes
/// to keyspace events. Valkey 8.1.8 does; Redis and Valkey 9.1.2 do not.
fn move_switches_db() -> bool {
    static BUGGY: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *BUGGY.get_or_init(|| {
        let (name, major, _) = server_version();
        name == "valkey" && major < 9
    })
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| {
            let v = v.trim();
            match v.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => v.parse().ok(),
            }
        })
        .unwrap_or(default)
}

/// Every key of `db` with its PTTL.
fn keys_with_ttl(con: &mut Connection, db: i64) -> Vec<(Vec<u8>, i64)> {
    let _: () = query!(con, "SELECT", db);
    scan_keys(con, &[])
        .into_iter()
        .map(|k| {
            let t = pttl(con, &k);
            (k, t)
        })
        .collect()
}

#[test]
fn grammar_fuzz_against_master_and_replica() {
    let seed = env_u64("WARDEN_FUZZ_SEED", DEFAULT_SEED);
    let total = env_u64("WARDEN_FUZZ_COMMANDS", DEFAULT_COMMANDS);
    let started = Instant::now();
    let m = Server::start_with(&[], &["bf-max-bytes", BF_MAX_BYTES]);
    let r = m.start_replica(&[], &["bf-max-bytes", BF_MAX_BYTES]);
    let con = timed(m.conn(), READ_TIMEOUT);
    let con3 = timed(m.conn_resp3(), READ_TIMEOUT);
    let rcon = timed(r.conn(), READ_TIMEOUT);
    let waiters = (0..3).map(|_| timed(m.conn(), READ_TIMEOUT)).collect();
    let docs = docs_of(&mut m.conn(), &COMMANDS);
    let mut f = Fuzz {
        rng: Rng(seed),
        seed,
        m,
        r,
        con,
        con3,
        rcon,
        waiters,
        history: VecDeque::new(),
        sent: 0,
        errors: 0,
        internal: Vec::new(),
        odd_codes: Vec::new(),
        wrong_shapes: Vec::new(),
        docs,
        lost: Vec::new(),
        by_message: HashMap::new(),
        valid: (0, 0),
        blocked_waits: 0,
    };
    println!("fuzz: seed {seed:#x}, {total} commands");
    f.send(To::Master, b"SET", &[b("str:0"), b("v")]);
    f.send(To::Master, b"RPUSH", &[b("list:0"), b("a")]);
    f.send(To::Master, b"HSET", &[b("hash:0"), b("f"), b("v")]);

    let mut next_check = 1_000;
    while f.sent < total {
        match f.rng.below(1000) {
            0..=449 => f.fuzz_step(),
            450..=839 => f.valid_step(),
            840..=879 => f.multi_block(),
            880..=899 => f.script(),
            900..=904 => f.waiter_round(),
            _ => f.native_step(),
        }
        if f.sent >= next_check {
            next_check += 1_000;
            f.check_alive();
        }
    }
    f.check_alive();
    let fuzz_time = started.elapsed();

    // Final consistency. First, no waiter is left behind.
    let mut con = timed(f.m.conn(), READ_TIMEOUT);
    for gauge in ["locks_waiting", "cache_waiting"] {
        if !wait_until(Duration::from_secs(5), || warden_stat(&mut con, gauge) == 0) {
            let w = warden_stat(&mut con, gauge);
            f.fail(&format!(
                "warden_{gauge} is {w} after every waiter got its reply"
            ));
        }
    }
    // Keys that could expire during the comparison get a long TTL (PEXPIRE replicates
    // as PEXPIREAT, so master and replica keep the same absolute expiry).
    for db in 0..2 {
        for (k, ttl) in keys_with_ttl(&mut con, db) {
            if (0..LONG_TTL_MS).contains(&ttl) {
                let _: i64 = query!(&mut con, "PEXPIRE", &k, LONG_TTL_MS);
            }
        }
    }
    let _: () = query!(&mut con, "SELECT", 0);
    f.m.sync_replicas(1);
    let mut rc = timed(f.r.conn(), READ_TIMEOUT);
    let md = db_digest(&mut con);
    let rd = db_digest(&mut rc);
    if md != rd {
        let mk: Vec<(Vec<u8>, i64)> = (0..2).flat_map(|db| keys_with_ttl(&mut con, db)).collect();
        let rk: Vec<(Vec<u8>, i64)> = (0..2).flat_map(|db| keys_with_ttl(&mut rc, db)).collect();
        let _: () = query!(&mut con, "SELECT", 0);
        let _: () = query!(&mut rc, "SELECT", 0);
        let mut diffs = Vec::new();
        for db in 0..2 {
            for (k, _) in keys_with_ttl(&mut con, db) {
                let a: Value = query!(&mut con, "DEBUG", "DIGEST-VALUE", &k);
                let _: () = query!(&mut rc, "SELECT", db);
                let bv: Value = query!(&mut rc, "DEBUG", "DIGEST-VALUE", &k);
                if a != bv {
                    diffs.push(escape(&k));
                }
            }
        }
        f.fail(&format!(
            "replica digest {rd} != master digest {md}; keys differing: {diffs:?}\nmaster keys: {mk:?}\nreplica keys: {rk:?}"
        ));
    }
    // Filter accounting on both servers.
    for (name, c) in [("master", &mut con), ("replica", &mut rc)] {
        let (n, bytes) = filter_census(c, &[0, 1]);
        let (sn, sb) = (warden_stat(c, "bf_filters"), warden_stat(c, "bf_bytes"));
        assert_eq!(
            (sn, sb),
            (n, bytes),
            "{name}: INFO warden (bf_filters, bf_bytes) vs filter keys and their sizes"
        );
    }
    // DEBUG RELOAD keeps every value.
    let v: Value = query!(&mut con, "DEBUG", "RELOAD");
    assert!(
        err_of(&v).is_none(),
        "DEBUG RELOAD: {v:?}\n{}",
        f.m.log_tail(20)
    );
    let after = db_digest(&mut con);
    if after != md {
        f.fail(&format!(
            "DEBUG RELOAD changed the master digest: {md} -> {after}"
        ));
    }
    let (n, bytes) = filter_census(&mut con, &[0, 1]);
    assert_eq!(
        filter_stats(&mut con),
        (n, bytes),
        "after DEBUG RELOAD: INFO warden vs filter keys"
    );
    let v: Value = query!(&mut rc, "DEBUG", "RELOAD");
    assert!(err_of(&v).is_none(), "replica DEBUG RELOAD: {v:?}");
    assert_eq!(
        db_digest(&mut rc),
        md,
        "replica digest after its DEBUG RELOAD"
    );
    f.check_alive();

    let dbsize: i64 = query!(&mut con, "DBSIZE");
    println!(
        "fuzz: {} commands, {} errors, 0 crashes ({} blocked waits, {} unanswered, {} keys at the end, digest {md}); {:.1} s fuzzing, {:.1} s in all",
        f.sent,
        f.errors,
        f.blocked_waits,
        f.lost.len(),
        dbsize,
        fuzz_time.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    let mut top: Vec<(&String, &u64)> = f.by_message.iter().collect();
    top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    println!(
        "fuzz: {} valid calls, {} of them answered an error; most frequent errors:",
        f.valid.0, f.valid.1
    );
    for (m, n) in top.iter().take(12) {
        println!("  {n:>6}  {m}");
    }
    if !f.internal.is_empty() {
        println!(
            "fuzz: {} caught panics (ERR internal error), first: {:#?}",
            f.internal.len(),
            f.internal
        );
    }
    assert!(
        f.lost.is_empty(),
        "{} blocked DLOCK.ACQUIRE … WAIT calls never got a reply (neither a token nor nil); \
         the first ones:\n{}",
        f.lost.len(),
        f.lost.join("\n")
    );
    assert!(
        f.odd_codes.is_empty(),
        "error replies without an ERR/WRONGTYPE code: {:#?}",
        f.odd_codes
    );
    assert!(
        f.wrong_shapes.is_empty(),
        "valid calls with replies of the wrong shape: {:#?}",
        f.wrong_shapes
    );
    assert!(
        f.internal.is_empty(),
        "commands hit a panic in the module (caught, replied ERR internal error): {:#?}\nmaster log:\n{}",
        f.internal,
        f.m.log_tail(20)
    );
}

/// The fuzzer covers every command the module registers, and nothing else:
/// `COMMAND LIST FILTERBY MODULE warden` is exactly `COMMANDS`, and each has
/// its documentation and its key at argument 1 (the module's one table; DLOCK._FENCE
/// takes none).
#[test]
fn the_fuzzer_covers_every_registered_command() {
    let (_s, mut con) = Server::start_conn();
    let mut registered: Vec<String> =
        query!(&mut con, "COMMAND", "LIST", "FILTERBY", "MODULE", "warden");
    registered.sort();
    let mut known: Vec<String> = COMMANDS.iter().map(|c| c.to_lowercase()).collect();
    known.sort();
    assert_eq!(registered, known);
    for name in &known {
        let docs: Value = query!(&mut con, "COMMAND", "DOCS", name);
        let text = format!("{docs:?}");
        assert!(
            text.contains("summary") && text.contains("arguments"),
            "{name}: {text}"
        );
        let info: Value = query!(&mut con, "COMMAND", "INFO", name);
        let Value::Array(outer) = info else {
            panic!("{name}: COMMAND INFO {info:?}")
        };
        let Some(Value::Array(row)) = outer.first() else {
            panic!("{name}: COMMAND INFO {outer:?}")
        };
        let int = |i: usize| match row.get(i) {
            Some(Value::Int(n)) => *n,
            other => panic!("{name}: field {i} of COMMAND INFO is {other:?}"),
        };
        // DLOCK._FENCE alone takes no key.
        let keys = if name == "dlock._fence" { 0 } else { 1 };
        assert_eq!(
            (int(3), int(4), int(5)),
            (keys, keys, keys),
            "{name}: key positions"
        );
    }
}
