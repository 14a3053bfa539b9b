//! `TOPK.RESERVE` (RedisBloom's): an empty top-k.

use crate::common::error::WardenError;
use crate::common::grammar::{
    arg, block, key, optional, shape_only_request, Grammar, Kind, Request,
};
use crate::common::parse::{parse_c_double, parse_i64};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::topk::call::max_bytes;
use crate::topk::config::topk_max_bytes;
use crate::topk::core::redisbloom::RbTopK;
use crate::topk::events;
use crate::topk::redisbloom::data_type::track_new;

shape_only_request!(
    /// `TOPK.RESERVE key k [width depth decay]`
    Reserve,
    "topk.reserve",
    Grammar::new(&[
        key(),
        arg("k", Kind::Int),
        optional(block(
            "sizes",
            &[
                arg("width", Kind::Int),
                arg("depth", Kind::Int),
                arg("decay", Kind::Double),
            ]
        )),
    ])
);

/// A size of at least 1 (and at most 2^32 − 1), else `refusal`.
fn size(word: &[u8], refusal: &'static str) -> Result<u32, WardenError> {
    match parse_i64(word) {
        Some(v) if v >= 1 => u32::try_from(v).map_err(|_| WardenError::Refused(refusal)),
        _ => Err(WardenError::Refused(refusal)),
    }
}

/// `TOPK.RESERVE key k [width depth decay]`: width 8, depth 7 and decay 0.9
/// when not given, as RedisBloom's.
pub fn reserve(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if args.len() != 3 && args.len() != 6 {
        return Err(WardenError::WrongArity(Reserve::NAME.into()));
    }
    let name = args.raw(1);
    let key = Key::writable(ctx, name);
    if !key.is_empty() {
        return Err(WardenError::Refused("TopK: key already exists"));
    }
    let k = size(args.bytes(2), "TopK: invalid k")?;
    let (width, depth, decay) = match args.len() {
        6 => (
            size(args.bytes(3), "TopK: invalid width")?,
            size(args.bytes(4), "TopK: invalid depth")?,
            match parse_c_double(args.bytes(5)) {
                Some(d) if d > 0.0 && d <= 1.0 => d,
                _ => {
                    return Err(WardenError::Refused(
                        "TopK: invalid decay value. must be '<= 1' & '> 0'",
                    ))
                }
            },
        ),
        _ => (8, 7, 0.9),
    };
    let bytes = RbTopK::bytes_for(k, width, depth);
    if bytes.is_none_or(|b| b > max_bytes(ctx)) {
        return Err(WardenError::RefusedWith(format!(
            "TopK: Insufficient memory to create topk data structure: it would take {} bytes, \
             over topk-max-bytes ({}); raise it with CONFIG SET warden.topk-max-bytes",
            bytes.map_or("too many".to_string(), |b| b.to_string()),
            topk_max_bytes()
        )));
    }
    let topk = RbTopK::new(k, width, depth, decay)
        .ok_or(WardenError::Refused("TopK: could not create the sketch"))?;
    track_new(&topk);
    key.set_value(Box::new(topk));
    // Time-independent: sizes given or RedisBloom's constants, no clock.
    host::replicate_verbatim(ctx);
    host::notify(ctx, events::RESERVE, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Reserve as Request>::NAME,
    func: command_fn!(reserve),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "RedisBloom's TOPK.RESERVE: an empty top-k in RedisBloom's layout (type TopK-TYPE): width 8, depth 7, decay 0.9 unless given.",
        complexity: "O(1)",
        grammar: <Reserve as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
