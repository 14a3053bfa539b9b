//! Numeric argument ranges (issue #10) and internal commands.
//!
//! Every numeric argument of every command has a documented range. Outside it the
//! command answers an error naming the argument (`must be …` below the range or for
//! text, `… is out of range` above it, also for integers beyond i64/u64) and changes
//! nothing; inside it the command succeeds, and no value — however large — may make the
//! module's timers stall or fire early (issue #10: a `WAIT 18445000000000000` wrapped a
//! timer's µs in signed 64-bit and blocked every later module timer until restart). After
//! every value given to a DLOCK command, a probe checks that the timers of *other* keys
//! still work: a lease end hands the lock to a waiter, and a `WAIT 100` answers nil.
//!
//! The second half checks that the internal commands (`DLOCK._SET`, `RL._SET`,
//! `BF._LOADX`) are refused from ordinary clients — directly, in MULTI/EXEC and from
//! scripts — and still applied from the master link and on AOF replay.

mod common;
use common::bloom::bf_info;
use common::dlock::*;
use common::*;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// Ranges and the values tried
// ---------------------------------------------------------------------------------------

/// 10 years in milliseconds: the longest lease, WAIT, MAXWAIT or window.
const TEN_YEARS_MS: u128 = 315_360_000_000;
/// 10 years in seconds: the longest GCRA period.
const TEN_YEARS_S: u128 = 315_360_000;
/// The largest count a rate limiter takes (burst, capacity, limit, cost, quantity).
const MAX_COUNT: u128 = 1_000_000_000_000_000;
/// The largest RL.GCRA `count`: 10^12, the largest count a rate takes.
const GCRA_MAX_COUNT: u128 = 1_000_000_000_000;
/// The largest Bloom capacity.
const MAX_BF_CAPACITY: u128 = 1_000_000_000_000;
const MAX_EXPANSION: u128 = 32_768;

const I64_MAX: &str = "9223372036854775807";
const U64_MAX: &str = "18446744073709551615";
/// The value of issue #10.
const ISSUE_10: &str = "18445000000000000";
/// An all-digit integer beyond u64.
const BEYOND_U64: &str = "99999999999999999999999999";

const BF_TOO_LARGE: &str = "ERR filter would exceed bf-max-bytes";

/// Where a value falls for a rule.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Verdict {
    /// Inside the range: the call must succeed.
    In,
    /// Below the range, or not an integer: the `must be` error.
    Below,
    /// An all-digit integer above the range: the `out of range` error.
    Above,
}

/// A documented range and its two error texts.
#[derive(Clone, Copy)]
struct Rule {
    kind: RuleKind,
    below: &'static str,
    above: &'static str,
}

#[derive(Clone, Copy)]
enum RuleKind {
    /// An integer in `min..=max`.
    Int { min: u128, max: u128 },
    /// A number strictly between 0 and 1 (a Bloom error rate).
    Fraction,
}

impl Rule {
    const fn int(min: u128, max: u128, below: &'static str, above: &'static str) -> Rule {
        Rule {
            kind: RuleKind::Int { min, max },
            below,
            above,
        }
    }

    fn verdict(&self, v: &str) -> Verdict {
        match self.kind {
            RuleKind::Int { min, max } => {
                if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                    return Verdict::Below;
                }
                match v.parse::<u128>() {
                    Ok(n) if n < min => Verdict::Below,
                    Ok(n) if n <= max => Verdict::In,
                    _ => Verdict::Above,
                }
            }
            RuleKind::Fraction => match v.parse::<f64>() {
                Ok(p) if p > 0.0 && p < 1.0 => Verdict::In,
                _ => Verdict::Below,
            },
        }
    }

    /// The error a value must get; None inside the range.
    fn error_for(&self, v: &str) -> Option<&'static str> {
        match self.verdict(v) {
            Verdict::In => None,
            Verdict::Below => Some(self.below),
            Verdict::Above => Some(self.above),
        }
    }

    /// The values tried: 0, 1, max, max+1, -1, i64::MAX, u64::MAX, an integer beyond
    /// u64, a decimal and a word, plus `extra`.
    fn values(&self, extra: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut push = |s: String| {
            if !out.contains(&s) {
                out.push(s);
            }
        };
        match self.kind {
            RuleKind::Int { max, .. } => {
                for s in ["0".to_string(), "1".to_string(), max.to_string()] {
                    push(s);
                }
                push((max + 1).to_string());
            }
            RuleKind::Fraction => {
                for s in [
                    "0",
                    "1",
                    "0.5",
                    "0.999999",
                    "1e-6",
                    "1.0000001",
                    "nan",
                    "inf",
                ] {
                    push(s.to_string());
                }
            }
        }
        for s in ["-1", I64_MAX, U64_MAX, BEYOND_U64, "1.5", "abc"] {
            push(s.to_string());
        }
        for s in extra {
            push(s.to_string());
        }
        out
    }
}

const TTL: Rule = Rule::int(
    1,
    TEN_YEARS_MS,
    "ERR ttl must be a positive integer",
    "ERR ttl is out of range",
);
const TIMEOUT: Rule = Rule::int(
    0,
    TEN_YEARS_MS,
    "ERR timeout must be a non-negative integer",
    "ERR timeout is out of range",
);
const BF_CAPACITY: Rule = Rule::int(
    1,
    MAX_BF_CAPACITY,
    "ERR capacity must be a positive integer",
    "ERR capacity is out of range",
);
const ERROR_RATE: Rule = Rule {
    kind: RuleKind::Fraction,
    below: "ERR error rate must be a number between 0 and 1",
    above: "ERR error rate must be a number between 0 and 1",
};
const EXPANSION: Rule = Rule::int(
    1,
    MAX_EXPANSION,
    "ERR expansion must be an integer from 1 to 32768",
    "ERR expansion must be an integer from 1 to 32768",
);
const BURST: Rule = Rule::int(
    0,
    MAX_COUNT,
    "ERR burst must be a non-negative integer",
    "ERR burst is out of range",
);
const COST: Rule = Rule::int(
    0,
    MAX_COUNT,
    "ERR cost must be a non-negative integer",
    "ERR cost is out of range",
);
const MAXWAIT: Rule = Rule::int(
    0,
    TEN_YEARS_MS,
    "ERR maxwait must be a non-negative integer",
    "ERR maxwait is out of range",
);
const RL_CAPACITY: Rule = Rule::int(
    1,
    MAX_COUNT,
    "ERR capacity must be a positive integer",
    "ERR capacity is out of range",
);
const LIMIT: Rule = Rule::int(
    1,
    MAX_COUNT,
    "ERR limit must be a positive integer",
    "ERR limit is out of range",
);
const WINDOW: Rule = Rule::int(
    1,
    TEN_YEARS_MS,
    "ERR window must be a positive integer",
    "ERR window is out of range",
);
const MAX_BURST: Rule = Rule::int(
    0,
    MAX_COUNT,
    "ERR max_burst must be a non-negative integer",
    "ERR max_burst is out of range",
);
const GCRA_COUNT: Rule = Rule::int(
    1,
    GCRA_MAX_COUNT,
    "ERR count must be a positive integer",
    "ERR count is out of range",
);
const PERIOD: Rule = Rule::int(
    1,
    TEN_YEARS_S,
    "ERR period must be a positive integer",
    "ERR period is out of range",
);
const QUANTITY: Rule = Rule::int(
    0,
    MAX_COUNT,
    "ERR quantity must be a non-negative integer",
    "ERR quantity is out of range",
);

// ---------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------

/// A command from its words.
fn command(words: &[String]) -> redis::Cmd {
    let mut c = cmd(&words[0]);
    for w in &words[1..] {
        c.arg(w.as_bytes());
    }
    c
}

fn words(ws: &[&str]) -> Vec<String> {
    ws.iter().map(|s| s.to_string()).collect()
}

