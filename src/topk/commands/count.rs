//! `TOPK.COUNTX`: items' estimated counts.

use crate::common::error::WardenError;
use crate::common::grammar::Request;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::topk::call::{now, topk_in, Items};

/// `TOPK.COUNTX key item [item ...]`
pub type Count = Items<2>;

/// `TOPK.COUNTX key item [item ...]`: each item's count (RedisBloom's
/// estimate, which may be below the true count).
pub fn count_items(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Count>()?;
    let mut key = Key::readable(ctx, args.raw(1));
    let t = topk_in(&mut key)?;
    let now = now();
    host::reply_array(ctx, args.len() - 2);
    for i in 2..args.len() {
        host::reply_integer(ctx, t.count(args.bytes(i), now) as i64);
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Count as Request>::NAME,
    func: command_fn!(count_items),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary: "Each item's estimated count (it may be below the true count; over the window for a windowed top-k).",
        complexity: "O(n * k) where n is the number of items",
        grammar: <Count as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
