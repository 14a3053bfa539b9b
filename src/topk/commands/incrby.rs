//! `TOPK.INCRBYX`: counts items by an increment each, replying the items they
//!  expelled.

use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, pairs, Arg, Grammar, Kind, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;
use crate::topk::call::{add_items, increment};
use crate::topk::events;

/// `TOPK.INCRBYX key item increment [item increment ...]`: the increments
/// are checked as they are read; the handler reads the pairs by position.
pub struct IncrBy;

impl<'a> Request<'a> for IncrBy {
    const NAME: &'static str = "topk.incrbyx";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        pairs(
            "pair",
            &[arg("item", Kind::Str), arg("increment", Kind::Int)],
        ),
    ]);

    fn empty() -> Self {
        IncrBy
    }

    fn reads(arg: &'static Arg) -> bool {
        arg.name == "increment"
    }

    fn take(&mut self, _: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        increment(word).map(|_| ())
    }
}

/// `TOPK.INCRBYX key item increment [item increment ...]`
pub fn incrby(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<IncrBy>()?;
    add_items(ctx, args, true, (c"TOPK.INCRBYX", events::INCRBY))
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <IncrBy as Request>::NAME,
    func: command_fn!(incrby),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Counts each item increment times (0 to 100000): per item, the item it pushed out of the top k, or nil.",
        complexity: "O(n * k) where n is the number of items",
        grammar: <IncrBy as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
