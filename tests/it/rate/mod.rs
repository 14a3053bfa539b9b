//! The rate limiter family (`RL.*`).

mod basics;
mod errors;
mod forms;
pub mod fuzz_values;
mod gcra_cell;
mod limits;
mod memory;
mod persistence;
pub mod support;
mod token;
