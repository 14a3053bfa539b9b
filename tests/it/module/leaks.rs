//! Leak check: about a million mixed operations, each family's part of the
//! workload (`kit::Leak`, from every family's kit: its calls in its share of
//! every batch, a round of its own every other batch where it has one, with
//! clients blocked, served or hanging up while blocked), and on every
//! family's keys COPY, PEXPIRE, MOVE and DEL, and DUMP / RESTORE, pipelined in
//! batches, with a DEBUG RELOAD midway, then `FLUSHALL SYNC`. The keys alive
//! before it must be of every type the module makes (`module_types`), and every
//! type with gauges must have some. Afterwards INFO must show every gauge of
//! every type, and every field a family names (`Leak::idle`), at 0, and
//! `used_memory` must be back within 5% of a baseline taken after a warm-up run
//! of the same workload (so allocator and server caches are primed), with no
//! client connected but the one measuring.
//!
//! The server loads the module with `aliases redisbloom` (`kit::MODULE_ARGS`), so
//! the foreign types' keys are in the workload too.
//!
//! `WARDEN_LEAK_OPS` (default 1,000,000) sets the number of operations.

use crate::common::kit::*;
use crate::common::module_types::assert_covers;
use crate::common::payload::Rng;
use crate::common::*;

use redis::ConnectionLike;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const DEFAULT_OPS: u64 = 1_000_000;
const BATCH: usize = 1_000;
/// The share of the churn on every family's keys (against the families' shares).
const CHURN_SHARE: usize = 5;
/// Errors the workload's churn provokes on purpose: COPY of a key onto itself.
const CHURN_ERRORS: &[&str] = &["ERR source and destination objects are the same"];

/// A read without a reply after this long fails the test.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// Every family's key groups.
fn groups() -> Vec<(&'static str, usize)> {
    FAMILY_KITS
        .iter()
        .flat_map(|k| k.leak.keys)
        .copied()
        .collect()
}

struct Load {
    rng: Rng,
    server: Server,
    con: Connection,
    spares: Vec<Connection>,
    ops: u64,
    unexpected: Vec<String>,
    error_count: u64,
    lost: Vec<String>,
    counts: BTreeMap<&'static str, u64>,
    /// Time in batches, rounds and restores.
    times: [Duration; 3],
    /// What each family's `setup` made, in `FAMILY_KITS`' order.
    made: Vec<Vec<Args>>,
}

impl Load {
    /// The server, its load's connections closed (their clients gone).
    fn into_server(self) -> Server {
        let Load {
            server,
            con,
            spares,
            ..
        } = self;
        drop(con);
        drop(spares);
        server
    }

    fn new(server: Server, seed: u64) -> Load {
        let mut con = timed(server.conn(), READ_TIMEOUT);
        let made = FAMILY_KITS
            .iter()
            .map(|k| (k.leak.setup)(&mut con))
            .collect();
        Load {
            rng: Rng(seed),
            server,
            con,
            spares: Vec::new(),
            ops: 0,
            unexpected: Vec::new(),
            error_count: 0,
            lost: Vec::new(),
            counts: BTreeMap::new(),
            times: [Duration::ZERO; 3],
            made,
        }
    }

    fn check_replies(&mut self, what: &str, replies: &[Value]) {
        for v in replies {
            if let Some(e) = err_of(v) {
                self.error_count += 1;
                let mut expected = FAMILY_KITS
                    .iter()
                    .flat_map(|k| k.leak.errors)
                    .chain(CHURN_ERRORS);
                if !expected.any(|x| e.starts_with(x)) && self.unexpected.len() < 20 {
                    self.unexpected.push(format!("{what}: {e}"));
                }
            }
            if let Value::Array(a) = v {
                self.check_replies(what, a);
            }
        }
    }

    /// Sends a pipeline and reads every reply.
    fn flush(&mut self, buf: &[u8], n: usize, what: &str) -> Vec<Value> {
        let replies = self.con.req_packed_commands(buf, 0, n).unwrap_or_else(|e| {
            panic!(
                "pipeline of {n} ({what}) failed after {} ops: {e}\nserver log:\n{}",
                self.ops,
                self.server.log_tail(30)
            )
        });
        assert_eq!(replies.len(), n, "{what}: replies");
        self.ops += n as u64;
        self.check_replies(what, &replies);
        replies
    }

