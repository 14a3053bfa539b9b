//! `CF.ADDNXX`: adds an item to a cuckoo filter unless it may be present.

use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::cuckoo::call::{add_items, CreateOptions, Shape, ONE_ITEM};
use crate::cuckoo::events;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;

shape_only_request!(
    /// `CF.ADDNXX key item`
    AddNx,
    "cf.addnxx",
    Grammar::new(ONE_ITEM)
);

/// `CF.ADDNXX key item`
pub fn addnx(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<AddNx>()?;
    add_items(
        ctx,
        args,
        2,
        (Some(CreateOptions::default()), None),
        (Shape::AddNx, events::ADD),
    )
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <AddNx as Request>::NAME,
    func: command_fn!(addnx),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Adds an item unless it may be present: 1 if added, 0 if it may be there already.",
        complexity: "O(1)",
        grammar: <AddNx as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
