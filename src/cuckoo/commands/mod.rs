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

mod add;
mod addnx;
mod compact;
mod count;
mod del;
mod exists;
mod info;
mod insert;
mod insertnx;
mod load;
mod loadchunk;
mod mexists;
mod place;
mod reserve;
mod scandump;

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

    /// Every command's name, arity (declared by hand before grammars gave
    /// it; Redis enforces it) and alias, in table order: none may change.
    #[test]
    fn names_arities_and_aliases_never_change() {
        assert_eq!(
            pinned(super::COMMANDS),
            [
                ("cf.reservex", -3, Some("cf.reserve")),
                ("cf.addx", 3, Some("cf.add")),
                ("cf.addnxx", 3, Some("cf.addnx")),
                ("cf.insertx", -4, Some("cf.insert")),
                ("cf.insertnxx", -4, Some("cf.insertnx")),
                ("cf.existsx", 3, Some("cf.exists")),
                ("cf.mexistsx", -3, Some("cf.mexists")),
                ("cf.delx", 3, Some("cf.del")),
                ("cf.countx", 3, Some("cf.count")),
                ("cf.compactx", 2, Some("cf.compact")),
                ("cf.infox", 2, Some("cf.info")),
                ("cf.scandumpx", 3, Some("cf.scandump")),
                ("cf.loadchunkx", 4, Some("cf.loadchunk")),
                ("cf._placex", 4, None),
                ("cf._loadx", -6, None),
            ]
        );
    }
}
