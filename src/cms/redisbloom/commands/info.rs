//! `CMS.INFO` (RedisBloom's): a sketch's width, depth and total count.

use crate::cms::redisbloom::call::sketch_in;
use crate::common::error::WardenError;
use crate::common::grammar::{key, shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CMS.INFO key`
    Info,
    "cms.info",
    Grammar::new(&[key()])
);

/// `CMS.INFO key`: `width`, `depth`, `count` (a map in RESP3, a flat array
/// in RESP2).
pub fn info(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let mut key = Key::readable(ctx, args.raw(1));
    let s = sketch_in(&mut key)?;
    host::reply_map(ctx, 3);
    for (label, value) in [("width", s.width), ("depth", s.depth), ("count", s.counter)] {
        host::reply_simple(ctx, label);
        host::reply_integer(ctx, value as i64);
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Info as Request>::NAME,
    func: command_fn!(info),
    alias: None,
    flags: "readonly",
    doc: Doc {
        summary:
            "RedisBloom's CMS.INFO: width, depth and count (every increment summed) of a sketch.",
        complexity: "O(1)",
        grammar: <Info as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
