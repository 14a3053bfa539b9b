//! `CMS._LOADX`: a whole sketch, as replication and the AOF carry one made by a
//! merge. Internal.

use crate::cms::call::max_bytes;
use crate::cms::core::sketch::{error, text, CountMin, KIND};
use crate::cms::data_type::{check_header, track_new};
use crate::cms::events;
use crate::cms::wire::LoadSketch;
use crate::common::error::WardenError;
use crate::common::grammar::{
    arg, chosen, key, one_of, required, shape_only_request, tokened_block, Grammar, Kind, Request,
};
use crate::common::le_words::u32s_from_le;
use crate::glue::args::{internal_only, Args};
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key, Sink};

shape_only_request!(
    /// `CMS._LOADX key HEADER … | CELLS …`: the AOF form of a sketch (see
    /// `wire::LoadSketch`).
    Load,
    "cms._loadx",
    Grammar::new(&[
        key(),
        required(one_of(
            "chunk",
            &[
                chosen(tokened_block("HEADER", "header", &[
                        arg("kind", Kind::Int),
                        arg("width", Kind::Int),
                        arg("depth", Kind::Int),
                        arg("window_ms", Kind::Int),
                        arg("head_ms", Kind::Int),
                    ])),
                chosen(tokened_block("CELLS", "cells", &[
                        arg("sub", Kind::Int),
                        arg("count", Kind::Int),
                        arg("offset", Kind::Int),
                        arg("bytes", Kind::Str),
                    ])),
            ],
        )),
    ])
);

/// `CMS._LOADX key HEADER …` and `CMS._LOADX key CELLS …`: the AOF form of
/// a sketch. Internal.
pub fn load(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "cms._loadx")?;
    args.parse::<Load>()?;
    let bad = || WardenError::BadFilterData;
    let chunk = LoadSketch::parse(args)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let existing = key.value::<CountMin>()?;
    match chunk {
        LoadSketch::Header {
            kind,
            width,
            depth,
            window_ms,
            head_ms,
        } => {
            if existing.is_some() || kind != KIND {
                return Err(bad());
            }
            let (dims, window) = check_header(kind, width, depth, window_ms).ok_or_else(bad)?;
            let mut s = CountMin::new(dims, window, max_bytes(ctx))?;
            if window.is_some() {
                s.rotate_to(head_ms)?;
            } else if head_ms != 0 {
                return Err(bad());
            }
            track_new(&s);
            key.set_value(Box::new(s));
        }
        LoadSketch::Cells {
            sub,
            count,
            offset,
            bytes,
        } => {
            let s = existing.ok_or_else(|| error(text::KEY_MISSING))?;
            let values = u32s_from_le(bytes).ok_or_else(bad)?;
            s.load_chunk(sub, count, offset, &values)?;
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
        summary: "Internal: rebuilds a sketch, its counters in chunks (AOF).",
        complexity: "O(n)",
        grammar: <Load as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
