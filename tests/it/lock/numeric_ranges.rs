//! Numeric argument ranges (issue #10) of the DLOCK commands: the lease `ttl` of
//! DLOCK.ACQUIRE and DLOCK.EXTEND and the WAIT `timeout`.
//!
//! Outside its documented range a value gets an error naming the argument (`must be …`
//! below the range or for text, `… is out of range` above it, also for integers beyond
//! i64/u64) and changes nothing; inside it the command succeeds, and no value — however
//! large — may make the module's timers stall or fire early (issue #10: a
//! `WAIT 18445000000000000` wrapped a timer's µs in signed 64-bit and blocked every later
//! module timer until restart). After every value, a probe checks that the timers of
//! *other* keys still work: a lease end hands the lock to a waiter, and a `WAIT 100`
//! answers nil. The rules themselves are in `tests/it/common/ranges.rs`.

use crate::common::ranges::*;
use crate::common::*;
use crate::lock::support::*;

use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// Ranges and the values tried
// ---------------------------------------------------------------------------------------

/// The value of issue #10.
const ISSUE_10: &str = "18445000000000000";

const TTL: Rule = int_rule!("ttl", 1, TEN_YEARS_MS);

const TIMEOUT: Rule = int_rule!("timeout", 0, TEN_YEARS_MS);

// ---------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------

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
        let mut nil_con = timed(self.server.conn(), Duration::from_secs(3));
        let mut wait_con = timed(self.server.conn(), Duration::from_secs(3));
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
        let _: i64 = query!(&mut self.con, "DEL", &handed, &held);
        Ok(true)
    }

    /// After `what` set the lease of `key` to the in-range ttl `v`: for a ttl of 2 s
    /// or more, PTTL is about `v` and a `WAIT 100` by another owner answers nil in
    /// time (the lease timer neither stalls nor fires early).
    fn check_lease(&mut self, what: &str, key: &str, v: &str, failures: &mut Vec<String>) {
        let ttl: i64 = v.parse().expect("an in-range ttl is an i64");
        if ttl >= 2_000 {
            let p = pttl(&mut self.con, key);
            if p > ttl || p < ttl - 2_000 {
                failures.push(format!("{what}: PTTL is {p}, not about {ttl}"));
            }
            if let Err(e) = self.wait_nil(key, 100) {
                failures.push(format!("{what}: {e}"));
            }
        }
    }

    /// `what` was accepted where it should have answered `want`: noted with the
    /// key's PTTL (`got` names the reply), and what issue #10 did next is tried — a
    /// waiter arms a timer at the lease end, which must still answer it in time.
    fn accepted(
        &mut self,
        what: &str,
        key: &str,
        (got, want): (&str, &str),
        failures: &mut Vec<String>,
    ) {
        let p = pttl(&mut self.con, key);
        failures.push(format!("{what}: expected `{want}`, got {got} (PTTL {p})"));
        if let Err(e) = self.wait_nil(key, 100) {
            failures.push(format!("{what} (accepted): {e}"));
        }
    }

    /// `DLOCK.ACQUIRE key … WAIT wait_ms` on a key someone holds must answer nil after
    /// `wait_ms` (within ~1 s), not before.
    fn wait_nil(&mut self, key: &str, wait_ms: u64) -> Result<(), String> {
        let mut c = timed(self.server.conn(), Duration::from_secs(3));
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
                rig.check_lease(&what, &key, v, &mut failures);
            }
            (Got::Error(e), Some(want)) if e == want => {
                if exists(&mut rig.con, &key) {
                    failures.push(format!("{what}: answered `{e}` but created the key"));
                }
            }
            (Got::Reply(Value::Int(_)), Some(want)) => {
                rig.accepted(&what, &key, ("a token", want), &mut failures);
                let _: i64 = query!(&mut rig.con, "DEL", &key);
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
        let _: i64 = query!(&mut rig.con, "DEL", &held);

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
                rig.check_lease(&what, &key, v, &mut failures);
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
                rig.accepted(&what, &key, ("1", want), &mut failures);
            }
            (other, want) => failures.push(format!(
                "{what}: expected {}, got {other:?}",
                want.map_or("1".to_string(), |w| format!("`{w}`"))
            )),
        }
        let _: i64 = query!(&mut rig.con, "DEL", &key);
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
        let mut c = timed(rig.server.conn(), Duration::from_secs(3));
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
    let mut w = timed(rig.server.conn(), Duration::from_secs(5));
    let id: i64 = query!(&mut w, "CLIENT", "ID");
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
    let list: String = query!(&mut rig.con, "CLIENT", "LIST", "ID", id);
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
