//! `BF.MADD` (RedisBloom's): adds items, creating the filter with the
//! defaults when the key is empty.

use crate::bloom::call::ITEMS;
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
    /// `BF.MADD key item [item ...]`
    Madd,
    "bf.madd",
    Grammar::new(ITEMS)
);

/// `BF.MADD key item [item ...]`: per item, true when it was new; a full
/// non-scaling filter's error ends the array.
pub fn madd(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::bloom::commands::madd::madd);
    }
    let outcomes = add_items(ctx, args, 2, Some(defaults()), events::MADD)?;
    reply_outcomes(ctx, &outcomes, true);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Madd as Request>::NAME,
    func: command_fn!(madd),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "RedisBloom's BF.MADD: adds items (the filter created with the defaults if missing): per item, true if new.",
        complexity: "O(k * n)",
        grammar: <Madd as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
