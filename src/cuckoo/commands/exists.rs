//! `CF.EXISTSX`: whether an item may be in a cuckoo filter.

use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::cuckoo::call::{read_filter, reply_flag, ONE_ITEM};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;

shape_only_request!(
    /// `CF.EXISTSX key item`
    Exists,
    "cf.existsx",
    Grammar::new(ONE_ITEM)
);

/// `CF.EXISTSX key item`
pub fn exists(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Exists>()?;
    let found = read_filter(ctx, args, |f| f.contains(f.hash(args.bytes(2))))?;
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
        complexity: "O(1)",
        grammar: <Exists as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
