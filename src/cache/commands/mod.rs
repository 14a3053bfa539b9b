//! The cache family's commands (`CACHE.*`), one file each: the request (its
//! grammar, which gives the arity, `COMMAND DOCS` and the parser), the
//! handler and the command's row in the table, side by side.
//!
//! A SET replicates its entry with absolute times in the call itself
//! (`ttl@meta`, see `glue::effect`) or as `CACHE._SET`; a lease taken or a
//! hot key extended replicates as `CACHE._META`; reads that change nothing
//! replicate nothing (HOT read counts stay on the master).

mod get;
mod info;
mod set;
mod set_entry;

use crate::glue::commands::Command;

/// `CACHE.*`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    set::COMMAND,
    get::COMMAND,
    info::COMMAND,
    set_entry::SET_WHOLE_COMMAND,
    set_entry::SET_META_COMMAND,
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
                ("cache.set", -4, None),
                ("cache.get", -2, None),
                ("cache.info", 2, None),
                ("cache._set", 4, None),
                ("cache._meta", 3, None),
            ]
        );
    }
}
