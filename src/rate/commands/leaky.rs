//! `RL.LEAKY`: a leaky bucket used as a meter.

use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, Arg, Grammar, Kind, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;
use crate::rate::call::{count, read, run_buckets, COST};
use crate::rate::core::bucket::{self, BucketLimit};
use crate::rate::core::rate::{self, Decided, Rate};
use crate::rate::limiter::LimiterKind;

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

/// `RL.LEAKY key rate capacity [COST n]`
pub fn leaky(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let mut r = Leaky::empty();
    if !read(ctx, args, &mut r)? {
        return Ok(());
    }
    let (rate, capacity, cost) = (r.limit.rate, r.limit.size, r.cost);
    run_buckets(ctx, args, LimiterKind::Leaky, 1, |stored, now, out| {
        let o = bucket::leaky_bucket(stored.first(), rate, capacity, cost, now)?;
        if let (Some((s, _)), Some(slot)) = (o.store, out.first_mut()) {
            *slot = s;
        }
        Ok(Decided {
            reply: o.reply,
            store: o.store.map(|(_, expires)| expires),
        })
    })
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Leaky as Request>::NAME,
    func: command_fn!(leaky),
    alias: None,
    flags: "write deny-oom fast",
    doc: Doc {
        summary: "Leaky bucket as a meter: [allowed, remaining, wait_ms, reset_ms]. A changed rate or capacity keeps the level.",
        complexity: "O(1)",
        grammar: <Leaky as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
