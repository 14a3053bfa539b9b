//! `BF.SCANDUMPX` / `BF.LOADCHUNKX`: a filter as a header chunk and bit-array
//! chunks, with RedisBloom's `BF.SCANDUMP` protocol, and a filter rebuilt from
//! them in order.
//!
//! **Iterators** (RedisBloom's arithmetic): iterator 0 asks for the header,
//! which comes with iterator 1. The layers' bit arrays are laid end to end; a
//! chunk of `len` bytes that starts at byte `pos` of that sequence comes with
//! iterator `pos + len + 1`, which is also the iterator that asks for the next
//! chunk. Past the last byte the answer is the end, `[0, ""]`. A chunk is at
//! most 16 MiB and never crosses a layer: chunks start at each layer's first
//! byte and every 16 MiB after it, so a dump's chunking is a function of the
//! layers' sizes alone.
//!
//! **Header** (little-endian): the magic `wardenbf`, the format version (u32),
//! the error rate (f64), the expansion (u32), the layer count (u32); per layer
//! its capacity (u64), error rate (f64), hashes (u32), items (u64) and bits
//! (u64). Format version 2 is an aging filter's: after the layer count come
//! its window in ms (u64) and capacity (u64), and each layer ends with the
//! Unix ms its block opened (u64); it may have no layers. Format version 3
//! is version 1's layout for a filter with RedisBloom's hashing (one imported
//! from RedisBloom). Every field is checked exactly as the RDB loader checks
//! it (`BloomFilter::check_parts`, `Layer::check_header`), and the whole size
//! against the caller's cap, before anything is allocated.
//!
//! **RedisBloom 2.x headers** (its `BF.SCANDUMP`, see `redisbloom`) load
//! too, with the same checks, into a filter with RedisBloom's hashing; its
//! bit chunks are loaded as warden's (the same bytes on the wire).
//!
//! **Bits** are the layers' 64-bit words, little-endian, as in RDB.

use crate::bloom::core::aging::Aging;
use crate::bloom::core::errors;
use crate::bloom::core::filter::{aging_overhead, BloomFilter, FilterParts, Hashing, Layer};
use crate::bloom::core::redisbloom;
pub use crate::common::chunks::{
    chunk_at, chunk_in, Chunk, HEADER_ITERATOR, LOAD_ITERATOR, MAX_CHUNK_BYTES, SCAN_ITERATOR,
};
use crate::common::error::WardenError;
use crate::common::le_words::Fields;
use crate::common::relocate::{self, Mover};

const MAGIC: &[u8; 8] = b"wardenbf";

/// Whether `data` starts as a `BF.SCANDUMPX` header does.
pub fn is_wardens_header(data: &[u8]) -> bool {
    data.starts_with(MAGIC)
}

/// Version of the header format (a later one is refused, not guessed at).
const FORMAT_VERSION: u32 = 1;

/// Version of the header format of an aging filter.
const AGING_FORMAT_VERSION: u32 = 2;

/// Version of the header format of a filter with RedisBloom's hashing.
const REDISBLOOM_FORMAT_VERSION: u32 = 3;

/// Bytes of the header before the layers.
const FIXED_BYTES: usize = 28;

/// Bytes of one layer in the header.
const LAYER_BYTES: usize = 36;

/// Bytes an aging filter's header adds: window and capacity, then per layer
/// its opening.
const AGING_BYTES: usize = 16;

/// The sizes in bytes of these layers' bit arrays.
fn sizes(layers: &[Layer]) -> impl Iterator<Item = u64> + '_ {
    layers.iter().map(Layer::bytes)
}

