//! The count-min sketch family (`CMS.*X`).

mod basics;
mod persistence;
mod replication;
pub mod support;
mod window;
