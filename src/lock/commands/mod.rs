//! The lock family's commands (`DLOCK.*`), one file each: the request (its
//! grammar, which gives the arity, `COMMAND DOCS` and the parser), the
//! handler and the command's row in the table, side by side.
//!
//! Each handler is glue between the arguments, the lock key and the core
//! state machine. Grants, re-entries and extensions replicate the new state
//! with its absolute deadline in the call itself (`ttl@state`, see `effect`)
//! or as `DLOCK._SET`, hand-offs as `DLOCK._SET`; releases as themselves (see
//! `release`); calls that change nothing replicate nothing.

mod acquire;
mod extend;
pub mod fence;
mod guard;
mod info;
mod release;
mod set_state;
mod set_states;

use crate::glue::commands::Command;

/// `DLOCK.*`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    acquire::COMMAND,
    release::COMMAND,
    extend::COMMAND,
    guard::COMMAND,
    info::COMMAND,
    set_states::COMMAND,
    set_state::COMMAND,
    fence::COMMAND,
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
                ("dlock.acquire", -4, None),
                ("dlock.release", -3, None),
                ("dlock.extend", -4, None),
                ("dlock.guard", -5, None),
                ("dlock.info", 2, None),
                ("dlock._sets", 4, None),
                ("dlock._set", 4, None),
                ("dlock._fence", 2, None),
            ]
        );
    }
}
