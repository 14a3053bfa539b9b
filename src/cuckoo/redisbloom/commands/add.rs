//! `CF.ADD` (RedisBloom's): adds an item (another copy if present),
//! creating the filter with the defaults when the key is empty.

use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::cuckoo::call::ONE_ITEM;
use crate::cuckoo::events;
use crate::cuckoo::redisbloom::call::{add_items, answer_as_x, defaults, holds_wardens, Shape};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;

shape_only_request!(
    /// `CF.ADD key item`
    Add,
    "cf.add",
    Grammar::new(ONE_ITEM)
);

/// `CF.ADD key item`: true when stored; `Filter is full` when it cannot be.
pub fn add(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::cuckoo::commands::add::add);
    }
    let shape = Shape {
        nx: false,
        multi: false,
    };
    add_items(ctx, args, 2, Some(defaults(ctx)), (shape, events::ADD))
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Add as Request>::NAME,
    func: command_fn!(add),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "RedisBloom's CF.ADD: adds an item (another copy if present; the filter created with the defaults if missing): true, or an error when it has no room.",
        complexity: "O(k + i), where k is the number of sub-filters and i is maxIterations",
        grammar: <Add as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
