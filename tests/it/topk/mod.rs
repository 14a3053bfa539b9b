//! The top-k family (`TOPK.*X`).

mod basics;
mod persistence;
mod replication;
pub mod support;
mod window;
