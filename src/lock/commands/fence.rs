//! `DLOCK._FENCE floor`: the internal command that carries the module's
//! fencing floor (a master's failover epoch) to replicas and into AOF files.
//! The fencing clock itself is shared (`glue::fence`); its command lives in
//! the lock family's namespace, where files written since failover epochs
//! already have it.

use std::ffi::CStr;

use crate::common::error::WardenError;
use crate::common::grammar::{arg, Arg, Grammar, Kind, Request};
use crate::glue::args::{internal_only, Args};
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::fence;
use crate::glue::host::{self, Ctx};

/// The command's name, as the server and the files know it.
pub const NAME: &CStr = c"dlock._fence";

/// `DLOCK._FENCE floor`: a master's failover epoch, unparsed.
pub struct Fence<'a> {
    /// The floor, unparsed.
    pub floor: &'a [u8],
}

impl<'a> Request<'a> for Fence<'a> {
    const NAME: &'static str = match NAME.to_str() {
        Ok(name) => name,
        Err(_) => panic!("the command's name is ASCII"),
    };
    const GRAMMAR: Grammar = Grammar::new(&[arg("floor", Kind::Int)]);

    fn empty() -> Self {
        Fence { floor: &[] }
    }

    fn take(&mut self, _: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        self.floor = word;
        Ok(())
    }
}

/// `DLOCK._FENCE floor`: raises the token floor to `floor` (the epoch of the
/// master that sent it). Internal: only from the master link or the AOF.
pub fn set_floor(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, Fence::NAME)?;
    let request = args.parse::<Fence>()?;
    fence::raise_floor(request.floor)?;
    // Time-independent: the floor is an absolute token.
    host::replicate_verbatim(ctx);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Fence as Request>::NAME,
    func: command_fn!(set_floor),
    alias: None,
    flags: "write",
    doc: Doc {
        summary: "Internal: raises the fencing-token floor to that of a master's failover epoch (replication and AOF). Takes no key.",
        complexity: "O(1)",
        grammar: <Fence as Request>::GRAMMAR,
        since: "0.3.0",
    },
};
