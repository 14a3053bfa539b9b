//! `BF._LOADX`: the AOF form of a filter, rebuilt layer by layer, its bits
//! in chunks. Internal.

use crate::bloom::call::{filter_in, max_bytes};
use crate::bloom::core::errors;
use crate::bloom::core::filter::{BloomFilter, Layer};
use crate::bloom::data_type::{self as bloom_type};
use crate::bloom::events;
use crate::bloom::wire::LoadFilter;
use crate::common::error::WardenError;
use crate::common::grammar::{
    arg, chosen, key, one_of, optional, required, shape_only_request, tokened_block, Grammar, Kind,
    Request,
};
use crate::common::le_words::words_from_le;
use crate::glue::args::internal_only;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Sink;
use crate::glue::host::{self, Ctx, Key};

shape_only_request!(
    /// `BF._LOADX key LAYER … | BITS … | AGE …`: the AOF form of a filter.
    /// Read by its wire format (`wire::LoadFilter`); this is its documented
    /// grammar.
    Load,
    "bf._loadx",
    Grammar::new(&[
        key(),
        required(one_of(
            "chunk",
            &[
                chosen(tokened_block("LAYER", "layer", &[
                        arg("error_rate", Kind::Double),
                        arg("expansion", Kind::Int),
                        arg("index", Kind::Int),
                        arg("capacity", Kind::Int),
                        arg("layer_error", Kind::Double),
                        arg("hashes", Kind::Int),
                        arg("items", Kind::Int),
                        arg("bits", Kind::Int),
                        optional(arg("opened", Kind::Int)),
                    ])),
                chosen(tokened_block("BITS", "bits", &[
                        arg("index", Kind::Int),
                        arg("word_offset", Kind::Int),
                        arg("bytes", Kind::Str),
                    ])),
                chosen(tokened_block("AGE", "age", &[
                        arg("error_rate", Kind::Double),
                        arg("capacity", Kind::Int),
                        arg("window_ms", Kind::Int),
                    ])),
            ],
        )),
    ])
);

/// `BF._LOADX key LAYER error_rate expansion index capacity layer_error hashes items bits`
/// and `BF._LOADX key BITS index word_offset bytes`: the AOF form of a filter,
/// its bit arrays in chunks. Internal.
pub fn load(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "bf._loadx")?;
    let bad = || WardenError::BadFilterData;
    let chunk = LoadFilter::parse(args)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let existing = filter_in(&mut key)?;
    let max_bytes = max_bytes(ctx);
    match chunk {
        LoadFilter::Age {
            error_rate,
            capacity,
            window_ms,
        } => {
            if existing.is_some() {
                return Err(bad());
            }
            let filter = BloomFilter::new_aging(error_rate, capacity, window_ms, max_bytes)
                .map_err(|e| match e {
                    errors::TOO_LARGE => e,
                    _ => bad(),
                })?;
            bloom_type::track_new(&filter);
            key.set_value(Box::new(filter));
        }
        LoadFilter::Layer {
            hashing,
            error_rate,
            expansion,
            index,
            capacity,
            layer_rate,
            hashes,
            items,
            bits,
            opened,
        } => match existing {
            None if index == 0 && opened.is_none() => {
                let budget = max_bytes.saturating_sub(BloomFilter::single_layer_overhead());
                let header = (capacity, layer_rate, hashes, items);
                let layer = Layer::zeroed(hashing, header, bits, budget)?;
                let expansion = u64::from(expansion);
                let filter =
                    BloomFilter::from_parts(hashing, error_rate, expansion, vec![layer], None)?;
                bloom_type::track_new(&filter);
                key.set_value(Box::new(filter));
            }
            Some(f)
                if index == f.layers().len()
                    && f.expansion() == expansion
                    && f.hashing() == hashing =>
            {
                let budget = f.layer_budget(max_bytes);
                let header = (capacity, layer_rate, hashes, items);
                let layer = Layer::zeroed(hashing, header, bits, budget)?;
                let before = f.size();
                f.push_layer(layer, opened)?;
                bloom_type::track_growth(before, f.size());
            }
            _ => return Err(bad()),
        },
        LoadFilter::Bits {
            index,
            word_offset,
            bytes,
        } => {
            let f = existing.ok_or(WardenError::NotFound)?;
            let words = words_from_le(bytes).ok_or_else(bad)?;
            let layer = f.layers_mut().get_mut(index).ok_or_else(bad)?;
            let target = layer.words_mut();
            let end = word_offset
                .checked_add(words.len())
                .filter(|e| *e <= target.len())
                .ok_or_else(bad)?;
            target[word_offset..end].copy_from_slice(&words);
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
        summary: "Internal: rebuilds a filter layer by layer, its bits in chunks (AOF).",
        complexity: "O(n)",
        grammar: <Load as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
