//! `BF.RESERVE` (RedisBloom's): an empty filter in RedisBloom's layout.

use crate::bloom::core::chain::NewChain;
use crate::bloom::events;
use crate::bloom::redisbloom::call::{arg_index, create, held, replicate_reserve, Held};
use crate::bloom::redisbloom::data_type::track_new;
use crate::common::error::WardenError;
use crate::common::grammar::{arg, flag, key, option, shape_only_request, Grammar, Kind, Request};
use crate::common::parse::{parse_c_double, parse_i64};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]`
    Reserve,
    "bf.reserve",
    Grammar::new(&[
        key(),
        arg("error_rate", Kind::Double),
        arg("capacity", Kind::Int),
        option("EXPANSION", "expansion", Kind::Int),
        flag("NONSCALING"),
    ])
);

/// The most arguments RedisBloom takes.
const MAX_ARGS: usize = 7;

/// The parameters, checked in RedisBloom's order with its texts.
fn params(args: &Args) -> Result<NewChain, WardenError> {
    let error = parse_c_double(args.bytes(2)).ok_or(WardenError::Refused("ERR bad error rate"))?;
    if error >= 1.0 || error <= 0.0 {
        return Err(WardenError::Refused("ERR (0 < error rate range < 1) "));
    }
    let capacity = parse_i64(args.bytes(3)).ok_or(WardenError::Refused("ERR bad capacity"))?;
    if capacity <= 0 {
        return Err(WardenError::Refused(
            "ERR (capacity should be larger than 0)",
        ));
    }
    let nonscaling = arg_index(args, "NONSCALING").is_some();
    let mut p = NewChain {
        capacity: capacity as u64,
        error,
        nonscaling,
        ..crate::bloom::redisbloom::call::defaults()
    };
    if let Some(at) = arg_index(args, "EXPANSION") {
        if at + 1 == args.len() {
            return Err(WardenError::Refused("ERR no expansion"));
        }
        if nonscaling {
            return Err(WardenError::Refused("Nonscaling filters cannot expand"));
        }
        let e = parse_i64(args.bytes(at + 1)).ok_or(WardenError::Refused("ERR bad expansion"))?;
        if e < 1 {
            return Err(WardenError::Refused(
                "ERR expansion should be greater or equal to 1",
            ));
        }
        p.growth = u32::try_from(e).map_err(|_| WardenError::Refused("ERR bad expansion"))?;
    }
    Ok(p)
}

/// `BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]`
pub fn reserve(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if args.len() > MAX_ARGS {
        return Err(WardenError::WrongArity(Reserve::NAME.into()));
    }
    let p = params(args)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    if !matches!(held(&mut key)?, Held::Empty) {
        return Err(WardenError::ItemExists);
    }
    let chain = create(ctx, p)?;
    replicate_reserve(ctx, name, p);
    track_new(&chain);
    key.set_value(Box::new(chain));
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
        summary: "RedisBloom's BF.RESERVE: an empty Bloom filter in RedisBloom's layout (type MBbloom--).",
        complexity: "O(1)",
        grammar: <Reserve as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