/// Fails the test with every collected failure.
fn report(what: &str, failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{what}: {} failure(s):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// A reply, its error text, or the I/O problem (a timeout: no reply).
#[derive(Debug)]
enum Got {
    Reply(Value),
    Error(String),
    NoReply(String),
}

fn got(r: redis::RedisResult<Value>) -> Got {
    match r {
        Ok(v) => match err_of(&v) {
            Some(e) => Got::Error(e),
            None => Got::Reply(v),
        },
        Err(e) if e.is_timeout() || e.is_io_error() => Got::NoReply(e.to_string()),
        Err(e) => Got::Error(err_text(&e)),
    }
}

/// A connection whose reads time out after `read_timeout`.
fn client(server: &Server, read_timeout: Duration) -> Connection {
    let con = server.conn();
    con.set_read_timeout(Some(read_timeout))
        .expect("read timeout");
    con
}

/// Sends `c` without reading its reply.
fn send(con: &mut Connection, c: &redis::Cmd) {
    con.send_packed_command(&c.get_packed_command())
        .unwrap_or_else(|e| panic!("send {}: {e}", show(c)));
}

fn acquire_cmd(key: &str, owner: &str, ttl: &str, wait: Option<&str>) -> redis::Cmd {
    let mut c = cmd("DLOCK.ACQUIRE");
    c.arg(key).arg(owner).arg(ttl);
    if let Some(w) = wait {
        c.arg("WAIT").arg(w);
    }
    c
}

fn ints(v: &Value) -> Option<Vec<i64>> {
    match v {
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::Int(n) => Some(*n),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

fn waiting(con: &mut Connection) -> i64 {
    warden_stat(con, "locks_waiting")
}

// ---------------------------------------------------------------------------------------
// The rig: a server, and a probe of the module's timers on other keys
// ---------------------------------------------------------------------------------------

/// A client left blocked in `DLOCK.ACQUIRE … WAIT` with a huge timeout.
struct Parked {
    what: String,
    key: String,
    owner: String,
    con: Connection,
}

struct Rig {
    server: Server,
    con: Connection,
    probes: usize,
    parked: Vec<Parked>,
}

impl Rig {
    fn new() -> Rig {
        let server = Server::start();
        let con = conn_t(&server);
        Rig {
            server,
            con,
            probes: 0,
            parked: Vec::new(),
        }
    }

    /// A fresh server, after a value broke the timers of this one (so that the next
    /// values are judged on their own). Clients parked on the old one are dropped.
    fn restart(&mut self) {
        self.parked.clear();
        self.server = Server::start();
        self.con = conn_t(&self.server);
    }

    /// Runs the timer probe; on failure records it and restarts the server.
    fn check_timers(&mut self, after: &str, failures: &mut Vec<String>) {
        if let Err(e) = self.probe_timers() {
            failures.push(format!(
                "after {after}: the module's timers on other keys are broken: {e} \
                 (server restarted for the next values)"
            ));
            self.restart();
        }
    }

    /// Checks that other keys' timers work: a 200 ms lease ends and is handed to a
    /// waiter (`WAIT 5000`) within ~1 s of its end, not before; a `WAIT 100` on a held
    /// key answers nil within ~1 s, not before 100 ms. Retried with a 1000 ms lease if
    /// the waiter was not queued before the 200 ms lease ended (a slow machine).
    fn probe_timers(&mut self) -> Result<(), String> {
        for lease in [200, 1000] {
            if self.probe_once(lease)? {
                return Ok(());
            }
        }
        Err("the probe's waiter was never queued before a 1000 ms lease ended".to_string())
    }

    /// One probe; Ok(false) when the hand-off part could not be set up in time.
    fn probe_once(&mut self, lease: u64) -> Result<bool, String> {
        self.probes += 1;
        let n = self.probes;
        let held = format!("probe:held:{n}");
        let handed = format!("probe:handoff:{n}");
        if try_acquire(&mut self.con, &held, "holder", 60_000).is_none() {
            return Err(format!("{held} was not granted"));
        }
        let mut nil_con = client(&self.server, Duration::from_secs(3));
        let mut wait_con = client(&self.server, Duration::from_secs(3));
        let t0 = Instant::now();
        let Some(holder_token) = try_acquire(&mut self.con, &handed, "holder", lease as i64) else {
            return Err(format!("{handed} was not granted"));
        };
        let t1 = Instant::now();
        send(
            &mut wait_con,
            &acquire_cmd(&handed, "waiter", "10000", Some("5000")),
        );
        let nil_sent = Instant::now();
        send(
            &mut nil_con,
            &acquire_cmd(&held, "other", "1000", Some("100")),
        );
        let queued = wait_until(Duration::from_millis(lease / 2), || {
            lock_info(&mut self.con, &handed)
                .is_some_and(|i| i.owner == b"holder" && i.waiters == 1)
        });

        let nil = got(nil_con.recv_response());
        let nil_at = Instant::now();
        let handed_off = got(wait_con.recv_response());
        let handed_at = Instant::now();

        match nil {
            Got::Reply(Value::Nil) => {
                let took = nil_at - nil_sent;
                if took < Duration::from_millis(90) {
                    return Err(format!(
                        "WAIT 100 on held {held} answered nil after only {took:?}"
                    ));
                }
                if took > Duration::from_millis(1100) {
                    return Err(format!(
                        "WAIT 100 on held {held} answered nil only after {took:?}"
                    ));
                }
            }
            other => {
                return Err(format!(
                    "WAIT 100 on held {held}: expected nil within ~1 s, got {other:?}"
                ))
            }
        }
        if !queued {
            let _ = cmd("DEL")
                .arg(&handed)
                .arg(&held)
                .query::<i64>(&mut self.con);
            return Ok(false);
        }
        let lease = Duration::from_millis(lease);
        match handed_off {
            Got::Reply(Value::Int(t)) if t > holder_token => {
                if handed_at + Duration::from_millis(10) < t0 + lease {
                    return Err(format!(
                        "the waiter on {handed} got the lock {:?} after the {lease:?} lease \
                         began: before it ended",
                        handed_at - t0
                    ));
                }
                if handed_at > t1 + lease + Duration::from_millis(1000) {
                    return Err(format!(
                        "the waiter on {handed} got the lock {:?} after its {lease:?} lease \
                         began (more than 1 s after it ended)",
                        handed_at - t0
                    ));
                }
            }
            other => {
                return Err(format!(
                    "the waiter (WAIT 5000) on {handed}, behind a {lease:?} lease: expected \
                     a token above {holder_token} within ~1 s of the lease end, got {other:?}"
                ))
            }
        }
        let owner = lock_info(&mut self.con, &handed).map(|i| i.owner);
        if owner.as_deref() != Some(&b"waiter"[..]) {
            return Err(format!(
                "{handed} after the hand-off is held by {:?}, not the waiter",
                owner.map(|o| escape(&o))
            ));
        }
        let _: i64 = cmd("DEL")
            .arg(&handed)
            .arg(&held)
            .query(&mut self.con)
            .expect("DEL");
        Ok(true)
    }

    /// `DLOCK.ACQUIRE key … WAIT wait_ms` on a key someone holds must answer nil after
    /// `wait_ms` (within ~1 s), not before.
    fn wait_nil(&mut self, key: &str, wait_ms: u64) -> Result<(), String> {
        let mut c = client(&self.server, Duration::from_secs(3));
        let sent = Instant::now();
        let r = got(redis::ConnectionLike::req_command(
            &mut c,
            &acquire_cmd(key, "probe-waiter", "1000", Some(&wait_ms.to_string())),
        ));
        let took = sent.elapsed();
        match r {
            Got::Reply(Value::Nil)
                if took + Duration::from_millis(10) >= Duration::from_millis(wait_ms)
                    && took <= Duration::from_millis(wait_ms + 1000) =>
            {
                Ok(())
            }
            other => Err(format!(
                "WAIT {wait_ms} on {key}: expected nil after {wait_ms} ms (within ~1 s), \
                 got {other:?} after {took:?}"
            )),
        }
    }
}

// ---------------------------------------------------------------------------------------
// DLOCK: ttl and WAIT timeout
// ---------------------------------------------------------------------------------------

/// `DLOCK.ACQUIRE key owner ttl_ms` with ttl 0, 1, 10 years, 10 years + 1, -1, i64::MAX,
/// u64::MAX, issue #10's 18445000000000000, beyond u64, 1.5 and text: inside 1..=10 years
/// a token (PTTL ≈ ttl; a `WAIT 100` by another owner answers nil in time, so the lease
/// timer armed at ttl neither stalls nor fires early); outside, the exact error and no
/// key — also when the owner already holds the key (its lease and token unchanged).
/// After every value, the timers of other keys still work.
#[test]
fn dlock_acquire_ttl_range() {
    let mut rig = Rig::new();
    let mut failures = Vec::new();
    for (i, v) in TTL.values(&[ISSUE_10]).iter().enumerate() {
        let what = format!("DLOCK.ACQUIRE k a {v}");
        let key = format!("acq:{i}");
        let c = acquire_cmd(&key, "a", v, None);
        let reply = got(redis::ConnectionLike::req_command(&mut rig.con, &c));
        let expected = TTL.error_for(v);
        match (&reply, expected) {
            (Got::Reply(Value::Int(t)), None) if *t > 0 => {
                let ttl: i64 = v.parse().expect("an in-range ttl is an i64");
                if ttl >= 2_000 {
                    let p = pttl(&mut rig.con, &key);
                    if p > ttl || p < ttl - 2_000 {
                        failures.push(format!("{what}: PTTL is {p}, not about {ttl}"));
                    }
                    if let Err(e) = rig.wait_nil(&key, 100) {
                        failures.push(format!("{what}: {e}"));
                    }
                }
            }
            (Got::Error(e), Some(want)) if e == want => {
                if exists(&mut rig.con, &key) {
                    failures.push(format!("{what}: answered `{e}` but created the key"));
                }
            }
            (Got::Reply(Value::Int(_)), Some(want)) => {
                failures.push(format!(
                    "{what}: expected `{want}`, got a token (PTTL {})",
                    pttl(&mut rig.con, &key)
                ));
                // What issue #10 did next: a waiter arms a timer at the lease end.
                if let Err(e) = rig.wait_nil(&key, 100) {
                    failures.push(format!("{what} (accepted): {e}"));
                }
                let _: i64 = cmd("DEL").arg(&key).query(&mut rig.con).expect("DEL");
            }
            (other, want) => failures.push(format!(
                "{what}: expected {}, got {other:?}",
                want.map_or("a token".to_string(), |w| format!("`{w}`"))
            )),
        }

        // The same value from the current owner (a retry, which resets the lease).
        let held = format!("acq:held:{i}");
        let Some(token) = try_acquire(&mut rig.con, &held, "a", 60_000) else {
            failures.push(format!("{held}: not granted"));
            continue;
        };
        let before = digest(&mut rig.con, &held);
        let reply = got(redis::ConnectionLike::req_command(
            &mut rig.con,
            &acquire_cmd(&held, "a", v, None),
        ));
        match (&reply, expected) {
            (Got::Reply(Value::Int(t)), None) if *t == token => {}
            (Got::Error(e), Some(want)) if e == want => {
                if digest(&mut rig.con, &held) != before {
                    failures.push(format!(
                        "{what} by the holder: answered `{e}` but changed the lock"
                    ));
                }
            }
            (other, want) => failures.push(format!(
                "{what} by the holder (token {token}): expected {}, got {other:?}",
                want.map_or(format!("the same token {token}"), |w| format!("`{w}`"))
            )),
        }
        let _: i64 = cmd("DEL").arg(&held).query(&mut rig.con).expect("DEL");

        rig.check_timers(&what, &mut failures);
    }
    report("DLOCK.ACQUIRE ttl", failures);
}

/// `DLOCK.EXTEND key owner ttl_ms` over the same values as ACQUIRE's ttl: inside the
/// range 1 and PTTL ≈ ttl, and a `WAIT 100` on the key still answers nil in time;
/// outside it the exact error and the lock unchanged (same digest, PTTL still ≤ 10 s).
/// After every value, the timers of other keys still work.
#[test]
fn dlock_extend_ttl_range() {
    let mut rig = Rig::new();
    let mut failures = Vec::new();
    for (i, v) in TTL.values(&[ISSUE_10]).iter().enumerate() {
        let what = format!("DLOCK.EXTEND k a {v}");
        let key = format!("ext:{i}");
        if try_acquire(&mut rig.con, &key, "a", 10_000).is_none() {
            failures.push(format!("{key}: not granted"));
            continue;
        }
        let before = digest(&mut rig.con, &key);
        let c = cmd("DLOCK.EXTEND").arg(&key).arg("a").arg(v).clone();
        let reply = got(redis::ConnectionLike::req_command(&mut rig.con, &c));
        match (&reply, TTL.error_for(v)) {
            (Got::Reply(Value::Int(1)), None) => {
                let ttl: i64 = v.parse().expect("an in-range ttl is an i64");
                if ttl >= 2_000 {
                    let p = pttl(&mut rig.con, &key);
                    if p > ttl || p < ttl - 2_000 {
                        failures.push(format!("{what}: PTTL is {p}, not about {ttl}"));
                    }
                    if let Err(e) = rig.wait_nil(&key, 100) {
                        failures.push(format!("{what}: {e}"));
                    }
                }
            }
            (Got::Error(e), Some(want)) if e == want => {
                let p = pttl(&mut rig.con, &key);
                if digest(&mut rig.con, &key) != before || !(0..=10_000).contains(&p) {
                    failures.push(format!(
                        "{what}: answered `{e}` but changed the lock (PTTL now {p})"
                    ));
                }
            }
            (Got::Reply(Value::Int(1)), Some(want)) => {
                failures.push(format!(
                    "{what}: expected `{want}`, got 1 (PTTL {})",
                    pttl(&mut rig.con, &key)
                ));
                if let Err(e) = rig.wait_nil(&key, 100) {
                    failures.push(format!("{what} (accepted): {e}"));
                }
            }
            (other, want) => failures.push(format!(
                "{what}: expected {}, got {other:?}",
                want.map_or("1".to_string(), |w| format!("`{w}`"))
            )),
        }
        let _: i64 = cmd("DEL").arg(&key).query(&mut rig.con).expect("DEL");
        rig.check_timers(&what, &mut failures);
    }
    report("DLOCK.EXTEND ttl", failures);
}

/// `DLOCK.ACQUIRE key owner 1000 WAIT t` on a key held by another owner, each from its
/// own client, for t = 0, 1, 10 years, 10 years + 1, -1, i64::MAX, u64::MAX, issue #10's
/// 18445000000000000, beyond u64, 1.5 and text. `WAIT 1` answers nil within ~1 s;
/// `WAIT 0` (forever) and `WAIT` 10 years stay blocked (left so while the other values
/// run); every other value answers its exact error at once, with nothing queued and the
/// lock unchanged. After every value the timers of other keys still work, and at the end
/// releasing each key hands it to the client still blocked on it.
#[test]
fn dlock_wait_timeout_range() {
    let mut rig = Rig::new();
    let mut failures = Vec::new();
    for (i, v) in TIMEOUT.values(&[ISSUE_10]).iter().enumerate() {
        let what = format!("DLOCK.ACQUIRE k w 1000 WAIT {v}");
        let key = format!("wait:{i}");
        let owner = format!("w{i}");
        if try_acquire(&mut rig.con, &key, "holder", 120_000).is_none() {
            failures.push(format!("{key}: not granted"));
            continue;
        }
        let before = digest(&mut rig.con, &key);
        let waiting_before = waiting(&mut rig.con);
        let mut c = client(&rig.server, Duration::from_secs(3));
        let sent = Instant::now();
        send(&mut c, &acquire_cmd(&key, &owner, "1000", Some(v)));
        let expected = TIMEOUT.error_for(v);
        let stays_blocked =
            expected.is_none() && v.parse::<u64>().is_ok_and(|t| t == 0 || t > 2_000);
        if stays_blocked {
            let queued = wait_until(Duration::from_secs(2), || {
                lock_info(&mut rig.con, &key).is_some_and(|i| i.waiters == 1)
            });
            if queued {
                rig.parked.push(Parked {
                    what: what.clone(),
                    key: key.clone(),
                    owner,
                    con: c,
                });
            } else {
                let r = got(c.recv_response());
                failures.push(format!("{what}: expected to stay blocked, got {r:?}"));
            }
        } else {
            let r = got(c.recv_response());
            let took = sent.elapsed();
            match (&r, expected) {
                (Got::Reply(Value::Nil), None) if took <= Duration::from_millis(1_100) => {}
                (Got::Error(e), Some(want)) if e == want => {
                    let info = lock_info(&mut rig.con, &key);
                    let now_waiting = waiting(&mut rig.con);
                    if digest(&mut rig.con, &key) != before
                        || info.as_ref().map(|i| (i.owner.as_slice(), i.waiters))
                            != Some((&b"holder"[..], 0))
                        || now_waiting != waiting_before
                    {
                        failures.push(format!(
                            "{what}: answered `{e}` but changed something: {info:?}, \
                             locks_waiting {waiting_before} -> {now_waiting}"
                        ));
                    }
                }
                (Got::NoReply(io), Some(want)) => failures.push(format!(
                    "{what}: expected `{want}` at once, but the client blocked ({io})"
                )),
                (other, want) => failures.push(format!(
                    "{what}: expected {}, got {other:?} after {took:?}",
                    want.map_or("nil within ~1 s".to_string(), |w| format!("`{w}`"))
                )),
            }
        }
        rig.check_timers(&what, &mut failures);
    }

    // The clients still blocked get the lock when its holder releases it.
    for mut p in std::mem::take(&mut rig.parked) {
        let info = lock_info(&mut rig.con, &p.key);
        if info.as_ref().map(|i| i.waiters) != Some(1) {
            failures.push(format!(
                "{}: the waiter is no longer queued at the end: {info:?}",
                p.what
            ));
            continue;
        }
        assert_eq!(
            release(&mut rig.con, &p.key, "holder"),
            1,
            "{} release",
            p.key
        );
        match got(p.con.recv_response()) {
            Got::Reply(Value::Int(t)) if t > 0 => {
                let owner = lock_info(&mut rig.con, &p.key).map(|i| i.owner);
                if owner.as_deref() != Some(p.owner.as_bytes()) {
                    failures.push(format!(
                        "{}: released key is held by {owner:?}, not the waiter",
                        p.what
                    ));
                }
            }
            other => failures.push(format!(
                "{}: after RELEASE the waiter expected a token, got {other:?}",
                p.what
            )),
        }
    }
    report("DLOCK.ACQUIRE WAIT timeout", failures);
}

/// The longest lease: `DLOCK.ACQUIRE k a 315360000000` grants a token, PTTL is about
/// 10 years, DLOCK.INFO's ttl_ms lies between two PTTLs read around it; `DLOCK.EXTEND`
/// to 10 years does the same; a `WAIT 100` on the key answers nil in time and the key
/// stays held; the timers of other keys still work.
#[test]
fn ten_year_lease_pttl_and_info_agree() {
    let mut rig = Rig::new();
    let ten_years = TEN_YEARS_MS as i64;
    let token = try_acquire(&mut rig.con, "k", "a", ten_years).expect("a 10-year lease");
    assert!(token > 0);
    for step in ["ACQUIRE", "EXTEND"] {
        if step == "EXTEND" {
            assert_eq!(
                extend(&mut rig.con, "k", "a", ten_years),
                1,
                "EXTEND 10 years"
            );
        }
        let p1 = pttl(&mut rig.con, "k");
        let info = lock_info(&mut rig.con, "k").expect("held");
        let p2 = pttl(&mut rig.con, "k");
        assert!(
            p1 <= ten_years && p2 >= ten_years - 2_000,
            "after {step}: PTTL {p1}/{p2} is not about {ten_years}"
        );
        assert!(
            p1 >= info.ttl_ms && info.ttl_ms >= p2,
            "after {step}: DLOCK.INFO ttl_ms {} is not between PTTLs {p1} and {p2}",
            info.ttl_ms
        );
        assert_eq!((info.owner.as_slice(), info.token), (&b"a"[..], token));
    }
    rig.wait_nil("k", 100).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        lock_info(&mut rig.con, "k").map(|i| (i.owner, i.waiters)),
        Some((b"a".to_vec(), 0)),
        "the lock after a waiter timed out"
    );
    rig.probe_timers()
        .unwrap_or_else(|e| panic!("timers of other keys after a 10-year lease: {e}"));
}

/// The longest WAIT: `DLOCK.ACQUIRE k w 1000 WAIT 315360000000` on a held key blocks
/// (it is queued, counted in locks_waiting and still blocked after the timers of other
/// keys were exercised), and releasing the key hands it to that client: its reply is a
/// token above the holder's, and DLOCK.INFO shows it as the owner.
#[test]
fn ten_year_wait_stays_blocked_until_release() {
    let mut rig = Rig::new();
    let holder = try_acquire(&mut rig.con, "k", "holder", 60_000).expect("held");
    let mut w = client(&rig.server, Duration::from_secs(5));
    let id: i64 = cmd("CLIENT").arg("ID").query(&mut w).expect("CLIENT ID");
    send(
        &mut w,
        &acquire_cmd("k", "w", "1000", Some(&TEN_YEARS_MS.to_string())),
    );
    assert!(
        wait_until(Duration::from_secs(2), || lock_info(&mut rig.con, "k")
            .is_some_and(|i| i.waiters == 1)),
        "WAIT 315360000000 on a held key is not queued"
    );
    assert_eq!(waiting(&mut rig.con), 1, "locks_waiting");
    rig.probe_timers()
        .unwrap_or_else(|e| panic!("timers of other keys during a 10-year WAIT: {e}"));
    let list: String = cmd("CLIENT")
        .arg("LIST")
        .arg("ID")
        .arg(id)
        .query(&mut rig.con)
        .expect("CLIENT LIST");
    assert!(
        list.contains("flags=b"),
        "the 10-year waiter is no longer blocked: {list}"
    );
    assert_eq!(
        lock_info(&mut rig.con, "k").map(|i| (i.owner, i.waiters)),
        Some((b"holder".to_vec(), 1))
    );
    assert_eq!(release(&mut rig.con, "k", "holder"), 1);
    match got(w.recv_response()) {
        Got::Reply(Value::Int(t)) => assert!(t > holder, "token {t} after {holder}"),
        other => panic!("the 10-year waiter expected a token after RELEASE, got {other:?}"),
    }
    assert_eq!(
        lock_info(&mut rig.con, "k").map(|i| i.owner),
        Some(b"w".to_vec())
    );
    assert_eq!(waiting(&mut rig.con), 0, "locks_waiting after the hand-off");
}

// ---------------------------------------------------------------------------------------
// BF and RL: one table
// ---------------------------------------------------------------------------------------

/// The reply a successful call has.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Ok,
    /// An array of this many 0/1 integers.
    Items(usize),
    /// allowed, remaining, wait_ms, reset_ms.
    Four,
    /// limited, limit, remaining, retry_after_s, reset_after_s.
    Five,
}

fn check_shape(shape: Shape, v: &Value) -> Result<(), String> {
    let ok = match shape {
        Shape::Ok => matches!(v, Value::Okay) || matches!(v, Value::SimpleString(s) if s == "OK"),
        Shape::Items(n) => {
            ints(v).is_some_and(|x| x.len() == n && x.iter().all(|i| *i == 0 || *i == 1))
        }
        Shape::Four => ints(v).is_some_and(|x| {
            x.len() == 4 && (x[0] == 0 || x[0] == 1) && x[1] >= 0 && x[2] >= -1 && x[3] >= 0
        }),
        Shape::Five => ints(v).is_some_and(|x| {
            x.len() == 5
                && (x[0] == 0 || x[0] == 1)
                && x[1] >= 0
                && x[2] >= 0
                && x[3] >= -1
                && x[4] >= -1
        }),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("expected a {shape:?} reply, got {v:?}"))
    }
}

