//! `TOPK.INCRBY` (RedisBloom's): counts items by increments.

use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, pairs, shape_only_request, Grammar, Kind, Request};
use crate::common::parse::parse_i64;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::topk::events;
use crate::topk::redisbloom::commands::add::reply_put_out;
use crate::topk::redisbloom::topk_in;

shape_only_request!(
    /// `TOPK.INCRBY key item increment [item increment ...]`
    IncrBy,
    "topk.incrby",
    Grammar::new(&[
        key(),
        pairs(
            "items",
            &[arg("item", Kind::Str), arg("increment", Kind::Int)]
        ),
    ])
);

/// The largest increment RedisBloom takes.
const MAX_INCREMENT: i64 = 100_000;

/// RedisBloom's refusal of an increment (its text, spaces included).
const BAD_INCREMENT: &str = "TopK: increment must be an integer greater or equal to 0                            and smaller or equal to 100,000";

/// `TOPK.INCRBY key item increment [...]`: per item, the item it put out
/// of the top k, or nil. Checked before anything is counted: with a bad
/// increment every entry is RedisBloom's error and nothing is counted or
/// replicated (RedisBloom counts the items before the bad one and ends its
/// reply there).
pub fn incrby(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if args.len() % 2 == 1 {
        return Err(WardenError::WrongArity(IncrBy::NAME.into()));
    }
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let topk = topk_in(&mut key)?;
    let mut increments = Vec::with_capacity((args.len() - 2) / 2);
    for at in (3..args.len()).step_by(2) {
        match parse_i64(args.bytes(at)) {
            Some(v) if (0..=MAX_INCREMENT).contains(&v) => increments.push(v as u32),
            _ => {
                host::reply_array(ctx, (args.len() - 2) / 2);
                for _ in 0..(args.len() - 2) / 2 {
                    host::reply_error(ctx, BAD_INCREMENT);
                }
                return Ok(());
            }
        }
    }
    host::reply_array(ctx, increments.len());
    for (i, by) in increments.into_iter().enumerate() {
        reply_put_out(ctx, topk.add(args.bytes(2 + 2 * i), by));
    }
    // Time-independent: the decay is a hash of state and call, no clock.
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
        summary: "RedisBloom's TOPK.INCRBY: counts items by increments (0 to 100,000); per item, the item it put out of the top k, or nil.",
        complexity: "O(n * k * increment) where n is the number of items",
        grammar: <IncrBy as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
