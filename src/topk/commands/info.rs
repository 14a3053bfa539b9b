//! `TOPK.INFOX`: a top-k's k, width, depth, decay and window.

use crate::common::error::WardenError;
use crate::common::grammar::{key, shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::topk::call::topk_in;

shape_only_request!(
    /// `TOPK.INFOX key`
    Info,
    "topk.infox",
    Grammar::new(&[key()])
);

/// `TOPK.INFOX key`: k, width, depth and decay (RedisBloom's fields), and
/// the window in ms for a windowed top-k.
pub fn info(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Info>()?;
    let mut key = Key::readable(ctx, args.raw(1));
    let t = topk_in(&mut key)?;
    let p = t.params();
    let window = t.ring().map(|r| r.window_ms());
    host::reply_map(ctx, 4 + usize::from(window.is_some()));
    for (label, value) in [("k", p.k), ("width", p.width), ("depth", p.depth)] {
        host::reply_bulk(ctx, label.as_bytes());
        host::reply_integer(ctx, i64::from(value));
    }
    host::reply_bulk(ctx, b"decay");
    host::reply_decimal(ctx, p.decay);
    if let Some(w) = window {
        host::reply_bulk(ctx, b"window");
        host::reply_integer(ctx, w as i64);
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
        summary: "k, width, depth and decay, and window (ms) for a windowed top-k.",
        complexity: "O(1)",
        grammar: <Info as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