    /// One pipelined batch of mixed commands: each family's calls in its
    /// share, and the churn on every family's keys.
    fn batch(&mut self) {
        let mut buf = Vec::with_capacity(64 * BATCH);
        let r = &mut self.rng;
        let shares: usize = FAMILY_KITS.iter().map(|k| k.leak.share).sum();
        let groups = groups();
        for _ in 0..BATCH {
            let mut roll = r.below(shares + CHURN_SHARE);
            let family = FAMILY_KITS.iter().zip(&self.made).find(|(k, _)| {
                let mine = roll < k.leak.share;
                roll = roll.saturating_sub(k.leak.share);
                mine
            });
            if let Some((kit, made)) = family {
                (kit.leak.call)(r, made, &mut buf);
                continue;
            }
            // Churn on every family's keys.
            let (prefix, m) = r.pick(&groups);
            let (a, b) = (
                format!("{prefix}:{}", r.below(m)),
                format!("{prefix}:{}", r.below(m)),
            );
            match r.below(4) {
                0 => pack(&mut buf, &[b"COPY", a.as_bytes(), b.as_bytes(), b"REPLACE"]),
                1 => pack(&mut buf, &[b"PEXPIRE", a.as_bytes(), b"5"]),
                2 => pack(&mut buf, &[b"MOVE", a.as_bytes(), b"1"]),
                _ => pack(&mut buf, &[b"DEL", a.as_bytes()]),
            }
        }
        self.flush(&buf, BATCH, "batch");
    }

    /// DUMP / RESTORE of a key of each group (the loader allocates too).
    fn restores(&mut self) {
        for (prefix, m) in groups() {
            let key = format!("{prefix}:{}", self.rng.below(m));
            let v = self.con.req_command(cmd("DUMP").arg(&key)).expect("DUMP");
            self.ops += 1;
            if let Value::BulkString(p) = v {
                let dst = format!("{prefix}:{}", self.rng.below(m));
                let v = self
                    .con
                    .req_command(cmd("RESTORE").arg(&dst).arg(0).arg(&p).arg("REPLACE"))
                    .expect("RESTORE");
                self.ops += 1;
                self.check_replies("RESTORE", &[v]);
            }
        }
    }

    /// Runs `ops` operations: batches, with the families' rounds and restores in
    /// between.
    fn run(&mut self, ops: u64, reload_midway: bool) {
        let target = self.ops + ops;
        let midway = self.ops + ops / 2;
        let mut reloaded = !reload_midway;
        let mut i = 0u64;
        while self.ops < target {
            let t = Instant::now();
            self.batch();
            self.times[0] += t.elapsed();
            i += 1;
            if i.is_multiple_of(2) {
                let t = Instant::now();
                for round in FAMILY_KITS.iter().filter_map(|k| k.leak.round) {
                    round(self);
                }
                self.times[1] += t.elapsed();
            }
            if i.is_multiple_of(10) {
                let t = Instant::now();
                self.restores();
                self.times[2] += t.elapsed();
            }
            if !reloaded && self.ops >= midway {
                reloaded = true;
                let v = self
                    .con
                    .req_command(cmd("DEBUG").arg("RELOAD"))
                    .expect("DEBUG RELOAD");
                assert!(err_of(&v).is_none(), "DEBUG RELOAD: {v:?}");
                self.ops += 1;
            }
        }
    }
}

impl LeakRun for Load {
    fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    fn con(&mut self) -> &mut Connection {
        &mut self.con
    }

    fn spare(&mut self, i: usize) -> &mut Connection {
        while self.spares.len() <= i {
            self.spares.push(timed(self.server.conn(), READ_TIMEOUT));
        }
        &mut self.spares[i]
    }

    fn renew(&mut self, i: usize) {
        self.spare(i);
        self.spares[i] = timed(self.server.conn(), READ_TIMEOUT);
    }

    fn recv_spare(&mut self, i: usize, wait: Duration) -> redis::RedisResult<Value> {
        let con = self.spare(i);
        let _ = con.set_read_timeout(Some(wait));
        let r = con.recv_response();
        let _ = con.set_read_timeout(Some(READ_TIMEOUT));
        r
    }

    fn flush(&mut self, buf: &[u8], n: usize, what: &str) -> Vec<Value> {
        Load::flush(self, buf, n, what)
    }

    fn sent(&mut self, n: u64) {
        self.ops += n;
    }

    fn check(&mut self, what: &str, replies: &[Value]) {
        self.check_replies(what, replies);
    }

    fn lost(&mut self, what: String) {
        if self.lost.len() < 10 {
            self.lost.push(what);
        }
    }

    fn count(&mut self, what: &'static str) {
        *self.counts.entry(what).or_default() += 1;
    }
}

fn memory_field(con: &mut Connection, field: &str) -> i64 {
    info_field(con, "memory", field)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("INFO memory has no {field}"))
}

