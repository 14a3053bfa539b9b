//! `CMS.QUERYX`: items' counts (never under the true count).

use crate::cms::call::sketch_in;
use crate::common::error::WardenError;
use crate::common::grammar::{items, key, shape_only_request, Grammar, Request};
use crate::common::sketch::RowHash;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CMS.QUERYX key item [item ...]`
    Query,
    "cms.queryx",
    Grammar::new(&[key(), items("item")])
);

/// `CMS.QUERYX key item [item ...]`: each item's count (over the window,
/// for a windowed sketch).
pub fn query(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Query>()?;
    let mut key = Key::readable(ctx, args.raw(1));
    let s = sketch_in(&mut key)?;
    let now = host::now_ms().max(0) as u64;
    host::reply_array(ctx, args.len() - 2);
    for i in 2..args.len() {
        let estimate = s.query(&RowHash::of(args.bytes(i)), now);
        host::reply_integer(ctx, estimate.value as i64);
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Query as Request>::NAME,
    func: command_fn!(query),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary:
            "Each item's count: at least its true count (over the window, for a windowed sketch).",
        complexity: "O(n) where n is the number of items times the depth",
        grammar: <Query as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
