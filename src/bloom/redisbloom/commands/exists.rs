//! `BF.EXISTS` (RedisBloom's): whether an item may be in the filter.

use crate::bloom::call::ONE_ITEM;
use crate::bloom::redisbloom::call::{answer_as_x, holds_wardens, reply_flag, with_chain};
use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;

shape_only_request!(
    /// `BF.EXISTS key item`
    Exists,
    "bf.exists",
    Grammar::new(ONE_ITEM)
);

/// `BF.EXISTS key item`: false for a key without a filter (of any type, as
/// RedisBloom answers).
pub fn exists(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::bloom::commands::exists::exists);
    }
    let found = with_chain(ctx, args, |c| c.contains(args.bytes(2))).unwrap_or(false);
    reply_flag(ctx, found);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Exists as Request>::NAME,
    func: command_fn!(exists),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary:
            "RedisBloom's BF.EXISTS: whether an item may be in the filter (false without one).",
        complexity: "O(k)",
        grammar: <Exists as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
