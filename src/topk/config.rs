//! The top-k family's configurations (`warden.topk-*`): what a top-k
//! reserved without sizes gets (RedisBloom's defaults), and the largest.

use crate::common::error::WardenError;
use crate::common::parse::parse_f64;
use crate::glue::config::{Config, DecimalConfig, IntConfig};
use crate::topk::core::heavy_keeper::{Params, MAX_PARAM};

/// Width of a top-k reserved without one.
pub static TOPK_WIDTH: IntConfig = IntConfig::new("topk-width", 8, 1, MAX_PARAM as i64, false);
/// Depth of a top-k reserved without one.
pub static TOPK_DEPTH: IntConfig = IntConfig::new("topk-depth", 7, 1, MAX_PARAM as i64, false);
/// Decay of a top-k reserved without one.
pub static TOPK_DECAY: DecimalConfig = DecimalConfig::new("topk-decay", 0.9, parse_decay);
/// Largest top-k, in bytes (its sketches, its heap, its items when made);
/// bigger ones are refused at creation.
pub static TOPK_MAX_BYTES: IntConfig =
    IntConfig::new("topk-max-bytes", 128 << 20, 1024, 1 << 40, true);

/// The family's configurations.
pub static CONFIGS: [Config; 4] = [
    Config::Int(&TOPK_WIDTH),
    Config::Int(&TOPK_DEPTH),
    Config::Decimal(&TOPK_DECAY),
    Config::Int(&TOPK_MAX_BYTES),
];

/// A decay: a number in (0, 1].
pub fn parse_decay(text: &[u8]) -> Result<f64, WardenError> {
    Params::check_decay(parse_f64(text).unwrap_or(f64::NAN))
}

/// Current byte cap per top-k.
pub fn topk_max_bytes() -> u64 {
    TOPK_MAX_BYTES.get().max(0) as u64
}
