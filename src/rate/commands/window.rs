//! `RL.WINDOW`: sliding-window counters on up to eight limits at once.

use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, pairs, Arg, Grammar, Kind, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::rate::call::{count, limiter_in, next_limit, read, reply_decision, write, COST};
use crate::rate::core::rate::{self, MAX_LIMITS};
use crate::rate::core::window::{self, WindowLimit, WindowState};
use crate::rate::limiter::{Decoded, LimiterKind, LimiterRef};

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

/// `RL.WINDOW key limit window_ms [limit window_ms ...] [COST n]`
pub fn window(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let mut r = Window::empty();
    if !read(ctx, args, &mut r)? {
        return Ok(());
    }
    let now = host::now_ms();
    let mut key = Key::writable(ctx, args.raw(1));
    let mut room = Decoded::new();
    let stored: &[WindowState] = match limiter_in(&mut key, LimiterKind::Window)? {
        Some(l) => l.states(&mut room),
        None => &[],
    };
    let mut out = [WindowState::NONE; MAX_LIMITS];
    let d = window::sliding_windows(stored, &r.limits[..r.count], r.cost, now, &mut out)?;
    write(
        ctx,
        args,
        &mut key,
        LimiterRef::Window(&out[..r.count]),
        d.store,
    );
    reply_decision(ctx, &d.reply);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Window as Request>::NAME,
    func: command_fn!(window),
    alias: None,
    flags: "write deny-oom fast",
    doc: Doc {
        summary: "Sliding-window counter on up to 8 limits at once: [allowed, remaining, wait_ms, reset_ms] of the tightest. A changed limit or window keeps the counts.",
        complexity: "O(N) where N is the number of limits",
        grammar: <Window as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
