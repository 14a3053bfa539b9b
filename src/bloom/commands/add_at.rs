//! `BF._ADDATX`: an aging filter's adds as of a master's time (the
//! replication and AOF form of its adds). Internal.

use crate::bloom::call::{add_items, filter_in, AddEffect, ItemReplies};
use crate::bloom::events;
use crate::common::error::WardenError;
use crate::common::grammar::{arg, items, key, Arg, Grammar, Kind, Request};
use crate::common::parse::parse_i64;
use crate::glue::args::internal_only;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{Ctx, Key};

/// `BF._ADDATX key unix_ms item [item ...]`: an aging filter's adds as of a
/// master's time.
pub struct AddAt {
    /// The master's time.
    pub at: u64,
}

impl<'a> Request<'a> for AddAt {
    const NAME: &'static str = "bf._addatx";
    const GRAMMAR: Grammar = Grammar::new(&[key(), arg("unix_ms", Kind::Int), items("item")]);

    fn empty() -> Self {
        AddAt { at: 0 }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        if arg.name == "unix_ms" {
            self.at = parse_i64(word)
                .and_then(|ms| u64::try_from(ms).ok())
                .ok_or(WardenError::InvalidState("time"))?;
        }
        Ok(())
    }
}

/// `BF._ADDATX key unix_ms item [item ...]`: an aging filter's adds as of a
/// master's time (the replication and AOF form of its adds). Internal.
pub fn add_at(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "bf._addatx")?;
    let at = args.parse::<AddAt>()?.at;
    {
        let mut key = Key::readable(ctx, args.raw(1));
        let aging = filter_in(&mut key)?.is_some_and(|f| f.aging().is_some());
        if !aging {
            return Err(WardenError::InvalidState("not an aging filter"));
        }
    }
    let mut replies = ItemReplies::new(ctx, args, args.len() - 3);
    add_items(
        ctx,
        args,
        (3, Some(at)),
        None,
        (AddEffect::NewItems, events::MADD),
        |o| replies.emit(o),
    )
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <AddAt as Request>::NAME,
    func: command_fn!(add_at),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Internal: adds items to an aging filter as of a master's Unix ms (replication and AOF of its adds).",
        complexity: "O(k) per item",
        grammar: <AddAt as Request>::GRAMMAR,
        since: "0.3.0",
    },
};