/// Checks on a successful reply: (connection, key, value, reply).
type Post = fn(&mut Connection, &str, &str, &Value) -> Result<(), String>;

/// One (command, argument) row: how to build a call around a value.
struct Row {
    what: &'static str,
    rule: Rule,
    call: fn(&str, &str) -> Vec<String>,
    shape: Shape,
    /// Errors acceptable inside the range (where the table allows one).
    in_range_errors: &'static [&'static str],
    /// A valid call creating the key, to check that an erroring call on an existing
    /// key changes nothing.
    seed: Option<fn(&str) -> Vec<String>>,
    post: Option<Post>,
}

fn n(v: &str) -> u128 {
    v.parse().expect("an in-range value is an integer")
}

fn four(r: &Value) -> [i64; 4] {
    let x = ints(r).expect("four integers");
    [x[0], x[1], x[2], x[3]]
}

/// A limiter with room 100 hit with cost `v` on a fresh key.
fn cost_of_100(v: &str, r: &Value) -> Result<(), String> {
    let [allowed, remaining, wait, _] = four(r);
    let c = n(v);
    let ok = if c <= 100 {
        allowed == 1 && remaining as u128 == 100 - c && wait == 0
    } else {
        allowed == 0 && wait == -1
    };
    if ok {
        Ok(())
    } else {
        Err(format!("cost {v} against room 100: got {r:?}"))
    }
}

