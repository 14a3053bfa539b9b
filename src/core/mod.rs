//! Pure algorithms: no Redis types, no clock reads. Every function takes the
//! current time as an argument so it can be tested with a manual clock.

pub mod aging;
#[cfg(test)]
mod aging_filter_tests;
pub mod bloom;
pub mod bloom_dump;
pub mod bucket;
pub mod cache;
pub mod cluster;
pub mod compact_bytes;
pub mod error;
pub mod guard;
pub mod lock;
pub mod lock_set;
pub mod parse;
pub mod rate;
pub mod thin_bytes;
pub mod wait_queue;
pub mod window;
