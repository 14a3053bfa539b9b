//! The Bloom family's own refusals (RedisBloom's texts where it has them).

use crate::common::error::WardenError;
use crate::common::limit::Limit;

/// Growth factor of new layers (`EXPANSION`; 0 inside warden means a
/// non-scaling filter, which no argument asks for by number).
pub const EXPANSION: Limit = Limit::new("expansion", 1, 32_768);

/// The setting that caps a filter's bytes.
pub const MAX_BYTES_SETTING: &str = "bf-max-bytes";

/// An error rate that is not a number in (0, 1).
pub const BAD_ERROR_RATE: WardenError =
    WardenError::Refused("ERR error rate must be a number between 0 and 1");

/// A filter (or its growth) past `bf-max-bytes`.
pub const TOO_LARGE: WardenError = WardenError::WouldExceed {
    what: "filter",
    setting: MAX_BYTES_SETTING,
};

/// A non-scaling filter that holds its capacity.
pub const FULL: WardenError = WardenError::Refused("ERR non scaling filter is full");

/// An aging filter that got more than its capacity within one window.
pub const AGING_FULL: WardenError =
    WardenError::Refused("ERR aging filter is full (far more than its capacity within one window)");

/// A window outside 100 ms to 10 years.
pub const BAD_WINDOW: WardenError =
    WardenError::Refused("ERR window must be from 100 ms to 10 years (3650 days)");

/// `AGE` given together with `EXPANSION` or `NONSCALING`.
pub const AGE_WITH_SCALING: WardenError =
    WardenError::Refused("ERR AGE cannot be used with EXPANSION or NONSCALING");

/// `EXPANSION` given together with `NONSCALING`.
pub const NON_SCALING_EXPANSION: WardenError =
    WardenError::Refused("ERR expansion cannot be used with a non scaling filter");

/// A chunk-load header that neither this family's dump nor RedisBloom 2.x's
/// made.
pub const FOREIGN_DUMP: WardenError =
    WardenError::Refused("ERR not a BF.SCANDUMPX header nor a RedisBloom 2.x BF.SCANDUMP header");

/// A RedisBloom header of a filter hashed with its 32-bit legacy hash.
pub const REDISBLOOM_HASH32: WardenError = WardenError::Refused(
    "ERR unsupported RedisBloom filter: 32-bit legacy hashing (no FORCE64 option)",
);

/// A RedisBloom header of a filter sized to powers of two (`n2`).
pub const REDISBLOOM_POWER_OF_TWO: WardenError = WardenError::Refused(
    "ERR unsupported RedisBloom filter: power-of-two sizing (no NOROUND option, or n2 set)",
);

/// A RedisBloom header with option bits RedisBloom 2.x does not define.
pub fn redisbloom_options(bits: u32) -> WardenError {
    WardenError::RefusedWith(format!(
        "ERR unsupported RedisBloom filter options {bits:#x}"
    ))
}
