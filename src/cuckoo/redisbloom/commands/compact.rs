//! `CF.COMPACT` (RedisBloom's): moves fingerprints to older sub-filters and
//! drops the newest ones left empty.
//!
//! Replicated as sent when it changed the filter (its state alone decides
//! what moves).

use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::cuckoo::call::KEY_ONLY;
use crate::cuckoo::events;
use crate::cuckoo::redisbloom::call::{answer_as_x, held, holds_wardens, Held};
use crate::cuckoo::redisbloom::data_type::track_growth;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CF.COMPACT key`
    Compact,
    "cf.compact",
    Grammar::new(KEY_ONLY)
);

/// `CF.COMPACT key`: OK; `Cuckoo filter was not found` without a filter.
pub fn compact(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::cuckoo::commands::compact::compact);
    }
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let Ok(Held::Filter(f)) = held(&mut key) else {
        return Err(WardenError::Refused("Cuckoo filter was not found"));
    };
    let before = f.size();
    if f.compact(true) {
        track_growth(before, f.size());
        // Time-independent: compaction follows the filter's state alone.
        host::replicate_verbatim(ctx);
        host::notify(ctx, events::COMPACT, name);
    }
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
        summary: "RedisBloom's CF.COMPACT: moves fingerprints into older sub-filters, drops the newest ones left empty and resets the delete count.",
        complexity: "O(n), where n is the number of slots",
        grammar: <Compact as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
