//! Cuckoo filters (`CF.*X`): membership you can delete from. The commands,
//! the `warden-cf` data type and the internal commands' wire format; the
//! filter itself is `cuckoo::core::filter`. RedisBloom's `CF.*` names, with
//! its own filters (`MBbloomCF`), are `cuckoo::redisbloom`.

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

/// The cuckoo family's declaration.
pub static FAMILY: Family = Family {
    name: "cuckoo",
    acl_category: Some(c"cuckoo"),
    commands: commands::COMMANDS,
    types: &[&data_type::CUCKOO_TYPE],
    configs: &config::CONFIGS,
    info: &stats::INFO,
    events: &events::ALL,
    start: starts_nothing,
    foreign: &[&redisbloom::FOREIGN],
};