/// Allowed, with `room - 1` remaining.
fn allowed_one_of(room: u128, r: &Value) -> Result<(), String> {
    let [allowed, remaining, wait, _] = four(r);
    if allowed == 1 && remaining as u128 == room - 1 && wait == 0 {
        Ok(())
    } else {
        Err(format!(
            "one event against room {room}: expected [1, {}, 0, _], got {r:?}",
            room - 1
        ))
    }
}

fn gcra_allowed(max_burst: u128, r: &Value) -> Result<(), String> {
    let x = ints(r).expect("five integers");
    if x[0] == 0 && x[1] as u128 == max_burst + 1 && x[2] as u128 == max_burst {
        Ok(())
    } else {
        Err(format!(
            "first request with max_burst {max_burst}: expected [0, {}, {max_burst}, …], got {r:?}",
            max_burst + 1
        ))
    }
}

fn bf_capacity_is(con: &mut Connection, key: &str, v: &str, _: &Value) -> Result<(), String> {
    let got = bf_info(con, key).capacity;
    (got as u128 == n(v))
        .then_some(())
        .ok_or(format!("BF.INFOX Capacity is {got}, not {v}"))
}

fn bf_expansion_is(con: &mut Connection, key: &str, v: &str, _: &Value) -> Result<(), String> {
    let got = bf_info(con, key).expansion;
    (got.map(|e| e as u128) == Some(n(v)))
        .then_some(())
        .ok_or(format!("BF.INFOX Expansion rate is {got:?}, not {v}"))
}

