//! The Bloom family's pure core: RedisBloom's own filters (`chain`), layers and filters (`filter`), their hashing
//! (`hashing`) and sizing (`sizing`),
//! aging filters (`aging`), the dump format (`dump`) and RedisBloom's
//! scheme for imported filters (`redisbloom`), its refusals and limits
//! (`errors`).

pub mod aging;
#[cfg(test)]
mod aging_filter_tests;
pub mod chain;
#[cfg(test)]
mod chain_tests;
pub mod dump;
pub mod errors;
pub mod filter;
pub mod hashing;
pub mod redisbloom;
pub mod sizing;
