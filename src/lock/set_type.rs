//! The `warden-ls` data type: a lock with several holders (`SHARED` read
//! holders or a `LIMIT n` semaphore), each with its own lease.
//!
//! RDB layout, encoding version 1: limit (unsigned, 0 = shared), floor token
//! (signed), holder count (unsigned), then per holder a plain lock's layout
//! (`data_type::save_state`): owner (string buffer), token, holds and
//! deadline in Unix ms (signed). Every field is validated on
//! load because RESTORE feeds this code bytes from clients.
//!
//! Unlike a plain lock, each holder's deadline is data (the key's expiry is
//! the last of them), so digest and AOF rewrite include the deadlines.

use std::ffi::{c_int, c_void};

use redis_module::error::Error;
use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::glue::data_type::{copy_boxed, free_boxed, methods, Callbacks};
use crate::glue::fence::observe_token;
use crate::glue::host::{api, shield, ModuleValue, Sink};
use crate::lock::core::plain::LockState;
use crate::lock::core::set::{LockSet, SetKind, MAX_LIMIT};
use crate::lock::data_type::{load_state, save_state};
use crate::lock::set_wire::SetLocks;

/// Current RDB encoding version of lock sets.
pub const LOCK_SET_ENCODING_VERSION: i32 = 1;

/// Most holders a stored set may claim (a semaphore's limit bounds its own).
const MAX_STORED_HOLDERS: u64 = MAX_LIMIT as u64;

/// The Redis data type of lock keys with several holders.
pub static LOCK_SET_TYPE: RedisType = RedisType::new(
    "warden-ls",
    LOCK_SET_ENCODING_VERSION,
    methods(Callbacks {
        rdb_load: Some(rdb_load),
        rdb_save: Some(rdb_save),
        aof_rewrite: Some(aof_rewrite),
        mem_usage: Some(mem_usage),
        digest: Some(digest),
        free: Some(free_boxed::<LockSet>),
        copy: Some(copy_boxed::<LockSet>),
    }),
);

fn load_set(rdb: *mut raw::RedisModuleIO) -> Result<LockSet, Error> {
    let limit = raw::load_unsigned(rdb)?;
    let kind = match limit {
        0 => SetKind::Shared,
        n if n <= MAX_LIMIT as u64 => SetKind::Limit(n as u32),
        _ => return Err(Error::generic("limit out of range")),
    };
    let floor = raw::load_signed(rdb)?;
    let count = raw::load_unsigned(rdb)?;
    if count > MAX_STORED_HOLDERS {
        return Err(Error::generic("too many holders"));
    }
    if count == 0 {
        // The module deletes a set whose last holder leaves.
        return Err(Error::generic("a lock set without holders"));
    }
    let mut set = LockSet::new(kind, floor);
    for _ in 0..count {
        set.holders.push(load_state(rdb)?);
    }
    Ok(set)
}

unsafe extern "C" fn rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    shield(std::ptr::null_mut(), || {
        if encver != LOCK_SET_ENCODING_VERSION {
            return std::ptr::null_mut();
        }
        match load_set(rdb) {
            Ok(set) if set.validate().is_ok() => {
                observe_token(set.floor);
                Box::into_raw(Box::new(set)).cast::<c_void>()
            }
            _ => std::ptr::null_mut(),
        }
    })
}

unsafe extern "C" fn rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    shield((), || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `LockSet`.
        let set = unsafe { &*value.cast::<LockSet>() };
        let limit = match set.kind {
            SetKind::Shared => 0,
            SetKind::Limit(n) => u64::from(n),
        };
        raw::save_unsigned(rdb, limit);
        raw::save_signed(rdb, set.floor);
        raw::save_unsigned(rdb, set.holders.len() as u64);
        for h in &set.holders {
            save_state(rdb, h, h.deadline_ms);
        }
    })
}

unsafe extern "C" fn aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    shield((), || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `LockSet`.
        let set = unsafe { &*value.cast::<LockSet>() };
        // The rewrite leaves the expiry to the PEXPIREAT Redis writes after it.
        SetLocks::emit(set, None, Sink::AofRewrite(aof), key);
    })
}

unsafe extern "C" fn mem_usage(value: *const c_void) -> usize {
    shield(0, || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `LockSet`.
        let set = unsafe { &*value.cast::<LockSet>() };
        std::mem::size_of::<LockSet>()
            + set.holders.capacity() * std::mem::size_of::<LockState>()
            + set
                .holders
                .iter()
                .map(|h| h.owner.heap_bytes())
                .sum::<usize>()
    })
}

unsafe extern "C" fn digest(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    shield((), || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `LockSet`.
        let set = unsafe { &*value.cast::<LockSet>() };
        let limit = match set.kind {
            SetKind::Shared => 0,
            SetKind::Limit(n) => i64::from(n),
        };
        // SAFETY: `md` is the digest Redis passed; the owner bytes outlive the call.
        unsafe {
            api!(RedisModule_DigestAddLongLong)(md, limit);
            api!(RedisModule_DigestAddLongLong)(md, set.floor);
            for h in &set.holders {
                api!(RedisModule_DigestAddStringBuffer)(md, h.owner.as_ptr().cast(), h.owner.len());
                api!(RedisModule_DigestAddLongLong)(md, h.token);
                api!(RedisModule_DigestAddLongLong)(md, h.holds);
                api!(RedisModule_DigestAddLongLong)(md, h.deadline_ms);
            }
            api!(RedisModule_DigestEndSequence)(md);
        }
    })
}

impl ModuleValue for LockSet {
    fn redis_type() -> &'static RedisType {
        &LOCK_SET_TYPE
    }
}
