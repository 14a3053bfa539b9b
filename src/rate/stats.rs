//! The rate-limiter family's counters and its INFO fields.

use std::sync::atomic::AtomicI64;

use crate::glue::family::InfoField;
pub use crate::glue::stats::count;

/// Rate-limiter calls that were allowed.
pub static RL_ALLOWED: AtomicI64 = AtomicI64::new(0);
/// Rate-limiter calls that were denied.
pub static RL_DENIED: AtomicI64 = AtomicI64::new(0);

/// The family's INFO fields, in order.
pub static INFO: [InfoField; 2] = [
    InfoField::counter(c"rl_allowed", &RL_ALLOWED),
    InfoField::counter(c"rl_denied", &RL_DENIED),
];
