//! RedisBloom's `CMSk-TYPE`, in its RDB layout (encoding version 0): width,
//! depth and the total (unsigned), then the counters as one string of
//! little-endian 32-bit words, row after row. Every field is checked
//! (RESTORE feeds this code bytes from clients). AOF rewrite emits `RESTORE
//! key 0 <DUMP payload>`, as RedisBloom's does.

use std::sync::atomic::Ordering;

use redis_module::native_types::RedisType;

use crate::cms::core::redisbloom::RbSketch;
use crate::cms::stats::{CMS_BYTES, CMS_SKETCHES};
use crate::common::relocate::{self, Mover};
use crate::glue::data_type::{methods, Digest, StoredValue};
use crate::glue::host::{self, Io, RStr, Sink};

/// The encoding version RedisBloom saves.
pub const RB_CMS_ENCODING_VERSION: i32 = 0;

/// The Redis data type of RedisBloom's count-min keys.
pub static RB_CMS_TYPE: RedisType =
    RedisType::new("CMSk-TYPE", RB_CMS_ENCODING_VERSION, methods::<RbSketch>());

/// Accounts a sketch that starts to live in the keyspace.
pub fn track_new(s: &RbSketch) {
    CMS_SKETCHES.fetch_add(1, Ordering::Relaxed);
    CMS_BYTES.fetch_add((s.counters.len() * 4) as i64, Ordering::Relaxed);
}

impl StoredValue for RbSketch {
    const ENCODING_VERSION: i32 = RB_CMS_ENCODING_VERSION;

    fn redis_type() -> &'static RedisType {
        &RB_CMS_TYPE
    }

    fn load(rdb: Io, _encver: i32) -> Option<Self> {
        let width = rdb.load_unsigned().ok()?;
        let depth = rdb.load_unsigned().ok()?;
        let counter = rdb.load_unsigned().ok()?;
        let bytes = rdb.load_string_buffer().ok()?;
        let bytes = bytes.as_ref();
        if bytes.len() % 4 != 0 {
            return None;
        }
        let counters = bytes
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let s = RbSketch::from_parts(width, depth, counter, counters)?;
        track_new(&s);
        Some(s)
    }

    fn save(&self, rdb: Io) {
        rdb.save_unsigned(self.width);
        rdb.save_unsigned(self.depth);
        rdb.save_unsigned(self.counter);
        let bytes: Vec<u8> = self.counters.iter().flat_map(|c| c.to_le_bytes()).collect();
        rdb.save_slice(&bytes);
    }

    fn aof_rewrite(&self, aof: Sink, key: RStr) {
        host::emit_restore_of(aof, key);
    }

    fn mem_usage(&self) -> usize {
        self.mem_usage() as usize
    }

    fn digest(&self, md: &mut Digest) {
        md.add_int(self.width as i64);
        md.add_int(self.depth as i64);
        md.add_int(self.counter as i64);
        let bytes: Vec<u8> = self.counters.iter().flat_map(|c| c.to_le_bytes()).collect();
        md.add_bytes(&bytes);
    }

    fn copy(&self) -> Self {
        let s = self.clone();
        track_new(&s);
        s
    }

    fn defrag(&mut self, m: &mut dyn Mover, _cursor: u64) -> Option<u64> {
        relocate::vec(&mut self.counters, m);
        None
    }

    fn on_free(&self) {
        CMS_SKETCHES.fetch_sub(1, Ordering::Relaxed);
        CMS_BYTES.fetch_sub((self.counters.len() * 4) as i64, Ordering::Relaxed);
    }
}
