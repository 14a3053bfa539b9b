//! RedisBloom's count-min names (`CMS.INITBYDIM`, `CMS.INCRBY`, …) under
//! `aliases redisbloom`: sketches in RedisBloom's own layout
//! (`core::redisbloom`), stored as its `CMSk-TYPE`, so its RDB files, AOF
//! files and `DUMP` payloads load here and what warden writes for those keys
//! loads back into RedisBloom.

pub mod call;
pub mod commands;
pub mod data_type;

use crate::glue::commands::AliasSet;
use crate::glue::family::Foreign;

/// RedisBloom's count-min names and type.
pub static FOREIGN: Foreign = Foreign {
    set: AliasSet::RedisBloom,
    commands: commands::COMMANDS,
    types: &[&data_type::RB_CMS_TYPE],
};
