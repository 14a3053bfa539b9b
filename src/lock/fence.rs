//! `DLOCK._FENCE floor`: the internal command that carries the module's
//! fencing floor (a master's failover epoch) to replicas and into AOF files.
//! The fencing clock itself is shared (`glue::fence`); its command lives in
//! the lock family's namespace, where files written since failover epochs
//! already have it.

use std::ffi::CStr;

use crate::common::error::WardenError;
use crate::common::grammar::{arg, Arg, Grammar, Kind, Request};
use crate::glue::args::{internal_only, Args};
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
