//! `RL.GCRA` (alias `CL.THROTTLE`): GCRA with redis-cell's arguments and reply.

use crate::common::error::WardenError;
use crate::common::grammar::{arg, chosen, key, one_of, option, Arg, Grammar, Kind, Request};
use crate::common::parse::cell_integer;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Alias, AliasSet, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::rate::call::{count, limiter_in, read, write};
use crate::rate::core::rate::{self, BucketState, GcraReply};
use crate::rate::limiter::{LimiterKind, LimiterRef};
use crate::rate::stats;

/// `RL.GCRA key max_burst count period_s [quantity | QUANTITY n]`, read as
/// redis-cell's `CL.THROTTLE` reads its integers (`+60`, `060`).
pub struct Gcra {
    /// Events beyond the rate a burst may hold.
    pub max_burst: u64,
    /// Events per period.
    pub count: u64,
    /// The period in seconds.
    pub period_s: u64,
    /// Events this call takes (1 when absent).
    pub quantity: u64,
}

impl<'a> Request<'a> for Gcra {
    const NAME: &'static str = "rl.gcra";
    const GRAMMAR: Grammar = Grammar::exact(&[
        key(),
        arg("max_burst", Kind::Int),
        arg("count", Kind::Int),
        arg("period_s", Kind::Int),
        one_of(
            "quantity",
            &[
                chosen(arg("quantity", Kind::Int)),
                chosen(option("QUANTITY", "quantity", Kind::Int)),
            ],
        ),
    ]);

    fn empty() -> Self {
        Gcra {
            max_burst: 0,
            count: 0,
            period_s: 0,
            quantity: 1,
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        let word = cell_integer(word);
        match arg.name {
            "max_burst" => self.max_burst = count(word, rate::GCRA_MAX_BURST)?,
            "count" => self.count = count(word, rate::GCRA_COUNT)?,
            "period_s" => self.period_s = count(word, rate::GCRA_PERIOD_S)?,
            "quantity" => self.quantity = count(word, rate::GCRA_QUANTITY)?,
            _ => {}
        }
        Ok(())
    }
}

/// `RL.GCRA key max_burst count period_s [quantity | QUANTITY n]`, replying
/// like redis-cell's `CL.THROTTLE` and reading its arguments the same way.
pub fn gcra(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let mut r = Gcra::empty();
    if !read(ctx, args, &mut r)? {
        return Ok(());
    }
    let now = host::now_ms();
    let mut key = Key::writable(ctx, args.raw(1));
    let state = match limiter_in(&mut key, LimiterKind::Gcra)? {
        Some(l) => l.first::<BucketState>(),
        None => None,
    };
    let out = rate::gcra(
        state.as_ref(),
        r.max_burst,
        r.count,
        r.period_s,
        r.quantity,
        now,
    )?;
    if let Some((s, expires)) = out.store {
        let states = [s];
        let limiter = LimiterRef::Bucket(LimiterKind::Gcra, &states);
        write(ctx, args, &mut key, limiter, Some(expires));
    }
    let r: GcraReply = out.reply;
    stats::count(if r.limited == 0 {
        &stats::RL_ALLOWED
    } else {
        &stats::RL_DENIED
    });
    host::reply_array(ctx, 5);
    for v in [
        r.limited,
        r.limit,
        r.remaining,
        r.retry_after_s,
        r.reset_after_s,
    ] {
        host::reply_integer(ctx, v);
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Gcra as Request>::NAME,
    func: command_fn!(gcra),
    alias: Some(Alias {
        set: AliasSet::RedisCell,
        name: "cl.throttle",
    }),
    flags: "write deny-oom fast",
    doc: Doc {
        summary: "GCRA with redis-cell's CL.THROTTLE arguments and reply: [limited, limit, remaining, retry_after_s, reset_after_s]. The quantity (default 1) is positional as in CL.THROTTLE, or QUANTITY n.",
        complexity: "O(1)",
        grammar: <Gcra as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
