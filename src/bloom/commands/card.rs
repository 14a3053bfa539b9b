//! `BF.CARDX`: how many items were added to a Bloom filter as new.

use crate::bloom::call::{clock_for, read_filter, KEY_ONLY};
use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx};

shape_only_request!(
    /// `BF.CARDX key`
    Card,
    "bf.cardx",
    Grammar::new(KEY_ONLY)
);

/// `BF.CARDX key`
pub fn card(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Card>()?;
    let items = read_filter(ctx, args, |f| f.items(clock_for(f)))?;
    host::reply_integer(ctx, items.unwrap_or(0) as i64);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Card as Request>::NAME,
    func: command_fn!(card),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary: "Number of items added to a filter as new (0 for a missing key).",
        complexity: "O(1)",
        grammar: <Card as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
