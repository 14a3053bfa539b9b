//! The cuckoo family's configurations (`warden.cf-*`): what a filter
//! created without options gets, and the largest filter.

use crate::cuckoo::core::errors::{
    BUCKET_SIZE, EXPANSION, MAX_BYTES_SETTING, MAX_CAPACITY, MAX_ITERATIONS,
};
use crate::glue::config::{Config, IntConfig};

/// Capacity of a cuckoo filter created by ADDX / INSERTX without one.
pub static CF_INITIAL_CAPACITY: IntConfig =
    IntConfig::new("cf-initial-capacity", 1024, 4, MAX_CAPACITY as i64, false);
/// Slots per bucket of a cuckoo filter created without `BUCKETSIZE`.
pub static CF_BUCKET_SIZE: IntConfig = IntConfig::new(
    "cf-bucket-size",
    2,
    BUCKET_SIZE.min as i64,
    BUCKET_SIZE.max as i64,
    false,
);
/// Kicks per insert of a cuckoo filter created without `MAXITERATIONS`.
pub static CF_MAX_ITERATIONS: IntConfig = IntConfig::new(
    "cf-max-iterations",
    500,
    MAX_ITERATIONS.min as i64,
    MAX_ITERATIONS.max as i64,
    false,
);
/// Expansion of a cuckoo filter created without `EXPANSION`.
pub static CF_EXPANSION: IntConfig = IntConfig::new(
    "cf-expansion",
    1,
    EXPANSION.min as i64,
    EXPANSION.max as i64,
    false,
);
/// Largest cuckoo filter, in bytes; bigger reserves or growths are refused.
pub static CF_MAX_BYTES: IntConfig =
    IntConfig::new(MAX_BYTES_SETTING, 128 << 20, 1024, 1 << 40, true);

/// The family's configurations.
pub static CONFIGS: [Config; 5] = [
    Config::Int(&CF_INITIAL_CAPACITY),
    Config::Int(&CF_BUCKET_SIZE),
    Config::Int(&CF_MAX_ITERATIONS),
    Config::Int(&CF_EXPANSION),
    Config::Int(&CF_MAX_BYTES),
];

/// Current byte cap per cuckoo filter.
pub fn cf_max_bytes() -> u64 {
    CF_MAX_BYTES.get().max(0) as u64
}
