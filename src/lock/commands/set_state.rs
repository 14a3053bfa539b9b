//! `DLOCK._SET`: a lock's state with an absolute deadline, as replication
//! and the AOF carry it. Internal.

use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, Arg, Grammar, Kind, Request};
use crate::glue::args::{internal_only, Args};
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx};
use crate::lock::call::{apply_state, owner, replicate_state};
use crate::lock::wire::SetLock;

/// `DLOCK._SET key owner state`: a lock's state with an absolute deadline
/// (its wire format is `wire::SetLock`).
pub struct SetState<'a> {
    /// The holder.
    pub owner: &'a [u8],
    /// `token:holds:deadline_ms`, unparsed.
    pub state: &'a [u8],
}

impl<'a> Request<'a> for SetState<'a> {
    const NAME: &'static str = "dlock._set";
    const GRAMMAR: Grammar =
        Grammar::new(&[key(), arg("owner", Kind::Str), arg("state", Kind::Str)]);

    fn empty() -> Self {
        SetState {
            owner: &[],
            state: &[],
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "owner" => self.owner = owner(word)?,
            "state" => self.state = word,
            _ => {}
        }
        Ok(())
    }
}

/// `DLOCK._SET key owner token:holds:deadline_ms`: the replication and AOF
/// form of every lock change, with an absolute deadline (`NO_DEADLINE`: the
/// key gets no expiry). Internal: only from the master link or the AOF.
pub fn set_state(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "dlock._set")?;
    let request = args.parse::<SetState>()?;
    let state = SetLock::parse(request.owner, request.state)?;
    apply_state(ctx, args.raw(1), state, |state| {
        replicate_state(ctx, args.raw(1), Some(args.raw(2)), state)
    })?;
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
        summary: "Internal: sets a lock's state with an absolute deadline (replication and AOF).",
        complexity: "O(1)",
        grammar: <SetState as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
