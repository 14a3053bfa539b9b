//! `BF.INSERT` (RedisBloom's): adds items, creating the filter with the
//! options given (or the defaults) unless `NOCREATE`.

use crate::bloom::core::chain::NewChain;
use crate::bloom::events;
use crate::bloom::redisbloom::call::{
    add_items, answer_as_x, defaults, holds_wardens, reply_outcomes,
};
use crate::common::error::WardenError;
use crate::common::grammar::{
    flag, key, option, repeated, required, shape_only_request, Grammar, Kind, Request,
};
use crate::common::parse::{parse_c_double, parse_i64};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;

shape_only_request!(
    /// `BF.INSERT key [CAPACITY capacity] [ERROR error] [EXPANSION expansion]
    /// [NOCREATE] [NONSCALING] ITEMS item [item ...]`
    Insert,
    "bf.insert",
    Grammar::new(&[
        key(),
        option("CAPACITY", "capacity", Kind::Int),
        option("ERROR", "error", Kind::Double),
        option("EXPANSION", "expansion", Kind::Int),
        flag("NOCREATE"),
        flag("NONSCALING"),
        required(repeated(option("ITEMS", "item", Kind::Str))),
    ])
);

/// What RedisBloom reads before `ITEMS`: by first letter, as it does.
struct Options {
    create: Option<NewChain>,
    /// Where the items start.
    first_item: usize,
}

fn read_options(args: &Args) -> Result<Options, WardenError> {
    let arity = || WardenError::WrongArity(Insert::NAME.into());
    let (mut capacity, mut error, mut expansion) = {
        let d = defaults();
        (d.capacity as i64, d.error, i64::from(d.growth))
    };
    let (mut autocreate, mut nonscaling) = (true, false);
    let mut at = 2;
    let first_item = loop {
        if at >= args.len() {
            return Err(arity());
        }
        let word = args.bytes(at);
        let letter = |i: usize| word.get(i).map_or(0, u8::to_ascii_lowercase);
        match letter(0) {
            b'i' => break at + 1,
            b'e' => {
                at += 1;
                let value = args.get_bytes(at).ok_or_else(arity)?;
                if letter(1) == b'r' {
                    error = parse_c_double(value).ok_or(WardenError::Refused("Bad error rate"))?;
                } else {
                    expansion = parse_i64(value).ok_or(WardenError::Refused("Bad expansion"))?;
                }
            }
            b'c' => {
                at += 1;
                let value = args.get_bytes(at).ok_or_else(arity)?;
                capacity = parse_i64(value).ok_or(WardenError::Refused("Bad capacity"))?;
            }
            b'n' => match letter(2) {
                b'c' => autocreate = false,
                _ => nonscaling = true,
            },
            _ => return Err(WardenError::Refused("Unknown argument received")),
        }
        at += 1;
    };
    if first_item >= args.len() {
        return Err(arity());
    }
    if error <= 0.0 || error >= 1.0 || capacity < 1 || expansion < 1 {
        return Err(WardenError::Refused("Bad argument received"));
    }
    let growth = u32::try_from(expansion).map_err(|_| WardenError::Refused("Bad expansion"))?;
    let create = autocreate.then_some(NewChain {
        capacity: capacity as u64,
        error,
        growth,
        nonscaling,
    });
    Ok(Options { create, first_item })
}

/// `BF.INSERT key [options] ITEMS item [item ...]`: per item, true when it
/// was new; a full non-scaling filter's error ends the array.
pub fn insert(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::bloom::commands::insert::insert);
    }
    let Options { create, first_item } = read_options(args)?;
    let outcomes = add_items(ctx, args, first_item, create, events::INSERT)?;
    reply_outcomes(ctx, &outcomes, true);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Insert as Request>::NAME,
    func: command_fn!(insert),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "RedisBloom's BF.INSERT: adds items, creating the filter with the options given unless NOCREATE: per item, true if new.",
        complexity: "O(k * n)",
        grammar: <Insert as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
