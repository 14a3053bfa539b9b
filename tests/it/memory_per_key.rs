//! What a rate-limiter key costs in `used_memory`: N keys of 11 characters
//! per kind on a fresh server, against the same keys holding a shared integer
//! (`SET k 1 PX`: key, dict entries and expiry, no value object). What is
//! left is the value: a 16 B object header, a 16 B module-value cell and
//! warden's own allocation in its jemalloc size class — 32 B for one packed
//! limit; several limits add one block of 48 B a limit (96 B for two).
//! Memory is deterministic for one allocator, so the bounds are exact, not
//! timings.

use crate::common::*;

/// Keys per row: enough to make the dictionaries' growth the same for every row.
const KEYS: usize = 20_000;

/// used_memory growth over `KEYS` keys made with `call(key)`, after FLUSHALL.
fn growth(con: &mut Connection, call: impl Fn(&str) -> Vec<String>) -> i64 {
    let _: () = query!(con, "FLUSHALL");
    let before = used_memory(con);
    let mut pipe = redis::pipe();
    for i in 0..KEYS {
        pipe.add_command(command(&call(&format!("k:{i:09}"))))
            .ignore();
        if i % 1000 == 999 {
            let _: () = pipe.query(con).expect("pipeline");
            pipe = redis::pipe();
        }
    }
    let _: () = pipe.query(con).expect("pipeline");
    let n: i64 = query!(con, "DBSIZE");
    assert_eq!(n as usize, KEYS, "every key kept");
    used_memory(con) - before
}

#[test]
fn one_limit_limiters_cost_a_32_byte_value() {
    let (_server, mut con) = Server::start_conn();
    let base = growth(&mut con, |k| words(&["SET", k, "1", "PX", "3600000"]));
    // (row, call, bound on the value, bound on the whole key) in B/key;
    // measured with 20,000 keys: 61.6 and 178.0 for one limit, 156.4 and
    // 272.8 for two (the 80 B value before the packed form: 226 and 320.8).
    let rows: [(&str, &[&str], i64, i64); 5] = [
        ("RL.TOKEN, one limit", &["RL.TOKEN", "1/h", "10"], 64, 179),
        ("RL.LEAKY", &["RL.LEAKY", "1/h", "10"], 64, 179),
        (
            "RL.WINDOW, one limit",
            &["RL.WINDOW", "100", "60000"],
            64,
            179,
        ),
        ("RL.GCRA", &["RL.GCRA", "10", "1", "3600"], 64, 179),
        (
            "RL.TOKEN, two limits",
            &["RL.TOKEN", "1/h", "10", "1000/d", "1000"],
            160,
            273,
        ),
    ];
    let mut failures = Vec::new();
    let mut figures = Vec::new();
    for (name, call, bound, key_bound) in rows {
        let total = growth(&mut con, |k| {
            let mut w = vec![call[0].to_string(), k.to_string()];
            w.extend(call[1..].iter().map(|s| s.to_string()));
            w
        });
        let per_key = total as f64 / KEYS as f64;
        let value = (total - base) as f64 / KEYS as f64;
        figures.push(format!("{name}: {per_key:.2} B/key, value {value:.2} B"));
        if total - base > bound * KEYS as i64 || total > key_bound * KEYS as i64 {
            failures.push(format!(
                "{name}: value costs {value:.2} B/key (bound {bound}); \
                 {per_key:.2} B/key in all (bound {key_bound}), {:.2} B/key for SET k 1 PX",
                base as f64 / KEYS as f64
            ));
        }
    }
    eprintln!("{}", figures.join("\n"));
    report("bytes per limiter key", failures);
}
