//! The `warden-cf` data type: a cuckoo filter.
//!
//! RDB layout, encoding version 2: capacity, bucket size, max iterations,
//! expansion, fingerprint bits, items, deletes, sub-filter count (all
//! unsigned); per sub-filter its bucket count and its packed slots as one
//! string of little-endian 64-bit words; then the bytes `CF.LOADCHUNKX` has
//! loaded of a filter it is still loading (all ones for a whole filter);
//! then the filter's hash (`ItemHash::code`). Version 1, written before
//! filters had a choice of hash, ends before the hash: its filters keep
//! murmur3.
//! Every field is validated on load (`CuckooFilter::from_stored`), since
//! RESTORE feeds this code bytes from clients. AOF rewrite emits `CF._LOADX`
//! commands, the words in chunks; for a filter still being loaded, the
//! `CF.LOADCHUNKX` calls that loaded it so far.

use std::sync::atomic::Ordering;

use redis_module::native_types::RedisType;

use crate::common::chunks::HEADER_ITERATOR;
use crate::common::le_words::{words_from_le, words_to_le};
use crate::common::relocate::Mover;
use crate::cuckoo::core::dump::{chunk_words, encode_header, loaded_chunks};
use crate::cuckoo::core::filter::{CuckooFilter, CuckooParams, ItemHash, SubFilter};
use crate::cuckoo::stats::{CF_BYTES, CF_FILTERS};
use crate::cuckoo::wire::{emit_chunk, LoadFilter};
use crate::glue::data_type::{methods, Digest, StoredValue};
use crate::glue::host::{Io, RStr, Sink};

/// Current RDB encoding version of cuckoo filters.
pub const CUCKOO_ENCODING_VERSION: i32 = 2;

/// Bytes of slots per `CF._LOADX … WORDS` command in a rewritten AOF.
const AOF_CHUNK_BYTES: usize = 4 << 20;

/// Bytes of slots per unit of `free_effort`.
const EFFORT_BYTES: u64 = 16 << 10;

/// Accounts a filter that starts to live in the keyspace.
pub fn track_new(f: &CuckooFilter) {
    CF_FILTERS.fetch_add(1, Ordering::Relaxed);
    CF_BYTES.fetch_add(f.size() as i64, Ordering::Relaxed);
}

/// Accounts a change of a live filter's size.
pub fn track_growth(before: u64, after: u64) {
    if before != after {
        CF_BYTES.fetch_add(after as i64 - before as i64, Ordering::Relaxed);
    }
}

/// The Redis data type of cuckoo filter keys.
pub static CUCKOO_TYPE: RedisType = RedisType::new(
    "warden-cf",
    CUCKOO_ENCODING_VERSION,
    methods::<CuckooFilter>(),
);

/// Reads a filter in the RDB layout of `encver`, every field checked:
/// `None` on bad data.
fn load_filter(rdb: Io, encver: i32) -> Option<CuckooFilter> {
    let next = || rdb.load_unsigned().ok();
    let capacity = next()?;
    let small = |v: u64| u32::try_from(v).ok();
    let params = CuckooParams {
        capacity,
        bucket_size: small(next()?)?,
        max_iterations: small(next()?)?,
        expansion: small(next()?)?,
    };
    let fingerprint_bits = small(next()?)?;
    let items = next()?;
    let deletes = next()?;
    let count = next()?;
    CuckooFilter::check_header(params, fingerprint_bits, count, deletes).ok()?;
    let mut filters = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let buckets = rdb.load_unsigned().ok()?;
        let words = rdb.load_string_buffer().ok()?;
        let words = words_from_le(words.as_ref())?;
        filters.push(
            SubFilter::from_parts(buckets, params.bucket_size, fingerprint_bits, words).ok()?,
        );
    }
    let loading = match rdb.load_unsigned().ok()? {
        WHOLE => None,
        loaded => Some(loaded),
    };
    let item_hash = match encver {
        1 => ItemHash::Murmur3,
        _ => ItemHash::from_code(next()?)?,
    };
    CuckooFilter::from_stored(
        params,
        fingerprint_bits,
        (items, deletes),
        filters,
        (loading, item_hash),
    )
    .ok()
}

