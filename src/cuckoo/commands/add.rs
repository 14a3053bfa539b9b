//! `CF.ADDX`: adds an item (another copy if present) to a cuckoo filter.

use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::cuckoo::call::{add_items, filter_in, CreateOptions, Shape, ONE_ITEM};
use crate::cuckoo::events;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CF.ADDX key item`
    Add,
    "cf.addx",
    Grammar::new(ONE_ITEM)
);

/// `CF.ADDX key item`
pub fn add(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Add>()?;
    if !args.by_alias() && add_without_walk(ctx, args)? {
        return Ok(());
    }
    add_items(
        ctx,
        args,
        2,
        (Some(CreateOptions::default()), None),
        (Shape::Add, events::ADD),
    )
}

/// The common `CF.ADDX key item`: the filter exists and the item goes in
/// without a random walk (a free slot of its buckets, or one fingerprint
/// moved). Replies, replicates and notifies as `add_items` would and
/// answers true; answers false with nothing done (the key not written,
/// nothing replied) for every other case, which `add_items` takes. Out of
/// line and short, so the add most calls make runs little code.
#[inline(never)]
fn add_without_walk(ctx: Ctx, args: &Args) -> Result<bool, WardenError> {
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let Some(filter) = filter_in(&mut key)? else {
        return Ok(false);
    };
    if !filter.insert_without_walk(filter.hash(args.bytes(2))) {
        return Ok(false);
    }
    // Placed by the filter's state alone: a replica or the AOF replaying
    // the call stores it in the same slot (and moves the same fingerprint);
    // the clock plays no part.
    host::replicate_verbatim(ctx);
    host::notify(ctx, events::ADD, name);
    host::reply_integer(ctx, 1);
    Ok(true)
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Add as Request>::NAME,
    func: command_fn!(add),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Adds an item (another copy if present) to a cuckoo filter, created with the defaults if missing: 1, or an error when it has no room.",
        complexity: "O(1)",
        grammar: <Add as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
