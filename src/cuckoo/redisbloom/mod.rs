//! RedisBloom's cuckoo filter names (`CF.RESERVE`, `CF.ADD`, …) under
//! `aliases redisbloom`: filters in RedisBloom's own layout
//! (`core::redisbloom`), stored as its `MBbloomCF` type, so its RDB files,
//! AOF files, `DUMP` payloads and chunk streams load here and what warden
//! writes for those keys loads back into RedisBloom. Keys that hold
//! warden's own filters (`warden-cf`, made by the X names or by earlier
//! versions' aliases) are answered by the X commands, in RedisBloom's reply
//! style.

pub mod call;
pub mod commands;
pub mod data_type;

use crate::glue::commands::AliasSet;
use crate::glue::family::Foreign;

/// RedisBloom's cuckoo names and type.
pub static FOREIGN: Foreign = Foreign {
    set: AliasSet::RedisBloom,
    commands: commands::COMMANDS,
    types: &[&data_type::RB_CUCKOO_TYPE],
};
