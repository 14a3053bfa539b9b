//! `BF.LOADCHUNK` (RedisBloom's): a filter rebuilt from `BF.SCANDUMP`'s
//! chunks, in RedisBloom's chunk format.
//!
//! Replicated as sent: its effect depends neither on the clock nor on this
//! server's configuration (a replica holds it only to the largest
//! `bf-max-bytes`).

use crate::bloom::call::max_bytes;
use crate::bloom::core::chain::Chain;
use crate::bloom::core::dump::is_wardens_header;
use crate::bloom::events;
use crate::bloom::redisbloom::call::{answer_as_x, held, refusal, Held};
use crate::bloom::redisbloom::data_type::track_new;
use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, shape_only_request, Grammar, Kind, Request};
use crate::common::parse::parse_i64;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `BF.LOADCHUNK key iterator data`
    LoadChunk,
    "bf.loadchunk",
    Grammar::new(&[key(), arg("iterator", Kind::Int), arg("data", Kind::Str)])
);

/// The iterator of a chunk-stream header.
const HEADER: i64 = 1;

/// `BF.LOADCHUNK key iterator data`: the header (iterator 1) makes the
/// filter on an empty key; a chunk writes its bytes where `BF.SCANDUMP`
/// read them. A key holding one of warden's filters (or a warden header) is
/// `BF.LOADCHUNKX`'s.
pub fn loadchunk(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let iter = parse_i64(args.bytes(2))
        .ok_or(WardenError::Refused("ERR Second argument must be numeric"))?;
    let data = args.bytes(3);
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    match held(&mut key)? {
        Held::Warden => {
            drop(key);
            answer_as_x(ctx, args, crate::bloom::commands::loadchunk::loadchunk)
        }
        Held::Empty if iter == HEADER && is_wardens_header(data) => {
            drop(key);
            answer_as_x(ctx, args, crate::bloom::commands::loadchunk::loadchunk)
        }
        Held::Empty if iter == HEADER => {
            let chain = Chain::from_header(data, max_bytes(ctx)).map_err(|e| refusal(ctx, &e))?;
            track_new(&chain);
            key.set_value(Box::new(chain));
            // Time-independent: the chunk's bytes at its offset, no clock read.
            host::replicate_verbatim(ctx);
            host::notify(ctx, events::LOADCHUNK, name);
            host::reply_status(ctx, c"OK");
            Ok(())
        }
        Held::Empty => Err(WardenError::NotFound),
        Held::Chain(c) => {
            c.load_chunk(iter, data).map_err(|e| refusal(ctx, &e))?;
            // Time-independent: the chunk's bytes at its offset, no clock read.
            host::replicate_verbatim(ctx);
            host::notify(ctx, events::LOADCHUNK, name);
            host::reply_status(ctx, c"OK");
            Ok(())
        }
    }
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <LoadChunk as Request>::NAME,
    func: command_fn!(loadchunk),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "RedisBloom's BF.LOADCHUNK: rebuilds a filter from BF.SCANDUMP's chunks (RedisBloom's format; warden's BF.SCANDUMPX chunks too).",
        complexity: "O(n) where n is the size of the chunk",
        grammar: <LoadChunk as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
