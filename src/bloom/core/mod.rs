//! The Bloom family's pure core: sizing, hashing and layers (`filter`),
//! aging filters (`aging`), the dump format (`dump`) and RedisBloom's
//! scheme for imported filters (`redisbloom`).

pub mod aging;
#[cfg(test)]
mod aging_filter_tests;
pub mod dump;
pub mod filter;
pub mod redisbloom;
