//! RedisBloom's count-min commands under its names, one file each: the
//! grammar (arity, `COMMAND DOCS`; arguments read as RedisBloom reads
//! them), the handler and the row.
//!
//! Every write is time-independent and replicates as it was sent (under
//! RedisBloom's names: a replica or AOF needs `aliases redisbloom`, as it
//! needs the `CMSk-TYPE` type); refused calls replicate nothing.

pub mod incrby;
pub mod info;
pub mod init;
pub mod merge;
pub mod query;

use crate::glue::commands::Command;

/// RedisBloom's `CMS.*` commands.
pub const COMMANDS: &[Command] = &[
    init::BY_DIM,
    init::BY_PROB,
    incrby::COMMAND,
    query::COMMAND,
    merge::COMMAND,
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
                ("cms.initbydim", 4, None),
                ("cms.initbyprob", 4, None),
                ("cms.incrby", -4, None),
                ("cms.query", -3, None),
                ("cms.merge", -4, None),
                ("cms.info", 2, None),
            ]
        );
    }
}
