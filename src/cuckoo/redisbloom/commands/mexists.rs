//! `CF.MEXISTS` (RedisBloom's): whether each item may be in the filter.

use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::cuckoo::call::ITEMS;
use crate::cuckoo::redisbloom::call::{answer_as_x, holds_wardens, reply_flag, with_filter};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx};

shape_only_request!(
    /// `CF.MEXISTS key item [item ...]`
    Mexists,
    "cf.mexists",
    Grammar::new(ITEMS)
);

/// `CF.MEXISTS key item [item ...]`: per item; all false for a key without
/// a filter (of any type, as RedisBloom answers).
pub fn mexists(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::cuckoo::commands::mexists::mexists);
    }
    host::reply_array(ctx, args.len() - 2);
    let answered = with_filter(ctx, args, |f| {
        for i in 2..args.len() {
            reply_flag(ctx, f.contains(args.bytes(i)));
        }
    });
    if answered.is_none() {
        for _ in 2..args.len() {
            reply_flag(ctx, false);
        }
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Mexists as Request>::NAME,
    func: command_fn!(mexists),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary: "RedisBloom's CF.MEXISTS: per item, whether it may be in the filter.",
        complexity: "O(k * n), where k is the number of sub-filters and n the number of items",
        grammar: <Mexists as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
