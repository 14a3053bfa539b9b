//! RedisBloom's Bloom commands under its names, one file each: the grammar
//! (for the arity and `COMMAND DOCS`; the arguments are read as RedisBloom
//! reads them), the handler and the row. A key holding one of warden's own
//! filters is answered by the X command in RedisBloom's reply style.
//!
//! Writes replicate their effect under RedisBloom's names (a replica or AOF
//! needs `aliases redisbloom`, as it needs the `MBbloom--` type): a
//! creation as an explicit `BF.RESERVE`, new items as `BF.MADD`, chunks as
//! sent; adds of present items and refused calls replicate nothing.

pub mod add;
pub mod card;
pub mod debug;
pub mod exists;
pub mod info;
pub mod insert;
pub mod loadchunk;
pub mod madd;
pub mod mexists;
pub mod reserve;
pub mod scandump;

use crate::glue::commands::Command;

/// RedisBloom's `BF.*` commands.
pub const COMMANDS: &[Command] = &[
    reserve::COMMAND,
    add::COMMAND,
    madd::COMMAND,
    insert::COMMAND,
    exists::COMMAND,
    mexists::COMMAND,
    info::COMMAND,
    card::COMMAND,
    debug::COMMAND,
    scandump::COMMAND,
    loadchunk::COMMAND,
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
                ("bf.reserve", -4, None),
                ("bf.add", 3, None),
                ("bf.madd", -3, None),
                ("bf.insert", -4, None),
                ("bf.exists", 3, None),
                ("bf.mexists", -3, None),
                ("bf.info", -2, None),
                ("bf.card", 2, None),
                ("bf.debug", 2, None),
                ("bf.scandump", 3, None),
                ("bf.loadchunk", 4, None),
            ]
        );
    }
}
