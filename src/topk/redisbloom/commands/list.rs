//! `TOPK.LIST` (RedisBloom's): the top k, most counted first.

use crate::common::error::WardenError;
use crate::common::grammar::{flag, key, shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::topk::redisbloom::topk_in;

shape_only_request!(
    /// `TOPK.LIST key [WITHCOUNT]`
    List,
    "topk.list",
    Grammar::new(&[key(), flag("WITHCOUNT")])
);

/// `TOPK.LIST key [WITHCOUNT]`: the items of the top k, most counted first,
/// each followed by its count with `WITHCOUNT`. Any prefix of `WITHCOUNT`
/// (an empty word too) asks for the counts, as RedisBloom reads it.
pub fn list(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if args.len() > 3 {
        return Err(WardenError::WrongArity(List::NAME.into()));
    }
    let with_count = match args.get_bytes(2) {
        None => false,
        Some(w) if w.len() <= 9 && w.eq_ignore_ascii_case(&b"WITHCOUNT"[..w.len()]) => true,
        Some(_) => return Err(WardenError::Refused("WITHCOUNT keyword expected")),
    };
    let mut key = Key::readable(ctx, args.raw(1));
    let topk = topk_in(&mut key)?;
    let entries = topk.list();
    host::reply_array(ctx, entries.len() * (1 + usize::from(with_count)));
    for (item, count) in entries {
        match item {
            // RedisBloom answers an item as a C string (up to a NUL), and an
            // entry without one (the empty item, loaded) as nil.
            Some(item) => {
                let end = item.iter().position(|&b| b == 0).unwrap_or(item.len());
                host::reply_bulk(ctx, &item[..end]);
            }
            None => host::reply_null(ctx),
        }
        if with_count {
            host::reply_integer(ctx, i64::from(count));
        }
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <List as Request>::NAME,
    func: command_fn!(list),
    alias: None,
    flags: "readonly",
    doc: Doc {
        summary: "RedisBloom's TOPK.LIST: the items of the top k, most counted first (WITHCOUNT: each with its count).",
        complexity: "O(k log k)",
        grammar: <List as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
