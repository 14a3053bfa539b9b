//! The rate family's typed requests: each command's grammar (what `COMMAND
//! DOCS` shows, its arity, and how a call is read) and the values a call
//! carries, checked as they are read.

use crate::common::error::WardenError;
use crate::common::grammar::{
    arg, chosen, key, one_of, option, pairs, Arg, Grammar, Kind, Request,
};
use crate::common::parse::{cell_integer, IntArg};
use crate::rate::core::bucket::BucketLimit;
use crate::rate::core::errors;
use crate::rate::core::rate::{self, Rate, MAX_LIMITS};
use crate::rate::core::window::WindowLimit;

/// Where every RL command carries its first parameter (a rate, limit or
/// burst): a replicated call may carry its effect there (`arg@state`).
pub const FIRST_PARAMETER_AT: usize = 2;

/// An integer argument in its range (never negative, so a `u64`).
fn count(word: &[u8], arg: IntArg) -> Result<u64, WardenError> {
    arg.parse(word).map(|v| v as u64)
}

/// The slot of the next limit, if there is room for one more (the error is
/// only made when there is not).
fn next_limit<T>(limits: &mut [T], count: usize) -> Result<&mut T, WardenError> {
    match limits.get_mut(count) {
        Some(slot) => Ok(slot),
        None => Err(errors::too_many_limits()),
    }
}

/// The `COST n` option (1 when absent).
const COST: Arg = option("COST", "cost", Kind::Int);

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

/// `RL.LEAKY key rate capacity [COST n]`
pub struct Leaky {
    /// The drain rate and capacity.
    pub limit: BucketLimit,
    /// `COST n`.
    pub cost: u64,
}

impl<'a> Request<'a> for Leaky {
    const NAME: &'static str = "rl.leaky";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        arg("rate", Kind::Str),
        arg("capacity", Kind::Int),
        COST,
    ]);

    fn empty() -> Self {
        Leaky {
            limit: BucketLimit::NONE,
            cost: 1,
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "rate" => self.limit.rate = Rate::parse(word)?,
            "capacity" => self.limit.size = count(word, rate::LEAKY_CAPACITY)?,
            "cost" => self.cost = count(word, rate::COST)?,
            _ => {}
        }
        Ok(())
    }
}

/// `RL.WINDOW key limit window_ms [limit window_ms ...] [COST n]`
pub struct Window {
    /// The limits, in order (the first `count`).
    pub limits: [WindowLimit; MAX_LIMITS],
    /// How many limits.
    pub count: usize,
    /// `COST n`.
    pub cost: u64,
}

impl<'a> Request<'a> for Window {
    const NAME: &'static str = "rl.window";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        pairs(
            "window",
            &[arg("limit", Kind::Int), arg("window_ms", Kind::Int)],
        ),
        COST,
    ]);

    fn empty() -> Self {
        Window {
            limits: [WindowLimit::NONE; MAX_LIMITS],
            count: 0,
            cost: 1,
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "limit" => {
                let slot = next_limit(&mut self.limits, self.count)?;
                slot.limit = count(word, rate::WINDOW_LIMIT)?;
            }
            "window_ms" => {
                self.limits[self.count].window_ms = count(word, rate::WINDOW_MS)?;
                self.count += 1;
            }
            "cost" => self.cost = count(word, rate::COST)?,
            _ => {}
        }
        Ok(())
    }
}

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

/// `RL._SET key state`: a limiter's state with its absolute expiry (its wire
/// format is `wire::SetLimiter`).
pub struct SetState<'a> {
    /// The state, unparsed.
    pub state: &'a [u8],
}

impl<'a> Request<'a> for SetState<'a> {
    const NAME: &'static str = "rl._set";
    const GRAMMAR: Grammar = Grammar::new(&[key(), arg("state", Kind::Str)]);

    fn empty() -> Self {
        SetState { state: &[] }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        if arg.name == "state" {
            self.state = word;
        }
        Ok(())
    }
}
