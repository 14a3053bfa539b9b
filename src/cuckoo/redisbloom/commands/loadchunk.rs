//! `CF.LOADCHUNK` (RedisBloom's): a filter rebuilt from `CF.SCANDUMP`'s
//! chunks, in RedisBloom's chunk format.
//!
//! Replicated as sent: its effect depends neither on the clock nor on this
//! server's configuration (a replica holds it only to the largest
//! `cf-max-bytes`).

use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, shape_only_request, Grammar, Kind, Request};
use crate::cuckoo::call::max_bytes;
use crate::cuckoo::core::dump::is_wardens_header;
use crate::cuckoo::core::redisbloom::{RbFilter, HEADER_BYTES};
use crate::cuckoo::events;
use crate::cuckoo::redisbloom::call::{answer_as_x, header_refusal, held, parse_long, Held};
use crate::cuckoo::redisbloom::data_type::track_new;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CF.LOADCHUNK key iterator data`
    LoadChunk,
    "cf.loadchunk",
    Grammar::new(&[key(), arg("iterator", Kind::Int), arg("data", Kind::Str)])
);

/// The iterator of a chunk-stream header.
const HEADER: i64 = 1;

/// `CF.LOADCHUNK key iterator data`: the header (iterator 1) makes the
/// filter on an empty key; a chunk writes its bytes where RedisBloom writes
/// them. A key holding one of warden's filters (or a warden header on an
/// empty key) is `CF.LOADCHUNKX`'s.
pub fn loadchunk(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let name = args.raw(1);
    let data = args.bytes(3);
    let mut key = Key::writable(ctx, name);
    let status = held(&mut key);
    let iter = parse_long(args.bytes(2));
    let wardens = match &status {
        Ok(Held::Warden) => true,
        Ok(Held::Empty) => iter == Some(HEADER) && is_wardens_header(data),
        _ => false,
    };
    if wardens {
        drop(key);
        return answer_as_x(ctx, args, crate::cuckoo::commands::loadchunk::loadchunk);
    }
    let iter = iter
        .filter(|&i| i != 0)
        .ok_or(WardenError::Refused("Invalid position"))?;
    match (status?, iter) {
        (Held::Empty, HEADER) => {
            let header: &[u8; HEADER_BYTES] = data
                .try_into()
                .map_err(|_| WardenError::Refused("Invalid header"))?;
            let filter = RbFilter::from_header(header, max_bytes(ctx))
                .map_err(|e| header_refusal(ctx, e))?;
            track_new(&filter);
            key.set_value(Box::new(filter));
        }
        (_, HEADER) => return Err(WardenError::ItemExists),
        (Held::Filter(f), _) => {
            if !f.load_chunk(iter, data) {
                return Err(WardenError::Refused("Couldn't load chunk!"));
            }
        }
        _ => return Err(WardenError::NotFound),
    }
    // Time-independent: the chunk's bytes at its offset, no clock read.
    host::replicate_verbatim(ctx);
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
        summary: "RedisBloom's CF.LOADCHUNK: rebuilds a filter from CF.SCANDUMP's chunks (RedisBloom's format; warden's CF.SCANDUMPX chunks too).",
        complexity: "O(n), where n is the size of the chunk",
        grammar: <LoadChunk as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
