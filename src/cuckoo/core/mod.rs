//! The cuckoo family's pure core: the filter, its hashing, sizing and
//! random walks (`filter`).

pub mod filter;
#[cfg(test)]
mod filter_tests;
