//! What RedisBloom's count-min names share: the sketch in a key, RedisBloom's
//! texts, the size cap.

use crate::cms::call::max_bytes;
use crate::cms::config::cms_max_bytes;
use crate::cms::core::redisbloom::RbSketch;
use crate::common::error::WardenError;
use crate::glue::host::{Ctx, Key};

/// RedisBloom's refusal `text` (its texts carry no `ERR` code).
pub fn refused(text: &'static str) -> WardenError {
    WardenError::Refused(text)
}

/// The sketch in `key`: `CMS: key does not exist` when empty.
pub fn sketch_in(key: &mut Key) -> Result<&mut RbSketch, WardenError> {
    key.value::<RbSketch>()?
        .ok_or(refused("CMS: key does not exist"))
}

/// A new sketch, or the size cap's refusal naming the setting.
pub fn create(ctx: Ctx, width: u64, depth: u64) -> Result<RbSketch, WardenError> {
    let bytes = RbSketch::bytes_for(width, depth);
    if bytes.is_none_or(|b| b > max_bytes(ctx)) {
        return Err(WardenError::RefusedWith(format!(
            "CMS: Insufficient memory to create the key: it would take {} bytes, over \
             cms-max-bytes ({}); raise it with CONFIG SET warden.cms-max-bytes",
            bytes.map_or("too many".to_string(), |b| b.to_string()),
            cms_max_bytes()
        )));
    }
    RbSketch::new(width, depth).ok_or(refused("CMS: could not create the sketch"))
}
