//! The cache family (`CACHE.*`).

mod basics;
pub mod fuzz_values;
pub mod kit;
mod memory;
mod persistence;
mod server_ops;
pub mod support;
mod waiting;
