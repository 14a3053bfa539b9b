//! `CF.INFO` (RedisBloom's): a filter's size, buckets, sub-filters, items,
//! deletes, bucket size, expansion and kicks.

use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::cuckoo::call::KEY_ONLY;
use crate::cuckoo::redisbloom::call::{answer_as_x, holds_wardens, read_filter};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx};

shape_only_request!(
    /// `CF.INFO key`
    Info,
    "cf.info",
    Grammar::new(KEY_ONLY)
);

/// `CF.INFO key`: RedisBloom's eight fields, simple-string labels; a map in
/// RESP3, a flat array in RESP2.
pub fn info(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if holds_wardens(ctx, args) {
        return answer_as_x(ctx, args, crate::cuckoo::commands::info::info);
    }
    read_filter(ctx, args, |f| {
        let fields = [
            ("Size", f.size()),
            ("Number of buckets", f.buckets),
            ("Number of filters", f.tables.len() as u64),
            ("Number of items inserted", f.items),
            ("Number of items deleted", f.deletes),
            ("Bucket size", u64::from(f.bucket_size)),
            ("Expansion rate", u64::from(f.expansion)),
            ("Max iterations", u64::from(f.max_iterations)),
        ];
        host::reply_map(ctx, fields.len());
        for (label, value) in fields {
            host::reply_simple(ctx, label);
            host::reply_integer(ctx, value as i64);
        }
    })
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Info as Request>::NAME,
    func: command_fn!(info),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary: "RedisBloom's CF.INFO: Size, Number of buckets, Number of filters, Number of items inserted, Number of items deleted, Bucket size, Expansion rate and Max iterations of a filter.",
        complexity: "O(1)",
        grammar: <Info as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
