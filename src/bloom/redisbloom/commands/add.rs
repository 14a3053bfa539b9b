//! `BF.ADD` (RedisBloom's): adds an item, creating the filter with the
//! defaults when the key is empty.

use crate::bloom::call::ONE_ITEM;
use crate::bloom::events;
use crate::bloom::redisbloom::call::{
    add_items, answer_as_x, defaults, holds_wardens, reply_outcomes,
};
use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;

shape_only_request!(
    /// `BF.ADD key item`
    Add,
    "bf.add",
    Grammar::new(ONE_ITEM)
);

/// `BF.ADD key item`: true when the item was new.
pub fn add(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::bloom::commands::add::add);
    }
    let outcomes = add_items(ctx, args, 2, Some(defaults()), events::ADD)?;
    reply_outcomes(ctx, &outcomes, false);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Add as Request>::NAME,
    func: command_fn!(add),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "RedisBloom's BF.ADD: adds an item (the filter created with the defaults if missing): true if new.",
        complexity: "O(k)",
        grammar: <Add as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
