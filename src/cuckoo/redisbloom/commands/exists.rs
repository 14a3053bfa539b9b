//! `CF.EXISTS` (RedisBloom's): whether an item may be in the filter.

use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::cuckoo::call::ONE_ITEM;
use crate::cuckoo::redisbloom::call::{answer_as_x, holds_wardens, reply_flag, with_filter};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;

shape_only_request!(
    /// `CF.EXISTS key item`
    Exists,
    "cf.exists",
    Grammar::new(ONE_ITEM)
);

/// `CF.EXISTS key item`: false for a key without a filter (of any type, as
/// RedisBloom answers).
pub fn exists(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::cuckoo::commands::exists::exists);
    }
    let found = with_filter(ctx, args, |f| f.contains(args.bytes(2))).unwrap_or(false);
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
            "RedisBloom's CF.EXISTS: whether an item may be in the filter (false without one).",
        complexity: "O(k), where k is the number of sub-filters",
        grammar: <Exists as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
