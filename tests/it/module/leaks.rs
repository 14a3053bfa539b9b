//! Leak check: about a million mixed operations (locks, including waiters served by
//! hand-off and waiters that disconnect while blocked, and shared and counted lock
//! sets; Bloom and cuckoo filters that grow, scale, are compacted, copied, moved,
//! restored and deleted, and filters of both being loaded chunk by chunk; every kind
//! of rate limiter; cache entries with and without leases; count-min sketches and
//! top-k, plain and over windows that move, counted, merged, copied and deleted:
//! `cms::kit::leak_call`, `topk::kit::leak_call`), pipelined in batches, then
//! `FLUSHALL SYNC`. The keys alive before it must be of every type the module makes
//! (`module_types`). Afterwards INFO must show no filters, sketches or top-k, none
//! of their bytes and no waiting clients, and `used_memory` must be back within 5%
//! of a baseline taken after a warm-up run of the same workload (so allocator and
//! server caches are primed), with no client connected but the one measuring.
//!
//! `WARDEN_LEAK_OPS` (default 1,000,000) sets the number of operations.

use crate::cms::kit as cms;
use crate::common::module_types::assert_covers;
use crate::common::payload::Rng;
use crate::common::*;
use crate::topk::kit as topk;

use redis::ConnectionLike;
use std::time::{Duration, Instant};

const DEFAULT_OPS: u64 = 1_000_000;
const BATCH: usize = 1_000;
const LOCK_KEYS: usize = 2_000;
const FILTER_KEYS: usize = 300;
const LIMITER_KEYS: usize = 500;
const CUCKOO_KEYS: usize = 300;
const SET_KEYS: usize = 500;
const CACHE_KEYS: usize = 500;
const LOADING_KEYS: usize = 100;
const WAITERS: usize = 4;
/// Errors the workload provokes on purpose.
const EXPECTED_ERRORS: &[&str] = &[
    "ERR item exists",
    "ERR non scaling filter is full",
    // BF.INFOX of a missing filter.
    "ERR not found",
    // COPY of a key onto itself.
    "ERR source and destination objects are the same",
    // Cuckoo filters that never grow, or have every sub-filter.
    "ERR filter is full",
    "ERR Maximum expansions reached",
    // Chunks sent at random to filters being loaded.
    "ERR chunk out of order",
    "ERR key already holds a complete filter",
];

/// A family's call of the workload on key `n`, named `key`.
type LeakCall = fn(&mut Rng, usize, &str) -> redis::Cmd;

/// A read without a reply after this long fails the test.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

struct Load {
    rng: Rng,
    server: Server,
    con: Connection,
    waiters: Vec<Connection>,
    ops: u64,
    unexpected: Vec<String>,
    error_count: u64,
    lost_waiters: Vec<String>,
    waiter_rounds: u64,
    dropped_while_blocked: u64,
    /// Time in batches, waiter rounds and restores.
    times: [Duration; 3],
    /// The chunks of a Bloom and of a cuckoo filter (CF.SCANDUMPX / BF.SCANDUMPX),
    /// the header first, for the filters being loaded.
    dumps: [Vec<(i64, Vec<u8>)>; 2],
}

impl Load {
    /// The server, its load's connections closed (their clients gone).
    fn into_server(self) -> Server {
        let Load {
            server,
            con,
            waiters,
            ..
        } = self;
        drop(con);
        drop(waiters);
        server
    }

    fn new(server: Server, seed: u64) -> Load {
        let mut con = timed(server.conn(), READ_TIMEOUT);
        let _: () = query!(&mut con, "BF.RESERVEX", "src:bf", 0.01, 100, "EXPANSION", 2);
        let _: () = query!(&mut con, "CF.RESERVEX", "src:cf", 50, "EXPANSION", 2);
        for i in 0..300 {
            let _: i64 = query!(&mut con, "BF.ADDX", "src:bf", i);
            let _: i64 = query!(&mut con, "CF.ADDX", "src:cf", i);
        }
        let dumps = [
            crate::bloom::support::scandump(&mut con, "src:bf"),
            crate::cuckoo::support::scandump(&mut con, "src:cf"),
        ];
        assert!(dumps.iter().all(|d| d.len() >= 3), "chunks of the sources");
        let waiters = (0..WAITERS)
            .map(|_| timed(server.conn(), READ_TIMEOUT))
            .collect();
        Load {
            rng: Rng(seed),
            server,
            con,
            waiters,
            ops: 0,
            unexpected: Vec::new(),
            error_count: 0,
            lost_waiters: Vec::new(),
            waiter_rounds: 0,
            dropped_while_blocked: 0,
            times: [Duration::ZERO; 3],
            dumps,
        }
    }

