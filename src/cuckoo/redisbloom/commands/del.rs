//! `CF.DEL` (RedisBloom's): removes one copy of an item's fingerprint.
//!
//! Replicated as sent when it removed one: which copy goes, and whether
//! deletes past a tenth of the items compact the filter, is decided by its
//! state alone.

use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::cuckoo::call::ONE_ITEM;
use crate::cuckoo::events;
use crate::cuckoo::redisbloom::call::{answer_as_x, held, holds_wardens, reply_flag, Held};
use crate::cuckoo::redisbloom::data_type::track_growth;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CF.DEL key item`
    Del,
    "cf.del",
    Grammar::new(ONE_ITEM)
);

/// `CF.DEL key item`: true when a copy was removed; `Not found` for a key
/// without a filter (of any type).
pub fn del(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::cuckoo::commands::del::del);
    }
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let Ok(Held::Filter(f)) = held(&mut key) else {
        return Err(WardenError::Refused("Not found"));
    };
    let before = f.size();
    let deleted = f.delete(args.bytes(2));
    if deleted {
        track_growth(before, f.size());
        // Time-independent: deletes a fingerprint, no clock read.
        host::replicate_verbatim(ctx);
        host::notify(ctx, events::DEL, name);
    }
    reply_flag(ctx, deleted);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Del as Request>::NAME,
    func: command_fn!(del),
    alias: None,
    flags: "write fast",
    doc: Doc {
        summary: "RedisBloom's CF.DEL: removes one copy of the item's fingerprint (true if one was there); past a tenth of the items, deletes compact the filter.",
        complexity: "O(k), where k is the number of sub-filters",
        grammar: <Del as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
