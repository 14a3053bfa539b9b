//! Bytes per cache entry: `used_memory` per key of `CACHE.SET k <value>
//! ttl` against `SET k <value> PX` of the same value, measured on one fresh
//! server in the same run (memory is deterministic for one allocator: this
//! is a test, not a timing). SPEC: an entry costs at most 48 bytes more than
//! the same value as a string.

use crate::common::*;

use std::time::Duration;

/// Keys per row, of 11 characters each (`k:000000000` ..), as `make bench`.
const KEYS: usize = 20_000;

/// Value sizes checked: short strings Redis embeds in their object header,
/// and longer ones with a buffer of their own.
const VALUE_SIZES: [usize; 6] = [10, 40, 44, 45, 100, 1000];

/// Bytes (over all `KEYS`, not per key) the server allocates for itself
/// between two readings of a row, apart from the keys: a few hundred seen.
const SLACK: i64 = 4096;

/// `used_memory` growth (bytes, all keys) once `calls(key)` ran for `KEYS` keys, sent
/// in pipelines over a connection of their own that is closed before the
/// figure is read (so its buffers are not counted), from an empty keyspace.
fn growth(server: &Server, con: &mut Connection, calls: impl Fn(&str) -> Vec<redis::Cmd>) -> i64 {
    let _: () = query!(con, "FLUSHALL", "SYNC");
    wait_lazyfree(con, "the flushed keyspace");
    let before = settled_used_memory(con);
    {
        let mut filler = server.conn();
        for start in (0..KEYS).step_by(1000) {
            let mut pipe = redis::pipe();
            for i in start..(start + 1000).min(KEYS) {
                for c in calls(&format!("k:{i:09}")) {
                    pipe.add_command(c).ignore();
                }
            }
            let () = pipe.query(&mut filler).expect("fill the keyspace");
        }
    }
    let closed = wait_until(Duration::from_secs(10), || {
        info_field(con, "clients", "connected_clients").as_deref() == Some("1")
    });
    assert!(closed, "the filling connection never closed");
    let keys: usize = query!(con, "DBSIZE");
    assert_eq!(keys, KEYS, "every key made, none expired");
    settled_used_memory(con) - before
}

/// Bytes per key, for messages.
fn per_key(total: i64) -> f64 {
    total as f64 / KEYS as f64
}

/// `used_memory` once it holds still over three reads 150 ms apart: the
/// server's cron finishes rehashing a dictionary that just grew (and frees
/// its old table) in the background.
fn settled_used_memory(con: &mut Connection) -> i64 {
    let mut last = used_memory(con);
    let mut still = 0;
    for _ in 0..40 {
        std::thread::sleep(Duration::from_millis(150));
        let now = used_memory(con);
        still = if now == last { still + 1 } else { 0 };
        last = now;
        if still == 2 {
            break;
        }
    }
    last
}

fn set_px(key: &str, value: &str) -> Vec<redis::Cmd> {
    let mut c = redis::cmd("SET");
    c.arg(key).arg(value).arg("PX").arg(600_000);
    vec![c]
}

fn cache_set_cmd(key: &str, value: &str) -> Vec<redis::Cmd> {
    let mut c = redis::cmd("CACHE.SET");
    c.arg(key).arg(value).arg(600_000);
    vec![c]
}

/// Each value size: a plain `CACHE.SET` key costs at most 48 bytes more
/// than `SET … PX` of the same value. Valkey 8+ embeds a string's key (and
/// a short value) in its object, which a module value cannot: there the
/// bound is 40 bytes wider (as `cache::memory_usage_is_within_64_bytes_of_a_string`).
#[test]
fn a_cache_entry_costs_at_most_48_bytes_more_than_a_string() {
    let (server, mut con) = Server::start_conn();
    let bound: i64 = if server_version().0 == "valkey" {
        48 + 40
    } else {
        48
    };
    // A first round makes what the server allocates once (not per key).
    growth(&server, &mut con, |k| cache_set_cmd(k, "warm-up"));
    let mut rows = Vec::new();
    let mut over = Vec::new();
    for size in VALUE_SIZES {
        let value = "v".repeat(size);
        let string = growth(&server, &mut con, |k| set_px(k, &value));
        let cache = growth(&server, &mut con, |k| cache_set_cmd(k, &value));
        let row = format!(
            "{size} B: SET PX {:.1} B/key, CACHE.SET {:.1} B/key ({:+.1}; {string} and {cache} B in all)",
            per_key(string),
            per_key(cache),
            per_key(cache - string)
        );
        if cache - string > bound * KEYS as i64 + SLACK {
            over.push(row.clone());
        }
        rows.push(row);
    }
    // For reference in the message: an entry holding only a lease (a miss).
    let lease_only = growth(&server, &mut con, |k| {
        let mut c = redis::cmd("CACHE.GET");
        c.arg(k).arg("LEASE").arg(600_000);
        vec![c]
    });
    rows.push(format!(
        "lease only (CACHE.GET … LEASE on a miss): {:.1} B/key",
        per_key(lease_only)
    ));
    assert!(
        over.is_empty(),
        "cache entries over the bound of +{bound} B per key ({KEYS} keys of 11 characters):\n{}\n\nall rows:\n{}",
        over.join("\n"),
        rows.join("\n")
    );
}
