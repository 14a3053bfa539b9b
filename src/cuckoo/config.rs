//! The cuckoo family's configurations (`warden.cf-*`): what a filter
//! created without options gets, and the largest filter.

use crate::cuckoo::core::filter::{MAX_BUCKET_SIZE, MAX_CAPACITY, MAX_EXPANSION, MAX_ITERATIONS};
use crate::glue::config::{Config, IntConfig};

/// Capacity of a cuckoo filter created by ADDX / INSERTX without one.
pub static CF_INITIAL_CAPACITY: IntConfig =
    IntConfig::new("cf-initial-capacity", 1024, 4, MAX_CAPACITY as i64, false);
/// Slots per bucket of a cuckoo filter created without `BUCKETSIZE`.
pub static CF_BUCKET_SIZE: IntConfig =
    IntConfig::new("cf-bucket-size", 2, 1, MAX_BUCKET_SIZE as i64, false);
/// Kicks per insert of a cuckoo filter created without `MAXITERATIONS`.
pub static CF_MAX_ITERATIONS: IntConfig =
    IntConfig::new("cf-max-iterations", 500, 1, MAX_ITERATIONS as i64, false);
/// Expansion of a cuckoo filter created without `EXPANSION`.
pub static CF_EXPANSION: IntConfig =
    IntConfig::new("cf-expansion", 1, 0, MAX_EXPANSION as i64, false);
/// Largest cuckoo filter, in bytes; bigger reserves or growths are refused.
pub static CF_MAX_BYTES: IntConfig = IntConfig::new("cf-max-bytes", 128 << 20, 1024, 1 << 40, true);

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
