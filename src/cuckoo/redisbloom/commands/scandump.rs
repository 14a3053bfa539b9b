//! `CF.SCANDUMP` (RedisBloom's): a filter read in chunks, in RedisBloom's
//! chunk format.

use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, shape_only_request, Grammar, Kind, Request};
use crate::cuckoo::redisbloom::call::{answer_as_x, holds_wardens, parse_long, read_filter};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx};

shape_only_request!(
    /// `CF.SCANDUMP key iterator`
    ScanDump,
    "cf.scandump",
    Grammar::new(&[key(), arg("iterator", Kind::Int)])
);

/// `CF.SCANDUMP key iterator`: `[1, header]` for 0, `[next, bytes]` from
/// any other iterator inside the filter, `[0, nil]` past it and for a
/// filter without items.
pub fn scandump(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::cuckoo::commands::scandump::scandump);
    }
    let iter = parse_long(args.bytes(2))
        .and_then(|i| u64::try_from(i).ok())
        .ok_or(WardenError::Refused("Invalid position"))?;
    read_filter(ctx, args, |f| {
        host::reply_array(ctx, 2);
        if f.items == 0 {
            host::reply_integer(ctx, 0);
            host::reply_null(ctx);
            return;
        }
        if iter == 0 {
            host::reply_integer(ctx, 1);
            host::reply_bulk(ctx, &f.encode_header());
            return;
        }
        match f.chunk(iter) {
            Some((next, bytes)) => {
                host::reply_integer(ctx, next as i64);
                host::reply_bulk(ctx, bytes);
            }
            None => {
                host::reply_integer(ctx, 0);
                host::reply_null(ctx);
            }
        }
    })
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <ScanDump as Request>::NAME,
    func: command_fn!(scandump),
    alias: None,
    flags: "readonly",
    doc: Doc {
        summary: "RedisBloom's CF.SCANDUMP: iterator 0 gives [1, header], any other [next, the sub-filter (or up to 16 MiB of it) from there], past the end or for a filter without items [0, nil].",
        complexity: "O(n), where n is the size of the chunk",
        grammar: <ScanDump as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
