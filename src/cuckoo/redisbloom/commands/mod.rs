//! RedisBloom's cuckoo commands under its names, one file each: the grammar
//! (for the arity and `COMMAND DOCS`; the arguments are read as RedisBloom
//! reads them), the handler and the row. A key holding one of warden's own
//! filters is answered by the X command in RedisBloom's reply style.
//!
//! Writes replicate their effect under RedisBloom's names (a replica or AOF
//! needs `aliases redisbloom`, as it needs the `MBbloomCF` type): a
//! creation as an explicit `CF.RESERVE` with every parameter, stored items
//! as `CF.INSERT … NOCREATE ITEMS` (where an item goes is decided by the
//! filter's state alone: RedisBloom's walks are not random), deletes,
//! compactions and chunks as sent; refused calls and calls that changed
//! nothing replicate nothing.

pub mod add;
pub mod addnx;
pub mod compact;
pub mod count;
pub mod debug;
pub mod del;
pub mod exists;
pub mod info;
pub mod insert;
pub mod insertnx;
pub mod loadchunk;
pub mod mexists;
pub mod reserve;
pub mod scandump;

use crate::glue::commands::Command;

/// RedisBloom's `CF.*` commands.
pub const COMMANDS: &[Command] = &[
    reserve::COMMAND,
    add::COMMAND,
    addnx::COMMAND,
    insert::COMMAND,
    insertnx::COMMAND,
    exists::COMMAND,
    mexists::COMMAND,
    count::COMMAND,
    del::COMMAND,
    compact::COMMAND,
    scandump::COMMAND,
    loadchunk::COMMAND,
    info::COMMAND,
    debug::COMMAND,
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
                ("cf.reserve", -3, None),
                ("cf.add", 3, None),
                ("cf.addnx", 3, None),
                ("cf.insert", -4, None),
                ("cf.insertnx", -4, None),
                ("cf.exists", 3, None),
                ("cf.mexists", -3, None),
                ("cf.count", 3, None),
                ("cf.del", 3, None),
                ("cf.compact", 2, None),
                ("cf.scandump", 3, None),
                ("cf.loadchunk", 4, None),
                ("cf.info", 2, None),
                ("cf.debug", 2, None),
            ]
        );
    }
}
