//! `CF.COMPACTX`: moves fingerprints into older sub-filters and drops the
//! newest ones left empty.

use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::cuckoo::call::{filter_in, KEY_ONLY};
use crate::cuckoo::data_type::{self as cuckoo_type};
use crate::cuckoo::events;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CF.COMPACTX key`
    Compact,
    "cf.compactx",
    Grammar::new(KEY_ONLY)
);

/// `CF.COMPACTX key`: moves fingerprints into older sub-filters and drops
/// the newest ones left empty. Deterministic: replicated as it is.
pub fn compact(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Compact>()?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let f = filter_in(&mut key)?.ok_or(WardenError::NotFound)?;
    let before = f.size();
    f.compact();
    cuckoo_type::track_growth(before, f.size());
    // Compaction is decided by the state alone; the clock plays no part.
    match args.by_alias() {
        true => host::replicate_as(ctx, c"CF.COMPACTX", args.raw_from(1)),
        false => host::replicate_verbatim(ctx),
    }
    host::notify(ctx, events::COMPACT, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Compact as Request>::NAME,
    func: command_fn!(compact),
    alias: None,
    flags: "write",
    doc: Doc {
        summary: "Moves fingerprints into older sub-filters and drops the newest ones left empty.",
        complexity: "O(n)",
        grammar: <Compact as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
