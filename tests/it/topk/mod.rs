//! The top-k family (`TOPK.*X`).

mod basics;
mod compare;
mod defrag;
pub mod fuzz_values;
pub mod kit;
pub mod payload;
mod persistence;
mod redisbloom_layout;
mod replication;
pub mod support;
mod window;
