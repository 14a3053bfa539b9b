//! `CMS.INFOX`: a sketch's width, depth, total count and window.

use crate::cms::call::sketch_in;
use crate::common::error::WardenError;
use crate::common::grammar::{key, shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CMS.INFOX key`
    Info,
    "cms.infox",
    Grammar::new(&[key()])
);

/// `CMS.INFOX key`: width, depth and count (RedisBloom's fields), and the
/// window in ms for a windowed sketch.
pub fn info(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Info>()?;
    let mut key = Key::readable(ctx, args.raw(1));
    let s = sketch_in(&mut key)?;
    let dims = s.dims();
    let now = host::now_ms().max(0) as u64;
    let window = s.ring().map(|r| r.window_ms());
    host::reply_map(ctx, 3 + usize::from(window.is_some()));
    for (label, value) in [
        ("width", u64::from(dims.width)),
        ("depth", u64::from(dims.depth)),
        ("count", s.count(now)),
    ]
    .into_iter()
    .chain(window.map(|w| ("window", w)))
    {
        host::reply_bulk(ctx, label.as_bytes());
        host::reply_integer(ctx, value as i64);
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
        summary: "width, depth and count (the total of the increments, over the window for a windowed sketch), and window (ms) for a windowed sketch.",
        complexity: "O(1)",
        grammar: <Info as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
