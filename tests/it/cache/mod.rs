//! The cache family (`CACHE.*`).

mod basics;
mod memory;
mod persistence;
mod server_ops;
pub mod support;
mod waiting;
