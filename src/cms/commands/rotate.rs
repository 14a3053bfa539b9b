//! `CMS._ROTATEX`: a windowed sketch moved to a slot, as replication and the
//! AOF carry it. Internal.

use crate::cms::call::sketch_in;
use crate::cms::events;
use crate::cms::wire::parse_rotate;
use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, shape_only_request, Grammar, Kind, Request};
use crate::glue::args::{internal_only, Args};
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CMS._ROTATEX key slot_ms`: a windowed sketch moved to the slot
    /// starting at `slot_ms` (see `wire`).
    Rotate,
    "cms._rotatex",
    Grammar::new(&[key(), arg("slot_ms", Kind::Int)])
);

/// `CMS._ROTATEX key slot_ms`: a windowed sketch moved to a slot by a
/// master's write. Internal.
pub fn rotate(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "cms._rotatex")?;
    args.parse::<Rotate>()?;
    let slot = parse_rotate(args)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    sketch_in(&mut key)?.rotate_to(slot)?;
    // Time-independent: the slot is absolute.
    host::replicate_verbatim(ctx);
    host::notify(ctx, events::ROTATE, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Rotate as Request>::NAME,
    func: command_fn!(rotate),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Internal: a windowed sketch moved to the slot a master's write started (replication and AOF).",
        complexity: "O(n) where n is the number of counters cleared",
        grammar: <Rotate as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
