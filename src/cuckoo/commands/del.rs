//! `CF.DELX`: removes one copy of an item's fingerprint from a cuckoo filter.

use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::cuckoo::call::{filter_in, reply_flag, ONE_ITEM};
use crate::cuckoo::events;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CF.DELX key item`
    Del,
    "cf.delx",
    Grammar::new(ONE_ITEM)
);

/// `CF.DELX key item`: 1 when a copy of the item's fingerprint was removed.
pub fn del(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Del>()?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let f = filter_in(&mut key)?.ok_or(WardenError::NotFound)?;
    let deleted = f.delete(f.hash(args.bytes(2)));
    if deleted {
        // The state alone decides which copy goes; the clock plays no part.
        match args.by_alias() {
            true => host::replicate_as(ctx, c"CF.DELX", args.raw_from(1)),
            false => host::replicate_verbatim(ctx),
        }
        host::notify(ctx, events::DEL, name);
    }
    reply_flag(ctx, args, deleted);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Del as Request>::NAME,
    func: command_fn!(del),
    alias: None,
    flags: "write fast",
    doc: Doc {
        summary: "Removes one copy of the item's fingerprint: 1 if one was there, 0 if not. Delete only items you added: deleting one never added may remove another item's copy.",
        complexity: "O(1)",
        grammar: <Del as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
