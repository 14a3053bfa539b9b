//! `BF.SCANDUMP` (RedisBloom's): a filter read in chunks, in RedisBloom's
//! chunk format.

use crate::bloom::redisbloom::call::{answer_as_x, holds_wardens, read_chain};
use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, shape_only_request, Grammar, Kind, Request};
use crate::common::parse::parse_i64;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx};

shape_only_request!(
    /// `BF.SCANDUMP key iterator`
    ScanDump,
    "bf.scandump",
    Grammar::new(&[key(), arg("iterator", Kind::Int)])
);

/// `BF.SCANDUMP key iterator`: `[1, header]` for 0, `[next, bytes]` from
/// any other iterator inside the filter, `[0, ""]` past it.
pub fn scandump(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::bloom::commands::scandump::scandump);
    }
    read_chain(ctx, args, |c| {
        let Some(iter) = parse_i64(args.bytes(2)) else {
            host::reply_error(ctx, "Second argument must be numeric");
            return;
        };
        host::reply_array(ctx, 2);
        if iter == 0 {
            host::reply_integer(ctx, 1);
            host::reply_bulk(ctx, &c.encode_header());
            return;
        }
        match u64::try_from(iter).ok().and_then(|i| c.chunk(i)) {
            Some((next, bytes)) => {
                host::reply_integer(ctx, next as i64);
                host::reply_bulk(ctx, bytes);
            }
            None => {
                host::reply_integer(ctx, 0);
                host::reply_bulk(ctx, b"");
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
        summary: "RedisBloom's BF.SCANDUMP: iterator 0 gives [1, header], any other [next, up to 16 MiB of bits from there], past the end [0, \"\"].",
        complexity: "O(n) where n is the size of the chunk",
        grammar: <ScanDump as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
