//! The cache family's counters and gauges, and its INFO fields.

use std::sync::atomic::AtomicI64;

use crate::glue::family::InfoField;
pub use crate::glue::stats::count;

/// `CACHE.GET`s answered with a fresh value.
pub static CACHE_HITS: AtomicI64 = AtomicI64::new(0);
/// `CACHE.GET`s that found nothing fresh (nil, a stale value or a lease).
pub static CACHE_MISSES: AtomicI64 = AtomicI64::new(0);
/// Refresh leases granted, including hand-offs to waiters.
pub static CACHE_LEASES: AtomicI64 = AtomicI64::new(0);
/// `CACHE.GET … LEASE` replies that carried a stale value.
pub static CACHE_STALE_SERVED: AtomicI64 = AtomicI64::new(0);
/// Clients blocked in `CACHE.GET … WAIT` (a gauge).
pub static CACHE_WAITING: AtomicI64 = AtomicI64::new(0);

/// The family's INFO fields, in order.
pub static INFO: [InfoField; 5] = [
    InfoField::counter(c"cache_hits", &CACHE_HITS),
    InfoField::counter(c"cache_misses", &CACHE_MISSES),
    InfoField::counter(c"cache_leases", &CACHE_LEASES),
    InfoField::counter(c"cache_stale_served", &CACHE_STALE_SERVED),
    InfoField::counter(c"cache_waiting", &CACHE_WAITING),
];
