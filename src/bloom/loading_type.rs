//! The `warden-bl` data type: a filter that `BF.LOADCHUNKX` is rebuilding,
//! from its header chunk to its last chunk. It is a key like any other (DEL,
//! RENAME, EXPIRE, COPY, MOVE act on it; RDB, AOF rewrite and a replica's
//! full sync keep it, so loading goes on after a restart or on a replica),
//! but never a filter that can be read: the `BF.*X` commands answer
//! `ERR filter is still being loaded` on it. After the last chunk the key
//! holds a `warden-bf` filter.
//!
//! RDB layout, encoding version 3: the filter exactly as `warden-bf` saves it
//! (the bits not loaded yet are zero), then the bytes loaded so far; loaded
//! with the same checks, plus that count (it must be where a chunk starts).
//! AOF rewrite emits the `BF.LOADCHUNKX` calls that got it there: the header,
//! then each chunk loaded so far.

use redis_module::error::Error;
use redis_module::native_types::RedisType;

use crate::bloom::core::dump::{encode_header, LoadingFilter, HEADER_ITERATOR};
use crate::bloom::data_type::{
    digest_parts, filter_effort, load_filter, save_parts, BLOOM_ENCODING_VERSION,
};
use crate::bloom::wire::LoadChunk;
use crate::common::le_words::words_to_le;
use crate::common::relocate::Mover;
use crate::glue::data_type::{methods, Digest, StoredValue};
use crate::glue::host::{Io, RStr, Sink};

/// Current RDB encoding version of values being loaded (as `warden-bf`'s).
pub const LOADING_ENCODING_VERSION: i32 = BLOOM_ENCODING_VERSION;

/// The Redis data type of keys whose filter is being loaded.
pub static LOADING_TYPE: RedisType = RedisType::new(
    "warden-bl",
    LOADING_ENCODING_VERSION,
    methods::<LoadingFilter>(),
);

fn load_loading(rdb: Io, encver: i32) -> Result<Option<LoadingFilter>, Error> {
    let Some(filter) = load_filter(rdb, encver)? else {
        return Ok(None);
    };
    let loaded = rdb.load_unsigned()?;
    Ok(LoadingFilter::resume(filter, loaded).ok())
}

impl StoredValue for LoadingFilter {
    const ENCODING_VERSION: i32 = LOADING_ENCODING_VERSION;
    const OLDEST_ENCODING_VERSION: i32 = 1;

    fn redis_type() -> &'static RedisType {
        &LOADING_TYPE
    }

    fn load(rdb: Io, encver: i32) -> Option<Self> {
        load_loading(rdb, encver).ok().flatten()
    }

    fn save(&self, rdb: Io) {
        save_parts(rdb, self.parts());
        rdb.save_unsigned(self.loaded());
    }

    fn aof_rewrite(&self, aof: Sink, key: RStr) {
        let header = encode_header(self.parts());
        LoadChunk {
            iterator: HEADER_ITERATOR,
            data: &header,
        }
        .emit(aof, key);
        let layers = self.parts().layers;
        for (iterator, layer, offset, len) in self.loaded_chunks() {
            let words = &layers[layer].words()[(offset / 8) as usize..][..(len / 8) as usize];
            LoadChunk {
                iterator,
                data: &words_to_le(words),
            }
            .emit(aof, key);
        }
    }

    fn mem_usage(&self) -> usize {
        self.size() as usize
    }

    fn digest(&self, md: &mut Digest) {
        digest_parts(md, self.parts());
        md.add_int(self.loaded() as i64);
    }

    fn defrag(&mut self, m: &mut dyn Mover, cursor: u64) -> Option<u64> {
        self.relocate(cursor as usize, m).map(|next| next as u64)
    }

    fn free_effort(&self) -> usize {
        filter_effort(self.parts().layers.len(), self.size())
    }
}
