//! Bytes per cache entry: `used_memory` per key of `CACHE.SET k <value>
//! ttl` against `SET k <value> PX` of the same value, measured on one fresh
//! server in the same run (memory is deterministic for one allocator: this
//! is a test, not a timing). SPEC: an entry costs at most 48 bytes more than
//! the same value as a string.

use crate::common::memory::{keyed, MemoryBench, KEYS};
use crate::common::*;

/// Value sizes checked: short strings Redis embeds in their object header,
/// and longer ones with a buffer of their own.
const VALUE_SIZES: [usize; 6] = [10, 40, 44, 45, 100, 1000];

/// Bytes per key the server may allocate for itself between two readings
/// of a row, apart from the keys (up to 8 KB over all keys seen on a busy machine).
const SLACK: f64 = 0.5;

/// Each value size: a plain `CACHE.SET` key costs at most 48 bytes more
/// than `SET … PX` of the same value. Valkey 8+ embeds a string's key (and
/// a short value) in its object, which a module value cannot: there the
/// bound is 40 bytes wider (as `cache::memory_usage_is_within_64_bytes_of_a_string`).
#[test]
fn a_cache_entry_costs_at_most_48_bytes_more_than_a_string() {
    let mut b = MemoryBench::start(&[]);
    let bound = if server_version().0 == "valkey" {
        48.0 + 40.0
    } else {
        48.0
    };
    let mut rows = Vec::new();
    let mut over = Vec::new();
    for size in VALUE_SIZES {
        let value = "v".repeat(size);
        let string = b.cost(keyed(&["SET", &value, "PX", "600000"])).ram;
        let cache = b.cost(keyed(&["CACHE.SET", &value, "600000"])).ram;
        let row = format!(
            "{size} B: SET PX {string:.1} B/key, CACHE.SET {cache:.1} B/key ({:+.1})",
            cache - string
        );
        if cache - string > bound + SLACK {
            over.push(row.clone());
        }
        rows.push(row);
    }
    // For reference in the message: an entry holding only a lease (a miss).
    let lease_only = b.cost(keyed(&["CACHE.GET", "LEASE", "600000"])).ram;
    rows.push(format!(
        "lease only (CACHE.GET … LEASE on a miss): {lease_only:.1} B/key"
    ));
    assert!(
        over.is_empty(),
        "cache entries over the bound of +{bound} B per key ({KEYS} keys of 11 characters):\n{}\n\nall rows:\n{}",
        over.join("\n"),
        rows.join("\n")
    );
}
