//! The top-k family (`TOPK.*X`).

mod basics;
mod compare;
mod persistence;
mod replication;
pub mod support;
mod window;
