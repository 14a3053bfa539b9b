//! `TOPK.COUNT` (RedisBloom's): items' counts in the sketch.

use crate::common::error::WardenError;
use crate::common::grammar::{items, key, shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::topk::redisbloom::topk_in;

shape_only_request!(
    /// `TOPK.COUNT key item [item ...]`
    Count,
    "topk.count",
    Grammar::new(&[key(), items("item")])
);

/// `TOPK.COUNT key item [item ...]`: per item, its count in the sketch.
pub fn count(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let mut key = Key::readable(ctx, args.raw(1));
    let topk = topk_in(&mut key)?;
    host::reply_array(ctx, args.len() - 2);
    for i in 2..args.len() {
        host::reply_integer(ctx, i64::from(topk.count(args.bytes(i))));
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Count as Request>::NAME,
    func: command_fn!(count),
    alias: None,
    flags: "readonly",
    doc: Doc {
        summary: "RedisBloom's TOPK.COUNT: per item, its count in the sketch (an estimate).",
        complexity: "O(n * k) where n is the number of items",
        grammar: <Count as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
