//! The Bloom family's gauges and its INFO fields.

use std::sync::atomic::AtomicI64;

use crate::glue::family::InfoField;

/// Live Bloom filters in this server (a gauge).
pub static BF_FILTERS: AtomicI64 = AtomicI64::new(0);
/// Bytes of all live Bloom filters (a gauge).
pub static BF_BYTES: AtomicI64 = AtomicI64::new(0);

/// The family's INFO fields, in order.
pub static INFO: [InfoField; 2] = [
    InfoField::counter(c"bf_filters", &BF_FILTERS),
    InfoField::counter(c"bf_bytes", &BF_BYTES),
];
