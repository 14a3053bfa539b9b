//! `CF.INSERTX`: adds items to a cuckoo filter, creating it with the call's
//! `CAPACITY` unless `NOCREATE`. Its request and body serve `CF.INSERTNXX`
//! too (`insertnx`), which differs only in adding each item unless present.

use crate::common::error::WardenError;
use crate::common::grammar::{flag, key, option, repeated, required, Arg, Grammar, Kind, Request};
use crate::cuckoo::call::{add_items, CreateOptions, Shape};
use crate::cuckoo::events;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;

/// `CF.INSERTX key [CAPACITY c] [NOCREATE] ITEMS item ...` and
/// `CF.INSERTNXX …` (`NX` picks the second).
pub struct Insert<const NX: bool> {
    /// The options of a filter it creates.
    pub options: CreateOptions,
    /// How many items (the last words of the call).
    pub items: usize,
}

impl<'a, const NX: bool> Request<'a> for Insert<NX> {
    const NAME: &'static str = if NX { "cf.insertnxx" } else { "cf.insertx" };
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        option("CAPACITY", "capacity", Kind::Int),
        flag("NOCREATE"),
        required(repeated(option("ITEMS", "item", Kind::Str))),
    ]);

    fn empty() -> Self {
        Insert {
            options: CreateOptions::default(),
            items: 0,
        }
    }

    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        if arg.name == "item" {
            self.items += 1;
            return Ok(());
        }
        self.options.take(arg, word)
    }
}

/// `CF.INSERTX` / `CF.INSERTNXX key [CAPACITY c] [NOCREATE] ITEMS item ...`
pub fn insert_common<const NX: bool>(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let Insert { options, items } = args.parse::<Insert<NX>>()?;
    let first = args.len() - items;
    // CAPACITY's range was checked as it was read; its floor, 2 ×
    // BUCKETSIZE, against the bucket size of the filter written: the one
    // created (cf-bucket-size), or an existing one's own (the same on a
    // replica, whatever its defaults).
    let capacity = options.capacity;
    let create = (!options.nocreate).then_some(options);
    let shape = if NX { Shape::InsertNx } else { Shape::Insert };
    add_items(
        ctx,
        args,
        first,
        (create, capacity),
        (shape, events::INSERT),
    )
}

/// `CF.INSERTX key [CAPACITY c] [NOCREATE] ITEMS item ...`
pub fn insert(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    insert_common::<false>(ctx, args)
}

/// `CF.INSERTX`'s request.
type InsertAll = Insert<false>;

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <InsertAll as Request>::NAME,
    func: command_fn!(insert),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Adds items, creating the filter with CAPACITY unless NOCREATE: 1 per item added, -1 where there was no room.",
        complexity: "O(n)",
        grammar: <InsertAll as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
