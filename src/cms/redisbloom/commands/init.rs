//! `CMS.INITBYDIM` and `CMS.INITBYPROB` (RedisBloom's): an empty sketch of
//! the given dimensions, or of those an error and a probability give.

use crate::cms::core::redisbloom::dims_from_prob;
use crate::cms::events;
use crate::cms::redisbloom::call::{create, refused};
use crate::cms::redisbloom::data_type::track_new;
use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, shape_only_request, Grammar, Kind, Request};
use crate::common::parse::{parse_c_double, parse_i64};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CMS.INITBYDIM key width depth`
    ByDim,
    "cms.initbydim",
    Grammar::new(&[key(), arg("width", Kind::Int), arg("depth", Kind::Int)])
);

shape_only_request!(
    /// `CMS.INITBYPROB key error probability`
    ByProb,
    "cms.initbyprob",
    Grammar::new(&[key(), arg("error", Kind::Double), arg("probability", Kind::Double)])
);

/// A dimension: an integer of at least 1, else `refusal`.
fn dimension(word: &[u8], refusal: &'static str) -> Result<u64, WardenError> {
    match parse_i64(word) {
        Some(v) if v >= 1 => Ok(v as u64),
        _ => Err(refused(refusal)),
    }
}

/// A rate in (0, 1), else `refusal`.
fn rate(word: &[u8], refusal: &'static str) -> Result<f64, WardenError> {
    match parse_c_double(word) {
        Some(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(refused(refusal)),
    }
}

/// Both commands: the key must be empty (checked first, as RedisBloom
/// does), then the dimensions.
fn init(ctx: Ctx, args: &Args, by_dim: bool) -> Result<(), WardenError> {
    let name = args.raw(1);
    let key = Key::writable(ctx, name);
    if !key.is_empty() {
        return Err(refused("CMS: key already exists"));
    }
    let (width, depth) = match by_dim {
        true => (
            dimension(args.bytes(2), "CMS: invalid width")?,
            dimension(args.bytes(3), "CMS: invalid depth")?,
        ),
        false => dims_from_prob(
            rate(args.bytes(2), "CMS: invalid overestimation value")?,
            rate(args.bytes(3), "CMS: invalid prob value")?,
        ),
    };
    if width < 1 || depth < 1 || width > i64::MAX as u64 / depth {
        return Err(refused("CMS: invalid init arguments"));
    }
    let sketch = create(ctx, width, depth)?;
    track_new(&sketch);
    key.set_value(Box::new(sketch));
    // Time-independent: explicit dimensions or a rate pair, no clock read.
    host::replicate_verbatim(ctx);
    let event = match by_dim {
        true => events::INITBYDIM,
        false => events::INITBYPROB,
    };
    host::notify(ctx, event, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// `CMS.INITBYDIM key width depth`
pub fn initbydim(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    init(ctx, args, true)
}

/// `CMS.INITBYPROB key error probability`
pub fn initbyprob(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    init(ctx, args, false)
}

/// `CMS.INITBYDIM`'s row in the module's command table.
pub const BY_DIM: Command = Command {
    name: <ByDim as Request>::NAME,
    func: command_fn!(initbydim),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "RedisBloom's CMS.INITBYDIM: an empty count-min sketch of width × depth counters in RedisBloom's layout (type CMSk-TYPE).",
        complexity: "O(1)",
        grammar: <ByDim as Request>::GRAMMAR,
        since: "0.5.0",
    },
};

/// `CMS.INITBYPROB`'s row in the module's command table.
pub const BY_PROB: Command = Command {
    name: <ByProb as Request>::NAME,
    func: command_fn!(initbyprob),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "RedisBloom's CMS.INITBYPROB: an empty count-min sketch sized for an error and a probability, in RedisBloom's layout.",
        complexity: "O(1)",
        grammar: <ByProb as Request>::GRAMMAR,
        since: "0.5.0",
    },
};
