//! `TOPK.ADDX`: counts items once each, replying the items they expelled.

use crate::common::error::WardenError;
use crate::common::grammar::Request;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;
use crate::topk::call::{add_items, Items};
use crate::topk::events;

/// `TOPK.ADDX key item [item ...]`
pub type Add = Items<0>;

/// `TOPK.ADDX key item [item ...]`
pub fn add(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Add>()?;
    add_items(ctx, args, false, (c"TOPK.ADDX", events::ADD))
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Add as Request>::NAME,
    func: command_fn!(add),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Counts each item once: per item, the item it pushed out of the top k, or nil.",
        complexity: "O(n * k) where n is the number of items",
        grammar: <Add as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
