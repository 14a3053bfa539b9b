//! `BF.SCANDUMPX` and `BF.LOADCHUNKX`: a filter read in chunks and rebuilt
//! from them, with RedisBloom's `BF.SCANDUMP` / `BF.LOADCHUNK` protocol (the
//! header format is warden's). `BF.LOADCHUNKX` also takes RedisBloom 2.x's
//! chunks: the filter it builds keeps RedisBloom's hashing (see
//! `bloom::core::redisbloom`).
//!
//! `BF.LOADCHUNKX` is replicated as it is: its effect does not depend on the
//! clock or on this server's configuration, and a replica or an AOF replay
//! applies it through the same checks (held only to the largest
//! `bf-max-bytes`, as every replayed write that rebuilds a filter is).

use crate::bloom::commands::{filter_in, max_bytes};
use crate::bloom::core::dump::{chunk_at, encode_header, Chunk, LoadingFilter, HEADER_ITERATOR};
use crate::bloom::core::filter::{BloomFilter, Layer};
use crate::bloom::data_type::{self as bloom_type};
use crate::bloom::events;
use crate::bloom::requests::{LoadChunk, ScanDump};
use crate::common::error::WardenError;
use crate::common::le_words::words_to_le;
use crate::glue::args::Args;
use crate::glue::host::{self, Ctx, Key};

/// Replies `[iterator, data]`.
fn reply_chunk(ctx: Ctx, iterator: u64, data: &[u8]) {
    host::reply_array(ctx, 2);
    host::reply_integer(ctx, iterator as i64);
    host::reply_bulk(ctx, data);
}

/// `BF.SCANDUMPX key iterator`: `[1, header]` for iterator 0, then
/// `[next, bits]` for each chunk, and `[0, ""]` after the last.
pub fn scandump(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let iterator = args.parse::<ScanDump>()?.iterator;
    let mut key = Key::readable(ctx, args.raw(1));
    let f = filter_in(&mut key)?.ok_or(WardenError::NotFound)?;
    match chunk_at(f.layers().iter().map(Layer::bytes), iterator)? {
        Chunk::Header => reply_chunk(ctx, HEADER_ITERATOR, &encode_header(f.parts())),
        Chunk::Bits {
            layer,
            offset,
            len,
            next,
        } => {
            let words = &f.layers()[layer].words()[(offset / 8) as usize..][..(len / 8) as usize];
            reply_chunk(ctx, next, &words_to_le(words));
        }
        Chunk::End => reply_chunk(ctx, 0, b""),
    }
    Ok(())
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
