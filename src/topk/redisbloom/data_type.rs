//! RedisBloom's `TopK-TYPE`, in its RDB layout (encoding version 0): k,
//! width and depth (unsigned), the decay (double), the buckets as one string
//! (per bucket its fingerprint and count, 32-bit little-endian), the heap as
//! one string of 24-byte records (fingerprint, item length, 8 bytes RedisBloom
//! fills with a pointer and ignores, count, 4 bytes of padding), then each
//! entry's item as a string ending in NUL (a lone NUL for an empty entry).
//! Every field is checked (RESTORE feeds this code bytes from clients). AOF
//! rewrite emits `RESTORE key 0 <DUMP payload>`, as RedisBloom's does.

use std::sync::atomic::Ordering;

use redis_module::native_types::RedisType;

use crate::common::relocate::{self, Mover};
use crate::glue::data_type::{methods, Digest, StoredValue};
use crate::glue::host::{self, Io, RStr, Sink};
use crate::topk::core::redisbloom::{Bucket, HeapEntry, RbTopK};
use crate::topk::stats::{TOPK_BYTES, TOPK_KEYS};

/// The encoding version RedisBloom saves.
pub const RB_TOPK_ENCODING_VERSION: i32 = 0;

/// Bytes of a heap record.
const HEAP_RECORD: usize = 24;

/// The Redis data type of RedisBloom's top-k keys.
pub static RB_TOPK_TYPE: RedisType =
    RedisType::new("TopK-TYPE", RB_TOPK_ENCODING_VERSION, methods::<RbTopK>());

/// Accounts a top-k that starts to live in the keyspace.
pub fn track_new(t: &RbTopK) {
    TOPK_KEYS.fetch_add(1, Ordering::Relaxed);
    TOPK_BYTES.fetch_add(t.mem_usage() as i64, Ordering::Relaxed);
}

/// The little-endian u32 at `at`.
fn word(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn load_topk(rdb: Io) -> Option<RbTopK> {
    let k = u32::try_from(rdb.load_unsigned().ok()?).ok()?;
    let width = u32::try_from(rdb.load_unsigned().ok()?).ok()?;
    let depth = u32::try_from(rdb.load_unsigned().ok()?).ok()?;
    let decay = rdb.load_double().ok()?;
    if k < 1 || width < 1 || depth < 1 || !(decay > 0.0 && decay <= 1.0) {
        return None;
    }
    let data = rdb.load_string_buffer().ok()?;
    let data = data.as_ref();
    if RbTopK::bucket_bytes(width, depth) != Some(data.len() as u64) {
        return None;
    }
    let buckets = data
        .chunks_exact(8)
        .map(|b| Bucket {
            fp: word(b, 0),
            count: word(b, 4),
        })
        .collect();
    let heap_bytes = rdb.load_string_buffer().ok()?;
    let heap_bytes = heap_bytes.as_ref();
    if heap_bytes.len() as u64 != u64::from(k) * HEAP_RECORD as u64 {
        return None;
    }
    let mut heap = Vec::with_capacity(k as usize);
    for record in heap_bytes.chunks_exact(HEAP_RECORD) {
        let item = rdb.load_string_buffer().ok()?;
        let item = item.as_ref();
        let (&nul, text) = item.split_last()?;
        if nul != 0 {
            return None;
        }
        heap.push(HeapEntry {
            fp: word(record, 0),
            item: (!item.is_empty() && item.len() > 1).then(|| text.to_vec()),
            count: word(record, 16),
        });
    }
    Some(RbTopK::from_parts(k, width, depth, decay, buckets, heap))
}

impl StoredValue for RbTopK {
    const ENCODING_VERSION: i32 = RB_TOPK_ENCODING_VERSION;

    fn redis_type() -> &'static RedisType {
        &RB_TOPK_TYPE
    }

    fn load(rdb: Io, _encver: i32) -> Option<Self> {
        let t = load_topk(rdb)?;
        track_new(&t);
        Some(t)
    }

    fn save(&self, rdb: Io) {
        rdb.save_unsigned(u64::from(self.k));
        rdb.save_unsigned(u64::from(self.width));
        rdb.save_unsigned(u64::from(self.depth));
        rdb.save_double(self.decay);
        let data: Vec<u8> = self
            .buckets
            .iter()
            .flat_map(|b| [b.fp.to_le_bytes(), b.count.to_le_bytes()].concat())
            .collect();
        rdb.save_slice(&data);
        let mut heap = Vec::with_capacity(self.heap.len() * HEAP_RECORD);
        for e in &self.heap {
            let len = e.item.as_ref().map_or(0, Vec::len) as u32;
            heap.extend_from_slice(&e.fp.to_le_bytes());
            heap.extend_from_slice(&len.to_le_bytes());
            heap.extend_from_slice(&[0; 8]);
            heap.extend_from_slice(&e.count.to_le_bytes());
            heap.extend_from_slice(&[0; 4]);
        }
        rdb.save_slice(&heap);
        for e in &self.heap {
            let mut item = e.item.clone().unwrap_or_default();
            item.push(0);
            rdb.save_slice(&item);
        }
    }

    fn aof_rewrite(&self, aof: Sink, key: RStr) {
        host::emit_restore_of(aof, key);
    }

    fn mem_usage(&self) -> usize {
        RbTopK::mem_usage(self) as usize
    }

    fn digest(&self, md: &mut Digest) {
        md.add_int(i64::from(self.k));
        md.add_int(i64::from(self.width));
        md.add_int(i64::from(self.depth));
        md.add_int(self.decay.to_bits() as i64);
        // One buffer: a digest step per bucket would cost a SHA1 each.
        let buckets: Vec<u8> = self
            .buckets
            .iter()
            .flat_map(|b| (u64::from(b.fp) << 32 | u64::from(b.count)).to_le_bytes())
            .collect();
        md.add_bytes(&buckets);
        for e in &self.heap {
            md.add_int(i64::from(e.fp) << 32 | i64::from(e.count));
            md.add_bytes(e.item.as_deref().unwrap_or(b""));
        }
    }

    fn copy(&self) -> Self {
        let t = self.clone();
        track_new(&t);
        t
    }

    fn defrag(&mut self, m: &mut dyn Mover, _cursor: u64) -> Option<u64> {
        relocate::vec(&mut self.buckets, m);
        None
    }

    fn on_free(&self) {
        TOPK_KEYS.fetch_sub(1, Ordering::Relaxed);
        TOPK_BYTES.fetch_sub(self.mem_usage() as i64, Ordering::Relaxed);
    }
}
