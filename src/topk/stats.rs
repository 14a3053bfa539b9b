//! The top-k family's gauges and counters, and its INFO fields.

use std::sync::atomic::{AtomicI64, Ordering};

use crate::glue::family::InfoField;

/// Top-k keys in the keyspace.
pub static TOPK_KEYS: AtomicI64 = AtomicI64::new(0);
/// Bytes of those keys.
pub static TOPK_BYTES: AtomicI64 = AtomicI64::new(0);
/// Windowed top-k keys moved to a new slot by a write (replicated as `TOPK._ROTATEX`).
pub static TOPK_ROTATIONS: AtomicI64 = AtomicI64::new(0);

/// The family's INFO fields, in order.
pub static INFO: [InfoField; 3] = [
    InfoField::counter(c"topk_keys", &TOPK_KEYS),
    InfoField::counter(c"topk_bytes", &TOPK_BYTES),
    InfoField::counter(c"topk_rotations", &TOPK_ROTATIONS),
];

/// Accounts a change of a live key's size.
pub fn track_growth(before: u64, after: u64) {
    if before != after {
        TOPK_BYTES.fetch_add(after as i64 - before as i64, Ordering::Relaxed);
    }
}
