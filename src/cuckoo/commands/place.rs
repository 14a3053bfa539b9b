//! `CF._PLACEX`: a write a random walk placed, as its effect (the slots it
//! wrote with their final values). Internal.

use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, shape_only_request, Grammar, Kind, Request};
use crate::cuckoo::call::{filter_in, max_bytes};
use crate::cuckoo::data_type::{self as cuckoo_type};
use crate::cuckoo::events;
use crate::cuckoo::wire::decode_placed;
use crate::glue::args::internal_only;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CF._PLACEX key filters slots`: a write whose placement a random walk
    /// decided, as its effect (see `wire::Placed`).
    Place,
    "cf._placex",
    Grammar::new(&[key(), arg("filters", Kind::Int), arg("slots", Kind::Str)])
);

/// `CF._PLACEX key filters slots`: a write a random walk placed, as its
/// effect. Internal.
pub fn place(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "cf._placex")?;
    args.parse::<Place>()?;
    let bad = || WardenError::BadFilterData;
    let filters = crate::common::parse::parse_i64(args.bytes(2))
        .and_then(|v| usize::try_from(v).ok())
        .ok_or_else(bad)?;
    let slots = decode_placed(args.bytes(3)).ok_or_else(bad)?;
    let name = args.raw(1);
    let max_bytes = max_bytes(ctx);
    let mut key = Key::writable(ctx, name);
    let f = filter_in(&mut key)?.ok_or(WardenError::NotFound)?;
    let before = f.size();
    f.place_all(filters, &slots, max_bytes)?;
    cuckoo_type::track_growth(before, f.size());
    // The slots' final values, explicit: an effect, no clock.
    host::replicate_verbatim(ctx);
    host::notify(ctx, events::ADD, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Place as Request>::NAME,
    func: command_fn!(place),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary:
            "Internal: a write a random walk placed, as the slots it wrote (replication and AOF).",
        complexity: "O(n)",
        grammar: <Place as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
