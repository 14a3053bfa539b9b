//! Module data types: persistence (RDB, AOF rewrite), digest, copy, memory.
//!
//! A type implements `StoredValue` in safe code; the callbacks Redis calls
//! are the generic ones here, and `methods::<T>()` puts them in a table.
//! Adding a callback (`defrag`, say) takes a trait method with a default, a
//! generic callback beside the others and its line in `methods`.

use std::ffi::{c_int, c_void};

use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::glue::host::{api, shield, Io, ModuleValue, RStr, Sink};

/// A Rust type stored as the values of one Redis module type, and everything
/// Redis asks of such a value. Every warden type implements all of it: Redis
/// 7.0 calls `aof_rewrite` unchecked, `digest` makes DEBUG DIGEST meaningful
/// and `copy` makes COPY work.
pub trait StoredValue: Sized + Clone + 'static {
    /// The RDB encoding version values are saved with.
    const ENCODING_VERSION: i32;
    /// The oldest encoding version still loaded; a payload may claim any
    /// version, and those outside this range are refused before `load`.
    const OLDEST_ENCODING_VERSION: i32 = Self::ENCODING_VERSION;

    /// The Redis type whose values are `Self` (and only `Self`): its methods
    /// must be `methods::<Self>()`. `Key::value` relies on it (`ModuleValue`).
    fn redis_type() -> &'static RedisType;

    /// Reads a value saved with encoding version `encver` (within the range
    /// above), validating every field, since RESTORE feeds this bytes from
    /// clients: `None` on bad data.
    fn load(rdb: Io, encver: i32) -> Option<Self>;

    /// Saves the value in the layout `load` reads.
    fn save(&self, rdb: Io);

    /// Emits the commands that rebuild the value at `key` to `aof` (an AOF
    /// rewrite's `Sink::AofRewrite`); Redis writes the key's expiry after them.
    fn aof_rewrite(&self, aof: Sink, key: RStr);

    /// Bytes the value uses (MEMORY USAGE).
    fn mem_usage(&self) -> usize;

    /// Feeds the value to DEBUG DIGEST (the callback ends the sequence).
    fn digest(&self, md: &mut Digest);

    /// The value COPY stores at the destination: a clone by default.
    fn copy(&self) -> Self {
        self.clone()
    }

    /// Undoes what a value living in the keyspace counts (gauges); runs once,
    /// just before Redis's `free` drops it.
    fn on_free(&self) {}
}

impl<T: StoredValue> ModuleValue for T {
    fn redis_type() -> &'static RedisType {
        <T as StoredValue>::redis_type()
    }
}

/// The digest of a `digest` callback, for `StoredValue::digest` to feed.
pub struct Digest(*mut raw::RedisModuleDigest);

impl Digest {
    /// Adds an integer.
    pub fn add_int(&mut self, value: i64) {
        // SAFETY: only the `digest` callback makes a `Digest`, from the live
        // digest Redis passed it, and lends it for the callback's duration.
        unsafe { api!(RedisModule_DigestAddLongLong)(self.0, value) };
    }

    /// Adds a byte string.
    pub fn add_bytes(&mut self, bytes: &[u8]) {
        // SAFETY: as in `add_int`; Redis reads `bytes` (readable for its length) during the call.
        unsafe {
            api!(RedisModule_DigestAddStringBuffer)(self.0, bytes.as_ptr().cast(), bytes.len())
        };
    }
}

