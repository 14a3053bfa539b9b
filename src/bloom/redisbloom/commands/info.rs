//! `BF.INFO` (RedisBloom's): a filter's capacity, size, links, items and
//! expansion, all or one.

use crate::bloom::core::chain::Chain;
use crate::bloom::redisbloom::call::{answer_as_x, holds_wardens, read_chain};
use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, optional, shape_only_request, Grammar, Kind, Request};
use crate::common::parse::is_keyword;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx};

shape_only_request!(
    /// `BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION]`
    Info,
    "bf.info",
    Grammar::new(&[key(), optional(arg("field", Kind::Str))])
);

/// The fields, with the word that asks for each alone.
const FIELDS: [(&str, &str); 5] = [
    ("capacity", "Capacity"),
    ("size", "Size"),
    ("filters", "Number of filters"),
    ("items", "Number of items inserted"),
    ("expansion", "Expansion rate"),
];

fn reply_value(ctx: Ctx, c: &Chain, field: usize) {
    match field {
        0 => host::reply_integer(ctx, c.capacity() as i64),
        1 => host::reply_integer(ctx, c.size() as i64),
        2 => host::reply_integer(ctx, c.links.len() as i64),
        3 => host::reply_integer(ctx, c.items as i64),
        _ if c.is_scaling() => host::reply_integer(ctx, i64::from(c.growth)),
        _ => host::reply_null(ctx),
    }
}

/// `BF.INFO key [field]`: a map of the five (a flat array in RESP2), or
/// one field (a map of one in RESP3, its value alone in an array in RESP2).
pub fn info(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if args.len() > 3 {
        return Err(WardenError::WrongArity(Info::NAME.into()));
    }
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::bloom::commands::info::info);
    }
    let only = match args.len() {
        3 => Some(
            FIELDS
                .iter()
                .position(|(word, _)| is_keyword(args.bytes(2), word))
                .ok_or(WardenError::Refused("Invalid information value"))?,
        ),
        _ => None,
    };
    read_chain(ctx, args, |c| match only {
        Some(field) => {
            if host::reply_map_or_values(ctx, 1) {
                host::reply_simple(ctx, FIELDS[field].1);
            }
            reply_value(ctx, c, field);
        }
        None => {
            host::reply_map(ctx, FIELDS.len());
            for (field, (_, label)) in FIELDS.iter().enumerate() {
                host::reply_simple(ctx, label);
                reply_value(ctx, c, field);
            }
        }
    })
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Info as Request>::NAME,
    func: command_fn!(info),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary: "RedisBloom's BF.INFO: Capacity, Size, Number of filters, Number of items inserted and Expansion rate of a filter, or one of them.",
        complexity: "O(1)",
        grammar: <Info as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
