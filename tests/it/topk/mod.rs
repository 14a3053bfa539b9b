//! The top-k family (`TOPK.*X`).

mod basics;
mod compare;
mod defrag;
mod persistence;
mod replication;
pub mod support;
mod window;
