//! `CF.INFOX`: a cuckoo filter's parameters and counts (and RedisBloom's
//! `CF.INFO` reply by its name).

use crate::common::error::WardenError;
use crate::common::grammar::{shape_only_request, Grammar, Request};
use crate::cuckoo::call::{filter_in, KEY_ONLY};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CF.INFOX key`
    Info,
    "cf.infox",
    Grammar::new(KEY_ONLY)
);

/// The fields of CF.INFOX, in order; RedisBloom's `CF.INFO` shows all but
/// the last.
pub const INFO_FIELDS: [&str; 9] = [
    "Size",
    "Number of buckets",
    "Number of filters",
    "Number of items inserted",
    "Number of items deleted",
    "Bucket size",
    "Expansion rate",
    "Max iterations",
    "Fingerprint bits",
];

/// `CF.INFOX key`
pub fn info(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Info>()?;
    let mut key = Key::readable(ctx, args.raw(1));
    let f = filter_in(&mut key)?.ok_or(WardenError::NotFound)?;
    let p = f.params();
    let values = [
        f.slot_bytes(),
        f.filters()[0].buckets(),
        f.filters().len() as u64,
        f.items(),
        f.deletes(),
        u64::from(p.bucket_size),
        u64::from(p.expansion),
        u64::from(p.max_iterations),
        u64::from(f.fingerprint_bits()),
    ];
    let shown = if args.by_alias() { 8 } else { 9 };
    host::reply_map(ctx, shown);
    for (label, value) in INFO_FIELDS.iter().zip(values).take(shown) {
        match args.by_alias() {
            true => {
                host::reply_simple(ctx, label);
            }
            false => host::reply_bulk(ctx, label.as_bytes()),
        }
        host::reply_integer(ctx, value as i64);
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Info as Request>::NAME,
    func: command_fn!(info),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary: "Size, Number of buckets, Number of filters, Number of items inserted, Number of items deleted, Bucket size, Expansion rate, Max iterations and Fingerprint bits of a filter.",
        complexity: "O(1)",
        grammar: <Info as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
