//! The `warden-lk` data type: one held lock (owner, token, holds, deadline).
//!
//! RDB layout, encoding version 1: owner (string buffer), token (signed),
//! holds (signed), deadline in Unix ms (signed). Every field is validated on
//! load because RESTORE feeds this code bytes from clients.
//! The type also carries the module's fencing floor as RDB aux data
//! (`fence::aux_save`): one signed integer before the keys.
//!
//! The lease is the key's expiry: the stored deadline is only what it was at
//! the last lock command (the command glue reads the expiry). So digest, AOF
//! rewrite and RDB leave it out: Redis digests and saves the expiry itself,
//! and writes a `PEXPIREAT` after the `DLOCK._SET … NO_DEADLINE` the rewrite
//! emits. RDB and `DUMP` save `NO_DEADLINE` in its place, so a read that
//! brought the cached deadline up to date (after `PERSIST`, say) on the master
//! only leaves the same bytes as on a replica.

use std::ffi::{c_int, c_void};

use redis_module::error::Error;
use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::common::compact_bytes::CompactBytes;
use crate::glue::data_type::{copy_boxed, free_boxed, methods, with_aux, Callbacks};
use crate::glue::fence::{self, observe_token};
use crate::glue::host::{api, shield, ModuleValue, Sink};
use crate::lock::core::plain::{LockState, NO_DEADLINE};
use crate::lock::wire::SetLock;

/// Current RDB encoding version of lock values.
pub const LOCK_ENCODING_VERSION: i32 = 1;

/// Longest owner accepted from storage (the command path has no limit beyond
/// Redis's own argument size, but a forged payload must not claim gigabytes).
const MAX_STORED_OWNER_BYTES: usize = 512 * 1024 * 1024;

/// The Redis data type of lock keys.
pub static LOCK_TYPE: RedisType = RedisType::new(
    "warden-lk",
    LOCK_ENCODING_VERSION,
    with_aux(
        methods(Callbacks {
            rdb_load: Some(rdb_load),
            rdb_save: Some(rdb_save),
            aof_rewrite: Some(aof_rewrite),
            mem_usage: Some(mem_usage),
            digest: Some(digest),
            free: Some(free_boxed::<LockState>),
            copy: Some(copy_boxed::<LockState>),
        }),
        Some(fence::aux_load),
        Some(fence::aux_save),
    ),
);

/// Loads one lock state (owner, token, holds, deadline): a plain lock's value
/// and each holder of a lock set (`set_type`). Validation is the caller's.
pub(super) fn load_state(rdb: *mut raw::RedisModuleIO) -> Result<LockState, Error> {
    let owner = raw::load_string_buffer(rdb)?;
    if owner.as_ref().len() > MAX_STORED_OWNER_BYTES {
        return Err(Error::generic("owner too long"));
    }
    let owner = CompactBytes::from(owner.as_ref());
    let token = raw::load_signed(rdb)?;
    let holds = raw::load_signed(rdb)?;
    let deadline_ms = raw::load_signed(rdb)?;
    Ok(LockState {
        owner,
        token,
        holds,
        deadline_ms,
    })
}

unsafe extern "C" fn rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    shield(std::ptr::null_mut(), || {
        if encver != LOCK_ENCODING_VERSION {
            return std::ptr::null_mut();
        }
        match load_state(rdb) {
            Ok(state) if state.validate().is_ok() => {
                observe_token(state.token);
                Box::into_raw(Box::new(state)).cast::<c_void>()
            }
            _ => std::ptr::null_mut(),
        }
    })
}

unsafe extern "C" fn rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    shield((), || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `LockState`.
        let state = unsafe { &*value.cast::<LockState>() };
        save_state(rdb, state, NO_DEADLINE);
    })
}

/// Saves one lock state in the layout `load_state` reads, with the deadline
/// `deadline_ms` (a set holder's own; `NO_DEADLINE` for a plain lock, whose
/// lease is the key's expiry).
pub(super) fn save_state(rdb: *mut raw::RedisModuleIO, state: &LockState, deadline_ms: i64) {
    raw::save_slice(rdb, &state.owner);
    raw::save_signed(rdb, state.token);
    raw::save_signed(rdb, state.holds);
    raw::save_signed(rdb, deadline_ms);
}

unsafe extern "C" fn aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    shield((), || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `LockState`.
        let stored = unsafe { &*value.cast::<LockState>() };
        let state = LockState {
            deadline_ms: NO_DEADLINE,
            ..stored.clone()
        };
        SetLock::emit(&state, Sink::AofRewrite(aof), key, None);
    })
}

unsafe extern "C" fn mem_usage(value: *const c_void) -> usize {
    shield(0, || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `LockState`.
        let state = unsafe { &*value.cast::<LockState>() };
        std::mem::size_of::<LockState>() + state.owner.heap_bytes()
    })
}

unsafe extern "C" fn digest(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    shield((), || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `LockState`.
        let state = unsafe { &*value.cast::<LockState>() };
        // SAFETY: `md` is the digest Redis passed; the owner bytes outlive the call.
        unsafe {
            api!(RedisModule_DigestAddStringBuffer)(
                md,
                state.owner.as_ptr().cast(),
                state.owner.len(),
            );
            api!(RedisModule_DigestAddLongLong)(md, state.token);
            api!(RedisModule_DigestAddLongLong)(md, state.holds);
            api!(RedisModule_DigestEndSequence)(md);
        }
    })
}

impl ModuleValue for LockState {
    fn redis_type() -> &'static RedisType {
        &LOCK_TYPE
    }
}
