//! `CMS.INCRBYX`: adds to items' counts.

use crate::cms::call::{increment, replicate_write, rotate_for_write, sketch_in};
use crate::cms::core::sketch::{error, text};
use crate::cms::events;
use crate::cms::wire::emit_rotate;
use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, pairs, Arg, Grammar, Kind, Request};
use crate::common::sketch::RowHash;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key, Sink};

/// `CMS.INCRBYX key item increment [item increment ...]`: the increments
/// are checked as they are read; the handler reads the pairs by position.
pub struct IncrBy;

impl<'a> Request<'a> for IncrBy {
    const NAME: &'static str = "cms.incrbyx";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        pairs(
            "pair",
            &[arg("item", Kind::Str), arg("increment", Kind::Int)],
        ),
    ]);

    fn empty() -> Self {
        IncrBy
    }

    fn reads(arg: &'static Arg) -> bool {
        arg.name == "increment"
    }

    fn take(&mut self, _: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        increment(word).map(|_| ())
    }
}

/// `CMS.INCRBYX key item increment [item increment ...]`: each item's count
/// after its increment, or `CMS: INCRBY overflow` for one that saturated.
/// Applied from a master or the AOF (replicated as sent) it saturates the
/// same and answers its count: an error there would be counted as one the
/// replica sends its master (a replica set to `propagation-error-behavior
/// panic` dies).
pub fn incrby(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<IncrBy>()?;
    let replay = host::is_replay(ctx);
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let s = sketch_in(&mut key)?;
    let rotated = rotate_for_write(ctx, s)?;
    let pairs = (args.len() - 2) / 2;
    host::reply_array(ctx, pairs);
    let mut added = false;
    for i in 0..pairs {
        // Checked as the call was read.
        let by = increment(args.bytes(3 + 2 * i)).unwrap_or(0);
        added |= by > 0;
        let estimate = s.incr(&RowHash::of(args.bytes(2 + 2 * i)), by);
        match estimate.overflow && !replay {
            true => host::reply_error(ctx, &error(text::INCRBY_OVERFLOW).to_string()),
            false => host::reply_integer(ctx, estimate.value as i64),
        }
    }
    if added {
        replicate_write(ctx, args, c"CMS.INCRBYX", rotated);
        host::notify(ctx, events::INCRBY, name);
    } else if let Some(slot) = rotated {
        emit_rotate(Sink::Replication(ctx), name, slot);
        host::notify(ctx, events::ROTATE, name);
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <IncrBy as Request>::NAME,
    func: command_fn!(incrby),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Adds each increment to its item's count: the counts after it (never below the true ones), or the error CMS: INCRBY overflow for an item whose counters saturated.",
        complexity: "O(n) where n is the number of items times the depth",
        grammar: <IncrBy as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
