//! `CMS.INCRBY` (RedisBloom's): adds to items' counts.

use crate::cms::core::redisbloom::SATURATED;
use crate::cms::events;
use crate::cms::redisbloom::call::{refused, sketch_in};
use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, pairs, shape_only_request, Grammar, Kind, Request};
use crate::common::parse::parse_i64;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CMS.INCRBY key item increment [item increment ...]`
    IncrBy,
    "cms.incrby",
    Grammar::new(&[
        key(),
        pairs(
            "items",
            &[arg("item", Kind::Str), arg("increment", Kind::Int)]
        ),
    ])
);

/// `CMS.INCRBY key item increment [...]`: each item's count after; an
/// error entry for an item whose count is saturated.
pub fn incrby(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if args.len() % 2 == 1 {
        return Err(WardenError::WrongArity(IncrBy::NAME.into()));
    }
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let sketch = sketch_in(&mut key)?;
    let mut increments = Vec::with_capacity((args.len() - 2) / 2);
    for at in (3..args.len()).step_by(2) {
        match parse_i64(args.bytes(at)) {
            Some(v) if v >= 0 => increments.push(v as u64),
            Some(_) => return Err(refused("CMS: Number cannot be negative")),
            None => return Err(refused("CMS: Cannot parse number")),
        }
    }
    // Applied from a master or the AOF, a saturated count is no error: the
    // call changed the sketch, and a replica answers its master no errors.
    let replay = host::is_replay(ctx);
    host::reply_array(ctx, increments.len());
    for (i, by) in increments.into_iter().enumerate() {
        match sketch.incr_by(args.bytes(2 + 2 * i), by) {
            SATURATED if !replay => host::reply_error(ctx, "CMS: INCRBY overflow"),
            count => host::reply_integer(ctx, i64::from(count)),
        }
    }
    // Time-independent: fixed increments; a replay answers no error.
    host::replicate_verbatim(ctx);
    host::notify(ctx, events::INCRBY, name);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <IncrBy as Request>::NAME,
    func: command_fn!(incrby),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "RedisBloom's CMS.INCRBY: adds to items' counts; each item's count after.",
        complexity: "O(n) where n is the number of items",
        grammar: <IncrBy as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
