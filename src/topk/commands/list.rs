//! `TOPK.LISTX`: the top k, most counted first (with their counts).

use crate::common::error::WardenError;
use crate::common::grammar::{flag, key, Arg, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::topk::call::{now, topk_in};

/// `TOPK.LISTX key [WITHCOUNT]`
#[derive(Default)]
pub struct List {
    /// `WITHCOUNT`: each item followed by its count.
    pub with_count: bool,
}

impl<'a> Request<'a> for List {
    const NAME: &'static str = "topk.listx";
    const GRAMMAR: Grammar = Grammar::new(&[key(), flag("WITHCOUNT")]);

    fn empty() -> Self {
        List::default()
    }

    fn take(&mut self, _: &'static Arg, _: &'a [u8]) -> Result<(), WardenError> {
        self.with_count = true;
        Ok(())
    }
}

/// `TOPK.LISTX key [WITHCOUNT]`: the items, largest count first (each
/// followed by its count with `WITHCOUNT`).
pub fn list(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let with_count = args.parse::<List>()?.with_count;
    let mut key = Key::readable(ctx, args.raw(1));
    let t = topk_in(&mut key)?;
    let items = t.list(now());
    host::reply_array(ctx, items.len() * if with_count { 2 } else { 1 });
    for (item, n) in items {
        host::reply_bulk(ctx, item);
        if with_count {
            host::reply_integer(ctx, n as i64);
        }
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <List as Request>::NAME,
    func: command_fn!(list),
    alias: None,
    flags: "readonly",
    doc: Doc {
        summary: "The top k items, largest count first; WITHCOUNT follows each with its count.",
        complexity: "O(k log k)",
        grammar: <List as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