/// The header chunk of a filter.
pub fn encode_header(f: FilterParts) -> Vec<u8> {
    let mut out = Vec::with_capacity(FIXED_BYTES + (LAYER_BYTES + 8) * f.layers.len() + 16);
    out.extend_from_slice(MAGIC);
    let version = match (f.aging, f.hashing) {
        (Some(_), _) => AGING_FORMAT_VERSION,
        (None, Hashing::Warden) => FORMAT_VERSION,
        (None, Hashing::RedisBloom) => REDISBLOOM_FORMAT_VERSION,
    };
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&f.error_rate.to_le_bytes());
    out.extend_from_slice(&f.expansion.to_le_bytes());
    out.extend_from_slice(&(f.layers.len() as u32).to_le_bytes());
    if let Some(a) = f.aging {
        out.extend_from_slice(&a.window_ms().to_le_bytes());
        out.extend_from_slice(&a.capacity().to_le_bytes());
    }
    for (i, l) in f.layers.iter().enumerate() {
        out.extend_from_slice(&l.capacity().to_le_bytes());
        out.extend_from_slice(&l.error_rate().to_le_bytes());
        out.extend_from_slice(&l.hashes().to_le_bytes());
        out.extend_from_slice(&l.items().to_le_bytes());
        out.extend_from_slice(&(l.bytes() * 8).to_le_bytes());
        if let Some(a) = f.aging {
            out.extend_from_slice(&a.opened()[i].to_le_bytes());
        }
    }
    out
}

/// One layer's fields as a header gives them.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerFields {
    /// Items the layer holds.
    pub capacity: u64,
    /// The layer's error rate.
    pub error_rate: f64,
    /// Probes per item.
    pub hashes: u32,
    /// Items added to the layer.
    pub items: u64,
    /// Bits of the layer.
    pub bits: u64,
}

/// A filter being rebuilt from `BF.SCANDUMPX` chunks: its header is known
/// (its layers exist, zeroed) and its bits arrive in order. It is never a
/// filter that can be read: `finish` hands over the filter after the last chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadingFilter {
    hashing: Hashing,
    error_rate: f64,
    expansion: u32,
    layers: Vec<Layer>,
    aging: Option<Aging>,
    /// Bytes of the bit arrays loaded so far, from the first one on.
    loaded: u64,
    /// Largest chunk (`MAX_CHUNK_BYTES` but in tests).
    max_chunk: u64,
}

impl LoadingFilter {
    /// Offers the heap blocks to `m` as `BloomFilter::relocate` does.
    pub fn relocate(&mut self, from: usize, m: &mut dyn Mover) -> Option<usize> {
        if from == 0 {
            relocate::vec(&mut self.layers, m);
            if let Some(aging) = &mut self.aging {
                aging.relocate(m);
            }
        }
        relocate::walk(&mut self.layers, from, m, Layer::relocate)
    }

    /// Starts loading from a header chunk. Every field is checked as the RDB
    /// loader checks it, and the whole filter against `max_bytes`, before
    /// anything is allocated; the layers are then allocated zeroed.
    pub fn from_header(bytes: &[u8], max_bytes: u64) -> Result<LoadingFilter, WardenError> {
        Self::from_header_in(bytes, max_bytes, MAX_CHUNK_BYTES)
    }

