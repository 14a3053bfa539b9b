//! The cuckoo family's internal commands, parsed and emitted here only:
//!
//! - `CF._PLACEX key filters slots`: the effect of a write a random walk
//!   placed (replication and AOF). The filter grows to `filters`
//!   sub-filters, then each slot takes its value; `slots` is LEB128
//!   triples (sub-filter, slot, fingerprint). The item count follows the
//!   slots, so a replica keeps it without being told.
//! - `CF._LOADX key HEADER capacity bucketsize maxiterations expansion
//!   fingerprint_bits items deletes filters hash` creates a filter of zeroed
//!   sub-filters hashing its items with `hash` (an `ItemHash` code; without
//!   it, as older versions wrote it, murmur3), and `CF._LOADX key WORDS
//!   index word_offset bytes` writes little-endian 64-bit words into
//!   sub-filter `index`: the AOF rewrite of a filter, its slots in chunks.

use std::ffi::CStr;

use crate::common::error::WardenError;
use crate::common::parse::{is_keyword, parse_i64};
use crate::common::varint::{Reader, Writer, MAX_U64_BYTES};
use crate::cuckoo::core::filter::{CuckooFilter, CuckooParams, ItemHash, Touched};
use crate::glue::args::Args;
use crate::glue::host::{emit, RStr, Sink};

/// `CF._PLACEX`'s name.
pub const PLACE: &CStr = c"CF._PLACEX";

/// `CF._LOADX`'s name.
pub const LOAD: &CStr = c"CF._LOADX";

/// The `slots` argument of `CF._PLACEX` for the slots `touched` names,
/// with their values in `f` now.
pub fn encode_placed(f: &CuckooFilter, touched: &Touched) -> Vec<u8> {
    let n = touched.slots().count();
    let mut buf = vec![0u8; n * 3 * MAX_U64_BYTES];
    let mut w = Writer::new(&mut buf);
    for (sub, slot) in touched.slots() {
        w.u64(sub as u64);
        w.u64(slot);
        w.u64(u64::from(f.slot(sub, slot)));
    }
    let len = w.bytes().len();
    buf.truncate(len);
    buf
}

/// The (sub-filter, slot, value) triples of a `slots` argument; `None` for
/// bytes an encoder never writes.
pub fn decode_placed(bytes: &[u8]) -> Option<Vec<(usize, u64, u64)>> {
    let mut r = Reader::new(bytes);
    let mut out = Vec::new();
    while !r.is_done() {
        let sub = usize::try_from(r.u64()?).ok()?;
        out.push((sub, r.u64()?, r.u64()?));
    }
    Some(out)
}

/// Emits `CF._PLACEX key filters slots` to `sink`.
pub fn emit_placed(sink: Sink, key: RStr, filters: usize, slots: &[u8]) {
    emit(sink, PLACE, (key, filters as i64, slots));
}

/// Emits `CF.LOADCHUNKX key iterator data` to `sink` (AOF rewrite of a
/// filter still being loaded).
pub fn emit_chunk(sink: Sink, key: RStr, iterator: u64, data: &[u8]) {
    emit(sink, c"CF.LOADCHUNKX", (key, iterator as i64, data));
}

/// One `CF._LOADX`.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadFilter<'a> {
    /// Creates the filter, its sub-filters zeroed.
    Header {
        /// Its parameters.
        params: CuckooParams,
        /// Bits per fingerprint.
        fingerprint_bits: u32,
        /// Items it holds once its words are loaded.
        items: u64,
        /// Its delete count.
        deletes: u64,
        /// Its sub-filters.
        filters: u64,
        /// How its items hash.
        item_hash: ItemHash,
    },
    /// Writes words of a sub-filter.
    Words {
        /// Which sub-filter.
        index: usize,
        /// First 64-bit word written.
        word_offset: usize,
        /// The words, little-endian.
        bytes: &'a [u8],
    },
}

impl<'a> LoadFilter<'a> {
    /// Parses `args` (`args[1]` is the key); every number a non-negative
    /// integer, ranges checked by the filter.
    pub fn parse(args: &Args<'a>) -> Result<LoadFilter<'a>, WardenError> {
        let bad = || WardenError::BadFilterData;
        let int = |i: usize| {
            parse_i64(args.bytes(i))
                .and_then(|v| u64::try_from(v).ok())
                .ok_or_else(bad)
        };
        let small = |i: usize| int(i).and_then(|v| u32::try_from(v).map_err(|_| bad()));
        match args.len() {
            11 | 12 if is_keyword(args.bytes(2), "HEADER") => Ok(LoadFilter::Header {
                params: CuckooParams {
                    capacity: int(3)?,
                    bucket_size: small(4)?,
                    max_iterations: small(5)?,
                    expansion: small(6)?,
                },
                fingerprint_bits: small(7)?,
                items: int(8)?,
                deletes: int(9)?,
                filters: int(10)?,
                item_hash: match args.len() {
                    12 => ItemHash::from_code(int(11)?).ok_or_else(bad)?,
                    _ => ItemHash::Murmur3,
                },
            }),
            6 if is_keyword(args.bytes(2), "WORDS") => Ok(LoadFilter::Words {
                index: int(3)? as usize,
                word_offset: int(4)? as usize,
                bytes: args.bytes(5),
            }),
            11 | 12 | 6 => Err(WardenError::Syntax),
            _ => Err(WardenError::WrongArity("cf._loadx".into())),
        }
    }

    /// Writes this command for `key` to `sink`.
    pub fn emit(&self, sink: Sink, key: RStr) {
        match *self {
            LoadFilter::Header {
                params,
                fingerprint_bits,
                items,
                deletes,
                filters,
                item_hash,
            } => emit(
                sink,
                LOAD,
                (
                    key,
                    c"HEADER",
                    params.capacity as i64,
                    i64::from(params.bucket_size),
                    i64::from(params.max_iterations),
                    i64::from(params.expansion),
                    i64::from(fingerprint_bits),
                    items as i64,
                    deletes as i64,
                    filters as i64,
                    item_hash.code() as i64,
                ),
            ),
            LoadFilter::Words {
                index,
                word_offset,
                bytes,
            } => emit(
                sink,
                LOAD,
                (key, c"WORDS", index as i64, word_offset as i64, bytes),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placed_slots_round_trip_and_junk_is_refused() {
        let bytes = {
            let mut buf = [0u8; 64];
            let mut w = Writer::new(&mut buf);
            for v in [0u64, 7, 300, 2, u64::MAX, 1] {
                w.u64(v);
            }
            w.bytes().to_vec()
        };
        assert_eq!(
            decode_placed(&bytes),
            Some(vec![(0, 7, 300), (2, u64::MAX, 1)])
        );
        assert_eq!(decode_placed(&bytes[..bytes.len() - 1]), None);
        assert_eq!(decode_placed(&[0x80]), None);
        assert_eq!(decode_placed(b""), Some(vec![]));
    }
}
