//! The Bloom family's pure core: sizing, hashing and layers (`filter`),
//! aging filters (`aging`) and the dump format (`dump`).

pub mod aging;
#[cfg(test)]
mod aging_filter_tests;
pub mod dump;
pub mod filter;
