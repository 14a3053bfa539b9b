//! `CF.RESERVE` (RedisBloom's): an empty filter in RedisBloom's layout.

use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, option, shape_only_request, Grammar, Kind, Request};
use crate::cuckoo::core::redisbloom::{NewRb, MAX_BUCKET_SIZE, MAX_EXPANSION};
use crate::cuckoo::events;
use crate::cuckoo::redisbloom::call::{
    arg_index, create, defaults, held, parse_long, replicate_reserve, Held,
};
use crate::cuckoo::redisbloom::data_type::track_new;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CF.RESERVE key capacity [BUCKETSIZE bucketsize]
    /// [MAXITERATIONS maxiterations] [EXPANSION expansion]`
    Reserve,
    "cf.reserve",
    Grammar::new(&[
        key(),
        arg("capacity", Kind::Int),
        option("BUCKETSIZE", "bucketsize", Kind::Int),
        option("MAXITERATIONS", "maxiterations", Kind::Int),
        option("EXPANSION", "expansion", Kind::Int),
    ])
);

/// The value of option `word` anywhere in the call, as RedisBloom reads it:
/// `None` without the option; `Err(unparsed)` when its value is missing or
/// not an integer, `Err(range)` when outside `range`.
fn option_value(
    args: &Args,
    word: &str,
    range: std::ops::RangeInclusive<i64>,
    (unparsed, out_of_range): (&'static str, &'static str),
) -> Result<Option<i64>, WardenError> {
    let Some(at) = arg_index(args, word) else {
        return Ok(None);
    };
    let v = args
        .get_bytes(at + 1)
        .and_then(parse_long)
        .ok_or(WardenError::Refused(unparsed))?;
    match range.contains(&v) {
        true => Ok(Some(v)),
        false => Err(WardenError::Refused(out_of_range)),
    }
}

/// The parameters, checked in RedisBloom's order with its texts.
fn params(ctx: Ctx, args: &Args) -> Result<NewRb, WardenError> {
    let capacity = parse_long(args.bytes(2)).ok_or(WardenError::Refused("Bad capacity"))?;
    let mut p = defaults(ctx);
    if let Some(m) = option_value(
        args,
        "MAXITERATIONS",
        1..=i64::from(u16::MAX),
        (
            "Couldn't parse MAXITERATIONS",
            "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
        ),
    )? {
        p.max_iterations = m as u16;
    }
    if let Some(b) = option_value(
        args,
        "BUCKETSIZE",
        1..=i64::from(MAX_BUCKET_SIZE),
        (
            "Couldn't parse BUCKETSIZE",
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
        ),
    )? {
        p.bucket_size = b as u16;
    }
    if let Some(e) = option_value(
        args,
        "EXPANSION",
        0..=MAX_EXPANSION,
        (
            "Couldn't parse EXPANSION",
            "EXPANSION: value must be an integer between 0 and 32768, inclusive.",
        ),
    )? {
        p.expansion = e as u16;
    }
    if 2 * i64::from(p.bucket_size) > capacity {
        return Err(WardenError::Refused(
            "Capacity must be at least (BucketSize * 2)",
        ));
    }
    p.capacity = capacity as u64;
    Ok(p)
}

/// `CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]`
pub fn reserve(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if args.len().is_multiple_of(2) {
        return Err(WardenError::WrongArity(Reserve::NAME.into()));
    }
    let p = params(ctx, args)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    if !matches!(held(&mut key)?, Held::Empty) {
        return Err(WardenError::ItemExists);
    }
    let filter = create(ctx, p)?;
    replicate_reserve(ctx, name, &filter);
    track_new(&filter);
    key.set_value(Box::new(filter));
    host::notify(ctx, events::RESERVE, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Reserve as Request>::NAME,
    func: command_fn!(reserve),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "RedisBloom's CF.RESERVE: an empty cuckoo filter in RedisBloom's layout (type MBbloomCF).",
        complexity: "O(1)",
        grammar: <Reserve as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
