//! `CF.ADDNX` (RedisBloom's): adds an item unless it may be present,
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
    /// `CF.ADDNX key item`
    AddNx,
    "cf.addnx",
    Grammar::new(ONE_ITEM)
);

/// `CF.ADDNX key item`: true when stored, false when it may be present.
pub fn addnx(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::cuckoo::commands::addnx::addnx);
    }
    let shape = Shape {
        nx: true,
        multi: false,
    };
    add_items(ctx, args, 2, Some(defaults(ctx)), (shape, events::ADD))
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <AddNx as Request>::NAME,
    func: command_fn!(addnx),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "RedisBloom's CF.ADDNX: adds an item unless it may be present (the filter created with the defaults if missing): true if added, false if it may be present.",
        complexity: "O(k + i), where k is the number of sub-filters and i is maxIterations",
        grammar: <AddNx as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
