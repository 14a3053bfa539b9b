//! The chunk arithmetic of the filters' SCANDUMP and LOADCHUNK (RedisBloom's
//! SCANDUMP protocol): iterator 0 asks for the header, which comes with
//! iterator 1; the arrays (a Bloom filter's layers, a cuckoo filter's
//! sub-filters) are laid end to end, and a chunk of `len` bytes starting at
//! byte `pos` of them comes with iterator `pos + len + 1`, which also asks
//! for the next. A chunk never crosses an array and is at most 16 MiB.

use crate::common::error::WardenError;
use crate::common::parse::IntArg;

/// Largest chunk of bits (RedisBloom's `MAX_SCANDUMP_SIZE`).
pub const MAX_CHUNK_BYTES: u64 = 16 << 20;

/// The iterator the header comes with, and that loads it.
pub const HEADER_ITERATOR: u64 = 1;

/// `iterator` of a SCANDUMP: 0 asks for the header.
pub const SCAN_ITERATOR: IntArg = IntArg {
    name: "iterator",
    min: 0,
    max: i64::MAX,
    duration: false,
};

/// `iterator` of a LOADCHUNK: the one a chunk came with, 1 for the header.
pub const LOAD_ITERATOR: IntArg = IntArg {
    name: "iterator",
    min: 1,
    max: i64::MAX,
    duration: false,
};

/// What a SCANDUMP answers for an iterator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chunk {
    /// The header, with iterator `HEADER_ITERATOR`.
    Header,
    /// `len` bytes of layer `layer`'s bit array from byte `offset` (a
    /// multiple of 8, as is `len`), with iterator `next`.
    Bits {
        /// Which layer.
        layer: usize,
        /// First byte in the layer's bit array.
        offset: u64,
        /// Bytes in the chunk.
        len: u64,
        /// The iterator the chunk comes with (and that asks for the next).
        next: u64,
    },
    /// No more chunks: `[0, ""]`.
    End,
}

/// The chunk a SCANDUMP answers for `iterator` on arrays (layers,
/// sub-filters) of these sizes in bytes. An iterator inside a chunk is refused: no dump ever returns one,
/// and the bytes it would name could not be loaded.
pub fn chunk_at(
    layer_bytes: impl IntoIterator<Item = u64>,
    iterator: u64,
) -> Result<Chunk, WardenError> {
    chunk_in(layer_bytes, iterator, MAX_CHUNK_BYTES)
}

/// `chunk_at` with chunks of at most `max_chunk` bytes (a multiple of 8).
pub fn chunk_in(
    layer_bytes: impl IntoIterator<Item = u64>,
    iterator: u64,
    max_chunk: u64,
) -> Result<Chunk, WardenError> {
    if iterator == 0 {
        return Ok(Chunk::Header);
    }
    let pos = iterator - 1;
    let mut start = 0u64;
    for (layer, bytes) in layer_bytes.into_iter().enumerate() {
        let end = start.saturating_add(bytes);
        if pos < end {
            let offset = pos - start;
            if !offset.is_multiple_of(max_chunk) {
                return Err(WardenError::BadIterator);
            }
            let len = max_chunk.min(bytes - offset);
            let next = iterator.checked_add(len).ok_or(WardenError::BadIterator)?;
            return Ok(Chunk::Bits {
                layer,
                offset,
                len,
                next,
            });
        }
        start = end;
    }
    Ok(Chunk::End)
}
