//! The count-min family's gauges and counters, and its INFO fields.

use std::sync::atomic::AtomicI64;

use crate::glue::family::InfoField;

/// Count-min sketches in the keyspace.
pub static CMS_SKETCHES: AtomicI64 = AtomicI64::new(0);
/// Bytes of those sketches.
pub static CMS_BYTES: AtomicI64 = AtomicI64::new(0);
/// Windowed sketches moved to a new slot by a write (replicated as `CMS._ROTATEX`).
pub static CMS_ROTATIONS: AtomicI64 = AtomicI64::new(0);

/// The family's INFO fields, in order.
pub static INFO: [InfoField; 3] = [
    InfoField::counter(c"cms_sketches", &CMS_SKETCHES),
    InfoField::counter(c"cms_bytes", &CMS_BYTES),
    InfoField::counter(c"cms_rotations", &CMS_ROTATIONS),
];
