//! The cache family's configurations (`warden.cache-*`).

use crate::glue::config::{Config, IntConfig};

/// Most clients blocked in `CACHE.GET … WAIT` on one key.
pub static CACHE_MAX_WAITERS: IntConfig =
    IntConfig::new("cache-max-waiters", 10_000, 1, 10_000_000, false);
/// Largest value `CACHE.SET` stores, in bytes (Redis strings stop at 512 MB).
pub static CACHE_MAX_VALUE_BYTES: IntConfig =
    IntConfig::new("cache-max-value-bytes", 64 << 20, 1, 512 << 20, true);

/// The family's configurations.
pub static CONFIGS: [Config; 2] = [
    Config::Int(&CACHE_MAX_WAITERS),
    Config::Int(&CACHE_MAX_VALUE_BYTES),
];

/// Current `cache-max-waiters`.
pub fn cache_max_waiters() -> usize {
    CACHE_MAX_WAITERS.get().max(1) as usize
}

/// Current `cache-max-value-bytes`.
pub fn cache_max_value_bytes() -> usize {
    CACHE_MAX_VALUE_BYTES.get().max(1) as usize
}
