//! RedisBloom's top-k names (`TOPK.RESERVE`, `TOPK.ADD`, …) under `aliases
//! redisbloom`: top-k sketches in RedisBloom's own layout
//! (`core::redisbloom`), stored as its `TopK-TYPE`, so its RDB files, AOF
//! files and `DUMP` payloads load here and what warden writes for those keys
//! loads back into RedisBloom.

pub mod commands;
pub mod data_type;

use crate::common::error::WardenError;
use crate::glue::commands::AliasSet;
use crate::glue::family::Foreign;
use crate::glue::host::Key;
use crate::topk::core::redisbloom::RbTopK;

/// RedisBloom's top-k names and type.
pub static FOREIGN: Foreign = Foreign {
    set: AliasSet::RedisBloom,
    commands: commands::COMMANDS,
    types: &[&data_type::RB_TOPK_TYPE],
};

/// The top-k in `key`: `TopK: key does not exist` when empty.
pub fn topk_in(key: &mut Key) -> Result<&mut RbTopK, WardenError> {
    key.value::<RbTopK>()?
        .ok_or(WardenError::Refused("TopK: key does not exist"))
}
