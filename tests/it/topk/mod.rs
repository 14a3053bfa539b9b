//! The top-k family (`TOPK.*X`).

mod basics;
mod compare;
mod defrag;
pub mod fuzz_values;
pub mod kit;
pub mod payload;
mod persistence;
mod redisbloom_layout;
pub mod redisbloom_payload;
mod replication;
pub mod support;
mod window;