fn bf_error_rate_is(con: &mut Connection, key: &str, v: &str, _: &Value) -> Result<(), String> {
    let want: f64 = v.parse().expect("a number");
    let got = bf_info(con, key).error_rate;
    ((got - want).abs() <= want * 1e-9)
        .then_some(())
        .ok_or(format!("BF.INFOX Error rate is {got}, not {v}"))
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            what: "BF.RESERVEX capacity",
            rule: BF_CAPACITY,
            call: |k, v| words(&["BF.RESERVEX", k, "0.01", v]),
            shape: Shape::Ok,
            in_range_errors: &[BF_TOO_LARGE],
            seed: None,
            post: Some(bf_capacity_is),
        },
        Row {
            what: "BF.INSERTX CAPACITY",
            rule: BF_CAPACITY,
            call: |k, v| words(&["BF.INSERTX", k, "CAPACITY", v, "ITEMS", "a"]),
            shape: Shape::Items(1),
            in_range_errors: &[BF_TOO_LARGE],
            seed: Some(|k| words(&["BF.INSERTX", k, "ITEMS", "seed"])),
            post: Some(bf_capacity_is),
        },
        Row {
            what: "BF.RESERVEX error_rate",
            rule: ERROR_RATE,
            call: |k, v| words(&["BF.RESERVEX", k, v, "100"]),
            shape: Shape::Ok,
            in_range_errors: &[],
            seed: None,
            post: Some(bf_error_rate_is),
        },
        Row {
            what: "BF.INSERTX ERROR",
            rule: ERROR_RATE,
            call: |k, v| words(&["BF.INSERTX", k, "ERROR", v, "ITEMS", "a"]),
            shape: Shape::Items(1),
            in_range_errors: &[],
            seed: Some(|k| words(&["BF.INSERTX", k, "ITEMS", "seed"])),
            post: Some(bf_error_rate_is),
        },
        Row {
            what: "BF.RESERVEX EXPANSION",
            rule: EXPANSION,
            call: |k, v| words(&["BF.RESERVEX", k, "0.01", "100", "EXPANSION", v]),
            shape: Shape::Ok,
            in_range_errors: &[],
            seed: None,
            post: Some(bf_expansion_is),
        },
        Row {
            what: "BF.INSERTX EXPANSION",
            rule: EXPANSION,
            call: |k, v| words(&["BF.INSERTX", k, "EXPANSION", v, "ITEMS", "a"]),
            shape: Shape::Items(1),
            in_range_errors: &[],
            seed: Some(|k| words(&["BF.INSERTX", k, "ITEMS", "seed"])),
            post: Some(bf_expansion_is),
        },
        Row {
            what: "RL.TOKEN burst",
            rule: BURST,
            call: |k, v| words(&["RL.TOKEN", k, "10", v]),
            shape: Shape::Four,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.TOKEN", k, "10", "5"])),
            post: Some(|_, _, v, r| {
                if n(v) == 0 {
                    let [allowed, _, wait, _] = four(r);
                    (allowed == 0 && wait == -1)
                        .then_some(())
                        .ok_or(format!("burst 0: expected [0, 0, -1, _], got {r:?}"))
                } else {
                    allowed_one_of(n(v), r)
                }
            }),
        },
        Row {
            what: "RL.TOKEN COST",
            rule: COST,
            call: |k, v| words(&["RL.TOKEN", k, "10", "100", "COST", v]),
            shape: Shape::Four,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.TOKEN", k, "10", "100"])),
            post: Some(|con, k, v, r| {
                cost_of_100(v, r)?;
                if n(v) == 0 && exists(con, k) {
                    return Err("COST 0 created the key".to_string());
                }
                Ok(())
            }),
        },
        Row {
            what: "RL.TOKEN MAXWAIT",
            rule: MAXWAIT,
            call: |k, v| words(&["RL.TOKEN", k, "10", "100", "MAXWAIT", v]),
            shape: Shape::Four,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.TOKEN", k, "10", "100"])),
            post: Some(|_, _, _, r| allowed_one_of(100, r)),
        },
        Row {
            what: "RL.LEAKY capacity",
            rule: RL_CAPACITY,
            call: |k, v| words(&["RL.LEAKY", k, "10", v]),
            shape: Shape::Four,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.LEAKY", k, "10", "5"])),
            post: Some(|_, _, v, r| allowed_one_of(n(v), r)),
        },
        Row {
            what: "RL.LEAKY COST",
            rule: COST,
            call: |k, v| words(&["RL.LEAKY", k, "10", "100", "COST", v]),
            shape: Shape::Four,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.LEAKY", k, "10", "100"])),
            post: Some(|con, k, v, r| {
                cost_of_100(v, r)?;
                if n(v) == 0 && exists(con, k) {
                    return Err("COST 0 created the key".to_string());
                }
                Ok(())
            }),
        },
        Row {
            what: "RL.WINDOW limit",
            rule: LIMIT,
            call: |k, v| words(&["RL.WINDOW", k, v, "1000"]),
            shape: Shape::Four,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.WINDOW", k, "5", "1000"])),
            post: Some(|_, _, v, r| allowed_one_of(n(v), r)),
        },
        Row {
            what: "RL.WINDOW window_ms",
            rule: WINDOW,
            call: |k, v| words(&["RL.WINDOW", k, "100", v]),
            shape: Shape::Four,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.WINDOW", k, "100", "1000"])),
            post: Some(|_, _, _, r| allowed_one_of(100, r)),
        },
        Row {
            what: "RL.WINDOW COST",
            rule: COST,
            call: |k, v| words(&["RL.WINDOW", k, "100", "1000", "COST", v]),
            shape: Shape::Four,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.WINDOW", k, "100", "1000"])),
            post: Some(|con, k, v, r| {
                cost_of_100(v, r)?;
                if n(v) == 0 && exists(con, k) {
                    return Err("COST 0 created the key".to_string());
                }
                Ok(())
            }),
        },
        Row {
            what: "RL.GCRA max_burst",
            rule: MAX_BURST,
            call: |k, v| words(&["RL.GCRA", k, v, "10", "60"]),
            shape: Shape::Five,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.GCRA", k, "15", "10", "60"])),
            post: Some(|_, _, v, r| gcra_allowed(n(v), r)),
        },
        Row {
            what: "RL.GCRA count",
            rule: GCRA_COUNT,
            call: |k, v| words(&["RL.GCRA", k, "15", v, "60"]),
            shape: Shape::Five,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.GCRA", k, "15", "10", "60"])),
            post: Some(|_, _, _, r| gcra_allowed(15, r)),
        },
        Row {
            what: "RL.GCRA period",
            rule: PERIOD,
            call: |k, v| words(&["RL.GCRA", k, "15", "10", v]),
            shape: Shape::Five,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.GCRA", k, "15", "10", "60"])),
            post: Some(|_, _, _, r| gcra_allowed(15, r)),
        },
        Row {
            what: "RL.GCRA QUANTITY",
            rule: QUANTITY,
            call: |k, v| words(&["RL.GCRA", k, "15", "10", "60", "QUANTITY", v]),
            shape: Shape::Five,
            in_range_errors: &[],
            seed: Some(|k| words(&["RL.GCRA", k, "15", "10", "60"])),
            post: Some(|_, _, v, r| {
                let x = ints(r).expect("five integers");
                let limited = i64::from(n(v) > 16);
                (x[0] == limited && x[1] == 16).then_some(()).ok_or(format!(
                    "QUANTITY {v} against limit 16: expected [{limited}, 16, …], got {r:?}"
                ))
            }),
        },
    ]
}

