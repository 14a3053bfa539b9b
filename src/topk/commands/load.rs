//! `TOPK._LOADX`: a top-k in parts, as a rewritten AOF carries it. Internal.

use crate::common::error::WardenError;
use crate::common::grammar::{
    arg, chosen, key, one_of, required, shape_only_request, tokened_block, Grammar, Kind, Request,
};
use crate::glue::args::{internal_only, Args};
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key, Sink};
use crate::topk::call::max_bytes;
use crate::topk::core::heavy_keeper::{error, text, TopK, KIND};
use crate::topk::data_type::{check_header, track_new};
use crate::topk::events;
use crate::topk::stats::track_growth;
use crate::topk::wire::{buckets_from_le, LoadTopK};

shape_only_request!(
    /// `TOPK._LOADX key HEADER … | BUCKETS … | SLOT …`: the AOF form of a
    /// top-k (see `wire::LoadTopK`).
    Load,
    "topk._loadx",
    Grammar::new(&[
        key(),
        required(one_of(
            "chunk",
            &[
                chosen(tokened_block("HEADER", "header", &[
                        arg("kind", Kind::Int),
                        arg("k", Kind::Int),
                        arg("width", Kind::Int),
                        arg("depth", Kind::Int),
                        arg("decay", Kind::Double),
                        arg("window_ms", Kind::Int),
                        arg("head_ms", Kind::Int),
                        arg("rng", Kind::Int),
                    ])),
                chosen(tokened_block("BUCKETS", "buckets", &[
                        arg("sub", Kind::Int),
                        arg("offset", Kind::Int),
                        arg("bytes", Kind::Str),
                    ])),
                chosen(tokened_block("SLOT", "slot", &[
                        arg("index", Kind::Int),
                        arg("count", Kind::Int),
                        arg("item", Kind::Str),
                    ])),
            ],
        )),
    ])
);

/// `TOPK._LOADX key HEADER | BUCKETS | SLOT …`: the AOF form of a top-k. Internal.
pub fn load(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "topk._loadx")?;
    args.parse::<Load>()?;
    let bad = || WardenError::BadFilterData;
    let chunk = LoadTopK::parse(args)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let existing = key.value::<TopK>()?;
    match chunk {
        LoadTopK::Header {
            kind,
            k,
            width,
            depth,
            decay,
            window_ms,
            head_ms,
            rng,
        } => {
            if existing.is_some() || kind != KIND {
                return Err(bad());
            }
            let header = check_header(kind, (k, width, depth, decay), window_ms);
            let (params, window) = header.ok_or_else(bad)?;
            let mut t = TopK::new(params, window, rng, max_bytes(ctx))?;
            t.set_rng(rng)?;
            if window.is_some() {
                t.rotate_to(head_ms)?;
            } else if head_ms != 0 {
                return Err(bad());
            }
            track_new(&t);
            key.set_value(Box::new(t));
        }
        LoadTopK::Buckets { sub, offset, bytes } => {
            let t = existing.ok_or_else(|| error(text::KEY_MISSING))?;
            let buckets = buckets_from_le(bytes).ok_or_else(bad)?;
            t.load_buckets(sub, offset, &buckets)?;
        }
        LoadTopK::Slot { index, count, item } => {
            let t = existing.ok_or_else(|| error(text::KEY_MISSING))?;
            let count = u32::try_from(count).map_err(|_| bad())?;
            let before = t.size();
            t.load_slot(index, count, item)?;
            track_growth(before, t.size());
        }
    }
    chunk.emit(Sink::Replication(ctx), name);
    host::notify(ctx, events::LOAD, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Load as Request>::NAME,
    func: command_fn!(load),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary:
            "Internal: rebuilds a top-k, its buckets in chunks and its heap slot by slot (AOF).",
        complexity: "O(n)",
        grammar: <Load as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
