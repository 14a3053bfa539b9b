//! The count-min family's configuration (`warden.cms-*`): the largest sketch.

use crate::glue::config::{Config, IntConfig};

/// Largest count-min sketch, in bytes (all its sub-sketches); bigger ones
/// are refused at creation.
pub static CMS_MAX_BYTES: IntConfig =
    IntConfig::new("cms-max-bytes", 128 << 20, 1024, 1 << 40, true);

/// The family's configurations.
pub static CONFIGS: [Config; 1] = [Config::Int(&CMS_MAX_BYTES)];

/// Current byte cap per sketch.
pub fn cms_max_bytes() -> u64 {
    CMS_MAX_BYTES.get().max(0) as u64
}