/// Runs every value of every row whose name starts with one of `prefixes`.
fn run_rows(prefixes: &[&str]) -> Vec<String> {
    let server = Server::start();
    let mut con = conn_t(&server);
    let mut failures = Vec::new();
    let mut k = 0;
    for row in rows()
        .into_iter()
        .filter(|r| prefixes.iter().any(|p| r.what.starts_with(p)))
    {
        for v in row.rule.values(&[]) {
            k += 1;
            let key = format!("key:{k}");
            let c = command(&(row.call)(&key, &v));
            let what = format!("{} {v}: {}", row.what, show(&c));
            let reply = got(redis::ConnectionLike::req_command(&mut con, &c));
            match (reply, row.rule.error_for(&v)) {
                (Got::Reply(r), None) => {
                    if let Err(e) = check_shape(row.shape, &r) {
                        failures.push(format!("{what}: {e}"));
                    } else if let Some(post) = row.post {
                        if let Err(e) = post(&mut con, &key, &v, &r) {
                            failures.push(format!("{what}: {e}"));
                        }
                    }
                }
                (Got::Error(e), None) if row.in_range_errors.contains(&e.as_str()) => {
                    if exists(&mut con, &key) {
                        failures.push(format!("{what}: answered `{e}` but created the key"));
                    }
                }
                (Got::Error(e), None) => failures.push(format!(
                    "{what}: in range, but answered `{e}` (BUG: an in-range value refused)"
                )),
                (Got::Error(e), Some(want)) if e == want => {
                    if exists(&mut con, &key) {
                        failures.push(format!("{what}: answered `{e}` but created the key"));
                    }
                }
                (other, Some(want)) => {
                    failures.push(format!("{what}: expected `{want}`, got {other:?}"));
                    let _: i64 = cmd("DEL").arg(&key).query(&mut con).expect("DEL");
                }
                (other, None) => failures.push(format!("{what}: expected a reply, got {other:?}")),
            }

            // An existing key must come out of an erroring call unchanged.
            let (Some(seed), Some(want)) = (row.seed, row.rule.error_for(&v)) else {
                continue;
            };
            let existing = format!("key:{k}:existing");
            let seed = command(&seed(&existing));
            if let Some(e) = err_of(&raw(&mut con, &seed)) {
                failures.push(format!("{}: seed call failed: {e}", show(&seed)));
                continue;
            }
            let before = digest(&mut con, &existing);
            let before_ttl = pttl(&mut con, &existing);
            let c = command(&(row.call)(&existing, &v));
            let reply = got(redis::ConnectionLike::req_command(&mut con, &c));
            let after = digest(&mut con, &existing);
            let after_ttl = pttl(&mut con, &existing);
            match reply {
                Got::Error(e) if e == want => {
                    if after != before || after_ttl > before_ttl {
                        failures.push(format!(
                            "{} on an existing key: answered `{e}` but changed it \
                             (PTTL {before_ttl} -> {after_ttl})",
                            show(&c)
                        ));
                    }
                }
                other => failures.push(format!(
                    "{} on an existing key: expected `{want}`, got {other:?}",
                    show(&c)
                )),
            }
        }
    }
    failures
}

/// BF.RESERVEX / BF.INSERTX capacity (1..=1e12), error rate (0 < e < 1) and EXPANSION
/// (1..=32768), each at 0, 1, max, max+1, -1, i64::MAX, u64::MAX, beyond u64, 1.5 and
/// text (error rates also at 0.5, 0.999999, 1e-6, 1.0000001, nan, inf): inside the range
/// OK / one 0-1 entry and BF.INFOX shows the value (capacity 1e12 may answer
/// `filter would exceed bf-max-bytes` instead, creating nothing); outside it the exact
/// error, no key created, and an existing filter unchanged (BF.INSERTX).
#[test]
fn bloom_argument_ranges() {
    report("BF ranges", run_rows(&["BF."]));
}

/// RL.TOKEN burst / COST / MAXWAIT and RL.LEAKY capacity / COST at 0, 1, max, max+1,
/// -1, i64::MAX, u64::MAX, beyond u64, 1.5 and text: inside the range four integers
/// with the expected decision (a full bucket of `burst` passes one event leaving
/// burst−1; a cost above the room is denied with wait −1; COST 0 creates no key);
/// outside it the exact error naming the argument, no key created, and an existing
/// limiter unchanged (same digest, PTTL not extended).
#[test]
fn token_and_leaky_argument_ranges() {
    report(
        "RL.TOKEN / RL.LEAKY ranges",
        run_rows(&["RL.TOKEN", "RL.LEAKY"]),
    );
}

/// RL.WINDOW limit / window_ms / COST and RL.GCRA max_burst / count / period /
/// QUANTITY over the same values: inside the range the expected decision (four integers;
/// GCRA's five like CL.THROTTLE: not limited, limit max_burst+1, remaining max_burst);
/// outside it the exact error naming the argument, no key created, and an existing
/// limiter unchanged.
#[test]
fn window_and_gcra_argument_ranges() {
    report(
        "RL.WINDOW / RL.GCRA ranges",
        run_rows(&["RL.WINDOW", "RL.GCRA"]),
    );
}

/// Every rate-limiter argument at its maximum in one call, with a fast (10/s) and a slow
/// (1/d; GCRA: 1 per 10 years) rate, and a second call on the state that stored: each
/// answers a well-formed reply, and a key that exists expires at its reported reset_ms
/// (PTTL within 1 s of it). `ERR rate limiter arithmetic would overflow` is accepted
/// only for the two calls whose exact reset (10^15 events at one a day: 8.64e22 ms)
/// cannot be an i64 of milliseconds — and then no key may exist — while a slow call
/// whose reset fits (10^6 events at one a day) must succeed.
#[test]
fn rate_limiters_take_every_maximum_at_once() {
    const OVERFLOW: &str = "ERR rate limiter arithmetic would overflow";
    let server = Server::start();
    let mut con = conn_t(&server);
    let max = MAX_COUNT.to_string();
    let count = GCRA_MAX_COUNT.to_string();
    let ten_years = TEN_YEARS_MS.to_string();
    let period = TEN_YEARS_S.to_string();
    // (call, reply shape, whether the overflow error is acceptable)
    let calls: Vec<(Vec<String>, Shape, bool)> = vec![
        (
            words(&[
                "RL.TOKEN", "t", "10", &max, "COST", &max, "MAXWAIT", &ten_years,
            ]),
            Shape::Four,
            false,
        ),
        (
            words(&[
                "RL.TOKEN", "t1", "1/d", &max, "COST", &max, "MAXWAIT", &ten_years,
            ]),
            Shape::Four,
            true,
        ),
        (
            words(&[
                "RL.TOKEN", "t2", "1/d", "1000000", "COST", "1000000", "MAXWAIT", &ten_years,
            ]),
            Shape::Four,
            false,
        ),
        (
            words(&["RL.LEAKY", "l", "10", &max, "COST", &max]),
            Shape::Four,
            false,
        ),
        (
            words(&["RL.LEAKY", "l1", "1/d", &max, "COST", &max]),
            Shape::Four,
            true,
        ),
        (
            words(&["RL.LEAKY", "l2", "1/d", "1000000", "COST", "1000000"]),
            Shape::Four,
            false,
        ),
        (
            words(&["RL.WINDOW", "w", &max, &ten_years, "COST", &max]),
            Shape::Four,
            false,
        ),
        (
            words(&["RL.GCRA", "g", &max, &count, &period, "QUANTITY", &max]),
            Shape::Five,
            false,
        ),
        (
            words(&["RL.GCRA", "g1", &max, "1", &period, "QUANTITY", "1"]),
            Shape::Five,
            false,
        ),
    ];
    let mut failures = Vec::new();
    for (call, shape, overflow_ok) in &calls {
        for round in ["first", "second"] {
            let c = command(call);
            let mut reply = None;
            match got(redis::ConnectionLike::req_command(&mut con, &c)) {
                Got::Reply(r) => {
                    if let Err(e) = check_shape(*shape, &r) {
                        failures.push(format!("{} ({round} call): {e}", show(&c)));
                    }
                    reply = Some(r);
                }
                Got::Error(e) if *overflow_ok && e == OVERFLOW => {
                    if exists(&mut con, &call[1]) {
                        failures.push(format!(
                            "{} ({round} call): answered `{e}` but the key exists",
                            show(&c)
                        ));
                    }
                }
                other => failures.push(format!(
                    "{} ({round} call): in range, expected a reply, got {other:?}",
                    show(&c)
                )),
            }
            // A limiter key expires when it is full again: at reset_ms.
            let p = pttl(&mut con, &call[1]);
            if let Some([_, _, _, reset]) = reply
                .as_ref()
                .and_then(ints)
                .and_then(|x| <[i64; 4]>::try_from(x).ok())
            {
                if p != -2 && (p - reset).abs() > 1_000 {
                    failures.push(format!(
                        "{} ({round} call): PTTL {p} is not reset_ms {reset}",
                        show(&c)
                    ));
                }
            }
        }
    }
    report("rate limiters at their maxima", failures);
}

