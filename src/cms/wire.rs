//! The count-min family's internal commands, parsed and emitted here only:
//!
//! - `CMS._ROTATEX key slot_ms`: a windowed sketch moved to the slot that
//!   starts at `slot_ms` (Unix ms), clearing the sub-sketches it reuses: the
//!   effect of a write that was the first of its slot, replicated before
//!   the write itself, which a replica then applies to that slot without
//!   reading its clock.
//! - `CMS._LOADX key HEADER kind width depth window_ms head_ms` creates an
//!   empty sketch (`window_ms` 0: no window), and `CMS._LOADX key CELLS sub
//!   count offset bytes` sets sub-sketch `sub`'s total and its counters from
//!   `offset` on (little-endian 32-bit values): the AOF rewrite of a sketch.

use std::ffi::CStr;

use crate::common::error::WardenError;
use crate::common::parse::{is_keyword, parse_i64};
use crate::glue::args::Args;
use crate::glue::host::{emit, RStr, Sink};

/// `CMS._ROTATEX`'s name.
pub const ROTATE: &CStr = c"CMS._ROTATEX";

/// `CMS._LOADX`'s name.
pub const LOAD: &CStr = c"CMS._LOADX";

/// Emits `CMS._ROTATEX key slot_ms` to `sink`.
pub fn emit_rotate(sink: Sink, key: RStr, slot_ms: u64) {
    emit(sink, ROTATE, (key, slot_ms as i64));
}

/// The `slot_ms` of a `CMS._ROTATEX` call.
pub fn parse_rotate(args: &Args) -> Result<u64, WardenError> {
    parse_i64(args.bytes(2))
        .and_then(|v| u64::try_from(v).ok())
        .ok_or(WardenError::BadFilterData)
}

/// One `CMS._LOADX`.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadSketch<'a> {
    /// Creates the sketch, empty.
    Header {
        /// How it hashes and counts (`sketch::KIND`).
        kind: u64,
        /// Counters per row.
        width: u64,
        /// Rows.
        depth: u64,
        /// Its window (0: none).
        window_ms: u64,
        /// Start of its newest slot.
        head_ms: u64,
    },
    /// Sets a sub-sketch's total and counters.
    Cells {
        /// Which sub-sketch.
        sub: usize,
        /// Its total.
        count: u64,
        /// First counter written.
        offset: usize,
        /// The counters, little-endian.
        bytes: &'a [u8],
    },
}

impl<'a> LoadSketch<'a> {
    /// Parses `args` (`args[1]` is the key): every number a non-negative
    /// integer, the rest checked by the sketch.
    pub fn parse(args: &Args<'a>) -> Result<LoadSketch<'a>, WardenError> {
        let int = |i: usize| {
            parse_i64(args.bytes(i))
                .and_then(|v| u64::try_from(v).ok())
                .ok_or(WardenError::BadFilterData)
        };
        match args.len() {
            8 if is_keyword(args.bytes(2), "HEADER") => Ok(LoadSketch::Header {
                kind: int(3)?,
                width: int(4)?,
                depth: int(5)?,
                window_ms: int(6)?,
                head_ms: int(7)?,
            }),
            7 if is_keyword(args.bytes(2), "CELLS") => Ok(LoadSketch::Cells {
                sub: int(3)? as usize,
                count: int(4)?,
                offset: int(5)? as usize,
                bytes: args.bytes(6),
            }),
            8 | 7 => Err(WardenError::Syntax),
            _ => Err(WardenError::WrongArity("cms._loadx".into())),
        }
    }

    /// Writes this command for `key` to `sink`.
    pub fn emit(&self, sink: Sink, key: RStr) {
        match *self {
            LoadSketch::Header {
                kind,
                width,
                depth,
                window_ms,
                head_ms,
            } => emit(
                sink,
                LOAD,
                (
                    key,
                    c"HEADER",
                    kind as i64,
                    width as i64,
                    depth as i64,
                    window_ms as i64,
                    head_ms as i64,
                ),
            ),
            LoadSketch::Cells {
                sub,
                count,
                offset,
                bytes,
            } => emit(
                sink,
                LOAD,
                (
                    key,
                    c"CELLS",
                    sub as i64,
                    count as i64,
                    offset as i64,
                    bytes,
                ),
            ),
        }
    }
}
