//! The Bloom family's commands (`BF.*X`), one file each: the request (its
//! grammar, which gives the arity, `COMMAND DOCS` and the parser), the
//! handler and the command's row in the table, side by side.
//!
//! Adds are deterministic, so the effect of an add is the add itself: only
//! items that were new are replicated (as `BF.ADDX` / `BF.MADDX`), and a
//! filter created implicitly is replicated first as an explicit `BF.RESERVEX`
//! with the parameters used, so a replica with other defaults builds the same
//! filter. Reads and adds of present items replicate nothing.
//!
//! An aging filter's add depends on the clock (which block takes the item,
//! which blocks retire), so it replicates as `BF._ADDATX key unix_ms items`:
//! the items that changed the filter, applied as of the master's time. Most
//! adds change only the newest block (no block retired or opened, no item
//! refused): those replicate as they were sent, and a replica or the AOF
//! replays an aging filter's `BF.ADDX` / `BF.MADDX` as "set the items in the
//! newest block", without a clock.
//!
//! RedisBloom's names (`aliases redisbloom`) are RedisBloom's own commands
//! (`bloom::redisbloom`); on a key holding one of these filters they call
//! the same handlers, which then reply as RedisBloom does (booleans in
//! RESP3, `BF.INFO`'s five fields) and replicate their X form.

pub mod add;
mod add_at;
pub mod card;
pub mod exists;
pub mod info;
pub mod insert;
mod load;
pub mod loadchunk;
pub mod madd;
pub mod mexists;
mod reserve;
pub mod scandump;

use crate::glue::commands::Command;

/// `BF.*X`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    reserve::COMMAND,
    add::COMMAND,
    madd::COMMAND,
    insert::COMMAND,
    exists::COMMAND,
    mexists::COMMAND,
    info::COMMAND,
    card::COMMAND,
    scandump::COMMAND,
    loadchunk::COMMAND,
    add_at::COMMAND,
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
                ("bf.reservex", -4, None),
                ("bf.addx", 3, None),
                ("bf.maddx", -3, None),
                ("bf.insertx", -4, None),
                ("bf.existsx", 3, None),
                ("bf.mexistsx", -3, None),
                ("bf.infox", -2, None),
                ("bf.cardx", 2, None),
                ("bf.scandumpx", 3, None),
                ("bf.loadchunkx", 4, None),
                ("bf._addatx", -4, None),
                ("bf._loadx", -6, None),
            ]
        );
    }
}
