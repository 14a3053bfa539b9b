//! `CF.RESERVEX`: an empty cuckoo filter, sized for its capacity.

use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, option, Arg, Grammar, Kind, Request};
use crate::cuckoo::call::{created_hash, filter_in, max_bytes, replicate_reserve, CreateOptions};
use crate::cuckoo::core::filter::CuckooFilter;
use crate::cuckoo::data_type::{self as cuckoo_type};
use crate::cuckoo::events;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

/// `CF.RESERVEX key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]`
pub struct Reserve(pub CreateOptions);

impl<'a> Request<'a> for Reserve {
    const NAME: &'static str = "cf.reservex";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        arg("capacity", Kind::Int),
        option("BUCKETSIZE", "bucketsize", Kind::Int),
        option("MAXITERATIONS", "maxiterations", Kind::Int),
        option("EXPANSION", "expansion", Kind::Int),
    ]);

    fn empty() -> Self {
        Reserve(CreateOptions::default())
    }

    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        self.0.take(arg, word)
    }
}

/// `CF.RESERVEX key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]`
pub fn reserve(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let options = args.parse::<Reserve>()?.0;
    let params = options.params()?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    if filter_in(&mut key)?.is_some() {
        return Err(WardenError::ItemExists);
    }
    let filter = CuckooFilter::new(params, max_bytes(ctx))?.with_item_hash(created_hash(ctx));
    replicate_reserve(ctx, name, &filter);
    cuckoo_type::track_new(&filter);
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
        summary: "Creates an empty cuckoo filter sized for capacity items (BUCKETSIZE slots per bucket, at most MAXITERATIONS kicks per insert, each new sub-filter EXPANSION times larger; 0 never grows).",
        complexity: "O(1)",
        grammar: <Reserve as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
