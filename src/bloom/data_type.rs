//! The `warden-bf` data type: a scalable Bloom filter.
//!
//! RDB layout, encoding version 3: error rate (double), expansion (unsigned),
//! layer count (unsigned), window in ms (unsigned, 0 unless aging), hashing
//! (unsigned: 0 warden's, 1 RedisBloom's, see `Hashing::code`) and for an
//! aging filter its capacity and each block's opening (Unix ms); per layer:
//! capacity, error rate (double), hashes, items, then the bit array as one
//! string of little-endian 64-bit words. Versions 2 (no hashing: warden's)
//! and 1 (no window either) still load.
//! Every field is validated on load, since RESTORE feeds this code bytes from
//! clients. AOF rewrite emits `BF._LOADX` commands, the bits in chunks.

use std::sync::atomic::Ordering;

use redis_module::error::Error;
use redis_module::native_types::RedisType;

use crate::bloom::core::aging::Aging;
use crate::bloom::core::filter::{BloomFilter, FilterParts, Hashing, Layer};
use crate::bloom::stats::{BF_BYTES, BF_FILTERS};
use crate::bloom::wire::LoadFilter;
use crate::common::le_words::{words_from_le, words_to_le};
use crate::common::relocate::Mover;
use crate::glue::data_type::{methods, Digest, StoredValue};
use crate::glue::host::{Io, RStr, Sink};

/// Current RDB encoding version of filter values (2 added the window, 3
/// the hashing).
pub const BLOOM_ENCODING_VERSION: i32 = 3;

/// The first encoding version that stores a window.
const WINDOW_ENCODING_VERSION: i32 = 2;

/// The first encoding version that stores the hashing.
const HASHING_ENCODING_VERSION: i32 = 3;

/// Bytes of bit array per `BF._LOADX … BITS` command in a rewritten AOF.
pub const AOF_CHUNK_BYTES: usize = 4 << 20;

/// Bytes of bit array per unit of `free_effort` (jemalloc's largest small
/// size class): a filter of several MB is defragmented in steps, one layer
/// at a time, and lazily freed in the background.
const EFFORT_BYTES: u64 = 16 << 10;

/// The `free_effort` of a filter of `layers` layers and `size` bytes: one
/// unit per allocation and per `EFFORT_BYTES` of bits.
pub fn filter_effort(layers: usize, size: u64) -> usize {
    (2 + layers as u64 + size / EFFORT_BYTES) as usize
}

/// Accounts a filter that starts to live in the keyspace.
pub fn track_new(f: &BloomFilter) {
    BF_FILTERS.fetch_add(1, Ordering::Relaxed);
    BF_BYTES.fetch_add(f.size() as i64, Ordering::Relaxed);
}

/// Accounts a filter that leaves the keyspace (freed).
fn track_freed(f: &BloomFilter) {
    BF_FILTERS.fetch_sub(1, Ordering::Relaxed);
    BF_BYTES.fetch_sub(f.size() as i64, Ordering::Relaxed);
}

/// Accounts a change of a live filter's size.
pub fn track_growth(before: u64, after: u64) {
    BF_BYTES.fetch_add(after as i64 - before as i64, Ordering::Relaxed);
}

/// The Redis data type of filter keys.
pub static BLOOM_TYPE: RedisType = RedisType::new(
    "warden-bf",
    BLOOM_ENCODING_VERSION,
    methods::<BloomFilter>(),
);

/// Reads a filter in the RDB layout of `warden-bf`, validating every field
/// (`BloomFilter::check_parts` before any layer is read, `Layer::from_parts`
/// for each): `Ok(None)` on bad data. `warden-bl` reuses it; `encver` is the
/// version the value was saved with (1 has no window, 2 no hashing).
pub fn load_filter(rdb: Io, encver: i32) -> Result<Option<BloomFilter>, Error> {
    let error_rate = rdb.load_double()?;
    let expansion = rdb.load_unsigned()?;
    let layer_count = rdb.load_unsigned()?;
    let window_ms = if encver >= WINDOW_ENCODING_VERSION {
        rdb.load_unsigned()?
    } else {
        0
    };
    let hashing = if encver >= HASHING_ENCODING_VERSION {
        match Hashing::from_code(rdb.load_unsigned()?) {
            Some(h) => h,
            None => return Ok(None),
        }
    } else {
        Hashing::Warden
    };
    let aging = window_ms != 0;
    let Ok((expansion, layer_count)) =
        BloomFilter::check_parts(hashing, error_rate, expansion, (layer_count, aging))
    else {
        return Ok(None);
    };
    let aging = if aging {
        let capacity = rdb.load_unsigned()?;
        let mut opened = Vec::with_capacity(layer_count);
        for _ in 0..layer_count {
            opened.push(rdb.load_unsigned()?);
        }
        match Aging::from_parts(window_ms, capacity, opened) {
            Ok(a) => Some(a),
            Err(_) => return Ok(None),
        }
    } else {
        None
    };
    let mut layers = Vec::with_capacity(layer_count);
    for _ in 0..layer_count {
        let capacity = rdb.load_unsigned()?;
        let layer_error = rdb.load_double()?;
        let hashes = rdb.load_unsigned()?;
        let items = rdb.load_unsigned()?;
        let bits = rdb.load_string_buffer()?;
        let Some(words) = words_from_le(bits.as_ref()) else {
            return Ok(None);
        };
        let Ok(hashes) = u32::try_from(hashes) else {
            return Ok(None);
        };
        match Layer::from_parts(hashing, capacity, layer_error, hashes, items, words) {
            Ok(layer) => layers.push(layer),
            Err(_) => return Ok(None),
        }
    }
    let expansion = u64::from(expansion);
    Ok(BloomFilter::from_parts(hashing, error_rate, expansion, layers, aging).ok())
}