    fn from_header_in(
        bytes: &[u8],
        max_bytes: u64,
        max_chunk: u64,
    ) -> Result<LoadingFilter, WardenError> {
        let mut r = Fields(bytes);
        if r.take::<8>().ok().as_ref() != Some(MAGIC) {
            return match redisbloom::parse_header(bytes) {
                Some(header) => {
                    let h = header?;
                    let hashing = Hashing::RedisBloom;
                    let expansion = u64::from(h.expansion);
                    let (expansion, _) = BloomFilter::check_parts(
                        hashing,
                        h.error_rate,
                        expansion,
                        (h.layers.len() as u64, false),
                    )?;
                    let shape = (hashing, h.error_rate, expansion);
                    let fields = h.layers.into_iter().map(|l| LayerFields {
                        capacity: l.capacity,
                        error_rate: l.error_rate,
                        hashes: l.hashes,
                        items: l.items,
                        bits: l.bits,
                    });
                    let fields = fields.collect();
                    Self::allocate(shape, fields, (None, Vec::new()), max_bytes, max_chunk)
                }
                None => Err(errors::FOREIGN_DUMP),
            };
        }
        let (aging, hashing) = match r.u32()? {
            FORMAT_VERSION => (false, Hashing::Warden),
            AGING_FORMAT_VERSION => (true, Hashing::Warden),
            REDISBLOOM_FORMAT_VERSION => (false, Hashing::RedisBloom),
            _ => return Err(WardenError::BadFilterData),
        };
        let error_rate = r.f64()?;
        let expansion = r.u32()?;
        let count = r.u32()?;
        let (expansion, count) = BloomFilter::check_parts(
            hashing,
            error_rate,
            u64::from(expansion),
            (u64::from(count), aging),
        )?;
        let expected = match aging {
            true => FIXED_BYTES + AGING_BYTES + (LAYER_BYTES + 8) * count,
            false => FIXED_BYTES + LAYER_BYTES * count,
        };
        if bytes.len() != expected {
            return Err(WardenError::BadFilterData);
        }
        let window = if aging {
            Some((r.u64()?, r.u64()?))
        } else {
            None
        };
        let mut fields = Vec::with_capacity(count);
        let mut opened = Vec::with_capacity(if aging { count } else { 0 });
        for _ in 0..count {
            fields.push(LayerFields {
                capacity: r.u64()?,
                error_rate: r.f64()?,
                hashes: r.u32()?,
                items: r.u64()?,
                bits: r.u64()?,
            });
            if aging {
                opened.push(r.u64()?);
            }
        }
        let shape = (hashing, error_rate, expansion);
        Self::allocate(shape, fields, (window, opened), max_bytes, max_chunk)
    }

    /// Checks every layer's fields and the whole size, then allocates the
    /// layers zeroed: nothing is allocated for a header that fails.
    fn allocate(
        (hashing, error_rate, expansion): (Hashing, f64, u32),
        fields: Vec<LayerFields>,
        (window, opened): (Option<(u64, u64)>, Vec<u64>),
        max_bytes: u64,
        max_chunk: u64,
    ) -> Result<LoadingFilter, WardenError> {
        let mut total = BloomFilter::overhead(fields.len());
        for l in &fields {
            Layer::check_header(hashing, l.capacity, l.error_rate, l.hashes, l.items, l.bits)?;
            total = total.checked_add(l.bits / 8).ok_or(errors::TOO_LARGE)?;
        }
        if total > max_bytes {
            return Err(errors::TOO_LARGE);
        }
        let aging = window
            .map(|(window_ms, capacity)| Aging::from_parts(window_ms, capacity, opened))
            .transpose()
            .map_err(|_| WardenError::BadFilterData)?;
        let layers = fields
            .iter()
            .map(|l| {
                let header = (l.capacity, l.error_rate, l.hashes, l.items);
                Layer::zeroed(hashing, header, l.bits, u64::MAX)
            })
            .collect::<Result<Vec<Layer>, WardenError>>()?;
        Ok(LoadingFilter {
            hashing,
            error_rate,
            expansion,
            layers,
            aging,
            loaded: 0,
            max_chunk,
        })
    }

    /// Resumes a stored load (RDB of a key being loaded): `loaded` must be
    /// where a chunk of `filter` starts, before its end.
    pub fn resume(filter: BloomFilter, loaded: u64) -> Result<LoadingFilter, WardenError> {
        Self::resume_in(filter, loaded, MAX_CHUNK_BYTES)
    }

    fn resume_in(
        filter: BloomFilter,
        loaded: u64,
        max_chunk: u64,
    ) -> Result<LoadingFilter, WardenError> {
        let (hashing, error_rate, expansion, layers, aging) = filter.into_parts();
        let at = loaded.checked_add(1).ok_or(WardenError::BadFilterData)?;
        match chunk_in(sizes(&layers), at, max_chunk) {
            Ok(Chunk::Bits { .. }) => Ok(LoadingFilter {
                hashing,
                error_rate,
                expansion,
                layers,
                aging,
                loaded,
                max_chunk,
            }),
            _ => Err(WardenError::BadFilterData),
        }
    }

