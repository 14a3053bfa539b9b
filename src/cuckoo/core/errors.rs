//! The cuckoo family's limits and its own refusals (RedisBloom's texts
//! where it has them): the parser, the configuration and the error texts
//! read the limits from here.

use crate::common::error::WardenError;
use crate::common::limit::Limit;

/// Largest capacity of the first sub-filter (RedisBloom's).
pub const MAX_CAPACITY: u64 = 1 << 30;

/// Slots per bucket (`BUCKETSIZE`).
pub const BUCKET_SIZE: Limit = Limit::new("BUCKETSIZE", 1, 255);

/// Kicks per insert (`MAXITERATIONS`).
pub const MAX_ITERATIONS: Limit = Limit::new("MAXITERATIONS", 1, 65_535);

/// Growth factor of new sub-filters (`EXPANSION`; 0 never grows).
pub const EXPANSION: Limit = Limit::new("EXPANSION", 0, 32_768);

/// The setting that caps a filter's bytes.
pub const MAX_BYTES_SETTING: &str = "cf-max-bytes";

/// A filter that has all its sub-filters and no room.
pub const MAX_EXPANSIONS: WardenError = WardenError::Refused("ERR Maximum expansions reached");

/// A filter that cannot grow (`EXPANSION 0`) and has no room.
pub const FULL: WardenError = WardenError::Refused("ERR filter is full");

/// A filter (or its growth) past `cf-max-bytes`.
pub const TOO_LARGE: WardenError = WardenError::WouldExceed {
    what: "filter",
    setting: MAX_BYTES_SETTING,
};

/// A capacity outside 2 × `BUCKETSIZE` ..= `MAX_CAPACITY`.
pub fn bad_capacity() -> WardenError {
    WardenError::RefusedWith(format!(
        "ERR capacity must be an integer from 2 * BUCKETSIZE to {MAX_CAPACITY}"
    ))
}
