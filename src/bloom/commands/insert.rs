//! `BF.INSERTX`: adds items to a Bloom filter, creating it with the call's
//! parameters unless `NOCREATE`.

use crate::bloom::call::{add_items, AddEffect, CreateOptions, ItemReplies};
use crate::bloom::events;
use crate::common::error::WardenError;
use crate::common::grammar::{flag, key, option, repeated, required, Arg, Grammar, Kind, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;

/// `BF.INSERTX key [CAPACITY c] [ERROR e] [EXPANSION n] [NOCREATE] [NONSCALING] ITEMS item ...`
pub struct Insert {
    /// The options of a filter it creates.
    pub options: CreateOptions,
    /// How many items (the last words of the call).
    pub items: usize,
}

impl<'a> Request<'a> for Insert {
    const NAME: &'static str = "bf.insertx";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        option("CAPACITY", "capacity", Kind::Int),
        option("ERROR", "error_rate", Kind::Double),
        option("EXPANSION", "expansion", Kind::Int),
        flag("NOCREATE"),
        flag("NONSCALING"),
        required(repeated(option("ITEMS", "item", Kind::Str))),
    ]);

    fn empty() -> Self {
        Insert {
            options: CreateOptions::default(),
            items: 0,
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        if arg.name == "item" {
            self.items += 1;
            return Ok(());
        }
        self.options.take(arg, word)
    }
}

/// `BF.INSERTX key [CAPACITY c] [ERROR e] [EXPANSION n] [NOCREATE] [NONSCALING] ITEMS item ...`
pub fn insert(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let Insert { options, items } = args.parse::<Insert>()?;
    let first = args.len() - items;
    let params = options.params()?;
    let create = (!options.nocreate).then_some(params);
    let mut replies = ItemReplies::new(ctx, args, args.len() - first);
    add_items(
        ctx,
        args,
        (first, None),
        create,
        (AddEffect::NewItems, events::INSERT),
        |o| replies.emit(o),
    )
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Insert as Request>::NAME,
    func: command_fn!(insert),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary:
            "Adds items to a Bloom filter, creating it with the given parameters unless NOCREATE.",
        complexity: "O(k * n)",
        grammar: <Insert as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
