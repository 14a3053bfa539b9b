//! The `warden-cm` data type: a count-min sketch.
//!
//! RDB layout, encoding version 1: kind (`sketch::KIND`), width, depth,
//! window in ms (0: none) and the start of its newest slot (all unsigned);
//! then per sub-sketch (one, or `RING` for a window) its total and its
//! counters as one string of little-endian 32-bit values. Every field is
//! validated on load (`CountMin::from_stored`), since RESTORE feeds this
//! code bytes from clients. AOF rewrite emits `CMS._LOADX` commands, the
//! counters in chunks.

use std::sync::atomic::Ordering;

use redis_module::native_types::RedisType;

use crate::cms::config::CMS_MAX_BYTES;
use crate::cms::core::sketch::{bytes_for, CountMin, Dims, KIND, MAX_DEPTH, MAX_WIDTH};
use crate::cms::stats::{CMS_BYTES, CMS_SKETCHES};
use crate::cms::wire::LoadSketch;
use crate::common::le_words::{u32s_from_le, u32s_to_le};
use crate::common::relocate::Mover;
use crate::common::sketch::RING;
use crate::glue::data_type::{methods, Digest, StoredValue};
use crate::glue::host::{Io, RStr, Sink};

/// Current RDB encoding version of count-min sketches.
pub const CMS_ENCODING_VERSION: i32 = 1;

/// Counters per `CMS._LOADX … CELLS` command in a rewritten AOF (4 MiB).
const AOF_CHUNK_CELLS: usize = 1 << 20;

/// Bytes of counters per unit of `free_effort`.
const EFFORT_BYTES: u64 = 16 << 10;

/// Accounts a sketch that starts to live in the keyspace.
pub fn track_new(s: &CountMin) {
    CMS_SKETCHES.fetch_add(1, Ordering::Relaxed);
    CMS_BYTES.fetch_add(s.size() as i64, Ordering::Relaxed);
}

/// The Redis data type of count-min sketch keys.
pub static CMS_TYPE: RedisType =
    RedisType::new("warden-cm", CMS_ENCODING_VERSION, methods::<CountMin>());

/// Checks a stored sketch's header: its kind, sizes in range, a window
/// given with its head, and a size the largest `cms-max-bytes` allows.
pub fn check_header(
    kind: u64,
    width: u64,
    depth: u64,
    window_ms: u64,
) -> Option<(Dims, Option<u64>)> {
    let in_range = |v: u64, max: u64| (1..=max).contains(&v);
    if kind != KIND || !in_range(width, MAX_WIDTH) || !in_range(depth, MAX_DEPTH) {
        return None;
    }
    let dims = Dims {
        width: width as u32,
        depth: depth as u32,
    };
    let window = (window_ms != 0).then_some(window_ms);
    let bytes = bytes_for(dims, window.is_some())?;
    (bytes <= CMS_MAX_BYTES.max as u64).then_some((dims, window))
}

/// Reads a sketch in the RDB layout, every field checked: `None` on bad data.
fn load_sketch(rdb: Io) -> Option<CountMin> {
    let next = || rdb.load_unsigned().ok();
    let (kind, width, depth, window_ms, head_ms) = (next()?, next()?, next()?, next()?, next()?);
    let (dims, window) = check_header(kind, width, depth, window_ms)?;
    // A sketch without a window has no slot (the AOF form refuses one too).
    if window.is_none() && head_ms != 0 {
        return None;
    }
    let subs = if window.is_some() { RING } else { 1 };
    let mut counts = Vec::with_capacity(subs);
    // Grown from the payload's own buffers, each checked before it is
    // kept: a forged header alone allocates nothing.
    let mut cells = Vec::new();
    for _ in 0..subs {
        counts.push(next()?);
        let buffer = rdb.load_string_buffer().ok()?;
        if buffer.as_ref().len() as u64 != dims.cells() * 4 {
            return None;
        }
        cells.extend(u32s_from_le(buffer.as_ref())?);
    }
    CountMin::from_stored(dims, window.map(|w| (w, head_ms)), &counts, cells).ok()
}

impl StoredValue for CountMin {
    const ENCODING_VERSION: i32 = CMS_ENCODING_VERSION;

    fn redis_type() -> &'static RedisType {
        &CMS_TYPE
    }

    fn load(rdb: Io, _encver: i32) -> Option<Self> {
        let s = load_sketch(rdb)?;
        track_new(&s);
        Some(s)
    }

    fn save(&self, rdb: Io) {
        let dims = self.dims();
        rdb.save_unsigned(KIND);
        rdb.save_unsigned(u64::from(dims.width));
        rdb.save_unsigned(u64::from(dims.depth));
        rdb.save_unsigned(self.ring().map_or(0, |r| r.window_ms()));
        rdb.save_unsigned(self.ring().map_or(0, |r| r.head_ms()));
        let size = dims.cells() as usize;
        for (sub, count) in self.counts().iter().enumerate() {
            rdb.save_unsigned(*count);
            rdb.save_slice(&u32s_to_le(&self.cells()[sub * size..(sub + 1) * size]));
        }
    }

    fn aof_rewrite(&self, aof: Sink, key: RStr) {
        let dims = self.dims();
        LoadSketch::Header {
            kind: KIND,
            width: u64::from(dims.width),
            depth: u64::from(dims.depth),
            window_ms: self.ring().map_or(0, |r| r.window_ms()),
            head_ms: self.ring().map_or(0, |r| r.head_ms()),
        }
        .emit(aof, key);
        let size = dims.cells() as usize;
        for (sub, count) in self.counts().iter().enumerate() {
            let cells = &self.cells()[sub * size..(sub + 1) * size];
            for (n, chunk) in cells.chunks(AOF_CHUNK_CELLS).enumerate() {
                // The header made them zero; the first chunk also carries the total.
                if chunk.iter().all(|c| *c == 0) && (n > 0 || *count == 0) {
                    continue;
                }
                LoadSketch::Cells {
                    sub,
                    count: *count,
                    offset: n * AOF_CHUNK_CELLS,
                    bytes: &u32s_to_le(chunk),
                }
                .emit(aof, key);
            }
        }
    }

    fn mem_usage(&self) -> usize {
        self.size() as usize
    }

    fn digest(&self, md: &mut Digest) {
        let dims = self.dims();
        for v in [
            KIND,
            u64::from(dims.width),
            u64::from(dims.depth),
            self.ring().map_or(0, |r| r.window_ms()),
            self.ring().map_or(0, |r| r.head_ms()),
        ] {
            md.add_int(v as i64);
        }
        for count in self.counts() {
            md.add_int(*count as i64);
        }
        md.add_bytes(&u32s_to_le(self.cells()));
    }

    fn copy(&self) -> Self {
        let s = self.clone();
        track_new(&s);
        s
    }

    fn defrag(&mut self, m: &mut dyn Mover, _cursor: u64) -> Option<u64> {
        self.relocate(m);
        None
    }

    fn free_effort(&self) -> usize {
        (1 + self.size() / EFFORT_BYTES) as usize
    }

    fn on_free(&self) {
        CMS_SKETCHES.fetch_sub(1, Ordering::Relaxed);
        CMS_BYTES.fetch_sub(self.size() as i64, Ordering::Relaxed);
    }
}
