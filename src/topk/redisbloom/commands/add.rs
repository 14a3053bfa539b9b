//! `TOPK.ADD` (RedisBloom's): counts items once each.

use crate::common::error::WardenError;
use crate::common::grammar::{items, key, shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::topk::events;
use crate::topk::redisbloom::topk_in;

shape_only_request!(
    /// `TOPK.ADD key item [item ...]`
    Add,
    "topk.add",
    Grammar::new(&[key(), items("item")])
);

/// Replies with the item an add put out of the top k, or nil.
pub fn reply_put_out(ctx: Ctx, out: Option<Vec<u8>>) {
    match out {
        // RedisBloom answers the item as a C string: up to a NUL.
        Some(item) => {
            let end = item.iter().position(|&b| b == 0).unwrap_or(item.len());
            host::reply_bulk(ctx, &item[..end]);
        }
        None => host::reply_null(ctx),
    }
}

/// `TOPK.ADD key item [item ...]`: per item, the item it put out of the
/// top k, or nil.
pub fn add(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let topk = topk_in(&mut key)?;
    host::reply_array(ctx, args.len() - 2);
    for i in 2..args.len() {
        reply_put_out(ctx, topk.add(args.bytes(i), 1));
    }
    // Time-independent: the decay is a hash of state and call, no clock.
    host::replicate_verbatim(ctx);
    host::notify(ctx, events::ADD, name);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Add as Request>::NAME,
    func: command_fn!(add),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "RedisBloom's TOPK.ADD: counts items once each; per item, the item it put out of the top k, or nil.",
        complexity: "O(n * k) where n is the number of items",
        grammar: <Add as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
