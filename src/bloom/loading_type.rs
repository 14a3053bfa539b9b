//! The `warden-bl` data type: a filter that `BF.LOADCHUNKX` is rebuilding,
//! from its header chunk to its last chunk. It is a key like any other (DEL,
//! RENAME, EXPIRE, COPY, MOVE act on it; RDB, AOF rewrite and a replica's
//! full sync keep it, so loading goes on after a restart or on a replica),
//! but never a filter that can be read: the `BF.*X` commands answer
//! `ERR filter is still being loaded` on it. After the last chunk the key
//! holds a `warden-bf` filter.
//!
//! RDB layout, encoding version 2: the filter exactly as `warden-bf` saves it
//! (the bits not loaded yet are zero), then the bytes loaded so far; loaded
//! with the same checks, plus that count (it must be where a chunk starts).
//! AOF rewrite emits the `BF.LOADCHUNKX` calls that got it there: the header,
//! then each chunk loaded so far.

use std::ffi::{c_int, c_void};

use redis_module::error::Error;
use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::bloom::core::dump::{encode_header, LoadingFilter, HEADER_ITERATOR};
use crate::bloom::data_type::{digest_parts, load_filter, save_parts, words_to_le};
use crate::bloom::wire::LoadChunk;
use crate::glue::data_type::{copy_boxed, free_boxed, methods, Callbacks};
use crate::glue::host::{api, shield, ModuleValue, Sink};

/// Current RDB encoding version of values being loaded (as `warden-bf`'s).
pub const LOADING_ENCODING_VERSION: i32 = 2;

/// The Redis data type of keys whose filter is being loaded.
pub static LOADING_TYPE: RedisType = RedisType::new(
    "warden-bl",
    LOADING_ENCODING_VERSION,
    methods(Callbacks {
        rdb_load: Some(rdb_load),
        rdb_save: Some(rdb_save),
        aof_rewrite: Some(aof_rewrite),
        mem_usage: Some(mem_usage),
        digest: Some(digest),
        free: Some(free_boxed::<LoadingFilter>),
        copy: Some(copy_boxed::<LoadingFilter>),
    }),
);

fn load(rdb: *mut raw::RedisModuleIO, encver: i32) -> Result<Option<LoadingFilter>, Error> {
    let Some(filter) = load_filter(rdb, encver)? else {
        return Ok(None);
    };
    let loaded = raw::load_unsigned(rdb)?;
    Ok(LoadingFilter::resume(filter, loaded).ok())
}

unsafe extern "C" fn rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    shield(std::ptr::null_mut(), || {
        if !(1..=LOADING_ENCODING_VERSION).contains(&encver) {
            return std::ptr::null_mut();
        }
        match load(rdb, encver) {
            Ok(Some(l)) => Box::into_raw(Box::new(l)).cast::<c_void>(),
            _ => std::ptr::null_mut(),
        }
    })
}

unsafe extern "C" fn rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    shield((), || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `LoadingFilter`.
        let l = unsafe { &*value.cast::<LoadingFilter>() };
        save_parts(rdb, l.parts());
        raw::save_unsigned(rdb, l.loaded());
    })
}

unsafe extern "C" fn aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    shield((), || {
        // SAFETY: Redis passes the value it stored for this type.
        let l = unsafe { &*value.cast::<LoadingFilter>() };
        let sink = Sink::AofRewrite(aof);
        let header = encode_header(l.parts());
        LoadChunk {
            iterator: HEADER_ITERATOR,
            data: &header,
        }
        .emit(sink, key);
        let layers = l.parts().layers;
        for (iterator, layer, offset, len) in l.loaded_chunks() {
            let words = &layers[layer].words()[(offset / 8) as usize..][..(len / 8) as usize];
            LoadChunk {
                iterator,
                data: &words_to_le(words),
            }
            .emit(sink, key);
        }
    })
}

unsafe extern "C" fn mem_usage(value: *const c_void) -> usize {
    shield(0, || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `LoadingFilter`.
        unsafe { &*value.cast::<LoadingFilter>() }.size() as usize
    })
}

unsafe extern "C" fn digest(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    shield((), || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `LoadingFilter`.
        let l = unsafe { &*value.cast::<LoadingFilter>() };
        // SAFETY: `md` is the digest Redis passed to this callback.
        unsafe {
            digest_parts(md, l.parts());
            api!(RedisModule_DigestAddLongLong)(md, l.loaded() as i64);
            api!(RedisModule_DigestEndSequence)(md);
        }
    })
}

impl ModuleValue for LoadingFilter {
    fn redis_type() -> &'static RedisType {
        &LOADING_TYPE
    }
}
