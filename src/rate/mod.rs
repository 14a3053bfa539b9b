//! Rate limiters (`RL.*`): the commands, the `warden-rl` data type and the
//! `RL._SET` wire format. The algorithms are `rate::core::rate`.

pub mod commands;
pub mod core;
pub mod data_type;
pub mod limiter;
pub mod requests;
pub mod table;
pub mod wire;
