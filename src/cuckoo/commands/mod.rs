//! The cuckoo family's commands (`CF.*X`), one file each: the request (its
//! grammar, which gives the arity, `COMMAND DOCS` and the parser), the
//! handler and the command's row in the table, side by side.
//!
//! Replication: where an item goes is decided by the filter's state and,
//! when both its buckets are full, by a random walk. A write that needed no
//! walk replays from its arguments on a replica (the same state places it
//! in the same slot, or moves the same fingerprint to make room for it) and
//! is replicated as it was sent; a call that created
//! its filter, or was made by RedisBloom's name, is replicated as an
//! explicit creation (`CF._LOADX … HEADER`, which names the filter's hash)
//! and `CF.INSERTX … NOCREATE`. A write where a walk
//! ran (placed, failed, or grew the filter) is replicated as its effect,
//! `CF._PLACEX key filters slots`: the slots it wrote with their final
//! values, so a replica never re-decides a kick. Reads, refused writes and
//! adds of present items (NX) replicate nothing.

pub mod add;
pub mod addnx;
pub mod compact;
pub mod count;
pub mod del;
pub mod exists;
pub mod info;
pub mod insert;
pub mod insertnx;
mod load;
pub mod loadchunk;
pub mod mexists;
mod place;
mod reserve;
pub mod scandump;

use crate::glue::commands::Command;

/// `CF.*X`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    reserve::COMMAND,
    add::COMMAND,
    addnx::COMMAND,
    insert::COMMAND,
    insertnx::COMMAND,
    exists::COMMAND,
    mexists::COMMAND,
    del::COMMAND,
    count::COMMAND,
    compact::COMMAND,
    info::COMMAND,
    scandump::COMMAND,
    loadchunk::COMMAND,
    place::COMMAND,
    load::COMMAND,
];

#[cfg(test)]
mod tests {
    use crate::glue::commands::pinned;

    /// Every command's name and arity (declared by hand before grammars gave
    /// it; Redis enforces it), in table order: none may change. RedisBloom's
    /// names are RedisBloom's own commands (`cuckoo::redisbloom`), not aliases.
    #[test]
    fn names_and_arities_never_change() {
        assert_eq!(
            pinned(super::COMMANDS),
            [
                ("cf.reservex", -3, None),
                ("cf.addx", 3, None),
                ("cf.addnxx", 3, None),
                ("cf.insertx", -4, None),
                ("cf.insertnxx", -4, None),
                ("cf.existsx", 3, None),
                ("cf.mexistsx", -3, None),
                ("cf.delx", 3, None),
                ("cf.countx", 3, None),
                ("cf.compactx", 2, None),
                ("cf.infox", 2, None),
                ("cf.scandumpx", 3, None),
                ("cf.loadchunkx", 4, None),
                ("cf._placex", 4, None),
                ("cf._loadx", -6, None),
            ]
        );
    }
}
