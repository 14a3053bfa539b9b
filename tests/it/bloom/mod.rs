//! The Bloom filter family (`BF.*X`).

mod aging;
mod basics;
mod config;
mod errors;
pub mod fuzz_values;
pub mod kit;
mod max_bytes;
mod memory;
mod payloads;
mod persistence;
mod redisbloom_fixtures;
mod redisbloom_import;
mod redisbloom_layout;
pub mod redisbloom_payload;
mod replication;
mod scandump;
mod scandump_persistence;
mod sizing;
pub mod support;
mod tiny_rates;
