//! The `warden-ch` data type: one cache entry (value, version, fresh and
//! stale ends, refresh lease).
//!
//! RDB layout, encoding version 1: has value (unsigned 0/1), the value
//! (string buffer, when it has one), version, fresh end, stale end, lease
//! token and lease end (signed; 0 and 0 without a lease). Every field is
//! validated on load because RESTORE feeds this code bytes from clients.
//! HOT read counts are the master's working state: not saved, digested or
//! copied to replicas.

use std::ffi::{c_int, c_void};

use redis_module::error::Error;
use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::cache::core::{CacheEntry, Lease, Meta};
use crate::cache::wire::{emit_entry, emit_meta, Expiry};
use crate::common::thin_bytes::ThinBytes;
use crate::glue::data_type::{copy_boxed, free_boxed, methods, Callbacks};
use crate::glue::fence::observe_token;
use crate::glue::host::{api, shield, ModuleValue, Sink};

/// Current RDB encoding version of cache values.
pub const CACHE_ENCODING_VERSION: i32 = 1;

/// Longest value accepted from storage: Redis's own string limit (a forged
/// payload must not claim more; `cache-max-value-bytes` caps what clients
/// store).
pub const MAX_STORED_VALUE_BYTES: usize = 512 * 1024 * 1024;

/// The Redis data type of cache keys.
pub static CACHE_TYPE: RedisType = RedisType::new(
    "warden-ch",
    CACHE_ENCODING_VERSION,
    methods(Callbacks {
        rdb_load: Some(rdb_load),
        rdb_save: Some(rdb_save),
        aof_rewrite: Some(aof_rewrite),
        mem_usage: Some(mem_usage),
        digest: Some(digest),
        free: Some(free_boxed::<CacheEntry>),
        copy: Some(copy_boxed::<CacheEntry>),
    }),
);

fn load_entry(rdb: *mut raw::RedisModuleIO) -> Result<CacheEntry, Error> {
    let bad = || Error::generic("invalid cache entry");
    let value = match raw::load_unsigned(rdb)? {
        0 => None,
        1 => {
            let value = raw::load_string_buffer(rdb)?;
            if value.as_ref().len() > MAX_STORED_VALUE_BYTES {
                return Err(bad());
            }
            Some(ThinBytes::from(value.as_ref()))
        }
        _ => return Err(bad()),
    };
    let version = raw::load_signed(rdb)?;
    let fresh_until = raw::load_signed(rdb)?;
    let stale_until = raw::load_signed(rdb)?;
    let token = raw::load_signed(rdb)?;
    let until_ms = raw::load_signed(rdb)?;
    let lease = match (token, until_ms) {
        (0, 0) => None,
        (token, until_ms) => Some(Lease { token, until_ms }),
    };
    let meta = Meta {
        version,
        fresh_until,
        stale_until,
        lease,
    };
    meta.validate(value.is_some()).map_err(|_| bad())?;
    let mut entry = CacheEntry {
        value,
        ..CacheEntry::default()
    };
    entry.apply_meta(&meta);
    Ok(entry)
}

unsafe extern "C" fn rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    shield(std::ptr::null_mut(), || {
        if encver != CACHE_ENCODING_VERSION {
            return std::ptr::null_mut();
        }
        match load_entry(rdb) {
            Ok(entry) => {
                if let Some(lease) = entry.lease.as_deref() {
                    observe_token(lease.token);
                }
                Box::into_raw(Box::new(entry)).cast::<c_void>()
            }
            Err(_) => std::ptr::null_mut(),
        }
    })
}

unsafe extern "C" fn rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    shield((), || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `CacheEntry`.
        let entry = unsafe { &*value.cast::<CacheEntry>() };
        match &entry.value {
            Some(v) => {
                raw::save_unsigned(rdb, 1);
                raw::save_slice(rdb, v);
            }
            None => raw::save_unsigned(rdb, 0),
        }
        let lease = entry.lease.as_deref().copied().unwrap_or(Lease {
            token: 0,
            until_ms: 0,
        });
        for field in [
            entry.version,
            entry.fresh_until,
            entry.stale_until,
            lease.token,
            lease.until_ms,
        ] {
            raw::save_signed(rdb, field);
        }
    })
}

unsafe extern "C" fn aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    shield((), || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `CacheEntry`.
        let entry = unsafe { &*value.cast::<CacheEntry>() };
        let sink = Sink::AofRewrite(aof);
        // Redis writes the key's own PEXPIREAT after this, if it has one.
        match &entry.value {
            Some(v) => emit_entry(sink, key, v, None, &entry.meta(), Expiry::Persist),
            None => emit_meta(sink, key, &entry.meta(), Expiry::Persist),
        }
    })
}

unsafe extern "C" fn mem_usage(value: *const c_void) -> usize {
    shield(0, || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `CacheEntry`.
        let entry = unsafe { &*value.cast::<CacheEntry>() };
        std::mem::size_of::<CacheEntry>() + entry.heap_bytes()
    })
}

unsafe extern "C" fn digest(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    shield((), || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `CacheEntry`.
        let entry = unsafe { &*value.cast::<CacheEntry>() };
        let meta = entry.meta();
        let lease = meta.lease.unwrap_or(Lease {
            token: 0,
            until_ms: 0,
        });
        let bytes: &[u8] = entry.value.as_deref().unwrap_or(b"");
        // SAFETY: `md` is the digest Redis passed; the bytes outlive the call.
        unsafe {
            api!(RedisModule_DigestAddLongLong)(md, i64::from(entry.value.is_some()));
            api!(RedisModule_DigestAddStringBuffer)(md, bytes.as_ptr().cast(), bytes.len());
            for field in [
                meta.version,
                meta.fresh_until,
                meta.stale_until,
                lease.token,
                lease.until_ms,
            ] {
                api!(RedisModule_DigestAddLongLong)(md, field);
            }
            api!(RedisModule_DigestEndSequence)(md);
        }
    })
}

impl ModuleValue for CacheEntry {
    fn redis_type() -> &'static RedisType {
        &CACHE_TYPE
    }
}
