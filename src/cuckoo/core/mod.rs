//! The cuckoo family's pure core: the filter, its sizing and random walks
//! (`filter`), its item hashes (`hash`), its packed tables (`subfilter`),
//! and its chunked dump (`dump`).

pub mod dump;
pub mod errors;
pub mod filter;
#[cfg(test)]
mod filter_tests;
pub mod hash;
pub mod redisbloom;
#[cfg(test)]
mod redisbloom_tests;
pub mod subfilter;
