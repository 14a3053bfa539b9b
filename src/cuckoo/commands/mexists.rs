//! `CF.MEXISTSX`: whether each item may be in a cuckoo filter.

use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::cuckoo::call::{filter_in, reply_flag, ITEMS};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CF.MEXISTSX key item [item ...]`
    MultiExists,
    "cf.mexistsx",
    Grammar::new(ITEMS)
);

/// `CF.MEXISTSX key item [item ...]`
pub fn mexists(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<MultiExists>()?;
    let mut key = Key::readable(ctx, args.raw(1));
    let f = filter_in(&mut key)?;
    host::reply_array(ctx, args.len() - 2);
    for i in 2..args.len() {
        let hit = f
            .as_ref()
            .is_some_and(|f| f.contains(f.hash(args.bytes(i))));
        reply_flag(ctx, args, hit);
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <MultiExists as Request>::NAME,
    func: command_fn!(mexists),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary: "For each item, 1 if it may be in the filter, 0 if it certainly is not.",
        complexity: "O(n)",
        grammar: <MultiExists as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
