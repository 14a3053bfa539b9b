//! `BF.RESERVEX`: an empty Bloom filter, sized for its capacity and error
//! rate, scaling, not scaling or aging.

use crate::bloom::call::{filter_in, max_bytes, replicate_reserve, CreateOptions};
use crate::bloom::core::filter::BloomFilter;
use crate::bloom::data_type::{self as bloom_type};
use crate::bloom::events;
use crate::common::error::WardenError;
use crate::common::grammar::{arg, chosen, flag, key, one_of, option, Arg, Grammar, Kind, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

/// `BF.RESERVEX key error_rate capacity [EXPANSION n | NONSCALING | AGE window_ms]`:
/// the choice is checked by `CreateOptions::params`, which names a combination.
pub struct Reserve(pub CreateOptions);

impl<'a> Request<'a> for Reserve {
    const NAME: &'static str = "bf.reservex";
    const GRAMMAR: Grammar = Grammar::choices_checked_by_request(&[
        key(),
        arg("error_rate", Kind::Double),
        arg("capacity", Kind::Int),
        one_of(
            "shape",
            &[
                chosen(option("EXPANSION", "expansion", Kind::Int)),
                chosen(flag("NONSCALING")),
                chosen(option("AGE", "window_ms", Kind::Int)),
            ],
        ),
    ]);

    fn empty() -> Self {
        Reserve(CreateOptions::default())
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        self.0.take(arg, word)
    }
}

/// `BF.RESERVEX key error_rate capacity [EXPANSION n] [NONSCALING] [AGE window_ms]`
pub fn reserve(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let Reserve(options) = args.parse::<Reserve>()?;
    let params = options.params()?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    if filter_in(&mut key)?.is_some() {
        return Err(WardenError::ItemExists);
    }
    let filter = match options.age {
        Some(window) => {
            BloomFilter::new_aging(params.error_rate, params.capacity, window, max_bytes(ctx))?
        }
        None => BloomFilter::new(params, max_bytes(ctx))?,
    };
    replicate_reserve(ctx, name, &filter);
    bloom_type::track_new(&filter);
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
        summary: "Creates an empty Bloom filter sized for capacity items at error_rate; with AGE, an aging filter that forgets items after window_ms (capacity is then per window).",
        complexity: "O(1)",
        grammar: <Reserve as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
