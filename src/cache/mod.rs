//! Cache reads (`CACHE.*`): the commands, the `warden-ch` data type and the
//! `CACHE._SET` / `CACHE._META` wire formats. Freshness, versions and leases
//! are `core::cache`; lease tokens come from `fence`; waiting for a refresh
//! is `waiting`.

pub mod commands;
pub mod data_type;
pub mod wire;