    fn check_replies(&mut self, what: &str, replies: &[Value]) {
        for v in replies {
            if let Some(e) = err_of(v) {
                self.error_count += 1;
                let mut expected = EXPECTED_ERRORS
                    .iter()
                    .chain(&cms::LEAK_ERRORS)
                    .chain(&topk::LEAK_ERRORS);
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

    /// One pipelined batch of mixed commands.
    fn batch(&mut self) {
        let mut buf = Vec::with_capacity(64 * BATCH);
        let r = &mut self.rng;
        for _ in 0..BATCH {
            let roll = r.below(100);
            let n = |r: &mut Rng, m: usize| r.below(m).to_string();
            match roll {
                // Locks.
                0..=24 => {
                    let key = format!("lk:{}", n(r, LOCK_KEYS));
                    let owner = format!("o{}", n(r, 4));
                    match r.below(6) {
                        0..=2 => {
                            let ttl = match r.below(4) {
                                0 => 1 + r.below(20),
                                _ => 100 + r.below(5_000),
                            }
                            .to_string();
                            pack(
                                &mut buf,
                                &[
                                    b"DLOCK.ACQUIRE",
                                    key.as_bytes(),
                                    owner.as_bytes(),
                                    ttl.as_bytes(),
                                ],
                            );
                        }
                        3 => pack(
                            &mut buf,
                            &[b"DLOCK.RELEASE", key.as_bytes(), owner.as_bytes()],
                        ),
                        4 => {
                            let ttl = (100 + r.below(5_000)).to_string();
                            pack(
                                &mut buf,
                                &[
                                    b"DLOCK.EXTEND",
                                    key.as_bytes(),
                                    owner.as_bytes(),
                                    ttl.as_bytes(),
                                ],
                            )
                        }
                        _ => pack(&mut buf, &[b"DLOCK.INFO", key.as_bytes()]),
                    }
                }
                // Lock sets: shared, and counted (LIMIT 3).
                25..=29 => {
                    let shared = r.chance(1, 2);
                    let key = format!("ls:{}:{}", if shared { "s" } else { "l" }, n(r, SET_KEYS));
                    let owner = format!("o{}", n(r, 5));
                    let ttl = (1 + r.below(5_000)).to_string();
                    let mut args: Vec<&[u8]> = match r.below(4) {
                        0 | 1 => vec![b"DLOCK.ACQUIRE", key.as_bytes(), owner.as_bytes()],
                        2 => vec![b"DLOCK.RELEASE", key.as_bytes(), owner.as_bytes()],
                        _ => vec![b"DLOCK.EXTEND", key.as_bytes(), owner.as_bytes()],
                    };
                    if args[0] != b"DLOCK.RELEASE" {
                        args.push(ttl.as_bytes());
                    }
                    if args[0] == b"DLOCK.ACQUIRE" {
                        match shared {
                            true => args.push(b"SHARED"),
                            false => args.extend([&b"LIMIT"[..], b"3"]),
                        }
                    }
                    pack(&mut buf, &args);
                }
                // Filters.
                30..=49 => {
                    let key = format!("bf:{}", n(r, FILTER_KEYS));
                    let item = format!("it:{}", r.next() % 4_000_000);
                    match r.below(20) {
                        0..=6 => pack(&mut buf, &[b"BF.ADDX", key.as_bytes(), item.as_bytes()]),
                        7..=9 => {
                            let items: Vec<String> = (0..5)
                                .map(|_| format!("it:{}", r.next() % 4_000_000))
                                .collect();
                            let mut args: Vec<&[u8]> = vec![b"BF.MADDX", key.as_bytes()];
                            args.extend(items.iter().map(|s| s.as_bytes()));
                            pack(&mut buf, &args);
                        }
                        10..=12 => {
                            pack(&mut buf, &[b"BF.EXISTSX", key.as_bytes(), item.as_bytes()])
                        }
                        13 => {
                            let cap = r.pick(&["100", "1000", "10000", "100000"]);
                            let rate = r.pick(&["0.01", "0.001", "0.1"]);
                            let mut args: Vec<&[u8]> = vec![b"BF.RESERVEX", key.as_bytes()];
                            args.extend([rate.as_bytes(), cap.as_bytes()]);
                            if r.chance(1, 4) {
                                args.push(b"NONSCALING");
                            } else {
                                args.extend([
                                    &b"EXPANSION"[..],
                                    r.pick(&["1", "2", "4"]).as_bytes(),
                                ]);
                            }
                            pack(&mut buf, &args);
                        }
                        14 => pack(
                            &mut buf,
                            &[
                                b"BF.INSERTX",
                                key.as_bytes(),
                                b"CAPACITY",
                                b"500",
                                b"ITEMS",
                                item.as_bytes(),
                                b"x",
                            ],
                        ),
                        15 => pack(&mut buf, &[b"BF.CARDX", key.as_bytes()]),
                        16 => pack(&mut buf, &[b"BF.INFOX", key.as_bytes()]),
                        17 => pack(&mut buf, &[b"DEL", key.as_bytes()]),
                        18 => {
                            let dst = format!("bf:{}", n(r, FILTER_KEYS));
                            pack(
                                &mut buf,
                                &[b"COPY", key.as_bytes(), dst.as_bytes(), b"REPLACE"],
                            );
                        }
                        _ => pack(&mut buf, &[b"UNLINK", key.as_bytes()]),
                    }
                }
                // Cuckoo filters.
                50..=64 => {
                    let key = format!("cf:{}", n(r, CUCKOO_KEYS));
                    let item = format!("it:{}", r.next() % 4_000_000);
                    let k = key.as_bytes();
                    match r.below(20) {
                        0..=5 => pack(&mut buf, &[b"CF.ADDX", k, item.as_bytes()]),
                        6 => pack(&mut buf, &[b"CF.ADDNXX", k, item.as_bytes()]),
                        7..=8 => {
                            let items: Vec<String> = (0..5)
                                .map(|_| format!("it:{}", r.next() % 4_000_000))
                                .collect();
                            let mut args: Vec<&[u8]> = vec![b"CF.INSERTX", k, b"CAPACITY", b"100"];
                            args.push(b"ITEMS");
                            args.extend(items.iter().map(|s| s.as_bytes()));
                            pack(&mut buf, &args);
                        }
                        9..=10 => pack(&mut buf, &[b"CF.EXISTSX", k, item.as_bytes()]),
                        11..=12 => pack(&mut buf, &[b"CF.DELX", k, item.as_bytes()]),
                        13 => {
                            let cap = r.pick(&["50", "1000", "10000"]);
                            let mut args: Vec<&[u8]> = vec![b"CF.RESERVEX", k, cap.as_bytes()];
                            args.extend([&b"BUCKETSIZE"[..], r.pick(&["1", "2", "4"]).as_bytes()]);
                            args.extend([&b"EXPANSION"[..], r.pick(&["0", "1", "2"]).as_bytes()]);
                            pack(&mut buf, &args);
                        }
                        14 => pack(&mut buf, &[b"CF.COMPACTX", k]),
                        15 => pack(&mut buf, &[b"CF.INFOX", k]),
                        16 => pack(&mut buf, &[b"CF.COUNTX", k, item.as_bytes()]),
                        17 => pack(&mut buf, &[b"DEL", k]),
                        18 => {
                            let dst = format!("cf:{}", n(r, CUCKOO_KEYS));
                            pack(&mut buf, &[b"COPY", k, dst.as_bytes(), b"REPLACE"]);
                        }
                        _ => pack(&mut buf, &[b"UNLINK", k]),
                    }
                }
                // Filters being loaded: a chunk of a source's dump (the header,
                // or one after it: taken in order, else refused), or a DEL.
                65..=66 => {
                    let cuckoo = r.chance(1, 2);
                    let dump = &self.dumps[usize::from(cuckoo)];
                    let prefix = if cuckoo { "cfl" } else { "bfl" };
                    let key = format!("{prefix}:{}", n(r, LOADING_KEYS));
                    let name: &[u8] = if cuckoo {
                        b"CF.LOADCHUNKX"
                    } else {
                        b"BF.LOADCHUNKX"
                    };
                    match r.below(8) {
                        0 => pack(&mut buf, &[b"DEL", key.as_bytes()]),
                        _ => {
                            // Chunk j with the iterator SCANDUMPX gave with it.
                            let (it, data) = &dump[r.below(dump.len())];
                            let it = it.to_string();
                            pack(&mut buf, &[name, key.as_bytes(), it.as_bytes(), &data[..]]);
                        }
                    }
                }
                // Cache entries.
                67..=71 => {
                    let key = format!("ch:{}", n(r, CACHE_KEYS));
                    let k = key.as_bytes();
                    let value = vec![b'v'; 1 + r.below(200)];
                    let ttl = (1 + r.below(5_000)).to_string();
                    match r.below(6) {
                        0..=1 => pack(&mut buf, &[b"CACHE.SET", k, &value[..], ttl.as_bytes()]),
                        2 => pack(
                            &mut buf,
                            &[
                                b"CACHE.SET",
                                k,
                                &value[..],
                                ttl.as_bytes(),
                                b"STALE",
                                b"1000",
                            ],
                        ),
                        3 => pack(&mut buf, &[b"CACHE.GET", k, b"LEASE", ttl.as_bytes()]),
                        4 => pack(&mut buf, &[b"CACHE.GET", k]),
                        _ => pack(&mut buf, &[b"CACHE.INFO", k]),
                    }
                }
                // Count-min sketches and top-k: the family's calls, or the key
                // deleted, unlinked or copied.
                72..=81 => {
                    let ((prefix, m), call): ((&str, usize), LeakCall) = match roll {
                        72..=76 => (cms::LEAK_KEYS, cms::leak_call),
                        _ => (topk::LEAK_KEYS, topk::leak_call),
                    };
                    let i = r.below(m);
                    let key = format!("{prefix}:{i}");
                    let c = match r.below(10) {
                        0 => cmd_of!("DEL", &key),
                        1 => cmd_of!("UNLINK", &key),
                        2 => cmd_of!("COPY", &key, format!("{prefix}:{}", r.below(m)), "REPLACE"),
                        _ => call(r, i, &key),
                    };
                    buf.extend(c.get_packed_command());
                }
                // Rate limiters.
                82..=94 => {
                    let i = n(r, LIMITER_KEYS);
                    let cost = n(r, 4);
                    match r.below(4) {
                        0 => {
                            let key = format!("rl:t:{i}");
                            let rate = r.pick(&["100/s", "10/ms", "5/m", "inf", "0.5"]);
                            pack(
                                &mut buf,
                                &[
                                    b"RL.TOKEN",
                                    key.as_bytes(),
                                    rate.as_bytes(),
                                    b"20",
                                    b"COST",
                                    cost.as_bytes(),
                                    b"MAXWAIT",
                                    b"100",
                                ],
                            );
                        }
                        1 => {
                            let key = format!("rl:l:{i}");
                            pack(
                                &mut buf,
                                &[
                                    b"RL.LEAKY",
                                    key.as_bytes(),
                                    b"50/s",
                                    b"30",
                                    b"COST",
                                    cost.as_bytes(),
                                ],
                            );
                        }
                        2 => {
                            let key = format!("rl:w:{i}");
                            pack(
                                &mut buf,
                                &[
                                    b"RL.WINDOW",
                                    key.as_bytes(),
                                    b"40",
                                    b"1000",
                                    b"COST",
                                    cost.as_bytes(),
                                ],
                            );
                        }
                        _ => {
                            let key = format!("rl:g:{i}");
                            pack(
                                &mut buf,
                                &[
                                    b"RL.GCRA",
                                    key.as_bytes(),
                                    b"15",
                                    b"30",
                                    b"60",
                                    b"QUANTITY",
                                    cost.as_bytes(),
                                ],
                            );
                        }
                    }
                }
                // Churn on every type.
                _ => {
                    let (prefix, m) = r.pick(&[
                        ("lk", LOCK_KEYS),
                        ("rl:t", LIMITER_KEYS),
                        ("bf", FILTER_KEYS),
                        ("cf", CUCKOO_KEYS),
                        ("ls:s", SET_KEYS),
                        ("ch", CACHE_KEYS),
                        ("cfl", LOADING_KEYS),
                        cms::LEAK_KEYS,
                        topk::LEAK_KEYS,
                    ]);
                    let (a, b) = (
                        format!("{prefix}:{}", n(r, m)),
                        format!("{prefix}:{}", n(r, m)),
                    );
                    match r.below(4) {
                        0 => pack(&mut buf, &[b"COPY", a.as_bytes(), b.as_bytes(), b"REPLACE"]),
                        1 => pack(&mut buf, &[b"PEXPIRE", a.as_bytes(), b"5"]),
                        2 => pack(&mut buf, &[b"MOVE", a.as_bytes(), b"1"]),
                        _ => pack(&mut buf, &[b"DEL", a.as_bytes()]),
                    }
                }
            }
        }
        self.flush(&buf, BATCH, "batch");
    }

    /// DUMP / RESTORE of a few keys of each type (the loader allocates too).
    fn restores(&mut self) {
        for (prefix, m) in [
            ("bf", FILTER_KEYS),
            ("lk", LIMITER_KEYS),
            ("rl:g", LIMITER_KEYS),
            ("rl:w", LIMITER_KEYS),
            ("cf", CUCKOO_KEYS),
            ("ls:l", SET_KEYS),
            ("ch", CACHE_KEYS),
            ("cfl", LOADING_KEYS),
            ("bfl", LOADING_KEYS),
            cms::LEAK_KEYS,
            topk::LEAK_KEYS,
        ] {
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

    fn waiting(&mut self) -> i64 {
        warden_stat(&mut self.con, "locks_waiting")
    }

    /// A lock with four waiters (each WAIT 50 ms) that get it one after another by
    /// hand-off: after a release, a DEL, or the holder's lease running out. Now and then
    /// a waiter disconnects while blocked.
    fn waiter_round(&mut self) {
        self.waiter_rounds += 1;
        let key = format!("wk:{}", self.rng.below(64));
        let how = self.rng.below(3);
        let holder_ttl = if how == 2 { "3" } else { "300" };
        let v = self
            .con
            .req_command(cmd("DLOCK.ACQUIRE").arg(&key).arg("holder").arg(holder_ttl))
            .expect("ACQUIRE");
        self.ops += 1;
        if !matches!(v, Value::Int(_)) {
            return;
        }
        let base = self.waiting();
        let drop_one = self.rng.chance(1, 4);
        for w in 0..WAITERS {
            let c = cmd("DLOCK.ACQUIRE")
                .arg(&key)
                .arg(format!("w{w}"))
                .arg(300)
                .arg("WAIT")
                .arg(50)
                .get_packed_command();
            self.waiters[w].send_packed_command(&c).expect("send");
            self.ops += 1;
            // Queue them in a known order.
            let want = base + w as i64 + 1;
            poll(Duration::from_millis(40), || {
                warden_stat(&mut self.con, "locks_waiting") >= want
            });
        }
        let mut served: Vec<usize> = (0..WAITERS).collect();
        if drop_one {
            // The last waiter hangs up while blocked.
            let gone = WAITERS - 1;
            self.waiters[gone] = timed(self.server.conn(), READ_TIMEOUT);
            served.pop();
            self.dropped_while_blocked += 1;
            let want = base + served.len() as i64;
            poll(Duration::from_millis(40), || {
                warden_stat(&mut self.con, "locks_waiting") <= want
            });
        }
        let mut buf = Vec::new();
        let mut n = 0;
        match how {
            0 => {
                pack(&mut buf, &[b"DLOCK.RELEASE", key.as_bytes(), b"holder"]);
                n += 1;
            }
            1 => {
                pack(&mut buf, &[b"DEL", key.as_bytes()]);
                n += 1;
            }
            _ => {}
        }
        if n > 0 {
            self.flush(&buf, n, "waiter round");
        }
        // The first hand-off after a DEL or a lease end runs from a timer.
        if how != 0 {
            let first = Value::BulkString(format!("w{}", served[0]).into_bytes());
            poll(Duration::from_millis(20), || {
                match cmd("DLOCK.INFO").arg(&key).query::<Value>(&mut self.con) {
                    Ok(Value::Array(a)) => a.get(1) == Some(&first),
                    _ => false,
                }
            });
        }
        let mut buf = Vec::new();
        for w in &served {
            let owner = format!("w{w}");
            pack(
                &mut buf,
                &[b"DLOCK.RELEASE", key.as_bytes(), owner.as_bytes()],
            );
        }
        self.flush(&buf, served.len(), "waiter releases");
        for w in served {
            let _ = self.waiters[w].set_read_timeout(Some(Duration::from_millis(1_500)));
            let r = self.waiters[w].recv_response();
            let _ = self.waiters[w].set_read_timeout(Some(READ_TIMEOUT));
            match r {
                Ok(v) => self.check_replies("waiter", &[v]),
                Err(e) => {
                    if self.lost_waiters.len() < 10 {
                        self.lost_waiters
                            .push(format!("round on {key} (how {how}): waiter {w}: {e}"));
                    }
                    self.waiters[w] = timed(self.server.conn(), READ_TIMEOUT);
                }
            }
        }
    }

    /// Runs `ops` operations: batches, with waiter rounds and restores in between.
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
                self.waiter_round();
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

/// Polls `cond` every 200 µs until it holds or `timeout` passes.
fn poll(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    false
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
    // Lease timers of the last waiter rounds (at most 300 ms) fire, closed clients go.
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
    let server = Server::start();

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
    println!(
        "leaks: time in batches, waiter rounds, restores: {:?}",
        load.times
    );
    let (done, errors, unexpected, lost, rounds, dropped) = (
        load.ops,
        load.error_count,
        load.unexpected.clone(),
        load.lost_waiters.clone(),
        load.waiter_rounds,
        load.dropped_while_blocked,
    );
    let mut con = timed(load.server.conn(), READ_TIMEOUT);
    let peak = memory_field(&mut con, "used_memory");
    let filters_before_flush = warden_stat(&mut con, "bf_filters");
    let cuckoos_before_flush = warden_stat(&mut con, "cf_filters");
    let family_gauges = [cms::GAUGES, topk::GAUGES];
    let families_before_flush = family_gauges.map(|[keys, _]| warden_stat(&mut con, keys));
    // The keys alive (in both databases MOVE uses) are of every type the module makes.
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

    let filters = warden_stat(&mut con, "bf_filters");
    let bytes = warden_stat(&mut con, "bf_bytes");
    let cuckoos = warden_stat(&mut con, "cf_filters");
    let cuckoo_bytes = warden_stat(&mut con, "cf_bytes");
    let waiting = warden_stat(&mut con, "locks_waiting");
    let families = family_gauges.map(|g| g.map(|f| warden_stat(&mut con, f)));
    let dbsize: i64 = query!(&mut con, "DBSIZE");
    let delta = after - baseline;
    println!(
        "leaks: {done} operations ({warm_ops} warm-up), {errors} error replies, {rounds} waiter rounds ({dropped} waiters hung up while blocked), {filters_before_flush} filters, {families_before_flush:?} sketches and top-k before FLUSHALL; used_memory baseline {baseline}, peak {peak}, after {after} (delta {delta:+}, {:+.2}%); warm-up {:.1} s, run {:.1} s, total {:.1} s",
        100.0 * delta as f64 / baseline as f64,
        warm_time.as_secs_f64(),
        run_time.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    server.assert_alive();
    assert!(
        filters_before_flush > 0 && cuckoos_before_flush > 0,
        "the workload made no filters ({filters_before_flush} Bloom, {cuckoos_before_flush} cuckoo)"
    );
    assert!(
        families_before_flush.iter().all(|n| *n > 0),
        "the workload made no sketch or no top-k: {family_gauges:?} {families_before_flush:?}"
    );
    assert_eq!(dbsize, 0, "FLUSHALL left keys");
    assert_eq!(
        families, [[0; 2]; 2],
        "INFO warden {family_gauges:?} after FLUSHALL"
    );
    assert_eq!(
        (filters, bytes, cuckoos, cuckoo_bytes, waiting),
        (0, 0, 0, 0, 0),
        "INFO warden after FLUSHALL (bf_filters, bf_bytes, cf_filters, cf_bytes, locks_waiting)"
    );
    assert!(
        unexpected.is_empty(),
        "unexpected error replies: {unexpected:#?}"
    );
    assert!(
        lost.is_empty(),
        "blocked acquires without a reply: {lost:#?}"
    );
    assert!(
        delta.abs() * 20 <= baseline,
        "used_memory after FLUSHALL is {after}, baseline {baseline}: {delta:+} bytes ({:+.2}%), more than 5%",
        100.0 * delta as f64 / baseline as f64
    );
}
