//! The count-min family's commands (`CMS.*X`), one file each: the request (its
//! grammar, which gives the arity, `COMMAND DOCS` and the parser), the handler
//! and the command's row in the table, side by side.
//!
//! Replication: creation, increments and merges of a sketch without a
//! window do not depend on time, so they replicate as they were sent
//! (`CMS.INITBYPROBX` as the `CMS.INITBYDIMX` of the sizes it worked out).
//! A windowed sketch's write first moves it to the current slot; when that
//! moved it, the move is replicated as its effect, `CMS._ROTATEX key
//! slot_ms`, before the write, and the write itself after it. Applied from a
//! master or the AOF, a write never reads the clock: it counts in the slot
//! the sketch is at (a merge is made as of that slot). Reads, refused calls
//! and increments of 0 that moved nothing replicate nothing.

mod incrby;
mod info;
mod initbydim;
mod initbyprob;
mod load;
mod merge;
mod query;
mod rotate;

use crate::glue::commands::Command;

/// `CMS.*X`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    initbydim::COMMAND,
    initbyprob::COMMAND,
    incrby::COMMAND,
    query::COMMAND,
    merge::COMMAND,
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
                ("cms.initbydimx", -4, None),
                ("cms.initbyprobx", -4, None),
                ("cms.incrbyx", -4, None),
                ("cms.queryx", -3, None),
                ("cms.mergex", -4, None),
                ("cms.infox", 2, None),
                ("cms._rotatex", 3, None),
                ("cms._loadx", -7, None),
            ]
        );
    }
}