/// Writes a filter's fields in the RDB layout of `warden-bf`.
pub fn save_parts(rdb: Io, f: FilterParts) {
    rdb.save_double(f.error_rate);
    rdb.save_unsigned(u64::from(f.expansion));
    rdb.save_unsigned(f.layers.len() as u64);
    rdb.save_unsigned(f.aging.map_or(0, Aging::window_ms));
    rdb.save_unsigned(f.hashing.code());
    if let Some(a) = f.aging {
        rdb.save_unsigned(a.capacity());
        for &opened in a.opened() {
            rdb.save_unsigned(opened);
        }
    }
    for layer in f.layers {
        rdb.save_unsigned(layer.capacity());
        rdb.save_double(layer.error_rate());
        rdb.save_unsigned(u64::from(layer.hashes()));
        rdb.save_unsigned(layer.items());
        rdb.save_slice(&words_to_le(layer.words()));
    }
}

/// Feeds a filter's fields to DEBUG DIGEST (the callback ends the sequence).
pub fn digest_parts(md: &mut Digest, f: FilterParts) {
    md.add_int(f.error_rate.to_bits() as i64);
    md.add_int(i64::from(f.expansion));
    if f.hashing != Hashing::Warden {
        md.add_int(f.hashing.code() as i64);
    }
    if let Some(a) = f.aging {
        md.add_int(a.window_ms() as i64);
        md.add_int(a.capacity() as i64);
        for &opened in a.opened() {
            md.add_int(opened as i64);
        }
    }
    for layer in f.layers {
        md.add_int(layer.capacity() as i64);
        md.add_int(layer.error_rate().to_bits() as i64);
        md.add_int(i64::from(layer.hashes()));
        md.add_int(layer.items() as i64);
        md.add_bytes(&words_to_le(layer.words()));
    }
}

impl StoredValue for BloomFilter {
    const ENCODING_VERSION: i32 = BLOOM_ENCODING_VERSION;
    const OLDEST_ENCODING_VERSION: i32 = 1;

    fn redis_type() -> &'static RedisType {
        &BLOOM_TYPE
    }

    fn load(rdb: Io, encver: i32) -> Option<Self> {
        let f = load_filter(rdb, encver).ok().flatten()?;
        track_new(&f);
        Some(f)
    }

    fn save(&self, rdb: Io) {
        save_parts(rdb, self.parts());
    }

    fn aof_rewrite(&self, aof: Sink, key: RStr) {
        if let Some(a) = self.aging() {
            LoadFilter::Age {
                error_rate: self.error_rate(),
                capacity: a.capacity(),
                window_ms: a.window_ms(),
            }
            .emit(aof, key);
        }
        for (index, layer) in self.layers().iter().enumerate() {
            LoadFilter::Layer {
                hashing: self.hashing(),
                error_rate: self.error_rate(),
                expansion: self.expansion(),
                index,
                capacity: layer.capacity(),
                layer_rate: layer.error_rate(),
                hashes: layer.hashes(),
                items: layer.items(),
                bits: (layer.words().len() * 64) as u64,
                opened: self.aging().map(|a| a.opened()[index]),
            }
            .emit(aof, key);
            let words_per_chunk = AOF_CHUNK_BYTES / 8;
            for (n, chunk) in layer.words().chunks(words_per_chunk).enumerate() {
                let bytes = words_to_le(chunk);
                LoadFilter::Bits {
                    index,
                    word_offset: n * words_per_chunk,
                    bytes: &bytes,
                }
                .emit(aof, key);
            }
        }
    }

    fn mem_usage(&self) -> usize {
        self.size() as usize
    }

    fn digest(&self, md: &mut Digest) {
        digest_parts(md, self.parts());
    }

    fn copy(&self) -> Self {
        let f = self.clone();
        track_new(&f);
        f
    }

    fn defrag(&mut self, m: &mut dyn Mover, cursor: u64) -> Option<u64> {
        self.relocate(cursor as usize, m).map(|next| next as u64)
    }

    fn free_effort(&self) -> usize {
        filter_effort(self.layers().len(), self.size())
    }

    fn on_free(&self) {
        track_freed(self);
    }
}