/// The stored loading field of a whole filter.
const WHOLE: u64 = u64::MAX;

impl StoredValue for CuckooFilter {
    const ENCODING_VERSION: i32 = CUCKOO_ENCODING_VERSION;
    const OLDEST_ENCODING_VERSION: i32 = 1;

    fn redis_type() -> &'static RedisType {
        &CUCKOO_TYPE
    }

    fn load(rdb: Io, encver: i32) -> Option<Self> {
        let f = load_filter(rdb, encver)?;
        track_new(&f);
        Some(f)
    }

    fn save(&self, rdb: Io) {
        let p = self.params();
        rdb.save_unsigned(p.capacity);
        rdb.save_unsigned(u64::from(p.bucket_size));
        rdb.save_unsigned(u64::from(p.max_iterations));
        rdb.save_unsigned(u64::from(p.expansion));
        rdb.save_unsigned(u64::from(self.fingerprint_bits()));
        rdb.save_unsigned(self.items());
        rdb.save_unsigned(self.deletes());
        rdb.save_unsigned(self.filters().len() as u64);
        for sub in self.filters() {
            rdb.save_unsigned(sub.buckets());
            rdb.save_slice(&words_to_le(sub.words()));
        }
        rdb.save_unsigned(self.loading().unwrap_or(WHOLE));
        rdb.save_unsigned(self.item_hash().code());
    }

    fn aof_rewrite(&self, aof: Sink, key: RStr) {
        if self.loading().is_some() {
            let header = encode_header(self);
            emit_chunk(aof, key, HEADER_ITERATOR, &header);
            for (iterator, sub, offset, len) in loaded_chunks(self) {
                let words = chunk_words(self, sub, offset, len);
                emit_chunk(aof, key, iterator, &words_to_le(words));
            }
            return;
        }
        LoadFilter::Header {
            params: self.params(),
            fingerprint_bits: self.fingerprint_bits(),
            items: self.items(),
            deletes: self.deletes(),
            filters: self.filters().len() as u64,
            item_hash: self.item_hash(),
        }
        .emit(aof, key);
        let words_per_chunk = AOF_CHUNK_BYTES / 8;
        for (index, sub) in self.filters().iter().enumerate() {
            for (n, chunk) in sub.words().chunks(words_per_chunk).enumerate() {
                if chunk.iter().all(|w| *w == 0) {
                    continue; // the header made them zero
                }
                LoadFilter::Words {
                    index,
                    word_offset: n * words_per_chunk,
                    bytes: &words_to_le(chunk),
                }
                .emit(aof, key);
            }
        }
    }

    fn mem_usage(&self) -> usize {
        self.size() as usize
    }

    fn digest(&self, md: &mut Digest) {
        let p = self.params();
        for v in [
            p.capacity,
            u64::from(p.bucket_size),
            u64::from(p.max_iterations),
            u64::from(p.expansion),
            u64::from(self.fingerprint_bits()),
            self.items(),
            self.deletes(),
        ] {
            md.add_int(v as i64);
        }
        // Murmur3 filters digest as before hashes could differ, so an older
        // master and an upgraded replica agree on them.
        if self.item_hash() != ItemHash::Murmur3 {
            md.add_int(self.item_hash().code() as i64);
        }
        for sub in self.filters() {
            md.add_int(sub.buckets() as i64);
            md.add_bytes(&words_to_le(sub.words()));
        }
        if let Some(loaded) = self.loading() {
            md.add_int(loaded as i64);
        }
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
        (2 + self.filters().len() as u64 + self.size() / EFFORT_BYTES) as usize
    }

    fn on_free(&self) {
        CF_FILTERS.fetch_sub(1, Ordering::Relaxed);
        CF_BYTES.fetch_sub(self.size() as i64, Ordering::Relaxed);
    }
}
