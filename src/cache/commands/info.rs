//! `CACHE.INFO`: an entry's state.

use crate::cache::core::CacheEntry;
use crate::common::error::WardenError;
use crate::common::grammar::{key, shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::glue::waiting::{self};

shape_only_request!(
    /// `CACHE.INFO key`
    Info,
    "cache.info",
    Grammar::new(&[key()])
);

/// `CACHE.INFO key`
pub fn info(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Info>()?;
    let now = host::now_ms();
    let mut key = Key::readable(ctx, args.raw(1));
    let Some(entry) = key.value::<CacheEntry>()? else {
        host::reply_null(ctx);
        return Ok(());
    };
    let reads = if now < entry.window_until() {
        entry.reads()
    } else {
        0
    };
    let lease = entry.live_lease(now).map_or(0, |l| l.token);
    let waiters = waiting::count(host::selected_db(ctx), args.bytes(1));
    host::reply_map(ctx, 6);
    for (field, value) in [
        (&b"version"[..], entry.version()),
        (b"fresh_ms", entry.fresh_until().saturating_sub(now)),
        (b"stale_ms", entry.stale_until().saturating_sub(now)),
        (b"reads", i64::from(reads)),
        (b"lease", lease),
        (b"waiters", waiters as i64),
    ] {
        host::reply_bulk(ctx, field);
        host::reply_integer(ctx, value);
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Info as Request>::NAME,
    func: command_fn!(info),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary: "version, fresh_ms (negative once stale), stale_ms (until the value is dropped), reads in the current HOT window, the live lease token (0 if none) and waiters of a cache key; nil when it is missing.",
        complexity: "O(1)",
        grammar: <Info as Request>::GRAMMAR,
        since: "0.2.0",
    },
};
