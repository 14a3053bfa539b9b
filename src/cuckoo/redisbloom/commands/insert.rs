//! `CF.INSERT` (RedisBloom's): adds items, creating the filter with the
//! call's `CAPACITY` (or the defaults) unless `NOCREATE`. Its body serves
//! `CF.INSERTNX` too (`insertnx`), which adds each item unless present.

use crate::common::error::WardenError;
use crate::common::grammar::{
    flag, key, option, repeated, required, shape_only_request, Grammar, Kind, Request,
};
use crate::cuckoo::core::redisbloom::NewRb;
use crate::cuckoo::events;
use crate::cuckoo::redisbloom::call::{
    add_items, answer_as_x, defaults, holds_wardens, parse_long, Shape,
};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command, Handler};
use crate::glue::host::Ctx;

shape_only_request!(
    /// `CF.INSERT key [CAPACITY capacity] [NOCREATE] ITEMS item [item ...]`
    Insert,
    "cf.insert",
    Grammar::new(&[
        key(),
        option("CAPACITY", "capacity", Kind::Int),
        flag("NOCREATE"),
        required(repeated(option("ITEMS", "item", Kind::Str))),
    ])
);

/// The filter a call creates (`None` with `NOCREATE`) and where its items
/// start, read as RedisBloom reads them: each word by its first letter
/// (`c`apacity, `n`ocreate, `i`tems), the capacity at least 4 (twice
/// RedisBloom's default bucket size).
fn read_options(
    ctx: Ctx,
    args: &Args,
    name: &'static str,
) -> Result<(Option<NewRb>, usize), WardenError> {
    let arity = || WardenError::WrongArity(name.into());
    let mut p = defaults(ctx);
    let mut capacity = p.capacity as i64;
    let mut autocreate = true;
    let mut at = 2;
    let first = loop {
        let Some(word) = args.get_bytes(at) else {
            return Err(arity());
        };
        match word.first().map(u8::to_ascii_lowercase) {
            Some(b'c') => {
                at += 1;
                let value = args.get_bytes(at).ok_or_else(arity)?;
                capacity = parse_long(value).ok_or(WardenError::Refused("Bad capacity"))?;
                if capacity < 4 {
                    return Err(WardenError::Refused(
                        "Capacity must be at least (BucketSize * 2)",
                    ));
                }
                at += 1;
            }
            Some(b'i') => break at + 1,
            Some(b'n') => {
                autocreate = false;
                at += 1;
            }
            _ => return Err(WardenError::Refused("Unknown argument received")),
        }
    };
    if first >= args.len() {
        return Err(arity());
    }
    p.capacity = capacity as u64;
    Ok((autocreate.then_some(p), first))
}

/// `CF.INSERT` / `CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS item ...`;
/// `x` answers a key holding one of warden's filters.
pub fn insert_common(ctx: Ctx, args: &Args, nx: bool, x: Handler) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, x);
    }
    let name = if nx { "cf.insertnx" } else { Insert::NAME };
    let (create, first) = read_options(ctx, args, name)?;
    let shape = Shape { nx, multi: true };
    add_items(ctx, args, first, create, (shape, events::INSERT))
}

/// `CF.INSERT key [CAPACITY c] [NOCREATE] ITEMS item ...`: per item, true
/// when stored, false (-1 in RESP2) when the filter had no room.
pub fn insert(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    insert_common(ctx, args, false, crate::cuckoo::commands::insert::insert)
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Insert as Request>::NAME,
    func: command_fn!(insert),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "RedisBloom's CF.INSERT: adds items, creating the filter with CAPACITY unless NOCREATE: per item, true if added, false (-1 in RESP2) where there was no room.",
        complexity: "O(n * (k + i)), where n is the number of items, k the number of sub-filters and i maxIterations",
        grammar: <Insert as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
