//! `TOPK.QUERYX`: whether items are in the top k.

use crate::common::error::WardenError;
use crate::common::grammar::Request;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::topk::call::{now, topk_in, Items};

/// `TOPK.QUERYX key item [item ...]`
pub type Query = Items<1>;

/// `TOPK.QUERYX key item [item ...]`: 1 for each item in the top k, else 0.
pub fn query(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Query>()?;
    let mut key = Key::readable(ctx, args.raw(1));
    let t = topk_in(&mut key)?;
    let now = now();
    host::reply_array(ctx, args.len() - 2);
    for i in 2..args.len() {
        host::reply_integer(ctx, i64::from(t.query(args.bytes(i), now)));
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Query as Request>::NAME,
    func: command_fn!(query),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary: "For each item, 1 if it is in the top k, else 0.",
        complexity: "O(n * k) where n is the number of items",
        grammar: <Query as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
