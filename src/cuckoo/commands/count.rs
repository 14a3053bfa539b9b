//! `CF.COUNTX`: how many copies of an item's fingerprint a cuckoo filter holds.

use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::cuckoo::call::{read_filter, ONE_ITEM};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx};

shape_only_request!(
    /// `CF.COUNTX key item`
    Count,
    "cf.countx",
    Grammar::new(ONE_ITEM)
);

/// `CF.COUNTX key item`
pub fn count(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Count>()?;
    let n = read_filter(ctx, args, |f| f.count(f.hash(args.bytes(2))))?;
    host::reply_integer(ctx, n.unwrap_or(0) as i64);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Count as Request>::NAME,
    func: command_fn!(count),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary: "How many copies of the item's fingerprint the filter holds (at least its adds less its deletes; 0 for a missing key).",
        complexity: "O(1)",
        grammar: <Count as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
