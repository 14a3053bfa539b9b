//! `BF.CARD` (RedisBloom's): the items added to a filter.

use crate::bloom::call::KEY_ONLY;
use crate::bloom::redisbloom::call::{answer_as_x, held, holds_wardens, Held};
use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `BF.CARD key`
    Card,
    "bf.card",
    Grammar::new(KEY_ONLY)
);

/// `BF.CARD key`: 0 for a missing key.
pub fn card(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::bloom::commands::card::card);
    }
    let mut key = Key::readable(ctx, args.raw(1));
    let items = match held(&mut key)? {
        Held::Chain(c) => c.items,
        _ => 0,
    };
    host::reply_integer(ctx, items as i64);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Card as Request>::NAME,
    func: command_fn!(card),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary: "RedisBloom's BF.CARD: the items added to a filter (0 without one).",
        complexity: "O(1)",
        grammar: <Card as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
