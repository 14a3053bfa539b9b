//! `BF.MADDX`: adds items to a Bloom filter.

use crate::bloom::call::{add_items, AddEffect, CreateOptions, ItemReplies, ITEMS};
use crate::bloom::events;
use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;

shape_only_request!(
    /// `BF.MADDX key item [item ...]`
    MultiAdd,
    "bf.maddx",
    Grammar::new(ITEMS)
);

/// `BF.MADDX key item [item ...]`
pub fn madd(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<MultiAdd>()?;
    let params = CreateOptions::default().params()?;
    let mut replies = ItemReplies::new(ctx, args, args.len() - 2);
    add_items(
        ctx,
        args,
        (2, None),
        Some(params),
        (AddEffect::VerbatimWhenAllNew, events::MADD),
        |o| replies.emit(o),
    )
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <MultiAdd as Request>::NAME,
    func: command_fn!(madd),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Adds items to a Bloom filter: one 1/0 (or error) per item.",
        complexity: "O(k * n)",
        grammar: <MultiAdd as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
