//! The cuckoo family's gauges and its INFO fields.

use std::sync::atomic::AtomicI64;

use crate::glue::family::InfoField;

/// Cuckoo filters in the keyspace.
pub static CF_FILTERS: AtomicI64 = AtomicI64::new(0);
/// Bytes of those cuckoo filters.
pub static CF_BYTES: AtomicI64 = AtomicI64::new(0);

/// The family's INFO fields, in order.
pub static INFO: [InfoField; 2] = [
    InfoField::counter(c"cf_filters", &CF_FILTERS),
    InfoField::counter(c"cf_bytes", &CF_BYTES),
];
