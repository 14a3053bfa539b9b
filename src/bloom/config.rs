//! The Bloom family's configurations (`warden.bf-*`): what a filter created
//! without options gets, and the largest filter.

use crate::bloom::core::errors;
use crate::bloom::core::sizing::parse_error_rate;
use crate::glue::config::{Config, DecimalConfig, IntConfig};

/// Error rate of a filter created by ADDX / MADDX / INSERTX without one.
pub static BF_ERROR_RATE: DecimalConfig =
    DecimalConfig::new("bf-error-rate", 0.01, parse_error_rate);
/// Capacity of a filter created by ADDX / MADDX / INSERTX without one.
pub static BF_INITIAL_CAPACITY: IntConfig =
    IntConfig::new("bf-initial-capacity", 100, 1, 1 << 30, false);
/// Expansion of a filter created without one.
pub static BF_EXPANSION: IntConfig = IntConfig::new(
    "bf-expansion",
    2,
    errors::EXPANSION.min as i64,
    errors::EXPANSION.max as i64,
    false,
);
/// Largest filter, in bytes; bigger reserves or growths are refused.
pub static BF_MAX_BYTES: IntConfig =
    IntConfig::new(errors::MAX_BYTES_SETTING, 128 << 20, 1024, 1 << 40, true);

/// The family's configurations.
pub static CONFIGS: [Config; 4] = [
    Config::Decimal(&BF_ERROR_RATE),
    Config::Int(&BF_INITIAL_CAPACITY),
    Config::Int(&BF_EXPANSION),
    Config::Int(&BF_MAX_BYTES),
];

/// Current byte cap per filter.
pub fn bf_max_bytes() -> u64 {
    BF_MAX_BYTES.get().max(0) as u64
}
