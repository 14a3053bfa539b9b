//! `TOPK.QUERY` (RedisBloom's): whether items are in the top k.

use crate::common::error::WardenError;
use crate::common::grammar::{items, key, shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::topk::redisbloom::topk_in;

shape_only_request!(
    /// `TOPK.QUERY key item [item ...]`
    Query,
    "topk.query",
    Grammar::new(&[key(), items("item")])
);

/// `TOPK.QUERY key item [item ...]`: per item, whether it is in the top k
/// (a boolean in RESP3, 1/0 in RESP2).
pub fn query(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let mut key = Key::readable(ctx, args.raw(1));
    let topk = topk_in(&mut key)?;
    host::reply_array(ctx, args.len() - 2);
    for i in 2..args.len() {
        host::reply_bool(ctx, topk.query(args.bytes(i)));
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Query as Request>::NAME,
    func: command_fn!(query),
    alias: None,
    flags: "readonly",
    doc: Doc {
        summary: "RedisBloom's TOPK.QUERY: per item, whether it is in the top k.",
        complexity: "O(n * k) where n is the number of items",
        grammar: <Query as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
