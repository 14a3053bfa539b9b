//! `CF.LOADCHUNKX`: a filter rebuilt from `CF.SCANDUMPX`'s chunks.

use crate::common::chunks::{HEADER_ITERATOR, LOAD_ITERATOR};
use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, Arg, Grammar, Kind, Request};
use crate::cuckoo::call::max_bytes;
use crate::cuckoo::core::dump;
use crate::cuckoo::core::filter::CuckooFilter;
use crate::cuckoo::data_type::{self as cuckoo_type};
use crate::cuckoo::events;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

/// `CF.LOADCHUNKX key iterator data`
pub struct LoadChunk<'a> {
    /// Which chunk.
    pub iterator: u64,
    /// The chunk.
    pub data: &'a [u8],
}

impl<'a> Request<'a> for LoadChunk<'a> {
    const NAME: &'static str = "cf.loadchunkx";
    const GRAMMAR: Grammar =
        Grammar::new(&[key(), arg("iterator", Kind::Int), arg("data", Kind::Str)]);

    fn empty() -> Self {
        LoadChunk {
            iterator: 0,
            data: &[],
        }
    }

    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "iterator" => self.iterator = LOAD_ITERATOR.parse(word)? as u64,
            "data" => self.data = word,
            _ => {}
        }
        Ok(())
    }
}

/// `CF.LOADCHUNKX key iterator data`: the header (iterator 1) creates the
/// key as a filter being loaded; each chunk must be the next one, of its
/// exact length; after the last one the filter answers commands.
/// Replicated as it is (its effect does not depend on time or configuration).
pub fn loadchunk(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let LoadChunk { iterator, data } = args.parse::<LoadChunk>()?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    match key.value::<CuckooFilter>()? {
        None if iterator == HEADER_ITERATOR => {
            let f = dump::from_header(data, max_bytes(ctx))?;
            cuckoo_type::track_new(&f);
            key.set_value(Box::new(f));
        }
        None => return Err(WardenError::NotFound),
        Some(f) => {
            dump::load_chunk(f, iterator, data)?;
        }
    }
    // The chunk carries the bytes it writes; the clock plays no part.
    match args.by_alias() {
        true => host::replicate_as(ctx, c"CF.LOADCHUNKX", args.raw_from(1)),
        false => host::replicate_verbatim(ctx),
    }
    host::notify(ctx, events::LOADCHUNK, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <LoadChunk as Request>::NAME,
    func: command_fn!(loadchunk),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Rebuilds a filter from CF.SCANDUMPX's chunks, in order: the header creates the key (not readable until the last chunk), each chunk must be the next one, of its exact length.",
        complexity: "O(n) where n is the size of the chunk",
        grammar: <LoadChunk as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
