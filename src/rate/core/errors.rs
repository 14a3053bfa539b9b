//! The rate family's limits and its own refusals.

use crate::common::error::WardenError;

/// Most limits one key holds (`RL.TOKEN k 10/s 10 1000/h 1000 …`).
pub const MAX_LIMITS: usize = 8;

/// A rate that is not a number, `inf`, or count/period.
pub const BAD_RATE: WardenError = WardenError::Refused(
    "ERR rate must be a non-negative number, inf, or count/period such as 100/s or 300/15m",
);

/// Limiter arithmetic that would overflow.
pub const OVERFLOW: WardenError =
    WardenError::Refused("ERR rate limiter arithmetic would overflow");

/// A key written by another kind of limiter.
pub const KIND_MISMATCH: WardenError =
    WardenError::Refused("ERR key holds a different kind of rate limiter");

/// More limits in one call than a key holds (`MAX_LIMITS`).
pub fn too_many_limits() -> WardenError {
    WardenError::RefusedWith(format!(
        "ERR too many limits: a key holds at most {MAX_LIMITS}"
    ))
}
