//! The rate limiter family (`RL.*`).

mod basics;
mod errors;
mod forms;
pub mod fuzz_values;
mod gcra_cell;
pub mod kit;
mod limits;
mod memory;
pub mod payload;
mod persistence;
pub mod support;
mod token;
