//! Top-k heavy hitters (`TOPK.*X`): the k items counted most, over all time
//! or over a sliding window. The commands, the `warden-tk` data type and
//! the internal commands' wire format; the sketch itself is
//! `topk::core::heavy_keeper`. Reference: `src/topk/README.md`.

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

/// The top-k family's declaration. Its ACL category is RedisBloom's for the
/// same commands, so `+@topk` / `-@topk` rules carry over.
pub static FAMILY: Family = Family {
    name: "topk",
    acl_category: Some(c"topk"),
    commands: commands::COMMANDS,
    types: &[&data_type::TOPK_TYPE],
    configs: &config::CONFIGS,
    info: &stats::INFO,
    events: &events::ALL,
    start: starts_nothing,
    foreign: &[&redisbloom::FOREIGN],
};
