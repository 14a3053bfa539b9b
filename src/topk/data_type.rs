//! The `warden-tk` data type: a top-k.
//!
//! RDB layout, encoding version 1: kind (`heavy_keeper::KIND`), k, width,
//! depth (unsigned), decay (double), window in ms (0: none), the start of
//! its newest slot and the decays' generator (unsigned); per sketch (one, or
//! `RING` for a window) its buckets as one string of little-endian 32-bit
//! fingerprint and count pairs; then the `k` heap slots in heap order, each
//! 0 (empty) or 1 followed by its count and item. Every field is validated
//! on load (`TopK::from_stored`), since RESTORE feeds this code bytes from
//! clients. AOF rewrite emits `TOPK._LOADX` commands, the buckets in chunks.

use std::sync::atomic::Ordering;

use redis_module::native_types::RedisType;

use crate::common::relocate::Mover;
use crate::common::sketch::RING;
use crate::glue::data_type::{methods, Digest, StoredValue};
use crate::glue::host::{Io, RStr, Sink};
use crate::topk::config::TOPK_MAX_BYTES;
use crate::topk::core::heavy_keeper::{bytes_for, Params, TopK, KIND, MAX_PARAM};
use crate::topk::stats::{TOPK_BYTES, TOPK_KEYS};
use crate::topk::wire::{buckets_from_le, buckets_to_le, LoadTopK};

/// Current RDB encoding version of top-k keys.
pub const TOPK_ENCODING_VERSION: i32 = 1;

/// Buckets per `TOPK._LOADX … BUCKETS` command in a rewritten AOF (4 MiB).
const AOF_CHUNK_BUCKETS: usize = 1 << 19;

/// Bytes per unit of `free_effort`.
const EFFORT_BYTES: u64 = 16 << 10;

/// Accounts a top-k that starts to live in the keyspace.
pub fn track_new(t: &TopK) {
    TOPK_KEYS.fetch_add(1, Ordering::Relaxed);
    TOPK_BYTES.fetch_add(t.size() as i64, Ordering::Relaxed);
}

/// The Redis data type of top-k keys.
pub static TOPK_TYPE: RedisType =
    RedisType::new("warden-tk", TOPK_ENCODING_VERSION, methods::<TopK>());

/// Checks a stored top-k's header: its kind, sizes in range, and a size the
/// largest `topk-max-bytes` allows. The parameters and the window.
pub fn check_header(
    kind: u64,
    (k, width, depth, decay): (u64, u64, u64, f64),
    window_ms: u64,
) -> Option<(Params, Option<u64>)> {
    let in_range = |v: u64| (1..=MAX_PARAM).contains(&v);
    if kind != KIND || !in_range(k) || !in_range(width) || !in_range(depth) {
        return None;
    }
    let params = Params {
        k: k as u32,
        width: width as u32,
        depth: depth as u32,
        decay: Params::check_decay(decay).ok()?,
    };
    let window = (window_ms != 0).then_some(window_ms);
    let bytes = bytes_for(params, window.is_some())?;
    (bytes <= TOPK_MAX_BYTES.max as u64).then_some((params, window))
}

/// Reads a top-k in the RDB layout, every field checked: `None` on bad data.
fn load_topk(rdb: Io) -> Option<TopK> {
    let next = || rdb.load_unsigned().ok();
    let (kind, k, width, depth) = (next()?, next()?, next()?, next()?);
    let decay = rdb.load_double().ok()?;
    let (window_ms, head_ms, rng) = (next()?, next()?, next()?);
    let (params, window) = check_header(kind, (k, width, depth, decay), window_ms)?;
    // A top-k without a window has no slot (the AOF form refuses one too).
    if window.is_none() && head_ms != 0 {
        return None;
    }
    let subs = if window.is_some() { RING } else { 1 };
    let per_sketch = u64::from(params.width) * u64::from(params.depth) * 8;
    // Grown from the payload's own fields, each checked before it is kept:
    // a forged header alone allocates nothing.
    let mut buckets = Vec::new();
    for _ in 0..subs {
        let buffer = rdb.load_string_buffer().ok()?;
        if buffer.as_ref().len() as u64 != per_sketch {
            return None;
        }
        buckets.extend(buckets_from_le(buffer.as_ref())?);
    }
    let mut slots = Vec::new();
    for _ in 0..params.k {
        match next()? {
            0 => slots.push((0, None)),
            1 => {
                let count = u32::try_from(next()?).ok()?;
                let item = rdb.load_string_buffer().ok()?;
                slots.push((count, Some(Box::from(item.as_ref()))));
            }
            _ => return None,
        }
    }
    TopK::from_stored(params, (window.map(|w| (w, head_ms)), rng), buckets, slots).ok()
}

