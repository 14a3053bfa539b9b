//! Rate limiters (`RL.*`): the commands, the `warden-rl` data type and the
//! `RL._SET` wire format. The algorithms are `rate::core::rate`.

pub mod call;
pub mod commands;
pub mod core;
pub mod data_type;
pub mod events;
pub mod limiter;
pub mod stats;
pub mod wire;

use crate::glue::family::{starts_nothing, Family};

/// The rate-limiter family's declaration.
pub static FAMILY: Family = Family {
    name: "rate",
    acl_category: Some(c"ratelimit"),
    commands: commands::COMMANDS,
    types: &[&data_type::LIMITER_TYPE],
    configs: &[],
    info: &stats::INFO,
    events: &events::ALL,
    start: starts_nothing,
    foreign: &[],
};
