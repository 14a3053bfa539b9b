//! Bloom filters (`BF.*X`): the commands, the `warden-bf` data type, the
//! `warden-bl` type of a filter being loaded by `BF.LOADCHUNKX`, and the
//! `BF._LOADX` wire format. Sizing, hashing and the dump format are
//! `bloom::core::filter` and `bloom::core::dump`.

pub mod call;
pub mod commands;
pub mod config;
pub mod core;
pub mod data_type;
pub mod events;
pub mod loading_type;
pub mod redisbloom;
pub mod stats;
pub mod wire;

use crate::glue::family::{starts_nothing, Family};

/// The Bloom family's declaration.
pub static FAMILY: Family = Family {
    name: "bloom",
    acl_category: Some(c"bloom"),
    commands: commands::COMMANDS,
    types: &[&data_type::BLOOM_TYPE, &loading_type::LOADING_TYPE],
    configs: &config::CONFIGS,
    info: &stats::INFO,
    events: &events::ALL,
    start: starts_nothing,
    foreign: &[&redisbloom::FOREIGN],
};
