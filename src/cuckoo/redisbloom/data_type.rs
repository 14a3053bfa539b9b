//! RedisBloom's `MBbloomCF` data type, in its RDB layout (encoding version
//! 4; versions 0 to 3 still load): table count, buckets, items (unsigned),
//! then from version 4 deletes, bucket size, kicks and expansion
//! (unsigned; before it 0, 2, 20 and 1), then per table its bucket count
//! (unsigned; from version 4, before it the filter's) and its slots
//! (string). Every field is checked as the chunk-stream header's are (each
//! table's buckets the first's times expansionⁿ, each string their exact
//! length), since RESTORE feeds this code bytes from clients. AOF rewrite
//! emits `CF.LOADCHUNK` commands, as RedisBloom's does.

use std::sync::atomic::Ordering;

use redis_module::native_types::RedisType;

use crate::common::relocate::{self, Mover};
use crate::cuckoo::core::redisbloom::{RbFields, RbFilter, RbTable, DEFAULT_MAX_ITERATIONS};
use crate::cuckoo::stats::{CF_BYTES, CF_FILTERS};
use crate::glue::data_type::{methods, Digest, StoredValue};
use crate::glue::host::{self, Io, RStr, Sink};

/// The encoding version RedisBloom 2.x saves (`MBbloomCF` version 4).
pub const RB_CUCKOO_ENCODING_VERSION: i32 = 4;
/// The first version that stores deletes, bucket size, kicks, expansion
/// and each table's buckets.
const PARAMS_ENCODING_VERSION: i32 = 4;
/// Bytes of slots per unit of `free_effort`.
const EFFORT_BYTES: u64 = 16 << 10;

/// The Redis data type of RedisBloom's cuckoo filter keys.
pub static RB_CUCKOO_TYPE: RedisType = RedisType::new(
    "MBbloomCF",
    RB_CUCKOO_ENCODING_VERSION,
    methods::<RbFilter>(),
);

/// Accounts a filter that starts to live in the keyspace.
pub fn track_new(f: &RbFilter) {
    CF_FILTERS.fetch_add(1, Ordering::Relaxed);
    CF_BYTES.fetch_add(f.size() as i64, Ordering::Relaxed);
}

/// Accounts a change of a live filter's size.
pub fn track_growth(before: u64, after: u64) {
    if before != after {
        CF_BYTES.fetch_add(after as i64 - before as i64, Ordering::Relaxed);
    }
}

/// Reads a filter, checking every field: `None` on bad data.
fn load_filter(rdb: Io, encver: i32) -> Option<RbFilter> {
    let next = || rdb.load_unsigned().ok();
    let tables = next()?;
    let buckets = next()?;
    let items = next()?;
    let with_params = encver >= PARAMS_ENCODING_VERSION;
    let fields = match with_params {
        true => RbFields {
            buckets,
            items,
            tables,
            deletes: next()?,
            bucket_size: next()?,
            max_iterations: next()?,
            expansion: next()?,
        },
        false => RbFields {
            buckets,
            items,
            tables,
            deletes: 0,
            bucket_size: 2,
            max_iterations: u64::from(DEFAULT_MAX_ITERATIONS),
            expansion: 1,
        },
    };
    let sizes = fields.table_buckets().ok()?;
    let mut loaded = Vec::with_capacity(sizes.len());
    for buckets in sizes {
        if with_params && next()? != buckets {
            return None;
        }
        let slots = rdb.load_string_buffer().ok()?.as_ref().to_vec();
        if Some(slots.len() as u64) != buckets.checked_mul(fields.bucket_size) {
            return None;
        }
        loaded.push(RbTable { buckets, slots });
    }
    Some(RbFilter::from_parts(&fields, loaded))
}

impl StoredValue for RbFilter {
    const ENCODING_VERSION: i32 = RB_CUCKOO_ENCODING_VERSION;
    const OLDEST_ENCODING_VERSION: i32 = 0;

    fn redis_type() -> &'static RedisType {
        &RB_CUCKOO_TYPE
    }

    fn load(rdb: Io, encver: i32) -> Option<Self> {
        let f = load_filter(rdb, encver)?;
        track_new(&f);
        Some(f)
    }

    fn save(&self, rdb: Io) {
        rdb.save_unsigned(self.tables.len() as u64);
        rdb.save_unsigned(self.buckets);
        rdb.save_unsigned(self.items);
        rdb.save_unsigned(self.deletes);
        rdb.save_unsigned(u64::from(self.bucket_size));
        rdb.save_unsigned(u64::from(self.max_iterations));
        rdb.save_unsigned(u64::from(self.expansion));
        for t in &self.tables {
            rdb.save_unsigned(t.buckets);
            rdb.save_slice(&t.slots);
        }
    }

    fn aof_rewrite(&self, aof: Sink, key: RStr) {
        let header = self.encode_header();
        host::emit(aof, c"CF.LOADCHUNK", (key, 1i64, &header[..]));
        let mut iter = 1;
        while let Some((next, chunk)) = self.chunk(iter) {
            host::emit(aof, c"CF.LOADCHUNK", (key, next as i64, chunk));
            iter = next;
        }
    }

    fn mem_usage(&self) -> usize {
        self.size() as usize
    }

    fn digest(&self, md: &mut Digest) {
        let f = self.fields();
        for v in [
            f.buckets,
            f.items,
            f.deletes,
            f.bucket_size,
            f.max_iterations,
            f.expansion,
        ] {
            md.add_int(v as i64);
        }
        for t in &self.tables {
            md.add_int(t.buckets as i64);
            md.add_bytes(&t.slots);
        }
    }

    fn copy(&self) -> Self {
        let f = self.clone();
        track_new(&f);
        f
    }

    fn defrag(&mut self, m: &mut dyn Mover, cursor: u64) -> Option<u64> {
        let from = cursor as usize;
        for (i, t) in self.tables.iter_mut().enumerate().skip(from) {
            if i > from && m.should_stop() {
                return Some(i as u64);
            }
            relocate::vec(&mut t.slots, m);
        }
        None
    }

    fn free_effort(&self) -> usize {
        (2 + self.tables.len() as u64 + self.size() / EFFORT_BYTES) as usize
    }

    fn on_free(&self) {
        CF_FILTERS.fetch_sub(1, Ordering::Relaxed);
        CF_BYTES.fetch_sub(self.size() as i64, Ordering::Relaxed);
    }
}