// ---------------------------------------------------------------------------------------
// Internal commands
// ---------------------------------------------------------------------------------------

/// Waits for a BGREWRITEAOF started now to finish successfully.
fn bgrewriteaof(server: &Server) {
    let mut con = server.conn();
    let field = |con: &mut Connection, f: &str| info_field(con, "persistence", f);
    let idle = |con: &mut Connection| {
        field(con, "aof_rewrite_in_progress").as_deref() == Some("0")
            && field(con, "aof_rewrite_scheduled").as_deref() == Some("0")
    };
    assert!(wait_until(Duration::from_secs(20), || idle(&mut con)));
    let _: Value = cmd("BGREWRITEAOF").query(&mut con).expect("BGREWRITEAOF");
    assert!(
        wait_until(Duration::from_secs(20), || idle(&mut con)),
        "AOF rewrite did not finish"
    );
    assert_eq!(
        field(&mut con, "aof_last_bgrewrite_status").as_deref(),
        Some("ok"),
        "AOF rewrite failed; log:\n{}",
        server.log_tail(20)
    );
}

/// The commands in the server's base AOF files (RESP arrays of bulk strings).
fn base_aof_commands(server: &Server) -> Vec<Vec<Vec<u8>>> {
    let dir = server.dir.join("appendonlydir");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("appendonlydir") {
        let path = entry.expect("dir entry").path();
        if !path.to_string_lossy().ends_with(".base.aof") {
            continue;
        }
        let data = std::fs::read(&path).expect("read AOF");
        let mut at = 0;
        let line = |at: &mut usize| -> Option<&[u8]> {
            let end = data[*at..].windows(2).position(|w| w == b"\r\n")? + *at;
            let l = &data[*at..end];
            *at = end + 2;
            Some(l)
        };
        while at < data.len() {
            let header = line(&mut at).expect("AOF line");
            let count: usize = std::str::from_utf8(header.strip_prefix(b"*").expect("array"))
                .expect("utf8")
                .parse()
                .expect("count");
            let mut parts = Vec::with_capacity(count);
            for _ in 0..count {
                let len: usize = std::str::from_utf8(
                    line(&mut at).expect("bulk").strip_prefix(b"$").expect("$"),
                )
                .expect("utf8")
                .parse()
                .expect("len");
                parts.push(data[at..at + len].to_vec());
                at += len + 2;
            }
            out.push(parts);
        }
    }
    out
}

fn name_of(c: &[Vec<u8>]) -> String {
    String::from_utf8_lossy(&c[0]).to_ascii_lowercase()
}

fn is_internal(c: &[Vec<u8>]) -> bool {
    matches!(name_of(c).as_str(), "dlock._set" | "rl._set" | "bf._loadx")
}

fn bytes_command(parts: &[Vec<u8>]) -> redis::Cmd {
    let mut c = redis::Cmd::new();
    for p in parts {
        c.arg(p.as_slice());
    }
    c
}

/// The keys `populate` makes, sorted.
const POPULATED: [&str; 11] = [
    "bf:fixed",
    "bf:insert",
    "bf:plain",
    "lock:handed",
    "lock:long",
    "lock:plain",
    "rl:debt",
    "rl:gcra",
    "rl:leaky",
    "rl:token",
    "rl:window",
];

/// Locks, limiters and filters in every form the module knows, with extreme values
/// inside the ranges (a 10-year lease, a 1e15 burst, a two-layer filter, a hand-off).
fn populate(server: &Server) {
    let mut con = conn_t(server);
    let ten_years = TEN_YEARS_MS as i64;
    try_acquire(&mut con, "lock:long", "a", ten_years).expect("10-year lock");
    try_acquire(&mut con, "lock:plain", "b", 600_000).expect("lock");
    assert_eq!(extend(&mut con, "lock:plain", "b", 900_000), 1);
    // A hand-off: its state is written by the module, not by a client's command.
    try_acquire(&mut con, "lock:handed", "first", 600_000).expect("lock");
    let (_, waiter) = spawn_waiter(server, b"lock:handed", b"second", 600_000, 10_000);
    wait_waiting(&mut con, 1);
    assert_eq!(release(&mut con, "lock:handed", "first"), 1);
    granted(waiter, "hand-off");
    let max = MAX_COUNT.to_string();
    for c in [
        words(&["RL.TOKEN", "rl:token", "1/h", &max, "COST", "7"]),
        words(&["RL.TOKEN", "rl:debt", "1/h", "1", "COST", "1"]),
        words(&[
            "RL.TOKEN",
            "rl:debt",
            "1/h",
            "1",
            "MAXWAIT",
            &TEN_YEARS_MS.to_string(),
        ]),
        words(&["RL.LEAKY", "rl:leaky", "1/h", "100", "COST", "40"]),
        words(&[
            "RL.WINDOW",
            "rl:window",
            "1000",
            &TEN_YEARS_MS.to_string(),
            "COST",
            "3",
        ]),
        words(&["RL.GCRA", "rl:gcra", "15", "30", "3600", "QUANTITY", "2"]),
        words(&["BF.RESERVEX", "bf:plain", "0.01", "100"]),
        words(&["BF.RESERVEX", "bf:fixed", "0.001", "50", "NONSCALING"]),
        words(&[
            "BF.INSERTX",
            "bf:insert",
            "CAPACITY",
            "10",
            "ERROR",
            "0.1",
            "EXPANSION",
            "3",
            "ITEMS",
            "x",
            "y",
        ]),
    ] {
        let c = command(&c);
        if let Some(e) = err_of(&raw(&mut con, &c)) {
            panic!("{}: {e}", show(&c));
        }
    }
    // Enough items to grow a second layer.
    let mut c = cmd("BF.MADDX");
    c.arg("bf:plain");
    for i in 0..250 {
        c.arg(format!("item{i}"));
    }
    let added: Vec<i64> = c.query(&mut con).expect("BF.MADDX");
    assert_eq!(added.len(), 250);
    assert!(
        bf_info(&mut con, "bf:plain").filters >= 2,
        "bf:plain has grown"
    );
}

/// The expected refusal of an internal command.
fn internal_error(c: &[Vec<u8>]) -> String {
    format!("ERR {} is an internal command", name_of(c))
}

