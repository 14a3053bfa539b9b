//! Cache reads (`CACHE.*`): the commands, the `warden-ch` data type and the
//! `CACHE._SET` / `CACHE._META` wire formats. Freshness, versions and leases
//! are `cache::core`; lease tokens come from `fence`; waiting for a refresh
//! is `waiting`.

pub mod call;
pub mod commands;
pub mod config;
pub mod core;
pub mod data_type;
pub mod errors;
pub mod events;
pub mod stats;
pub mod waiters;
pub mod wire;

use crate::glue::family::{starts_nothing, Family};

/// The cache family's declaration.
pub static FAMILY: Family = Family {
    name: "cache",
    acl_category: Some(c"cache"),
    commands: commands::COMMANDS,
    types: &[&data_type::CACHE_TYPE],
    configs: &config::CONFIGS,
    info: &stats::INFO,
    events: &events::ALL,
    start: starts_nothing,
    foreign: &[],
};
