//! `CF._LOADX`: the AOF form of a filter, its header then its slots in
//! chunks. Internal.

use crate::common::error::WardenError;
use crate::common::grammar::{
    arg, chosen, key, one_of, optional, required, shape_only_request, tokened_block, Grammar, Kind,
    Request,
};
use crate::common::le_words::words_from_le;
use crate::cuckoo::call::{filter_in, max_bytes};
use crate::cuckoo::core::filter::CuckooFilter;
use crate::cuckoo::data_type::{self as cuckoo_type};
use crate::cuckoo::events;
use crate::cuckoo::wire::LoadFilter;
use crate::glue::args::internal_only;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Sink;
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `CF._LOADX key HEADER … | WORDS …`: the AOF form of a filter (see
    /// `wire::LoadFilter`).
    Load,
    "cf._loadx",
    Grammar::new(&[
        key(),
        required(one_of(
            "chunk",
            &[
                chosen(tokened_block("HEADER", "header", &[
                        arg("capacity", Kind::Int),
                        arg("bucketsize", Kind::Int),
                        arg("maxiterations", Kind::Int),
                        arg("expansion", Kind::Int),
                        arg("fingerprint_bits", Kind::Int),
                        arg("items", Kind::Int),
                        arg("deletes", Kind::Int),
                        arg("filters", Kind::Int),
                        optional(arg("hash", Kind::Int)),
                    ])),
                chosen(tokened_block("WORDS", "words", &[
                        arg("index", Kind::Int),
                        arg("word_offset", Kind::Int),
                        arg("bytes", Kind::Str),
                    ])),
            ],
        )),
    ])
);

/// `CF._LOADX key HEADER …` and `CF._LOADX key WORDS …`: the AOF form of a
/// filter. Internal.
pub fn load(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "cf._loadx")?;
    args.parse::<Load>()?;
    let bad = || WardenError::BadFilterData;
    let chunk = LoadFilter::parse(args)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let existing = filter_in(&mut key)?;
    match chunk {
        LoadFilter::Header {
            params,
            fingerprint_bits,
            items,
            deletes,
            filters,
            item_hash,
        } => {
            if existing.is_some() {
                return Err(bad());
            }
            // The stored width, also where the parameters now give another.
            let f = CuckooFilter::stored_empty(
                params,
                fingerprint_bits,
                (items, deletes),
                filters,
                max_bytes(ctx),
            )?
            .with_item_hash(item_hash);
            cuckoo_type::track_new(&f);
            key.set_value(Box::new(f));
        }
        LoadFilter::Words {
            index,
            word_offset,
            bytes,
        } => {
            let f = existing.ok_or(WardenError::NotFound)?;
            let words = words_from_le(bytes).ok_or_else(bad)?;
            let (b, fb) = (f.params().bucket_size, f.fingerprint_bits());
            let sub = f.filters_mut().get_mut(index).ok_or_else(bad)?;
            sub.load_words(b, fb, word_offset, &words)?;
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
        summary: "Internal: rebuilds a filter, its slots in chunks (AOF).",
        complexity: "O(n)",
        grammar: <Load as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
