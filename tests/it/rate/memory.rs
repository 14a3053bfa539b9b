//! What a rate-limiter key costs, in `used_memory` and in RDB bytes, against
//! the keys a user compares it with, measured in the same run: redis-cell's
//! `CL.THROTTLE` key (when its build is found beside the project, in
//! `../shared/peers/`, or at `WARDEN_REDIS_CELL`) and a string key of its
//! shape (a 19-character value, as redis-cell stores its TAT: one 48 B
//! embedded string, 20 bytes in an RDB), which stands in for it anywhere.
//! Memory is deterministic for one allocator, so the bounds are exact
//! figures, not timings; they hold on jemalloc's 16-byte size classes
//! (Debian's build) and allow one 8 B step more where they are 8 bytes
//! (`MemoryBench::quantum_slack`).

use crate::common::memory::{keyed, MemoryBench};
use crate::common::peer_modules::redis_cell;
use crate::common::*;

#[test]
fn limiter_keys_cost_no_more_than_redis_cells() {
    let cell = redis_cell();
    let mut args = Vec::new();
    let cell_path = cell.as_ref().map(|p| p.display().to_string());
    if let Some(p) = &cell_path {
        args.extend(["--loadmodule", p.as_str()]);
    }
    let mut b = MemoryBench::start(&args);
    if !b.is_jemalloc() {
        return;
    }
    let slack = b.quantum_slack();
    let shape = b.cost(keyed(&["SET", "0123456789abcdefghi", "PX", "3600000"]));
    // CL.THROTTLE's key lives as long as its bucket takes to refill.
    let mut figures = vec![format!("a 19-character string key: {shape:?}")];
    let mut failures = Vec::new();
    let peer = match cell {
        Some(_) => {
            let c = b.cost(keyed(&["CL.THROTTLE", "10", "1", "3600"]));
            figures.push(format!("redis-cell CL.THROTTLE: {c:?}"));
            if (c.ram - shape.ram).abs() > 0.5 || (c.rdb - shape.rdb).abs() > 0.5 {
                failures.push(format!(
                    "the stand-in for redis-cell is not its size: {shape:?} vs {c:?}"
                ));
            }
            c
        }
        None => {
            figures.push("redis-cell not found: its stand-in is the bound".into());
            shape
        }
    };
    let one_limit: [(&str, &[&str], f64); 4] = [
        ("RL.GCRA", &["RL.GCRA", "10", "1", "3600"], 1.0),
        ("RL.TOKEN, one limit", &["RL.TOKEN", "1/h", "10"], 1.15),
        ("RL.LEAKY", &["RL.LEAKY", "1/h", "10"], 1.15),
        ("RL.WINDOW, one limit", &["RL.WINDOW", "100", "60000"], 1.15),
    ];
    let mut token = None;
    for (name, call, times) in one_limit {
        let c = b.cost(keyed(call));
        figures.push(format!("{name}: {c:?}"));
        if c.ram.round() > (peer.ram * times + slack).round() {
            failures.push(format!(
                "{name}: {:.2} B/key of RAM, above {times} x CL.THROTTLE's {:.2} + {slack} B",
                c.ram, peer.ram
            ));
        }
        if c.rdb.round() > (peer.rdb * 1.3).round() {
            failures.push(format!(
                "{name}: {:.2} RDB bytes/key, above 1.3 x CL.THROTTLE's {:.2}",
                c.rdb, peer.rdb
            ));
        }
        if name.starts_with("RL.TOKEN") {
            token = Some(c);
        }
    }
    let one = token.expect("the one-limit RL.TOKEN row");
    let two = b.cost(keyed(&["RL.TOKEN", "1/h", "10", "1000/d", "1000"]));
    figures.push(format!("RL.TOKEN, two limits: {two:?}"));
    if two.ram.round() > (one.ram * 1.3).round() {
        failures.push(format!(
            "RL.TOKEN, two limits: {:.2} B/key of RAM, above 1.3 x one limit's {:.2}",
            two.ram, one.ram
        ));
    }
    eprintln!("{}", figures.join("\n"));
    report("bytes per limiter key", failures);
}

/// Past 65,536 distinct parameter sets the shared table is full: later
/// limits keep their parameters in the wide form, larger but exact, through
/// a reload, and the keys inside the table stay as they were; once the keys
/// are gone, their sets are reused.
#[test]
fn limiters_past_a_full_parameter_table_stay_exact() {
    // DEBUG RELOAD frees the old keys before it loads (Valkey 8+ would free
    // them in a background thread by default, racing the load for the ids
    // they give back, so which keys stay packed would depend on timing).
    let s = Server::start_with(&["--lazyfree-lazy-user-flush", "no"], &[]);
    let mut con = s.conn();
    const SETS: i64 = 65_536 + 64;
    let mut writer = s.conn();
    let mut pipe = redis::pipe();
    for i in 0..SETS {
        pipe.cmd("RL.WINDOW")
            .arg(format!("w:{i}"))
            .arg(100)
            .arg(60_000 + i)
            .arg("COST")
            .arg(7)
            .ignore();
        if i % 1000 == 999 {
            let _: () = pipe.query(&mut writer).expect("pipeline");
            pipe = redis::pipe();
        }
    }
    let _: () = pipe.query(&mut writer).expect("pipeline");
    let usage = |con: &mut Connection, i: i64| -> i64 {
        query!(con, "MEMORY", "USAGE", format!("w:{i}"), "SAMPLES", 0)
    };
    let (inside, past) = (usage(&mut con, 0), usage(&mut con, SETS - 1));
    assert!(
        past > inside,
        "a key past the full table is in the wide form: {past} B vs {inside} B"
    );
    for round in ["before", "after DEBUG RELOAD"] {
        for i in [0, 1, 65_535, 65_536, SETS - 1] {
            let r: Vec<i64> = query!(
                &mut con,
                "RL.WINDOW",
                format!("w:{i}"),
                100,
                60_000 + i,
                "COST",
                0
            );
            assert_eq!(r[..2], [1, 93], "w:{i} {round}: {r:?}");
        }
        ok(&mut con, cmd("DEBUG").arg("RELOAD"));
    }
    // The first key and a new key with its parameters are still packed:
    // below the wide form (compared, not equated: Valkey 9 answers MEMORY
    // USAGE of the same packed key as 56 or 72 B from one key to the next).
    let _: Vec<i64> = query!(&mut con, "RL.WINDOW", "again", 100, 60_000);
    let first = usage(&mut con, 0);
    assert!(
        first < past,
        "w:0 after the reloads: {first} B, the wide form {past} B"
    );
    let again: i64 = query!(&mut con, "MEMORY", "USAGE", "again", "SAMPLES", 0);
    assert!(
        again < past,
        "{again} B with known parameters, {past} B without"
    );
    // Keys deleted give their parameter sets back: new ones pack again.
    let _: () = query!(&mut con, "FLUSHALL");
    wait_lazyfree(&mut con, "the flushed limiters");
    let _: Vec<i64> = query!(&mut con, "RL.WINDOW", "new", 100, 1_000_000);
    let new: i64 = query!(&mut con, "MEMORY", "USAGE", "new", "SAMPLES", 0);
    assert!(
        new < past,
        "a key with new parameters after FLUSHALL: {new} B, the wide form {past} B"
    );
}
