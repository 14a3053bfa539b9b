//! `TOPK.INFO` (RedisBloom's): a top-k's k, width, depth and decay.

use crate::common::error::WardenError;
use crate::common::grammar::{key, shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::topk::redisbloom::topk_in;

shape_only_request!(
    /// `TOPK.INFO key`
    Info,
    "topk.info",
    Grammar::new(&[key()])
);

/// `TOPK.INFO key`: `k`, `width`, `depth`, `decay` (a map in RESP3, a flat
/// array in RESP2; the decay as the server writes a double).
pub fn info(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let mut key = Key::readable(ctx, args.raw(1));
    let t = topk_in(&mut key)?;
    host::reply_map(ctx, 4);
    for (label, value) in [("k", t.k), ("width", t.width), ("depth", t.depth)] {
        host::reply_simple(ctx, label);
        host::reply_integer(ctx, i64::from(value));
    }
    host::reply_simple(ctx, "decay");
    host::reply_double(ctx, t.decay);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Info as Request>::NAME,
    func: command_fn!(info),
    alias: None,
    flags: "readonly",
    doc: Doc {
        summary: "RedisBloom's TOPK.INFO: k, width, depth and decay of a top-k.",
        complexity: "O(1)",
        grammar: <Info as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
