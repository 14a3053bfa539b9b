//! `CF.COUNT` (RedisBloom's): copies of an item's fingerprint in its
//! buckets.

use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::cuckoo::call::ONE_ITEM;
use crate::cuckoo::redisbloom::call::{answer_as_x, holds_wardens, with_filter};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx};

shape_only_request!(
    /// `CF.COUNT key item`
    Count,
    "cf.count",
    Grammar::new(ONE_ITEM)
);

/// `CF.COUNT key item`: an integer in both protocols; 0 for a key without a
/// filter (of any type).
pub fn count(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::cuckoo::commands::count::count);
    }
    let n = with_filter(ctx, args, |f| f.count(args.bytes(2))).unwrap_or(0);
    host::reply_integer(ctx, n as i64);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Count as Request>::NAME,
    func: command_fn!(count),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary: "RedisBloom's CF.COUNT: copies of the item's fingerprint in its buckets over every sub-filter (0 without a filter).",
        complexity: "O(k), where k is the number of sub-filters",
        grammar: <Count as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
