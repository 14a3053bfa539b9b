//! The cuckoo filter family (`CF.*X`).

mod basics;
mod compat;
pub mod fuzz_values;
pub mod kit;
pub mod payload;
mod redisbloom_fixtures;
mod redisbloom_layout;
pub mod redisbloom_payload;
pub mod support;
