//! `RL._SET`: a limiter's state with its absolute expiry, as replication
//! and the AOF carry it. Internal.

use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, Arg, Grammar, Kind, Request};
use crate::glue::args::{internal_only, Args};
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key, Sink};
use crate::rate::call::store;
use crate::rate::events;
use crate::rate::limiter::{Limiter, Scratch};
use crate::rate::wire::SetLimiter;

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

/// `RL._SET key kind:n:limits…:pxat_ms` (see `wire`): the replication and
/// AOF form of a limiter's state in one argument (`pxat_ms` -1: no
/// expiry). Internal.
pub fn set_state(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "rl._set")?;
    let request = args.parse::<SetState>()?;
    let (limiter, expires) = SetLimiter::parse(request.state)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    key.value::<Limiter>()?;
    let mut room = Scratch::default();
    let view = limiter.view(&mut room);
    SetLimiter::emit(view, expires, Sink::Replication(ctx), name);
    store(ctx, (&mut key, name), view, expires, events::SET);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <SetState as Request>::NAME,
    func: command_fn!(set_state),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Internal: sets a rate limiter's state (kind:n:limits:pxat_ms, every limit) with an absolute expiry (replication and AOF).",
        complexity: "O(1)",
        grammar: <SetState as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