    /// The stored fields (the bits not loaded yet are zero).
    pub fn parts(&self) -> FilterParts<'_> {
        FilterParts {
            hashing: self.hashing,
            error_rate: self.error_rate,
            expansion: self.expansion,
            layers: &self.layers,
            aging: self.aging.as_ref(),
        }
    }

    /// Bytes of the bit arrays loaded so far.
    pub fn loaded(&self) -> u64 {
        self.loaded
    }

    /// Bytes the value occupies (as the filter it becomes).
    pub fn size(&self) -> u64 {
        BloomFilter::overhead(self.layers.len())
            + sizes(&self.layers).sum::<u64>()
            + aging_overhead(self.aging.as_ref())
    }

    /// The whole filter when no chunk is due (an aging filter's header with
    /// no blocks is the whole filter); `None` otherwise.
    pub fn complete(&mut self) -> Option<BloomFilter> {
        if self.next_chunk() != Chunk::End {
            return None;
        }
        let expansion = u64::from(self.expansion);
        // Checked before the parts are taken, so a value that fails stays whole.
        BloomFilter::check_whole(
            self.hashing,
            self.error_rate,
            expansion,
            &self.layers,
            self.aging.as_ref(),
        )
        .ok()?;
        let layers = std::mem::take(&mut self.layers);
        let aging = self.aging.take();
        BloomFilter::from_parts(self.hashing, self.error_rate, expansion, layers, aging).ok()
    }

    /// The chunk due next (`Chunk::End` once every chunk is in).
    pub fn next_chunk(&self) -> Chunk {
        // `loaded` is always where a chunk starts (or the end), so this never fails.
        chunk_in(sizes(&self.layers), self.loaded + 1, self.max_chunk).unwrap_or(Chunk::End)
    }

    /// Loads the chunk that `BF.SCANDUMPX` answered with `iterator`: it must
    /// be the next one, of exactly its length. `Ok(None)` while more chunks
    /// are due; after the last one, `Ok(Some(filter))` hands over the whole
    /// filter (and leaves this value empty, to be dropped). On error nothing
    /// changed.
    pub fn load(&mut self, iterator: u64, data: &[u8]) -> Result<Option<BloomFilter>, WardenError> {
        let Chunk::Bits {
            layer,
            offset,
            len,
            next,
        } = self.next_chunk()
        else {
            return Err(WardenError::FilterLoaded);
        };
        if iterator != next {
            return Err(WardenError::ChunkOutOfOrder(next));
        }
        if data.len() as u64 != len {
            return Err(WardenError::ChunkLength(len));
        }
        let first = (offset / 8) as usize;
        let words = &mut self.layers[layer].words_mut()[first..first + data.len() / 8];
        for (w, b) in words.iter_mut().zip(data.chunks_exact(8)) {
            *w = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        }
        self.loaded += len;
        // The fields were checked with the header and have not changed.
        Ok(self.complete())
    }

    /// The chunks loaded so far as `(iterator, layer, offset, len)`: what
    /// `BF.LOADCHUNKX` calls after the header rebuild this value.
    pub fn loaded_chunks(&self) -> impl Iterator<Item = (u64, usize, u64, u64)> + '_ {
        let mut at = HEADER_ITERATOR;
        std::iter::from_fn(
            move || match chunk_in(sizes(&self.layers), at, self.max_chunk) {
                Ok(Chunk::Bits {
                    layer,
                    offset,
                    len,
                    next,
                }) if at - 1 < self.loaded => {
                    at = next;
                    Some((next, layer, offset, len))
                }
                _ => None,
            },
        )
    }
}

#[cfg(test)]
#[path = "dump_tests.rs"]
mod tests;
