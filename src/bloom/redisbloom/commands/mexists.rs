//! `BF.MEXISTS` (RedisBloom's): whether each item may be in the filter.

use crate::bloom::call::ITEMS;
use crate::bloom::redisbloom::call::{answer_as_x, holds_wardens, reply_flag, with_chain};
use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx};

shape_only_request!(
    /// `BF.MEXISTS key item [item ...]`
    Mexists,
    "bf.mexists",
    Grammar::new(ITEMS)
);

/// `BF.MEXISTS key item [item ...]`: per item; all false for a key without
/// a filter (of any type, as RedisBloom answers).
pub fn mexists(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::bloom::commands::mexists::mexists);
    }
    host::reply_array(ctx, args.len() - 2);
    let answered = with_chain(ctx, args, |c| {
        for i in 2..args.len() {
            reply_flag(ctx, c.contains(args.bytes(i)));
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
        summary: "RedisBloom's BF.MEXISTS: per item, whether it may be in the filter.",
        complexity: "O(k * n)",
        grammar: <Mexists as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
