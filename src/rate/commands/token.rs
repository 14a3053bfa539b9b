//! `RL.TOKEN`: token buckets (golang.org/x/time/rate) on up to eight limits at once.

use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, option, pairs, Arg, Grammar, Kind, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;
use crate::rate::call::{count, next_limit, read, run_buckets, COST};
use crate::rate::core::bucket::{self, BucketLimit};
use crate::rate::core::rate::{self, Rate, MAX_LIMITS};
use crate::rate::limiter::LimiterKind;

/// `RL.TOKEN key rate burst [rate burst ...] [COST n] [MAXWAIT ms]`
pub struct Token {
    /// The limits, in order (the first `count`).
    pub limits: [BucketLimit; MAX_LIMITS],
    /// How many limits.
    pub count: usize,
    /// `COST n`.
    pub cost: u64,
    /// `MAXWAIT ms` (0: none).
    pub max_wait_ms: u64,
}

impl<'a> Request<'a> for Token {
    const NAME: &'static str = "rl.token";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        pairs("limit", &[arg("rate", Kind::Str), arg("burst", Kind::Int)]),
        COST,
        option("MAXWAIT", "max_wait_ms", Kind::Int),
    ]);

    fn empty() -> Self {
        Token {
            limits: [BucketLimit::NONE; MAX_LIMITS],
            count: 0,
            cost: 1,
            max_wait_ms: 0,
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "rate" => {
                let slot = next_limit(&mut self.limits, self.count)?;
                slot.rate = Rate::parse(word)?;
            }
            "burst" => {
                self.limits[self.count].size = count(word, rate::BURST)?;
                self.count += 1;
            }
            "cost" => self.cost = count(word, rate::COST)?,
            "max_wait_ms" => self.max_wait_ms = count(word, rate::MAX_WAIT_MS)?,
            _ => {}
        }
        Ok(())
    }
}

/// `RL.TOKEN key rate burst [rate burst ...] [COST n] [MAXWAIT ms]`
pub fn token(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let mut r = Token::empty();
    if !read(ctx, args, &mut r)? {
        return Ok(());
    }
    let (limits, cost, max_wait) = (&r.limits[..r.count], r.cost, r.max_wait_ms);
    run_buckets(
        ctx,
        args,
        LimiterKind::Token,
        r.count,
        |stored, now, out| bucket::token_buckets(stored, limits, cost, max_wait, now, out),
    )
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Token as Request>::NAME,
    func: command_fn!(token),
    alias: None,
    flags: "write deny-oom fast",
    doc: Doc {
        summary: "Token bucket (golang.org/x/time/rate) on up to 8 limits at once: [allowed, remaining, wait_ms, reset_ms] of the tightest. MAXWAIT reserves tokens that will be there in time. A changed rate or burst keeps the tokens (capped at the new burst).",
        complexity: "O(N) where N is the number of limits",
        grammar: <Token as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
