//! `CMS.QUERY` (RedisBloom's): items' counts.

use crate::cms::redisbloom::call::sketch_in;
use crate::common::error::WardenError;
use crate::common::grammar::{items, key, shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CMS.QUERY key item [item ...]`
    Query,
    "cms.query",
    Grammar::new(&[key(), items("item")])
);

/// `CMS.QUERY key item [item ...]`: each item's count, never under.
pub fn query(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let mut key = Key::readable(ctx, args.raw(1));
    let sketch = sketch_in(&mut key)?;
    host::reply_array(ctx, args.len() - 2);
    for i in 2..args.len() {
        host::reply_integer(ctx, i64::from(sketch.query(args.bytes(i))));
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Query as Request>::NAME,
    func: command_fn!(query),
    alias: None,
    flags: "readonly",
    doc: Doc {
        summary: "RedisBloom's CMS.QUERY: each item's count (never under the true one).",
        complexity: "O(n) where n is the number of items",
        grammar: <Query as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