impl StoredValue for TopK {
    const ENCODING_VERSION: i32 = TOPK_ENCODING_VERSION;

    fn redis_type() -> &'static RedisType {
        &TOPK_TYPE
    }

    fn load(rdb: Io, _encver: i32) -> Option<Self> {
        let t = load_topk(rdb)?;
        track_new(&t);
        Some(t)
    }

    fn save(&self, rdb: Io) {
        let p = self.params();
        rdb.save_unsigned(KIND);
        rdb.save_unsigned(u64::from(p.k));
        rdb.save_unsigned(u64::from(p.width));
        rdb.save_unsigned(u64::from(p.depth));
        rdb.save_double(p.decay);
        rdb.save_unsigned(self.ring().map_or(0, |r| r.window_ms()));
        rdb.save_unsigned(self.ring().map_or(0, |r| r.head_ms()));
        rdb.save_unsigned(self.rng());
        let len = (u64::from(p.width) * u64::from(p.depth)) as usize;
        for sketch in self.buckets().chunks(len) {
            rdb.save_slice(&buckets_to_le(sketch));
        }
        for (count, item) in self.slots() {
            match item {
                None => rdb.save_unsigned(0),
                Some(item) => {
                    rdb.save_unsigned(1);
                    rdb.save_unsigned(u64::from(count));
                    rdb.save_slice(item);
                }
            }
        }
    }

    fn aof_rewrite(&self, aof: Sink, key: RStr) {
        let p = self.params();
        LoadTopK::Header {
            kind: KIND,
            k: u64::from(p.k),
            width: u64::from(p.width),
            depth: u64::from(p.depth),
            decay: p.decay,
            window_ms: self.ring().map_or(0, |r| r.window_ms()),
            head_ms: self.ring().map_or(0, |r| r.head_ms()),
            rng: self.rng(),
        }
        .emit(aof, key);
        let len = (u64::from(p.width) * u64::from(p.depth)) as usize;
        for (sub, sketch) in self.buckets().chunks(len).enumerate() {
            for (n, chunk) in sketch.chunks(AOF_CHUNK_BUCKETS).enumerate() {
                if chunk.iter().all(|b| b.count == 0 && b.fp == 0) {
                    continue; // the header made them empty
                }
                LoadTopK::Buckets {
                    sub,
                    offset: n * AOF_CHUNK_BUCKETS,
                    bytes: &buckets_to_le(chunk),
                }
                .emit(aof, key);
            }
        }
        for (index, (count, item)) in self.slots().enumerate() {
            if let Some(item) = item {
                LoadTopK::Slot {
                    index,
                    count: u64::from(count),
                    item,
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
            KIND,
            u64::from(p.k),
            u64::from(p.width),
            u64::from(p.depth),
            p.decay.to_bits(),
            self.ring().map_or(0, |r| r.window_ms()),
            self.ring().map_or(0, |r| r.head_ms()),
            self.rng(),
        ] {
            md.add_int(v as i64);
        }
        md.add_bytes(&buckets_to_le(self.buckets()));
        for (count, item) in self.slots() {
            md.add_int(i64::from(count));
            match item {
                Some(item) => md.add_bytes(item),
                None => md.add_int(-1),
            }
        }
    }

    fn copy(&self) -> Self {
        let t = self.clone();
        track_new(&t);
        t
    }

    fn defrag(&mut self, m: &mut dyn Mover, _cursor: u64) -> Option<u64> {
        self.relocate(m);
        None
    }

    fn free_effort(&self) -> usize {
        (1 + u64::from(self.params().k) + self.size() / EFFORT_BYTES) as usize
    }

    fn on_free(&self) {
        TOPK_KEYS.fetch_sub(1, Ordering::Relaxed);
        TOPK_BYTES.fetch_sub(self.size() as i64, Ordering::Relaxed);
    }
}
