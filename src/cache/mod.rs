//! Cache reads (`CACHE.*`): the commands, the `warden-ch` data type and the
//! `CACHE._SET` / `CACHE._META` wire formats. Freshness, versions and leases
//! are `cache::core`; lease tokens come from `fence`; waiting for a refresh
//! is `waiting`.

pub mod commands;
pub mod core;
pub mod data_type;
pub mod requests;
pub mod table;
pub mod wire;
