//! `CF.DEBUG` (RedisBloom's): a filter's parameters and counts in one line.

use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::cuckoo::call::KEY_ONLY;
use crate::cuckoo::redisbloom::call::{holds_wardens, read_filter};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx};

shape_only_request!(
    /// `CF.DEBUG key`
    Debug,
    "cf.debug",
    Grammar::new(KEY_ONLY)
);

/// `CF.DEBUG key`: `bktsize: buckets: items: deletes: filters:
/// max_iterations: expansion:` as RedisBloom writes them.
pub fn debug(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return Err(WardenError::Refused(
            "ERR the key holds a warden-cf filter (made by the CF.*X commands): CF.DEBUG \
             describes RedisBloom's filters only; CF.INFOX describes this one",
        ));
    }
    read_filter(ctx, args, |f| {
        host::reply_bulk(ctx, f.debug_line().as_bytes())
    })
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Debug as Request>::NAME,
    func: command_fn!(debug),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary: "RedisBloom's CF.DEBUG: a filter's bucket size, buckets, items, deletes, sub-filters, max iterations and expansion in one line.",
        complexity: "O(1)",
        grammar: <Debug as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
