//! `BF.MEXISTSX`: whether each item may be in a Bloom filter.

use crate::bloom::call::{clock_for, read_filter, reply_flag, ITEMS};
use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx};

shape_only_request!(
    /// `BF.MEXISTSX key item [item ...]`
    MultiExists,
    "bf.mexistsx",
    Grammar::new(ITEMS)
);

/// `BF.MEXISTSX key item [item ...]`
pub fn mexists(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<MultiExists>()?;
    let items = 2..args.len();
    let found = read_filter(ctx, args, |f| {
        let now = clock_for(f);
        items
            .clone()
            .map(|i| f.contains_item(args.bytes(i), || now))
            .collect::<Vec<bool>>()
    })?;
    host::reply_array(ctx, items.len());
    for i in 0..items.len() {
        let hit = found.as_ref().is_some_and(|f| f[i]);
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
        complexity: "O(k * n)",
        grammar: <MultiExists as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
