//! `CMS.MERGE` (RedisBloom's): a sketch set to the weighted sum of others.

use crate::cms::core::redisbloom::{merged, RbSketch};
use crate::cms::events;
use crate::cms::redisbloom::call::{refused, sketch_in};
use crate::common::error::WardenError;
use crate::common::grammar::{
    arg, counted_keys, key, option, repeated, shape_only_request, Grammar, Kind, Request,
};
use crate::common::parse::{is_keyword, parse_i64};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{answer_keys_request, command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CMS.MERGE dest numkeys src [src ...] [WEIGHTS weight [weight ...]]`
    Merge,
    "cms.merge",
    Grammar::new(&[
        key(),
        arg("numkeys", Kind::Int),
        counted_keys("source"),
        repeated(option("WEIGHTS", "weight", Kind::Int)),
    ])
);

/// `CMS.MERGE dest numkeys src [...] [WEIGHTS w ...]`: `dest` (which must
/// exist, with the sources' dimensions) becomes the weighted sum of the
/// sources; checked as RedisBloom checks it, with its texts.
pub fn merge(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if answer_keys_request(ctx, args, <Merge as Request>::GRAMMAR, true) {
        return Ok(());
    }
    let dest_name = args.raw(1);
    let mut dest_key = Key::writable(ctx, dest_name);
    let (width, depth) = {
        let d = sketch_in(&mut dest_key)?;
        (d.width, d.depth)
    };
    let numkeys = parse_i64(args.bytes(2)).ok_or(refused("CMS: invalid numkeys"))?;
    if numkeys < 1 {
        return Err(refused("CMS: Number of keys must be positive"));
    }
    let rest = args.len() - 3;
    let weights_at = (3..args.len()).find(|&i| is_keyword(args.bytes(i), "WEIGHTS"));
    let n = usize::try_from(numkeys).unwrap_or(0);
    match weights_at {
        None if n != rest || n == 0 => return Err(refused("CMS: wrong number of keys")),
        Some(at) if at - 3 != n || rest != 1 + 2 * n => {
            return Err(refused("CMS: wrong number of keys/weights"))
        }
        _ => {}
    }
    let mut weights = Vec::with_capacity(n);
    let mut keys: Vec<(&[u8], Key)> = Vec::new();
    for i in 0..n {
        let weight = match weights_at {
            None => 1,
            Some(at) => {
                parse_i64(args.bytes(at + 1 + i)).ok_or(refused("CMS: invalid weight value"))?
            }
        };
        weights.push(weight);
        let name = args.raw(3 + i);
        let (w, d) = if name.bytes() == dest_name.bytes() {
            (width, depth)
        } else {
            let mut key = Key::readable(ctx, name);
            let s = sketch_in(&mut key)?;
            let dims = (s.width, s.depth);
            if !keys.iter().any(|(b, _)| *b == name.bytes()) {
                keys.push((name.bytes(), key));
            }
            dims
        };
        if (w, d) != (width, depth) {
            return Err(refused("CMS: width/depth is not equal"));
        }
    }
    let dest: &RbSketch = sketch_in(&mut dest_key)?;
    let mut views: Vec<(&[u8], &RbSketch)> = Vec::with_capacity(keys.len());
    for (bytes, key) in keys.iter_mut() {
        views.push((*bytes, &*sketch_in(key)?));
    }
    let sources: Vec<(&RbSketch, i64)> = (0..n)
        .map(|i| {
            let name = args.bytes(3 + i);
            let view = views.iter().find(|(b, _)| *b == name);
            (view.map_or(dest, |(_, s)| *s), weights[i])
        })
        .collect();
    let result = merged(&sources, dest.counters.len()).ok_or(refused("CMS: MERGE overflow"))?;
    drop((sources, views));
    sketch_in(&mut dest_key)?.set(result);
    // Time-independent: sums of the sources' counters, no clock read.
    host::replicate_verbatim(ctx);
    host::notify(ctx, events::MERGE, dest_name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Merge as Request>::NAME,
    func: command_fn!(merge),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "RedisBloom's CMS.MERGE: sets the existing sketch dest to the sum of the sources times their WEIGHTS (default 1).",
        complexity: "O(n) where n is the number of counters times the number of sources",
        grammar: <Merge as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
