//! `BF.LOADCHUNKX`: a filter rebuilt from `BF.SCANDUMPX`'s chunks, with
//! RedisBloom's `BF.LOADCHUNK` protocol (the header format is warden's). It
//! also takes RedisBloom 2.x's chunks: the filter it builds keeps
//! RedisBloom's hashing (see `bloom::core::redisbloom`).
//!
//! `BF.LOADCHUNKX` is replicated as it is: its effect does not depend on the
//! clock or on this server's configuration, and a replica or an AOF replay
//! applies it through the same checks (held only to the largest
//! `bf-max-bytes`, as every replayed write that rebuilds a filter is).

use crate::bloom::call::max_bytes;
use crate::bloom::core::dump::{LoadingFilter, HEADER_ITERATOR, LOAD_ITERATOR};
use crate::bloom::core::filter::BloomFilter;
use crate::bloom::data_type::{self as bloom_type};
use crate::bloom::events;
use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, Arg, Grammar, Kind, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

/// `BF.LOADCHUNKX key iterator data`
pub struct LoadChunk<'a> {
    /// Which chunk.
    pub iterator: u64,
    /// The chunk.
    pub data: &'a [u8],
}

impl<'a> Request<'a> for LoadChunk<'a> {
    const NAME: &'static str = "bf.loadchunkx";
    const GRAMMAR: Grammar =
        Grammar::new(&[key(), arg("iterator", Kind::Int), arg("data", Kind::Str)]);

    fn empty() -> Self {
        LoadChunk {
            iterator: 0,
            data: &[],
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "iterator" => self.iterator = LOAD_ITERATOR.parse(word)? as u64,
            "data" => self.data = word,
            _ => {}
        }
        Ok(())
    }
}

/// `BF.LOADCHUNKX key iterator data`: the header (iterator 1) creates the key
/// as a filter being loaded; each chunk must be the next one, of its exact
/// length; after the last one the key holds the filter (its TTL kept).
pub fn loadchunk(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let LoadChunk { iterator, data } = args.parse::<LoadChunk>()?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    if key.holds::<BloomFilter>() {
        return Err(WardenError::FilterLoaded);
    }
    match key.value::<LoadingFilter>()? {
        None if iterator == HEADER_ITERATOR => {
            let mut loading = LoadingFilter::from_header(data, max_bytes(ctx))?;
            // An aging filter without blocks is whole with its header.
            match loading.complete() {
                Some(filter) => {
                    bloom_type::track_new(&filter);
                    key.set_value(Box::new(filter));
                }
                None => key.set_value(Box::new(loading)),
            }
        }
        None => return Err(WardenError::NotFound),
        Some(loading) => {
            if let Some(filter) = loading.load(iterator, data)? {
                // Storing a value of another type drops the key's TTL: keep it.
                let expiry = key.abs_expire();
                bloom_type::track_new(&filter);
                key.set_value(Box::new(filter));
                if let Some(at) = expiry {
                    key.set_abs_expire(at);
                }
            }
        }
    }
    // Time-independent: a replica checks and applies the same chunk (as
    // BF.LOADCHUNKX when called by RedisBloom's name).
    match args.by_alias() {
        true => host::replicate_as(ctx, c"BF.LOADCHUNKX", args.raw_from(1)),
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
        summary: "Rebuilds a filter from BF.SCANDUMPX's chunks (or RedisBloom 2.x BF.SCANDUMP's: an import that keeps RedisBloom's hashing), in order: the header creates the key (not readable until the last chunk), each chunk must be the next one, of its exact length.",
        complexity: "O(n) where n is the size of the chunk",
        grammar: <LoadChunk as Request>::GRAMMAR,
        since: "0.2.0",
    },
};
