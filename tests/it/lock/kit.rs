//! Locks (`warden-lk`) and lock sets (`warden-ls`) in the checks that cross
//! every family (`tests/it/module/`): the family's `KIT`, with its two types
//! (payloads in `payload.rs`), the kinds of key of the defrag churn, and its part
//! of the leak workload (acquires, releases, extends, shared and counted sets,
//! and rounds of waiters served by hand-off).

use crate::common::kit::*;
use crate::common::payload::Rng;
use crate::common::payload_checks::run_reads;
use crate::common::*;
use crate::lock::payload::*;

use std::time::{Duration, Instant};

/// The family in the checks across families.
pub static KIT: FamilyKit = FamilyKit {
    types: &[LOCK, LOCK_SET],
    churn: &[
        // Every 4th owner on the heap.
        Churn {
            prefix: "lk",
            count: 40_000,
            ttl: true,
            make: |k, i| vec![cmd_of!("DLOCK.ACQUIRE", k, owner(i), 3_600_000)],
            survivor: |con, k, i| {
                let info: Vec<Value> = query!(con, "DLOCK.INFO", k);
                assert_eq!(text_of(&info[1]), Some(owner(i)), "{k}: {info:?}");
            },
        },
        // Shared, two holders.
        Churn {
            prefix: "ls",
            count: 5_000,
            ttl: true,
            make: |k, i| {
                vec![
                    cmd_of!("DLOCK.ACQUIRE", k, "r1", 3_600_000, "SHARED"),
                    cmd_of!("DLOCK.ACQUIRE", k, long_owner(i), 3_600_000, "SHARED"),
                ]
            },
            survivor: |con, k, i| {
                let t1: i64 = query!(con, "DLOCK.ACQUIRE", k, "r1", 3_600_000, "SHARED");
                let t2: i64 = query!(con, "DLOCK.ACQUIRE", k, long_owner(i), 3_600_000, "SHARED");
                assert!(t1 > 0 && t2 > t1, "{k}: the holders keep their tokens");
            },
        },
    ],
    whole: None,
    leak: Leak {
        share: 30,
        keys: &[("lk", LOCK_KEYS), ("ls:s", SET_KEYS), ("ls:l", SET_KEYS)],
        errors: &[],
        setup: |_| Vec::new(),
        call: leak_call,
        round: Some(waiter_round),
        idle: &["locks_waiting"],
    },
};

/// Locks.
pub const LOCK: TypeKit = TypeKit {
    name: "warden-lk",
    encver: 2,
    bases: lock_bases,
    layouts: no_layouts,
    forge: forge_lock,
    refusals: lock_refusals,
    reads: |con, key, found, ctx| {
        run_reads(
            con,
            &[(cmd_of!("DLOCK.INFO", key), lock_info_ok)],
            found,
            ctx,
        )
    },
    exercise: lock_writes,
    gauges: None,
};

/// Lock sets: shared or counted.
pub const LOCK_SET: TypeKit = TypeKit {
    name: "warden-ls",
    encver: 2,
    bases: lock_set_bases,
    layouts: no_layouts,
    forge: forge_lock_set,
    refusals: lock_set_refusals,
    reads: |con, key, found, ctx| {
        let reads = [(cmd_of!("DLOCK.INFO", key), lock_set_info_ok as _)];
        run_reads(con, &reads, found, ctx)
    },
    exercise: lock_set_writes,
    gauges: None,
};

/// A churned lock's owner held on the heap.
fn long_owner(i: usize) -> String {
    format!("{i:08}-a-long-owner-name-held-on-the-heap-not-inline-xyz")
}

/// A churned lock's owner: every 4th one long.
fn owner(i: usize) -> String {
    if i.is_multiple_of(4) {
        long_owner(i)
    } else {
        format!("w-{i}")
    }
}

/// The leak workload's locks: `lk:0` to `lk:1999`.
const LOCK_KEYS: usize = 2_000;
/// The leak workload's lock sets, shared (`ls:s:…`) and counted (`ls:l:…`).
const SET_KEYS: usize = 500;
/// Clients blocked in a waiter round.
const WAITERS: usize = 4;

/// One call of the leak workload: on a lock (25 in 30: acquires, some with
/// short leases, releases, extends, reads) or on a lock set (shared, or
/// counted with LIMIT 3).
fn leak_call(r: &mut Rng, _: &[Args], buf: &mut Vec<u8>) {
    let n = |r: &mut Rng, m: usize| r.below(m).to_string();
    if r.below(30) < 25 {
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
                    buf,
                    &[
                        b"DLOCK.ACQUIRE",
                        key.as_bytes(),
                        owner.as_bytes(),
                        ttl.as_bytes(),
                    ],
                );
            }
            3 => pack(buf, &[b"DLOCK.RELEASE", key.as_bytes(), owner.as_bytes()]),
            4 => {
                let ttl = (100 + r.below(5_000)).to_string();
                pack(
                    buf,
                    &[
                        b"DLOCK.EXTEND",
                        key.as_bytes(),
                        owner.as_bytes(),
                        ttl.as_bytes(),
                    ],
                )
            }
            _ => pack(buf, &[b"DLOCK.INFO", key.as_bytes()]),
        }
        return;
    }
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
    pack(buf, &args);
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

/// The `locks_waiting` gauge.
fn waiting(run: &mut dyn LeakRun) -> i64 {
    warden_stat(run.con(), "locks_waiting")
}

/// A lock with four waiters (each WAIT 50 ms, on spare connections) that get it
/// one after another by hand-off: after a release, a DEL, or the holder's lease
/// running out. Now and then a waiter disconnects while blocked.
fn waiter_round(run: &mut dyn LeakRun) {
    run.count("waiter rounds");
    let key = format!("wk:{}", run.rng().below(64));
    let how = run.rng().below(3);
    let holder_ttl = if how == 2 { "3" } else { "300" };
    let v = raw(
        run.con(),
        &cmd_of!("DLOCK.ACQUIRE", &key, "holder", holder_ttl),
    );
    run.sent(1);
    if !matches!(v, Value::Int(_)) {
        return;
    }
    let base = waiting(run);
    let drop_one = run.rng().chance(1, 4);
    for w in 0..WAITERS {
        let c = cmd_of!("DLOCK.ACQUIRE", &key, format!("w{w}"), 300, "WAIT", 50);
        run.spare(w)
            .send_packed_command(&c.get_packed_command())
            .expect("send");
        run.sent(1);
        // Queue them in a known order.
        let want = base + w as i64 + 1;
        poll(Duration::from_millis(40), || waiting(run) >= want);
    }
    let mut served: Vec<usize> = (0..WAITERS).collect();
    if drop_one {
        // The last waiter hangs up while blocked.
        run.renew(WAITERS - 1);
        served.pop();
        run.count("waiters hung up while blocked");
        let want = base + served.len() as i64;
        poll(Duration::from_millis(40), || waiting(run) <= want);
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
        run.flush(&buf, n, "waiter round");
    }
    // The first hand-off after a DEL or a lease end runs from a timer.
    if how != 0 {
        let first = Value::BulkString(format!("w{}", served[0]).into_bytes());
        poll(Duration::from_millis(20), || {
            match cmd("DLOCK.INFO").arg(&key).query::<Value>(run.con()) {
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
    run.flush(&buf, served.len(), "waiter releases");
    for w in served {
        match run.recv_spare(w, Duration::from_millis(1_500)) {
            Ok(v) => run.check("waiter", &[v]),
            Err(e) => {
                run.lost(format!("round on {key} (how {how}): waiter {w}: {e}"));
                run.renew(w);
            }
        }
    }
}
