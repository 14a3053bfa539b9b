//! `BF.INFOX`: a Bloom filter's parameters and counts, all or one (and
//! RedisBloom's `BF.INFO` reply by its name).

use crate::bloom::call::{clock_for, filter_in};
use crate::bloom::core::aging::Aging;
use crate::bloom::core::filter::BloomFilter;
use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, optional, Arg, Grammar, Kind, Request};
use crate::common::parse::is_keyword;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

/// The fields of BF.INFOX, in order, with the word that selects each alone;
/// the last, the window, only for an aging filter.
pub const INFO_FIELDS: [(&str, &str); 7] = [
    ("CAPACITY", "Capacity"),
    ("SIZE", "Size"),
    ("FILTERS", "Number of filters"),
    ("ITEMS", "Number of items inserted"),
    ("EXPANSION", "Expansion rate"),
    ("ERROR", "Error rate"),
    ("WINDOW", "Window"),
];

/// `BF.INFOX key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION|ERROR|WINDOW]`
pub struct Info {
    /// The one field asked for (an index of `INFO_FIELDS`), or all.
    pub only: Option<usize>,
}

impl<'a> Request<'a> for Info {
    const NAME: &'static str = "bf.infox";
    const GRAMMAR: Grammar = Grammar::new(&[key(), optional(arg("field", Kind::Str))]);

    fn empty() -> Self {
        Info { only: None }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        if arg.name == "field" {
            let at = INFO_FIELDS.iter().position(|(w, _)| is_keyword(word, w));
            self.only = Some(at.ok_or(WardenError::Syntax)?);
        }
        Ok(())
    }
}

fn reply_info_value(ctx: Ctx, f: &BloomFilter, field: usize, now: u64) {
    let live_blocks = |a: &Aging| f.layers().len() - a.first_live(now);
    match field {
        0 => host::reply_integer(ctx, f.capacity() as i64),
        1 => host::reply_integer(ctx, f.size() as i64),
        2 => host::reply_integer(ctx, f.aging().map_or(f.layers().len(), live_blocks) as i64),
        3 => host::reply_integer(ctx, f.items(now) as i64),
        4 if f.expansion() == 0 => host::reply_null(ctx),
        4 => host::reply_integer(ctx, i64::from(f.expansion())),
        5 => host::reply_decimal(ctx, f.error_rate()),
        _ => match f.aging() {
            Some(a) => host::reply_integer(ctx, a.window_ms() as i64),
            None => host::reply_null(ctx),
        },
    };
}

/// How many of `INFO_FIELDS` RedisBloom's `BF.INFO` shows (through
/// Expansion rate).
const REDISBLOOM_INFO_FIELDS: usize = 5;

/// `BF.INFO key [field]` as RedisBloom replies: its five fields as a map of
/// simple-string labels (a flat array in RESP2); one field as a map of one
/// (RESP3) or an array of its value alone (RESP2).
fn reply_redisbloom_info(ctx: Ctx, f: &BloomFilter, only: Option<usize>, now: u64) {
    let label = |field: usize| host::reply_simple(ctx, INFO_FIELDS[field].1);
    match only {
        Some(field) => {
            if host::reply_map_or_values(ctx, 1) {
                label(field);
            }
            reply_info_value(ctx, f, field, now);
        }
        None => {
            host::reply_map(ctx, REDISBLOOM_INFO_FIELDS);
            for field in 0..REDISBLOOM_INFO_FIELDS {
                label(field);
                reply_info_value(ctx, f, field, now);
            }
        }
    }
}

/// `BF.INFOX key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION|ERROR]`
pub fn info(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let only = args.parse::<Info>()?.only;
    let mut key = Key::readable(ctx, args.raw(1));
    let f = filter_in(&mut key)?.ok_or(WardenError::NotFound)?;
    let now = clock_for(f);
    if args.by_alias() {
        reply_redisbloom_info(ctx, f, only, now);
        return Ok(());
    }
    match only {
        Some(field) => {
            host::reply_array(ctx, 1);
            reply_info_value(ctx, f, field, now);
        }
        None => {
            let shown = if f.aging().is_some() {
                INFO_FIELDS.len()
            } else {
                INFO_FIELDS.len() - 1
            };
            host::reply_map(ctx, shown);
            for (field, (_, label)) in INFO_FIELDS.iter().enumerate().take(shown) {
                host::reply_bulk(ctx, label.as_bytes());
                reply_info_value(ctx, f, field, now);
            }
        }
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Info as Request>::NAME,
    func: command_fn!(info),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary: "Capacity, Size, Number of filters, Number of items inserted, Expansion rate, Error rate and (aging filters) Window of a filter.",
        complexity: "O(1)",
        grammar: <Info as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