/// Flushes everything and measures `used_memory` with only this connection open.
fn settle_and_measure(server: &Server) -> (i64, Connection) {
    let mut con = timed(server.conn(), READ_TIMEOUT);
    let _: () = query!(&mut con, "FLUSHALL", "SYNC");
    wait_lazyfree(&mut con, "what was freed in the background before FLUSHALL");
    // Timers the last rounds armed (a few hundred ms at most) fire, closed clients go.
    std::thread::sleep(Duration::from_millis(1_200));
    assert!(
        wait_until(Duration::from_secs(5), || {
            info_field(&mut con, "clients", "connected_clients").as_deref() == Some("1")
        }),
        "other clients are still connected"
    );
    let _: () = query!(&mut con, "SLOWLOG", "RESET");
    let _: () = query!(&mut con, "CONFIG", "RESETSTAT");
    std::thread::sleep(Duration::from_millis(200));
    // The smallest of a few samples: INFO's own reply buffer comes and goes.
    let used = (0..5)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(50));
            memory_field(&mut con, "used_memory")
        })
        .min()
        .expect("samples");
    (used, con)
}

#[test]
fn a_million_operations_then_flushall_leave_nothing_behind() {
    let ops: u64 = std::env::var("WARDEN_LEAK_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_OPS);
    let started = Instant::now();
    let server = Server::start_with(&[], MODULE_ARGS);

    // Warm-up: the same workload, a twentieth of the size, then the baseline.
    let mut load = Load::new(server, 0x1ea4_0000_0000_0001);
    load.run((ops / 20).max(20_000), false);
    let warm_ops = load.ops;
    let server = load.into_server();
    let (baseline, con) = settle_and_measure(&server);
    drop(con);
    let warm_time = started.elapsed();

    // The run.
    let mut load = Load::new(server, 0x1ea4_0000_0000_0002);
    let run_started = Instant::now();
    load.run(ops, true);
    let run_time = run_started.elapsed();
    println!("leaks: time in batches, rounds, restores: {:?}", load.times);
    let (done, errors, unexpected, lost, counts) = (
        load.ops,
        load.error_count,
        load.unexpected.clone(),
        load.lost.clone(),
        load.counts.clone(),
    );
    let mut con = timed(load.server.conn(), READ_TIMEOUT);
    let peak = memory_field(&mut con, "used_memory");
    // Every type with gauges has keys, and the keys alive (in both databases
    // MOVE uses) are of every type the module makes.
    // (Types may share a gauge: each field once.)
    let mut keys_fields: Vec<&str> = all_gauges().map(|(_, g)| g.fields[0]).collect();
    keys_fields.sort();
    keys_fields.dedup();
    let gauged: Vec<(&str, i64)> = keys_fields
        .iter()
        .map(|f| (*f, warden_stat(&mut con, f)))
        .collect();
    let mut types: Vec<String> = Vec::new();
    for db in [0, 1] {
        let _: () = query!(&mut con, "SELECT", db);
        for k in scan_keys(&mut con, &[]) {
            types.push(key_type(&mut con, &k));
        }
    }
    types.sort();
    types.dedup();
    assert_covers(
        "the leak workload",
        &types.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    drop(con);
    let server = load.into_server();
    let mut server = server;
    let (after, mut con) = settle_and_measure(&server);

    let idle: Vec<&str> = all_gauges()
        .flat_map(|(_, g)| g.fields)
        .chain(FAMILY_KITS.iter().flat_map(|k| k.leak.idle.iter().copied()))
        .collect();
    let left: Vec<i64> = idle.iter().map(|f| warden_stat(&mut con, f)).collect();
    let dbsize: i64 = query!(&mut con, "DBSIZE");
    let delta = after - baseline;
    println!(
        "leaks: {done} operations ({warm_ops} warm-up) over {} key groups, {errors} error replies, rounds {counts:?}, before FLUSHALL {gauged:?}; used_memory baseline {baseline}, peak {peak}, after {after} (delta {delta:+}, {:+.2}%); warm-up {:.1} s, run {:.1} s, total {:.1} s",
        groups().len(),
        100.0 * delta as f64 / baseline as f64,
        warm_time.as_secs_f64(),
        run_time.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    server.assert_alive();
    assert!(
        gauged.iter().all(|(_, n)| *n > 0),
        "the workload made no key of some type with gauges: {gauged:?}"
    );
    assert_eq!(dbsize, 0, "FLUSHALL left keys");
    assert_eq!(
        left,
        vec![0; idle.len()],
        "INFO warden {idle:?} after FLUSHALL"
    );
    assert!(
        unexpected.is_empty(),
        "unexpected error replies: {unexpected:#?}"
    );
    assert!(lost.is_empty(), "calls without a reply: {lost:#?}");
    assert!(
        delta.abs() * 20 <= baseline,
        "used_memory after FLUSHALL is {after}, baseline {baseline}: {delta:+} bytes ({:+.2}%), more than 5%",
        100.0 * delta as f64 / baseline as f64
    );
}
