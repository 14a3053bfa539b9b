//! RedisBloom's top-k commands under its names, one file each: the grammar
//! (arity, `COMMAND DOCS`; arguments read as RedisBloom reads them), the
//! handler and the row.
//!
//! Writes replicate as they were sent (under RedisBloom's names: a replica
//! or AOF needs `aliases redisbloom`, as it needs the `TopK-TYPE` type):
//! the decay's chance is a hash, not a draw, so the same calls build the
//! same top-k; refused calls replicate nothing.

pub mod add;
pub mod count;
pub mod incrby;
pub mod info;
pub mod list;
pub mod query;
pub mod reserve;

use crate::glue::commands::Command;

/// RedisBloom's `TOPK.*` commands.
pub const COMMANDS: &[Command] = &[
    reserve::COMMAND,
    add::COMMAND,
    incrby::COMMAND,
    query::COMMAND,
    count::COMMAND,
    list::COMMAND,
    info::COMMAND,
];

#[cfg(test)]
mod tests {
    use crate::glue::commands::pinned;

    /// Every command's name and arity, in table order: none may change.
    #[test]
    fn names_and_arities_never_change() {
        assert_eq!(
            pinned(super::COMMANDS),
            [
                ("topk.reserve", -3, None),
                ("topk.add", -3, None),
                ("topk.incrby", -4, None),
                ("topk.query", -3, None),
                ("topk.count", -3, None),
                ("topk.list", -2, None),
                ("topk.info", 2, None),
            ]
        );
    }
}
