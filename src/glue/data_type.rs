//! Module data types: persistence (RDB, AOF rewrite), digest, copy, memory.

use std::ffi::c_void;

use redis_module::raw;

use crate::glue::host::shield;

/// The callbacks every warden type implements: all of them, because Redis
/// 7.0 calls `aof_rewrite` unchecked, `digest` makes DEBUG DIGEST meaningful
/// and `copy` makes COPY work.
pub struct Callbacks {
    /// Loads a value, validating every field (null on bad data).
    pub rdb_load: raw::RedisModuleTypeLoadFunc,
    /// Saves a value.
    pub rdb_save: raw::RedisModuleTypeSaveFunc,
    /// Emits the commands that rebuild a value.
    pub aof_rewrite: raw::RedisModuleTypeRewriteFunc,
    /// Bytes a value uses.
    pub mem_usage: raw::RedisModuleTypeMemUsageFunc,
    /// Feeds a value to DEBUG DIGEST.
    pub digest: raw::RedisModuleTypeDigestFunc,
    /// Frees a value.
    pub free: raw::RedisModuleTypeFreeFunc,
    /// Copies a value for COPY.
    pub copy: raw::RedisModuleTypeCopyFunc,
}

/// The type-method table for `callbacks`.
pub const fn methods(callbacks: Callbacks) -> raw::RedisModuleTypeMethods {
    raw::RedisModuleTypeMethods {
        version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
        rdb_load: callbacks.rdb_load,
        rdb_save: callbacks.rdb_save,
        aof_rewrite: callbacks.aof_rewrite,
        mem_usage: callbacks.mem_usage,
        digest: callbacks.digest,
        free: callbacks.free,
        aux_load: None,
        aux_save: None,
        aux_save2: None,
        aux_save_triggers: 0,
        free_effort: None,
        unlink: None,
        copy: callbacks.copy,
        defrag: None,
        copy2: None,
        free_effort2: None,
        mem_usage2: None,
        unlink2: None,
    }
}

/// `table` with RDB aux data saved before the keys by `save` and read by
/// `load` (one type carries the module's own state this way).
pub const fn with_aux(
    mut table: raw::RedisModuleTypeMethods,
    load: raw::RedisModuleTypeAuxLoadFunc,
    save: raw::RedisModuleTypeAuxSaveFunc,
) -> raw::RedisModuleTypeMethods {
    table.aux_load = load;
    table.aux_save = save;
    table.aux_save_triggers = raw::REDISMODULE_AUX_BEFORE_RDB as i32;
    table
}

/// `free` for a type whose values are boxed `T`s with nothing else to undo.
///
/// # Safety
/// Called by Redis with a value it stored for a type whose values are boxed `T`s.
pub unsafe extern "C" fn free_boxed<T>(value: *mut c_void) {
    if !value.is_null() {
        // SAFETY: per this function's contract, once.
        drop(unsafe { Box::from_raw(value.cast::<T>()) });
    }
}

/// `copy` (COPY) for a type whose values are boxed `T`s: a clone.
///
/// # Safety
/// As `free_boxed`.
pub unsafe extern "C" fn copy_boxed<T: Clone>(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    shield(std::ptr::null_mut(), || {
        // SAFETY: per this function's contract.
        let copy = unsafe { &*value.cast::<T>() }.clone();
        Box::into_raw(Box::new(copy)).cast::<c_void>()
    })
}
