//! `BF.ADDX`: adds an item to a Bloom filter.

use crate::bloom::call::{add_items, reply_flag, AddEffect, CreateOptions, ONE_ITEM};
use crate::bloom::core::filter::Added;
use crate::bloom::events;
use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;

shape_only_request!(
    /// `BF.ADDX key item`
    Add,
    "bf.addx",
    Grammar::new(ONE_ITEM)
);

/// `BF.ADDX key item`
pub fn add(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Add>()?;
    let params = CreateOptions::default().params()?;
    let mut outcome = Err(WardenError::Internal);
    add_items(
        ctx,
        args,
        (2, None),
        Some(params),
        (AddEffect::VerbatimWhenAllNew, events::ADD),
        |o| outcome = o,
    )?;
    reply_flag(ctx, args, outcome? == Added::New);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Add as Request>::NAME,
    func: command_fn!(add),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Adds an item to a Bloom filter (created with the defaults if missing): 1 if new, 0 if it may have been present.",
        complexity: "O(k)",
        grammar: <Add as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