/// The three internal commands from ordinary clients — hand-written forms
/// (`DLOCK._SET k m 5:1:99999999999999`, a forged top token, `RL._SET k <junk>`, a
/// `BF._LOADX k LAYER …`) and every internal command a real AOF rewrite wrote, both on
/// their own keys and on fresh keys — answer exactly `ERR <name> is an internal
/// command`, directly, inside MULTI/EXEC, from EVAL's `redis.pcall` (the same text) and
/// `redis.call` (that text, plus Redis's script suffix); `BF._LOADX k anything` (below
/// its declared arity) answers that or Redis's arity error. Afterwards no fresh key
/// exists, the dataset digest is the one before, and a lock on another key is still
/// granted.
#[test]
fn internal_commands_are_refused_from_clients() {
    let server = Server::start_with(
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
        &[],
    );
    populate(&server);
    bgrewriteaof(&server);
    let from_aof: Vec<Vec<Vec<u8>>> = base_aof_commands(&server)
        .into_iter()
        .filter(|c| is_internal(c))
        .collect();
    let names: BTreeSet<String> = from_aof.iter().map(|c| name_of(c)).collect();
    assert_eq!(
        names,
        ["bf._loadx", "dlock._set", "rl._set"]
            .map(String::from)
            .into(),
        "internal commands in the rewritten AOF"
    );

    let b = |ws: &[&str]| ws.iter().map(|w| w.as_bytes().to_vec()).collect::<Vec<_>>();
    let mut forms: Vec<Vec<Vec<u8>>> = vec![
        b(&["DLOCK._SET", "k", "m", "5:1:99999999999999"]),
        b(&[
            "DLOCK._SET",
            "k",
            "m",
            "9223372036854775806:1:99999999999999",
        ]),
        b(&["RL._SET", "k", "anything"]),
        b(&["RL._SET", "k", "1:1:1:1:1:99999999999999"]),
        b(&[
            "BF._LOADX",
            "k",
            "LAYER",
            "0.01",
            "2",
            "0",
            "100",
            "0.005",
            "8",
            "0",
            "1024",
        ]),
    ];
    forms.extend(from_aof.iter().cloned());
    for (i, f) in from_aof.iter().enumerate() {
        let mut fresh = f.clone();
        fresh[1] = format!("forged:{i}").into_bytes();
        forms.push(fresh);
    }

    let mut con = conn_t(&server);
    let digest_before = db_digest(&mut con);
    let keys_before: i64 = cmd("DBSIZE").query(&mut con).expect("DBSIZE");
    let mut failures = Vec::new();
    for f in &forms {
        let want = internal_error(f);
        let c = bytes_command(f);
        let shown = show(&c);

        // Directly.
        match got(redis::ConnectionLike::req_command(&mut con, &c)) {
            Got::Error(e) if e == want => {}
            other => failures.push(format!("{shown}: expected `{want}`, got {other:?}")),
        }

        // Inside MULTI/EXEC.
        let _: () = cmd("MULTI").query(&mut con).expect("MULTI");
        match raw(&mut con, &c) {
            Value::SimpleString(s) if s == "QUEUED" => {}
            Value::Okay => {}
            other => failures.push(format!("{shown} in MULTI: not queued: {other:?}")),
        }
        match raw(&mut con, &cmd("EXEC")) {
            Value::Array(items)
                if items.len() == 1 && err_of(&items[0]).as_deref() == Some(want.as_str()) => {}
            other => failures.push(format!(
                "MULTI {shown} EXEC: expected [`{want}`], got {other:?}"
            )),
        }

        // From a script, with call and pcall.
        for (lua, exact) in [
            ("return redis.pcall(unpack(ARGV))", true),
            ("return redis.call(unpack(ARGV))", false),
        ] {
            let mut e = cmd("EVAL");
            e.arg(lua).arg(1).arg(f[1].as_slice());
            for p in f {
                e.arg(p.as_slice());
            }
            match got(redis::ConnectionLike::req_command(&mut con, &e)) {
                Got::Error(text)
                    if text == want
                        || (!exact
                            && text
                                .strip_prefix(want.as_str())
                                .is_some_and(|rest| rest.starts_with(" script:"))) => {}
                other => failures.push(format!(
                    "EVAL \"{lua}\" with {shown}: expected `{want}`, got {other:?}"
                )),
            }
        }
    }
    // `BF._LOADX k anything` has fewer arguments than the arity BF._LOADX declares
    // (-6), so Redis may answer its own arity error before the module sees the call;
    // either refusal is accepted (and nothing may change, checked below).
    let short = cmd("BF._LOADX").arg("k").arg("anything").clone();
    let arity = "ERR wrong number of arguments for 'bf._loadx' command";
    match got(redis::ConnectionLike::req_command(&mut con, &short)) {
        Got::Error(e) if e == "ERR bf._loadx is an internal command" || e == arity => {}
        other => failures.push(format!(
            "{}: expected `ERR bf._loadx is an internal command` (or the arity error), \
             got {other:?}",
            show(&short)
        )),
    }
    for i in 0..from_aof.len() {
        if exists(&mut con, format!("forged:{i}")) {
            failures.push(format!(
                "forged:{i} exists: a refused internal command created it"
            ));
        }
    }
    if exists(&mut con, "k") {
        failures.push("key k exists: a refused internal command created it".to_string());
    }
    let keys_after: i64 = cmd("DBSIZE").query(&mut con).expect("DBSIZE");
    if keys_after != keys_before || db_digest(&mut con) != digest_before {
        failures.push(format!(
            "the dataset changed ({keys_before} keys -> {keys_after}, digest differs: {})",
            db_digest(&mut con) != digest_before
        ));
    }
    match try_acquire(&mut con, "another", "me", 10_000) {
        Some(t) if t > 0 => {}
        other => failures.push(format!("a lock on another key afterwards: {other:?}")),
    }
    report("internal commands from clients", failures);
}

/// A replica of a master that took locks (a 10-year lease, an extension, a hand-off),
/// limited (every RL family, a 1e15 burst, a reservation in debt) and added to filters
/// (a two-layer one) applies every `DLOCK._SET` / `RL._SET` it gets from the master
/// link: it stays up (propagation errors panic it), and its DBSIZE and `DEBUG DIGEST`
/// equal the master's, key by key.
#[test]
fn internal_commands_apply_on_a_replica() {
    let master = Server::start();
    let mut replica = master.start_replica(&[], &[]);
    populate(&master);
    master.sync_replicas(1);
    replica.assert_alive();
    let mut m = master.conn();
    let mut r = replica.conn();
    let keys: Vec<String> = cmd("KEYS").arg("*").query(&mut m).expect("KEYS");
    let mut keys_seen = keys.clone();
    keys_seen.sort();
    assert_eq!(keys_seen, POPULATED, "keys on the master after populate");
    let mut differing = Vec::new();
    for k in &keys {
        let (dm, dr) = (digest(&mut m, k), digest(&mut r, k));
        if dm != dr {
            differing.push(format!("{k}: master {dm}, replica {dr}"));
        }
    }
    assert!(
        differing.is_empty(),
        "keys differ on the replica: {differing:?}"
    );
    let (sm, sr): (i64, i64) = (
        cmd("DBSIZE").query(&mut m).unwrap(),
        cmd("DBSIZE").query(&mut r).unwrap(),
    );
    assert_eq!(sm, sr, "DBSIZE master / replica");
    assert_eq!(
        db_digest(&mut m),
        db_digest(&mut r),
        "DEBUG DIGEST master / replica"
    );
}

/// With `appendonly yes` and `aof-use-rdb-preamble no`, the same dataset rewritten by
/// BGREWRITEAOF (as `DLOCK._SET`, `RL._SET` and `BF._LOADX`, which the base AOF must
/// contain), plus writes logged after the rewrite, comes back after a restart with the
/// same DBSIZE and `DEBUG DIGEST` (absolute lease and limiter times included).
#[test]
fn internal_commands_apply_on_aof_replay() {
    let mut server = Server::start_with(
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
        &[],
    );
    populate(&server);
    bgrewriteaof(&server);
    let names: BTreeSet<String> = base_aof_commands(&server)
        .iter()
        .filter(|c| is_internal(c))
        .map(|c| name_of(c))
        .collect();
    assert_eq!(
        names,
        ["bf._loadx", "dlock._set", "rl._set"]
            .map(String::from)
            .into(),
        "internal commands in the rewritten AOF"
    );
    let mut con = conn_t(&server);
    // Writes after the rewrite go to the incremental AOF.
    try_acquire(&mut con, "lock:after", "c", TEN_YEARS_MS as i64).expect("lock");
    let _: Value = cmd("RL.TOKEN")
        .arg("rl:after")
        .arg("5/s")
        .arg(MAX_COUNT.to_string())
        .query(&mut con)
        .expect("RL.TOKEN");
    let _: Value = cmd("BF.ADDX")
        .arg("bf:plain")
        .arg("late")
        .query(&mut con)
        .expect("ADDX");
    let before = db_digest(&mut con);
    let keys: i64 = cmd("DBSIZE").query(&mut con).expect("DBSIZE");
    server.restart("NOSAVE");
    let mut con = conn_t(&server);
    let keys_after: i64 = cmd("DBSIZE").query(&mut con).expect("DBSIZE");
    assert_eq!(keys_after, keys, "DBSIZE after the AOF restart");
    assert_eq!(
        db_digest(&mut con),
        before,
        "DEBUG DIGEST after the AOF restart"
    );
}
