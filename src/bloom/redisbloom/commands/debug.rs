//! `BF.DEBUG` (RedisBloom's): a filter's items and each link's sizes.

use crate::bloom::call::KEY_ONLY;
use crate::bloom::redisbloom::call::{holds_wardens, read_chain};
use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx};

shape_only_request!(
    /// `BF.DEBUG key`
    Debug,
    "bf.debug",
    Grammar::new(KEY_ONLY)
);

/// `BF.DEBUG key`: `size:<items>`, then per link `bytes: bits: hashes:
/// hashwidth: capacity: size: ratio:` as RedisBloom writes them.
pub fn debug(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return Err(WardenError::Refused(
            "ERR the key holds a warden-bf filter (made by the BF.*X commands): BF.DEBUG \
             describes RedisBloom's filters only; BF.INFOX describes this one",
        ));
    }
    read_chain(ctx, args, |c| {
        let lines = c.debug_lines();
        host::reply_array(ctx, lines.len());
        for line in lines {
            host::reply_bulk(ctx, line.as_bytes());
        }
    })
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Debug as Request>::NAME,
    func: command_fn!(debug),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary: "RedisBloom's BF.DEBUG: the items of a filter, then each sub-filter's bytes, bits, hashes, hash width, capacity, items and error rate.",
        complexity: "O(n) where n is the number of sub-filters",
        grammar: <Debug as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
