//! The top-k family's commands (`TOPK.*X`), one file each: the request (its
//! grammar, which gives the arity, `COMMAND DOCS` and the parser), the handler
//! and the command's row in the table, side by side.
//!
//! Replication: an add decays buckets with draws from a generator kept in
//! the value, so the same adds on the same value give the same value; they
//! replicate as they were sent, and a creation as `TOPK.RESERVEX` with every
//! parameter (a replica with other defaults makes the same top-k, seeded
//! from the same key name). A windowed top-k's write first moves it to the
//! current slot; when that moved it, the move is replicated as its effect,
//! `TOPK._ROTATEX key slot_ms`, before the write, and the write itself after
//! it. Applied from a master or the AOF, a write never reads the clock: it
//! counts in the slot the top-k is at. Reads and refused calls replicate
//! nothing.

mod add;
mod count;
mod incrby;
mod info;
mod list;
mod load;
mod query;
mod reserve;
mod rotate;

use crate::glue::commands::Command;

/// `TOPK.*X`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    reserve::COMMAND,
    add::COMMAND,
    incrby::COMMAND,
    query::COMMAND,
    count::COMMAND,
    list::COMMAND,
    info::COMMAND,
    rotate::COMMAND,
    load::COMMAND,
];

#[cfg(test)]
mod tests {
    use crate::glue::commands::pinned;

    /// Every command's name, arity and alias, in table order: none may
    /// change (Redis enforces the arity; clients rely on the names).
    #[test]
    fn names_arities_and_aliases_never_change() {
        assert_eq!(
            pinned(super::COMMANDS),
            [
                ("topk.reservex", -3, None),
                ("topk.addx", -3, None),
                ("topk.incrbyx", -4, None),
                ("topk.queryx", -3, None),
                ("topk.countx", -3, None),
                ("topk.listx", -2, None),
                ("topk.infox", 2, None),
                ("topk._rotatex", 3, None),
                ("topk._loadx", -6, None),
            ]
        );
    }
}