/// The method table of `T`'s type: the generic callbacks below, for `T`.
pub const fn methods<T: StoredValue>() -> raw::RedisModuleTypeMethods {
    raw::RedisModuleTypeMethods {
        version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
        rdb_load: Some(rdb_load::<T>),
        rdb_save: Some(rdb_save::<T>),
        aof_rewrite: Some(aof_rewrite::<T>),
        mem_usage: Some(mem_usage::<T>),
        digest: Some(digest::<T>),
        free: Some(free::<T>),
        aux_load: None,
        aux_save: None,
        aux_save2: None,
        aux_save_triggers: 0,
        free_effort: None,
        unlink: None,
        copy: Some(copy::<T>),
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

/// The `T` behind a value Redis passed to a callback of `T`'s type.
///
/// # Safety
/// `value` is null or a value Redis stored for `T`'s type, which `methods`
/// and `Key::set_value` make a boxed `T`, alive while the callback runs.
unsafe fn stored<'a, T: StoredValue>(value: *const c_void) -> Option<&'a T> {
    // SAFETY: per this function's contract.
    unsafe { value.cast::<T>().as_ref() }
}

/// A new value handed to Redis (freed by `free::<T>`).
fn into_raw<T: StoredValue>(value: T) -> *mut c_void {
    Box::into_raw(Box::new(value)).cast::<c_void>()
}

/// `rdb_load`: a boxed `T`, or null (Redis answers `Bad data format`) for
/// an unknown encoding version or bad data.
unsafe extern "C" fn rdb_load<T: StoredValue>(
    rdb: *mut raw::RedisModuleIO,
    encver: c_int,
) -> *mut c_void {
    shield(std::ptr::null_mut(), || {
        if !(T::OLDEST_ENCODING_VERSION..=T::ENCODING_VERSION).contains(&encver) {
            return std::ptr::null_mut();
        }
        // SAFETY: the stream Redis passed this callback, used while it runs.
        let rdb = unsafe { Io::from_raw(rdb) };
        T::load(rdb, encver).map_or(std::ptr::null_mut(), into_raw)
    })
}

/// `rdb_save`. Safety: Redis passes a value of `T`'s type and a live IO.
unsafe extern "C" fn rdb_save<T: StoredValue>(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    shield((), || {
        // SAFETY: the stream Redis passed this callback, used while it runs.
        let rdb = unsafe { Io::from_raw(rdb) };
        // SAFETY: Redis passes a value it stored for `T`'s type.
        if let Some(value) = unsafe { stored::<T>(value) } {
            value.save(rdb);
        }
    })
}

/// `aof_rewrite`. Safety: as `rdb_save`, and `key` is the value's live key name.
unsafe extern "C" fn aof_rewrite<T: StoredValue>(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    shield((), || {
        // SAFETY: the value's key name, which Redis keeps alive and unchanged
        // while this callback runs.
        let key = unsafe { RStr::from_raw(key) };
        // SAFETY: the stream Redis passed this callback, used while it runs.
        let aof = unsafe { Io::from_raw(aof) };
        // SAFETY: Redis passes a value it stored for `T`'s type.
        if let Some(value) = unsafe { stored::<T>(value) } {
            value.aof_rewrite(Sink::AofRewrite(aof), key);
        }
    })
}

/// `mem_usage`. Safety: Redis passes a value of `T`'s type.
unsafe extern "C" fn mem_usage<T: StoredValue>(value: *const c_void) -> usize {
    shield(0, || {
        // SAFETY: Redis passes a value it stored for `T`'s type.
        unsafe { stored::<T>(value) }.map_or(0, T::mem_usage)
    })
}

/// `digest`: the value's fields, then the end of its sequence. Safety: Redis
/// passes a value of `T`'s type and a live digest.
unsafe extern "C" fn digest<T: StoredValue>(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    shield((), || {
        // SAFETY: Redis passes a value it stored for `T`'s type.
        let Some(value) = (unsafe { stored::<T>(value) }) else {
            return;
        };
        value.digest(&mut Digest(md));
        // SAFETY: `md` is the live digest Redis passed to this callback.
        unsafe { api!(RedisModule_DigestEndSequence)(md) };
    })
}

/// `free`: runs `on_free`, then drops the value. Safety: Redis frees a value
/// of `T`'s type, once.
unsafe extern "C" fn free<T: StoredValue>(value: *mut c_void) {
    if value.is_null() {
        return;
    }
    shield((), || {
        // SAFETY: Redis frees a value it stored for `T`'s type (a boxed `T`), once.
        let value = unsafe { Box::from_raw(value.cast::<T>()) };
        value.on_free();
    })
}

/// `copy` (COPY): a boxed `StoredValue::copy`. Safety: Redis passes a value
/// of `T`'s type.
unsafe extern "C" fn copy<T: StoredValue>(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    shield(std::ptr::null_mut(), || {
        // SAFETY: Redis passes a value it stored for `T`'s type.
        unsafe { stored::<T>(value) }.map_or(std::ptr::null_mut(), |v| into_raw(v.copy()))
    })
}
