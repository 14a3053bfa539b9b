//! Count-min sketches (`CMS.*X`): how often each item was counted, never
//! under, over all time or over a sliding window. The commands, the
//! `warden-cm` data type and the internal commands' wire format; the sketch
//! itself is `cms::core::sketch`. Reference: `src/cms/README.md`.

pub mod call;
pub mod commands;
pub mod config;
pub mod core;
pub mod data_type;
pub mod events;
pub mod redisbloom;
pub mod stats;
pub mod wire;

use crate::glue::family::{starts_nothing, Family};

/// The count-min family's declaration. Its ACL category is RedisBloom's
/// for the same commands, so `+@cms` / `-@cms` rules carry over.
pub static FAMILY: Family = Family {
    name: "cms",
    acl_category: Some(c"cms"),
    commands: commands::COMMANDS,
    types: &[&data_type::CMS_TYPE],
    configs: &config::CONFIGS,
    info: &stats::INFO,
    events: &events::ALL,
    start: starts_nothing,
    foreign: &[&redisbloom::FOREIGN],
};
