//! `DLOCK._SETS`: the holders of a shared or limited lock with their
//! absolute deadlines, as replication and the AOF carry them. Internal.

use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, Arg, Grammar, Kind, Request};
use crate::glue::args::{internal_only, Args};
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::fence::follow_token;
use crate::glue::host::{self, Ctx, Key, Sink};
use crate::lock::call::lock_of;
use crate::lock::data_type::counted;
use crate::lock::events;
use crate::lock::set_wire::SetLocks;

/// `DLOCK._SETS key limit:floor:expiry holders`: the holders of a lock set
/// (its wire format is `set_wire::SetLocks`).
pub struct SetStates<'a> {
    /// `limit:floor:expiry`, unparsed.
    pub head: &'a [u8],
    /// The holders' records, unparsed.
    pub holders: &'a [u8],
}

impl<'a> Request<'a> for SetStates<'a> {
    const NAME: &'static str = "dlock._sets";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        arg("limit:floor:expiry", Kind::Str),
        arg("holders", Kind::Str),
    ]);

    fn empty() -> Self {
        SetStates {
            head: &[],
            holders: &[],
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "limit:floor:expiry" => self.head = word,
            "holders" => self.holders = word,
            _ => {}
        }
        Ok(())
    }
}

/// `DLOCK._SETS key limit:floor:expiry holders`: the replication and AOF form of a
/// lock with several holders (see `set_wire`). Internal: only from the master
/// link or the AOF.
pub fn set_states(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "dlock._sets")?;
    let request = args.parse::<SetStates>()?;
    let (set, expiry) = SetLocks::parse(request.head, request.holders)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let key_floor = lock_of(&mut key)?.holding().floor();
    follow_token(set.floor, key_floor);
    SetLocks::emit(&set, expiry, Sink::Replication(ctx), name);
    if set.holders().is_empty() {
        key.delete();
    } else {
        key.set_value(counted(Box::new(set)));
        key.set_abs_expire_or_persist(expiry);
    }
    host::notify(ctx, events::SET, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <SetStates as Request>::NAME,
    func: command_fn!(set_states),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Internal: sets the holders of a shared or limited lock (limit:floor:expiry, then owner records with absolute deadlines) for replication and AOF.",
        complexity: "O(N) where N is the number of holders",
        grammar: <SetStates as Request>::GRAMMAR,
        since: "0.3.0",
    },
};
