//! The lock family's configurations (`warden.dlock-*`).

use crate::glue::config::{Config, IntConfig};

/// Most clients blocked in `DLOCK.ACQUIRE … WAIT` on one key.
pub static DLOCK_MAX_WAITERS: IntConfig =
    IntConfig::new("dlock-max-waiters", 10_000, 1, 10_000_000, false);

/// Renewals per second the kept locks (`KEEP`) of this server may need
/// together (a lock with a lease of t ms needs 3000 / t); past it new kept
/// leases are refused rather than existing ones left to lapse.
pub static DLOCK_KEEP_MAX_RENEWALS: IntConfig =
    IntConfig::new("dlock-keep-max-renewals", 50_000, 1, 100_000_000, false);

/// Replicas a master must see (online, within `dlock-min-replicas-max-lag`)
/// to grant a lock, extend one or run DLOCK.GUARD; 0: no such rule.
pub static DLOCK_MIN_REPLICAS: IntConfig = IntConfig::new("dlock-min-replicas", 0, 0, 1000, false);

/// Largest replication lag, in seconds, of a replica `dlock-min-replicas` counts.
pub static DLOCK_MIN_REPLICAS_MAX_LAG: IntConfig =
    IntConfig::new("dlock-min-replicas-max-lag", 10, 0, 86_400, false);

/// The family's configurations.
pub static CONFIGS: [Config; 4] = [
    Config::Int(&DLOCK_MAX_WAITERS),
    Config::Int(&DLOCK_KEEP_MAX_RENEWALS),
    Config::Int(&DLOCK_MIN_REPLICAS),
    Config::Int(&DLOCK_MIN_REPLICAS_MAX_LAG),
];

/// Current `dlock-max-waiters`.
pub fn dlock_max_waiters() -> usize {
    DLOCK_MAX_WAITERS.get().max(1) as usize
}

/// Current `dlock-keep-max-renewals`.
pub fn dlock_keep_max_renewals() -> u64 {
    DLOCK_KEEP_MAX_RENEWALS.get().max(1) as u64
}
