//! The lock family's own refusals.

use crate::common::error::WardenError;

/// A request of another kind than the key's lock (`SHARED`, `LIMIT n`).
pub const KIND_MISMATCH: WardenError = WardenError::Refused("ERR key holds a lock of another kind");

/// `KEEP` from a caller that is no client connection (a script, a module's
/// call): nothing would ever end the grant.
pub const KEEP_NEEDS_CONNECTION: WardenError = WardenError::Refused(
    "ERR KEEP binds a lock to the client connection: not from a script or a module call",
);

/// `KEEP` on a replica, which renews nothing.
pub const KEEP_NEEDS_MASTER: WardenError =
    WardenError::Refused("ERR KEEP needs a master: a replica renews no lease");

/// An owner given as the empty string.
pub const OWNER_EMPTY: WardenError = WardenError::Refused("ERR owner must not be empty");

/// A hold count, token or hold total that would overflow.
pub const HOLDS_OVERFLOW: WardenError = WardenError::Refused("ERR lock hold count overflow");

/// `KEEP` with a ttl below `min` ms, the shortest renewals can keep.
pub fn keep_ttl_too_short(min: i64) -> WardenError {
    WardenError::RefusedWith(format!("ERR KEEP needs a ttl of at least {min} ms"))
}

/// Kept leases would need more renewals per second than `max`
/// (`dlock-keep-max-renewals`).
pub fn keep_capacity(max: u64) -> WardenError {
    WardenError::RefusedWith(format!(
        "ERR KEEP renewal capacity reached: kept locks would need more than {max} renewals per second (dlock-keep-max-renewals); use a longer ttl"
    ))
}

/// `DLOCK.GUARD`: `key` (lossy text) is not held by the owner with the token.
pub fn fenced(key: &[u8]) -> WardenError {
    WardenError::RefusedWith(format!(
        "FENCED {} is not held by this owner with this token",
        String::from_utf8_lossy(key)
    ))
}

/// `DLOCK.GUARD` cannot run `command`, for the reason given.
pub fn not_guardable(command: &str, why: &str) -> WardenError {
    WardenError::RefusedWith(format!("ERR DLOCK.GUARD cannot run '{command}': {why}"))
}

/// `dlock-min-replicas`: a grant or GUARD needs `needed` replicas with lag at
/// most `max_lag_s` seconds; this master sees `seen`.
pub fn not_enough_replicas(needed: i64, max_lag_s: i64, seen: i64) -> WardenError {
    WardenError::NotEnoughReplicas(format!(
        "NOREPLICAS lock grants need {needed} replicas with lag <= {max_lag_s} s (dlock-min-replicas); this master sees {seen}"
    ))
}
