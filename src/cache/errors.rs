//! The cache family's own refusals.

use crate::common::error::WardenError;

/// A `CACHE.SET` value above `cache-max-value-bytes`.
pub const VALUE_TOO_LARGE: WardenError =
    WardenError::Refused("ERR value is larger than cache-max-value-bytes");

/// `CACHE.GET … WAIT` without `LEASE` (only a lease can be waited for).
pub const WAIT_WITHOUT_LEASE: WardenError = WardenError::Refused("ERR WAIT needs LEASE");
