//! `CF.INSERTNX` (RedisBloom's): `CF.INSERT` adding each item unless it may
//! be present.

use crate::common::error::WardenError;
use crate::common::grammar::{
    flag, key, option, repeated, required, shape_only_request, Grammar, Kind, Request,
};
use crate::cuckoo::redisbloom::commands::insert::insert_common;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;

shape_only_request!(
    /// `CF.INSERTNX key [CAPACITY capacity] [NOCREATE] ITEMS item [item ...]`
    InsertNx,
    "cf.insertnx",
    Grammar::new(&[
        key(),
        option("CAPACITY", "capacity", Kind::Int),
        flag("NOCREATE"),
        required(repeated(option("ITEMS", "item", Kind::Str))),
    ])
);

/// `CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS item ...`: per item, 1
/// when stored, 0 when it may be present, -1 when there was no room
/// (integers in both protocols, as RedisBloom answers).
pub fn insertnx(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    insert_common(ctx, args, true, crate::cuckoo::commands::insertnx::insertnx)
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <InsertNx as Request>::NAME,
    func: command_fn!(insertnx),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "RedisBloom's CF.INSERTNX: adds each item unless it may be present, creating the filter with CAPACITY unless NOCREATE: per item 1 added, 0 may be present, -1 no room.",
        complexity: "O(n * (k + i)), where n is the number of items, k the number of sub-filters and i maxIterations",
        grammar: <InsertNx as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
