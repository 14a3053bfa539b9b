//! Helpers of the server-operations tests (`tests/it/server_ops_*.rs`, issue #10):
//! checks of a server (alive, a clean log, the replica's dataset equal to the
//! master's), the steps of the scenarios (a pause, a failover, a role change) and the
//! checks of the waiters' answers. The waiters themselves are `super::waiter`.
//!
//! Timing bounds are functional, with wide margins for a noisy machine: "not before"
//! bounds allow `EARLY`, "promptly after" bounds allow `PROMPT`.

use super::waiter::*;
use super::*;
use crate::cache::support::{cache_info, cache_set, wait_for_waiters};
use crate::lock::support::{acquire_opts, lock_info};

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

    /// Notes unless `key` is held by `owner` with `token` (DLOCK.INFO).
    pub fn holder(&mut self, con: &mut Connection, key: &str, owner: &str, token: i64) {
        let info = lock_info(con, key);
        let seen = info.as_ref().map(|i| (i.owner.as_slice(), i.token));
        self.check(seen == Some((owner.as_bytes(), token)), || {
            format!("DLOCK.INFO {key}: {info:?}, expected owner {owner}, token {token}")
        });
    }

    /// Notes unless `a` was granted a token above `prev`; whether it was granted.
    pub fn token_above(&mut self, a: &Answer, prev: i64) -> bool {
        match a.reply {
            Reply::Int(t) => {
                self.check(t > prev, || format!("{}'s token {t} <= {prev}", a.name));
                true
            }
            ref other => {
                self.check(false, || format!("{} answered {other:?}, no token", a.name));
                false
            }
        }
    }

    /// Notes unless `a` came no earlier than `not_before` after `since` (less
    /// `EARLY`) and no later than `by` after it (plus `PROMPT`).
    pub fn came_between(&mut self, a: &Answer, since: Instant, not_before: Duration, by: Duration) {
        let after = a.at.saturating_duration_since(since);
        self.check(after + EARLY >= not_before, || {
            format!(
                "{} answered {after:?} after the event, before {not_before:?}",
                a.name
            )
        });
        self.check(after <= by + PROMPT, || {
            format!(
                "{} answered only {after:?} after the event (due by {by:?})",
                a.name
            )
        });
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

/// Each of `probes`, sent on a raw connection to `server`, answers an OOM error.
pub fn assert_refused_oom(server: &Server, probes: &[&[&str]], what: &str) {
    let mut probe = RawConn::open(server.port);
    for args in probes {
        let r = probe.call(args);
        assert!(
            r.is_error_starting("OOM"),
            "{what}: {} answered {r:?}, expected an OOM error",
            args.join(" ")
        );
    }
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

// ---------------------------------------------------------------------------------------
// A scene: the servers of one test and the steps they take
// ---------------------------------------------------------------------------------------

/// The servers of one server-operations test: a master with a connection to it and,
/// where the test has one, a replica; `what` names the test in every failure.
pub struct Scene {
    pub what: String,
    pub master: Server,
    pub replica: Option<Server>,
    pub con: Connection,
}

impl Scene {
    /// A master alone.
    pub fn alone(what: &str) -> Scene {
        Scene::with(what, Server::start(), false)
    }

    /// A master (started with the server options `args`) and a replica of it.
    pub fn replicated(what: &str, args: &[&str]) -> Scene {
        Scene::with(what, Server::start_with(args, &[]), true)
    }

    fn with(what: &str, master: Server, replicated: bool) -> Scene {
        let replica = replicated.then(|| master.start_replica(&[], &[]));
        let con = timed(master.conn(), ANSWER_TIMEOUT);
        Scene {
            what: what.to_string(),
            master,
            replica,
            con,
        }
    }

    /// The token of `DLOCK.ACQUIRE key owner ttl <kind…>`; fails if it is not granted.
    pub fn hold(&mut self, key: &str, owner: &str, ttl: i64, kind: &[&str]) -> i64 {
        acquire_opts(&mut self.con, key, owner, ttl, kind)
            .unwrap_or_else(|| panic!("{}: {owner} is not granted {key}", self.what))
    }

    /// `queue` on this master.
    pub fn queue(&mut self, specs: &[(&str, &str, i64, i64)]) -> Vec<Waiter> {
        queue(&self.master, &mut self.con, specs)
    }

    /// `queue_kinds` on this master.
    pub fn queue_kinds(&mut self, specs: &[KindWaiter]) -> Vec<Waiter> {
        queue_kinds(&self.master, &mut self.con, specs)
    }

    /// The token a waiter was granted (see `token_of`).
    pub fn token(&self, a: &Answer) -> i64 {
        token_of(a, &self.master, &self.what)
    }

    /// The token a waiter was granted, above `prev`, and answered no earlier than
    /// `not_before` after `since` and no later than `by` after it.
    pub fn granted_between(
        &self,
        a: &Answer,
        prev: i64,
        since: Instant,
        not_before: Duration,
        by: Duration,
    ) -> i64 {
        let t = self.token(a);
        assert!(t > prev, "{}: {}'s token {t} <= {prev}", self.what, a.name);
        assert_came_between(a, since, not_before, by, &self.what);
        t
    }

    /// `key` is held by `owner` with `token` (DLOCK.INFO).
    pub fn assert_holder(&mut self, key: &str, owner: &str, token: i64) {
        let info = lock_info(&mut self.con, key);
        let seen = info.as_ref().map(|i| (i.owner.as_slice(), i.token));
        assert_eq!(
            seen,
            Some((owner.as_bytes(), token)),
            "{}: the holder of {key}",
            self.what
        );
    }

    /// The master is alive with a clean log; the replica, if any, holds its dataset
    /// (`keys` read on the master first, see `assert_same_dataset`) and is alive too.
    pub fn assert_end(&mut self, keys: &[&str]) {
        assert_healthy(&mut self.master, &self.what);
        if let Some(replica) = self.replica.as_mut() {
            assert_same_dataset(&self.master, replica, keys, &self.what);
            assert_healthy(replica, &self.what);
        }
    }

    /// Restarts the master (`SHUTDOWN NOSAVE`) so that it replays its AOF, and checks
    /// that the replayed dataset has the digest it had before.
    pub fn replay_aof(&mut self) {
        let before = db_digest(&mut self.con);
        self.master.restart("NOSAVE");
        self.con = timed(self.master.conn(), ANSWER_TIMEOUT);
        assert_eq!(
            db_digest(&mut self.con),
            before,
            "{}: the dataset replayed from the AOF differs",
            self.what
        );
    }

    /// `DEBUG SLEEP secs` on the master, sent at least 100 ms before the end of a
    /// `lease` taken at `held_at` (a premise); returns when the master woke.
    pub fn debug_sleep(&mut self, held_at: Instant, lease: Duration, secs: &str) -> Instant {
        let mut sleeper = RawConn::open(self.master.port);
        before_lease_end(held_at, lease, "DEBUG SLEEP");
        let slept = sleeper.call(&["DEBUG", "SLEEP", secs]);
        let woke_at = Instant::now();
        assert_eq!(slept, Reply::Status("OK".into()), "{}", self.what);
        woke_at
    }

    /// `CLIENT PAUSE ms mode`, sent at least 100 ms before the end of a `lease` taken
    /// at `held_at` (a premise); returns when the pause began.
    pub fn pause(&mut self, ms: u64, mode: &str, held_at: Instant, lease: Duration) -> Instant {
        let paused_at = Instant::now();
        client_pause(&mut self.con, ms, mode);
        before_lease_end(held_at, lease, "CLIENT PAUSE");
        paused_at
    }

    /// Waits (3 s) until the lease of `key` has ended (the key reads as expired);
    /// the master must stay up.
    pub fn wait_lease_over(&mut self, key: &str) {
        let lease_over = wait_until(Duration::from_secs(3), || {
            !self.master.is_alive() || pttl(&mut self.con, key) == -2
        });
        assert_healthy(&mut self.master, &self.what);
        assert!(lease_over, "{}: the lease of {key} never ended", self.what);
    }

    /// `SHUTDOWN mode` from a raw connection: the caller sees its connection close,
    /// the process exits, every waiter's connection closes (or it gets an error), and
    /// the log has no crash report. Returns the log.
    pub fn shut_down(&mut self, mode: &str, waiters: Vec<Waiter>) -> String {
        let what = &self.what;
        let mut caller = RawConn::open(self.master.port);
        let r = caller.call(&["SHUTDOWN", mode]);
        assert!(
            matches!(r, Reply::Closed(_)),
            "{what}: SHUTDOWN answered {r:?}; log:\n{}",
            self.master.log_tail(20)
        );
        let exited = wait_until(Duration::from_secs(10), || !self.master.is_alive());
        assert!(exited, "{what}: the server still runs");
        for a in join_all(waiters) {
            assert!(
                matches!(a.reply, Reply::Closed(_) | Reply::Error(_)),
                "{what}: waiter {} answered {:?}, expected the connection to close",
                a.name,
                a.reply
            );
        }
        assert_clean_log(&self.master, what);
        self.master.log_tail(1_000_000)
    }

    /// Starts the master again after `shut_down` (the process has exited) in its own
    /// directory, so that it loads what it saved.
    pub fn start_again(&mut self) {
        self.master.crash_and_restart();
        self.con = timed(self.master.conn(), ANSWER_TIMEOUT);
    }
}

/// Fails unless `a` came no earlier than `not_before` after `since` (less `EARLY`)
/// and no later than `by` after it (plus `PROMPT`).
pub fn assert_came_between(
    a: &Answer,
    since: Instant,
    not_before: Duration,
    by: Duration,
    what: &str,
) {
    assert_not_before(a, since, not_before, what);
    let after = a.at.saturating_duration_since(since);
    assert!(
        after <= by + PROMPT,
        "{what}: {} answered {:?} only {after:?} after the event (due by {by:?})",
        a.name,
        a.reply
    );
}

/// Fails if `a` came earlier than `not_before` after `since` (less `EARLY`).
pub fn assert_not_before(a: &Answer, since: Instant, not_before: Duration, what: &str) {
    let after = a.at.saturating_duration_since(since);
    assert!(
        after + EARLY >= not_before,
        "{what}: {} answered {:?} {after:?} after the event, before {not_before:?}",
        a.name,
        a.reply
    );
}

// ---------------------------------------------------------------------------------------
// Role changes: FAILOVER, REPLICAOF
// ---------------------------------------------------------------------------------------

/// A master and its streaming replica, with a connection to each: the setting of
/// the `FAILOVER` scenarios of every family.
pub struct Failover {
    pub what: String,
    pub master: Server,
    pub replica: Server,
    pub con: Connection,
    pub rcon: Connection,
    /// When the setup began: its short lease (500 ms) is no older.
    pub held_at: Instant,
    /// When `FAILOVER` was sent.
    pub at: Instant,
    sleeper: Option<RawConn>,
}

/// The setup's short lease, which ends during the failover.
pub const FAILOVER_LEASE: Duration = Duration::from_millis(500);

impl Failover {
    /// A master and its streaming replica; the setup begins now.
    pub fn start(what: &str) -> Failover {
        let master = Server::start();
        let replica = master.start_streaming_replica();
        let con = timed(master.conn(), ANSWER_TIMEOUT);
        let rcon = timed(replica.conn(), ANSWER_TIMEOUT);
        Failover {
            what: what.to_string(),
            master,
            replica,
            con,
            rcon,
            held_at: Instant::now(),
            at: Instant::now(),
            sleeper: None,
        }
    }

    /// `FAILOVER TIMEOUT timeout_ms`, sent once the replica has applied the setup
    /// (`last_key` is its last write: the replica acknowledges its offset once a
    /// second, so one ACK after a sleep must find it caught up) and at least 100 ms
    /// before the setup's short lease ends; with `sleeping_replica` the replica is in
    /// `DEBUG SLEEP 2` meanwhile.
    pub fn run(&mut self, last_key: &str, sleeping_replica: bool, timeout_ms: u64) {
        wait_applied(&mut self.rcon, last_key, &self.what);
        self.sleeper = sleeping_replica.then(|| put_to_sleep(&self.replica, "2"));
        self.at = Instant::now();
        before_lease_end(self.held_at, FAILOVER_LEASE, "FAILOVER");
        failover(&mut self.con, timeout_ms);
    }

    /// After `run`: the roles swap and every waiter gets exactly one answer,
    /// `UNBLOCKED …` (or, for the waiter `also.0`, a reply `also.2` accepts, named
    /// `also.1`); the replica wakes, both servers are healthy, nobody is left queued
    /// on the old master (INFO warden `waiting_stat`), and the new master holds the
    /// old one's dataset.
    pub fn assert_swapped(
        &mut self,
        waiters: Vec<Waiter>,
        also: (&str, &str, fn(&Reply) -> bool),
        waiting_stat: &str,
        keys: &[&str],
    ) {
        let what = self.what.clone();
        let (master, replica) = (&mut self.master, &mut self.replica);
        assert_roles_swap(master, replica, &mut self.con, &mut self.rcon, &what);
        let mut answers = join_all(waiters);
        let listing = show_answers(&answers, self.at);
        for a in &answers {
            let alt = a.name == also.0;
            let ok = a.reply.is_error_starting("UNBLOCKED") || (alt && (also.2)(&a.reply));
            assert!(
                ok,
                "{what}: waiter {} answered {:?} (expected UNBLOCKED{}); all:\n{listing}\nold master log:\n{}",
                a.name,
                a.reply,
                if alt { also.1 } else { "" },
                self.master.log_tail(20)
            );
        }
        assert_no_second_reply(&mut answers, &what);
        self.replica_woke();
        self.assert_healthy();
        assert_eq!(
            warden_stat(&mut self.con, waiting_stat),
            0,
            "{what}: waiters left queued on the old master"
        );
        assert_same_dataset(&self.replica, &self.master, keys, &what);
    }

    /// After `run` with a replica too slow for the failover to go through: the
    /// waiters got one answer each (checked by the caller) and nothing more; the
    /// master is healthy and still master, its log says the failover was aborted, and
    /// the replica, once awake, holds its dataset.
    pub fn assert_aborted(&mut self, answers: &mut [Answer], keys: &[&str]) {
        let what = self.what.clone();
        assert_no_second_reply(answers, &what);
        assert_healthy(&mut self.master, &what);
        assert_eq!(role(&mut self.con), "master", "{what}: the master's role");
        let log = self.master.log_tail(1_000_000);
        premise(
            log.contains("FAILOVER to any replica aborted"),
            "the failover was aborted",
        );
        self.replica_woke();
        assert_same_dataset(&self.master, &self.replica, keys, &what);
        assert_healthy(&mut self.replica, &what);
    }

    /// The replica's `DEBUG SLEEP`, if any, has ended with `OK`.
    fn replica_woke(&mut self) {
        if let Some(c) = self.sleeper.as_mut() {
            assert_eq!(c.read(READ_TIMEOUT), Reply::Status("OK".into()));
        }
    }

    /// Both servers are alive with clean logs.
    pub fn assert_healthy(&mut self) {
        assert_healthy(&mut self.master, &self.what);
        assert_healthy(&mut self.replica, &self.what);
    }
}

/// `REPLICAOF` `other` on `con`, a master with `waiters` queued: each waiter gets
/// exactly one `UNBLOCKED` error, and the link to the new master comes up.
pub fn turn_replica_of(con: &mut Connection, other: &Server, waiters: Vec<Waiter>, what: &str) {
    let turned_at = Instant::now();
    let _: () = query!(con, "REPLICAOF", "127.0.0.1", other.port);
    let mut answers = join_all(waiters);
    assert_each_unblocked(&mut answers, turned_at, what);
    let up = master_link_up(con);
    assert!(up, "{what}: the link to the new master never came up");
}

/// `REPLICAOF NO ONE`.
pub fn promote(con: &mut Connection) {
    let _: () = query!(con, "REPLICAOF", "NO", "ONE");
}

/// On a server that turned replica: `refused` (a write) answers READONLY and nobody
/// waits (INFO warden `waiting_stat`).
pub fn assert_replica_refuses(
    server: &Server,
    con: &mut Connection,
    refused: &[&str],
    waiting_stat: &str,
    what: &str,
) {
    assert_eq!(warden_stat(con, waiting_stat), 0, "{what}: waiting");
    let r = RawConn::open(server.port).call(refused);
    assert!(
        r.is_error_starting("READONLY"),
        "{what}: {} on a replica answered {r:?}",
        refused.join(" ")
    );
}
