//! `BF.EXISTSX`: whether an item may be in a Bloom filter.

use crate::bloom::call::{clock_for, read_filter, reply_flag, ONE_ITEM};
use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;

shape_only_request!(
    /// `BF.EXISTSX key item`
    Exists,
    "bf.existsx",
    Grammar::new(ONE_ITEM)
);

/// `BF.EXISTSX key item`
pub fn exists(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Exists>()?;
    let found = read_filter(ctx, args, |f| {
        f.contains_item(args.bytes(2), || clock_for(f))
    })?;
    reply_flag(ctx, args, found.unwrap_or(false));
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Exists as Request>::NAME,
    func: command_fn!(exists),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary:
            "1 if the item may be in the filter, 0 if it certainly is not (0 for a missing key).",
        complexity: "O(k)",
        grammar: <Exists as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
