//! Helpers of the server-operations tests (`tests/it/server_ops_*.rs`, issue #10):
//! checks of a server (alive, a clean log, the replica's dataset equal to the
//! master's), the steps of the scenarios (a pause, a failover, a role change) and the
//! checks of the waiters' answers. The waiters themselves are `super::waiter`.
//!
//! Timing bounds are functional, with wide margins for a noisy machine: "not before"
//! bounds allow `EARLY`, "promptly after" bounds allow `PROMPT`.

use super::cache::{cache_info, cache_set, wait_for_waiters};
use super::dlock::lock_info;
use super::waiter::*;
use super::*;

use std::thread;
use std::time::{Duration, Instant};

/// Clock slack for "not before" bounds (client monotonic clock vs. server wall clock).
pub const EARLY: Duration = Duration::from_millis(25);
/// "Promptly after" an event: the contract is a few tens of ms; this is the margin.
pub const PROMPT: Duration = Duration::from_millis(1000);
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
    let queued = cache_info(&mut con, key).map_or(0, |i| i["waiters"]);
    let waiter = Waiter::cache(server, "refresh", key, min, 5_000, 10_000);
    wait_for_waiters(&mut con, key, queued + 1);
    let (min, token) = (min.to_string(), token.to_string());
    let opts = ["VERSION", min.as_str(), "LEASE", token.as_str()];
    assert_eq!(
        cache_set(&mut con, key, value, 60_000, &opts),
        1,
        "the refresh of {key} with lease {token}"
    );
    let r = waiter.join().reply;
    assert_eq!(
        r.leased(),
        Some((Some(value.to_string()), 0)),
        "the waiter for the refresh of {key}: {r:?}"
    );
}

/// The token a waiter was granted; fails (with the server log) on any other answer.
pub fn token_of(a: &Answer, server: &Server, what: &str) -> i64 {
    match &a.reply {
        Reply::Int(t) => *t,
        other => panic!(
            "{what}: waiter {} expected a token, got {other:?}; {}",
            a.name,
            crash_cause(server)
        ),
    }
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
    let _: () = query!(con, "FAILOVER", "TIMEOUT", timeout_ms);
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
    let _: () = query!(con, "CLIENT", "PAUSE", ms, mode);
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
        let _: () = query!(con, "CONFIG", "SET", name, value);
    }
    let _: () = query!(
        con,
        "EVAL",
        "for i = 1, 20000 do redis.call('SET', 'fill:' .. i, string.rep('x', 100)) end",
        0
    );
    let probe = cmd("SET").arg("probe").arg(1).query::<()>(con);
    premise(
        probe.is_err_and(|e| err_text(&e).starts_with("OOM")),
        "the server is out of memory after the fill",
    );
}
