//! `CF.INSERTNXX`: adds each item to a cuckoo filter unless it may be
//! present, creating the filter as `CF.INSERTX` does (whose request and body
//! it shares).

use crate::common::error::WardenError;
use crate::common::grammar::Request;
use crate::cuckoo::commands::insert::{insert_common, Insert};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;

/// `CF.INSERTNXX`'s request.
type InsertNx = Insert<true>;

/// `CF.INSERTNXX key [CAPACITY c] [NOCREATE] ITEMS item ...`
pub fn insertnx(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    insert_common::<true>(ctx, args)
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <InsertNx as Request>::NAME,
    func: command_fn!(insertnx),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary:
            "Adds each item unless it may be present: 1 added, 0 may be there already, -1 no room.",
        complexity: "O(n)",
        grammar: <InsertNx as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
