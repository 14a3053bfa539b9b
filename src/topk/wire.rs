//! The top-k family's internal commands, parsed and emitted here only:
//!
//! - `TOPK._ROTATEX key slot_ms`: a windowed top-k moved to the slot that
//!   starts at `slot_ms` (Unix ms), clearing the sketches it reuses and
//!   counting its heap again: the effect of a write that was the first of
//!   its slot, replicated before the write itself, which a replica then
//!   applies to that slot without reading its clock.
//! - `TOPK._LOADX key HEADER kind k width depth decay window_ms head_ms rng`
//!   creates an empty top-k (`window_ms` 0: no window; `rng` the decays'
//!   generator, as a signed 64-bit integer), `TOPK._LOADX key BUCKETS sub
//!   offset bytes` sets buckets of sketch `sub` from `offset` on
//!   (little-endian 32-bit fingerprint and count each), and `TOPK._LOADX key
//!   SLOT index count item` sets heap slot `index`: the AOF rewrite of a
//!   top-k.

use std::ffi::CStr;

use crate::common::error::WardenError;
use crate::common::le_words::{u32s_from_le, u32s_to_le};
use crate::common::parse::{is_keyword, parse_f64, parse_i64};
use crate::glue::args::Args;
use crate::glue::host::{emit, RStr, Sink};
use crate::topk::core::heavy_keeper::Bucket;

/// `TOPK._ROTATEX`'s name.
pub const ROTATE: &CStr = c"TOPK._ROTATEX";

/// `TOPK._LOADX`'s name.
pub const LOAD: &CStr = c"TOPK._LOADX";

/// Emits `TOPK._ROTATEX key slot_ms` to `sink`.
pub fn emit_rotate(sink: Sink, key: RStr, slot_ms: u64) {
    emit(sink, ROTATE, (key, slot_ms as i64));
}

/// The `slot_ms` of a `TOPK._ROTATEX` call.
pub fn parse_rotate(args: &Args) -> Result<u64, WardenError> {
    parse_i64(args.bytes(2))
        .and_then(|v| u64::try_from(v).ok())
        .ok_or(WardenError::BadFilterData)
}

/// Buckets as stored: fingerprint and count, little-endian, each.
pub fn buckets_to_le(buckets: &[Bucket]) -> Vec<u8> {
    let words: Vec<u32> = buckets.iter().flat_map(|b| [b.fp, b.count]).collect();
    u32s_to_le(&words).into_owned()
}

/// Buckets from their stored bytes; `None` unless whole buckets.
pub fn buckets_from_le(bytes: &[u8]) -> Option<Vec<Bucket>> {
    if !bytes.len().is_multiple_of(8) {
        return None;
    }
    let words = u32s_from_le(bytes)?;
    Some(
        words
            .chunks_exact(2)
            .map(|w| Bucket {
                fp: w[0],
                count: w[1],
            })
            .collect(),
    )
}

/// One `TOPK._LOADX`.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadTopK<'a> {
    /// Creates the top-k, empty.
    Header {
        /// How it hashes and decays (`heavy_keeper::KIND`).
        kind: u64,
        /// Items kept.
        k: u64,
        /// Buckets per row.
        width: u64,
        /// Rows.
        depth: u64,
        /// The decay base.
        decay: f64,
        /// Its window (0: none).
        window_ms: u64,
        /// Start of its newest slot.
        head_ms: u64,
        /// The decays' generator.
        rng: u64,
    },
    /// Sets buckets of a sketch.
    Buckets {
        /// Which sketch.
        sub: usize,
        /// First bucket written.
        offset: usize,
        /// The buckets, little-endian.
        bytes: &'a [u8],
    },
    /// Sets a heap slot.
    Slot {
        /// Which slot.
        index: usize,
        /// Its count.
        count: u64,
        /// Its item.
        item: &'a [u8],
    },
}

impl<'a> LoadTopK<'a> {
    /// Parses `args` (`args[1]` is the key): every number a non-negative
    /// integer but the generator's, the rest checked by the top-k.
    pub fn parse(args: &Args<'a>) -> Result<LoadTopK<'a>, WardenError> {
        let bad = || WardenError::BadFilterData;
        let int = |i: usize| {
            parse_i64(args.bytes(i))
                .and_then(|v| u64::try_from(v).ok())
                .ok_or_else(bad)
        };
        let keyword = |w: &str| is_keyword(args.bytes(2), w);
        match args.len() {
            11 if keyword("HEADER") => Ok(LoadTopK::Header {
                kind: int(3)?,
                k: int(4)?,
                width: int(5)?,
                depth: int(6)?,
                decay: parse_f64(args.bytes(7)).ok_or_else(bad)?,
                window_ms: int(8)?,
                head_ms: int(9)?,
                rng: parse_i64(args.bytes(10)).ok_or_else(bad)? as u64,
            }),
            6 if keyword("BUCKETS") => Ok(LoadTopK::Buckets {
                sub: int(3)? as usize,
                offset: int(4)? as usize,
                bytes: args.bytes(5),
            }),
            6 if keyword("SLOT") => Ok(LoadTopK::Slot {
                index: int(3)? as usize,
                count: int(4)?,
                item: args.bytes(5),
            }),
            11 | 6 => Err(WardenError::Syntax),
            _ => Err(WardenError::WrongArity("topk._loadx".into())),
        }
    }

    /// Writes this command for `key` to `sink`.
    pub fn emit(&self, sink: Sink, key: RStr) {
        match *self {
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
                let decay = decay.to_string();
                emit(
                    sink,
                    LOAD,
                    (
                        key,
                        c"HEADER",
                        kind as i64,
                        k as i64,
                        width as i64,
                        depth as i64,
                        decay.as_bytes(),
                        window_ms as i64,
                        head_ms as i64,
                        rng as i64,
                    ),
                )
            }
            LoadTopK::Buckets { sub, offset, bytes } => emit(
                sink,
                LOAD,
                (key, c"BUCKETS", sub as i64, offset as i64, bytes),
            ),
            LoadTopK::Slot { index, count, item } => {
                emit(sink, LOAD, (key, c"SLOT", index as i64, count as i64, item))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_round_trip_and_partial_ones_are_refused() {
        let buckets = [
            Bucket { fp: 1, count: 2 },
            Bucket {
                fp: u32::MAX,
                count: 0,
            },
        ];
        let bytes = buckets_to_le(&buckets);
        assert_eq!(bytes.len(), 16);
        assert_eq!(&bytes[..8], &[1, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(buckets_from_le(&bytes).as_deref(), Some(&buckets[..]));
        assert_eq!(buckets_from_le(&bytes[..12]), None);
    }

    #[test]
    fn decays_are_written_to_read_back_exactly() {
        for d in [0.9, 0.1 + 0.2, 1.0, 5e-324, 0.999_999_999_999_999_9] {
            assert_eq!(parse_f64(d.to_string().as_bytes()), Some(d));
        }
    }
}
