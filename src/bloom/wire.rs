//! `BF._LOADX`: the one form in which a whole filter is rebuilt from the AOF
//! (AOF rewrite emits it; replicas get it when a master applies it):
//!
//! - `BF._LOADX key LAYER error_rate expansion index capacity layer_error
//!   hashes items bits` creates layer `index` (0 creates the filter), zeroed;
//!   `RBLAYER` in place of `LAYER` does the same for a filter with
//!   RedisBloom's hashing (one imported from RedisBloom);
//! - `BF._LOADX key AGE error_rate capacity window_ms` creates an aging filter
//!   without blocks, and `… LAYER … bits opened_ms` appends its block `index`
//!   opened at that Unix ms;
//! - `BF._LOADX key BITS index word_offset bytes` writes little-endian 64-bit
//!   words into layer `index` from `word_offset` on.
//!
//! Adds and reserves replicate as the public `BF.MADDX` / `BF.RESERVEX`; a
//! filter still being loaded is rewritten as the public `BF.LOADCHUNKX` calls
//! that loaded it (`LoadChunk`), which also replicate as they are.

use std::ffi::{CStr, CString};

use crate::bloom::core::filter::Hashing;
use crate::common::error::WardenError;
use crate::common::parse::{is_keyword, parse_f64, parse_i64};
use crate::glue::args::Args;
use crate::glue::host::{emit, RStr, Sink};

/// The command's name.
pub const LOAD_FILTER: &CStr = c"BF._LOADX";

/// Shortest decimal text that parses back to exactly `v`.
pub fn float_text(v: f64) -> CString {
    CString::new(format!("{v:?}")).unwrap_or_default()
}

/// One `BF._LOADX`, parsed and emitted here only.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadFilter<'a> {
    /// Creates an aging filter without blocks.
    Age {
        /// The filter's error rate.
        error_rate: f64,
        /// Items per window.
        capacity: u64,
        /// The window in ms.
        window_ms: u64,
    },
    /// Creates a zeroed layer.
    Layer {
        /// The filter's hashing (`RBLAYER` for RedisBloom's).
        hashing: Hashing,
        /// The filter's error rate.
        error_rate: f64,
        /// The filter's expansion (0: non-scaling).
        expansion: u32,
        /// Which layer (0 creates the filter).
        index: usize,
        /// The layer's capacity.
        capacity: u64,
        /// The layer's error rate.
        layer_rate: f64,
        /// Hashes per item.
        hashes: u32,
        /// Items added to the layer.
        items: u64,
        /// Bits in the layer.
        bits: u64,
        /// When an aging filter's block opened (Unix ms).
        opened: Option<u64>,
    },
    /// Writes bit-array words.
    Bits {
        /// Which layer.
        index: usize,
        /// First 64-bit word written.
        word_offset: usize,
        /// The words, little-endian.
        bytes: &'a [u8],
    },
}

impl<'a> LoadFilter<'a> {
    /// Parses `args` (`args[1]` is the key). Every number must be a
    /// non-negative integer (rates: a number); shapes are checked by the caller.
    pub fn parse(args: &Args<'a>) -> Result<LoadFilter<'a>, WardenError> {
        let bad = || WardenError::BadFilterData;
        let int = |i: usize| parse_i64(args.bytes(i)).filter(|v| *v >= 0).ok_or_else(bad);
        let rate = |i: usize| parse_f64(args.bytes(i)).ok_or_else(bad);
        let hashing = if is_keyword(args.bytes(2), "LAYER") {
            Some(Hashing::Warden)
        } else if is_keyword(args.bytes(2), "RBLAYER") {
            Some(Hashing::RedisBloom)
        } else {
            None
        };
        // An aging filter's block (12 arguments) has warden's hashing.
        let layer = match (hashing, args.len()) {
            (Some(Hashing::RedisBloom), 12) => None,
            (h, _) => h,
        };
        match args.len() {
            6 if is_keyword(args.bytes(2), "AGE") => Ok(LoadFilter::Age {
                error_rate: rate(3)?,
                capacity: int(4)? as u64,
                window_ms: int(5)? as u64,
            }),
            11 | 12 if layer.is_some() => Ok(LoadFilter::Layer {
                hashing: layer.unwrap_or_default(),
                error_rate: rate(3)?,
                expansion: u32::try_from(int(4)?).map_err(|_| bad())?,
                index: int(5)? as usize,
                capacity: int(6)? as u64,
                layer_rate: rate(7)?,
                hashes: u32::try_from(int(8)?).map_err(|_| bad())?,
                items: int(9)? as u64,
                bits: int(10)? as u64,
                opened: if args.len() == 12 {
                    Some(int(11)? as u64)
                } else {
                    None
                },
            }),
            6 if is_keyword(args.bytes(2), "BITS") => Ok(LoadFilter::Bits {
                index: int(3)? as usize,
                word_offset: int(4)? as usize,
                bytes: args.bytes(5),
            }),
            12 | 11 | 6 => Err(WardenError::Syntax),
            _ => Err(WardenError::WrongArity("bf._loadx".into())),
        }
    }

    /// Writes this command for `key` to `sink`.
    pub fn emit(&self, sink: Sink, key: RStr) {
        match *self {
            LoadFilter::Age {
                error_rate,
                capacity,
                window_ms,
            } => {
                let rate = float_text(error_rate);
                emit(
                    sink,
                    LOAD_FILTER,
                    (
                        key,
                        c"AGE",
                        rate.as_c_str(),
                        capacity as i64,
                        window_ms as i64,
                    ),
                );
            }
            LoadFilter::Layer {
                opened: Some(opened),
                hashing: _,
                error_rate,
                expansion,
                index,
                capacity,
                layer_rate,
                hashes,
                items,
                bits,
            } => {
                let rate = float_text(error_rate);
                let layer_rate = float_text(layer_rate);
                emit(
                    sink,
                    LOAD_FILTER,
                    (
                        key,
                        c"LAYER",
                        rate.as_c_str(),
                        i64::from(expansion),
                        index as i64,
                        capacity as i64,
                        layer_rate.as_c_str(),
                        i64::from(hashes),
                        items as i64,
                        bits as i64,
                        opened as i64,
                    ),
                );
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
                opened: None,
            } => {
                let rate = float_text(error_rate);
                let layer_rate = float_text(layer_rate);
                let word = match hashing {
                    Hashing::Warden => c"LAYER",
                    Hashing::RedisBloom => c"RBLAYER",
                };
                emit(
                    sink,
                    LOAD_FILTER,
                    (
                        key,
                        word,
                        rate.as_c_str(),
                        i64::from(expansion),
                        index as i64,
                        capacity as i64,
                        layer_rate.as_c_str(),
                        i64::from(hashes),
                        items as i64,
                        bits as i64,
                    ),
                );
            }
            LoadFilter::Bits {
                index,
                word_offset,
                bytes,
            } => emit(
                sink,
                LOAD_FILTER,
                (key, c"BITS", index as i64, word_offset as i64, bytes),
            ),
        }
    }
}

/// `BF.LOADCHUNKX key iterator data`, as AOF rewrite emits it for a filter
/// that is still being loaded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadChunk<'a> {
    /// The iterator `BF.SCANDUMPX` gave the chunk.
    pub iterator: u64,
    /// The chunk: the header, or bits.
    pub data: &'a [u8],
}

impl LoadChunk<'_> {
    /// Writes this command for `key` to `sink`.
    pub fn emit(&self, sink: Sink, key: RStr) {
        emit(
            sink,
            c"BF.LOADCHUNKX",
            (key, self.iterator as i64, self.data),
        );
    }
}
