//! The rate family's commands (`RL.*`), one file each: the request (its
//! grammar, which gives the arity, `COMMAND DOCS` and the parser), the
//! handler and the command's row in the table, side by side.
//!
//! Each call reads the server clock once, decides in the core, and — only when
//! it let events through — stores the new state with the absolute time at
//! which the limiter is full again as the key's expiry, and replicates that
//! state: in the call itself (`arg@state` in its first parameter, see
//! `glue::effect`) or as `RL._SET`. Denied calls and `COST 0` write and
//! replicate nothing.

mod gcra;
mod leaky;
mod set_state;
mod token;
mod window;

use crate::glue::commands::Command;

/// `RL.*`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    token::COMMAND,
    leaky::COMMAND,
    window::COMMAND,
    gcra::COMMAND,
    set_state::COMMAND,
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
                ("rl.token", -4, None),
                ("rl.leaky", -4, None),
                ("rl.window", -4, None),
                ("rl.gcra", -5, Some("cl.throttle")),
                ("rl._set", 3, None),
            ]
        );
    }
}
