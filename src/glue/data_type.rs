//! Module data types: persistence (RDB, AOF rewrite), digest, copy, memory,
//! active defragmentation.
//!
//! A type implements `StoredValue` in safe code; the callbacks Redis calls
//! are the generic ones here, and `methods::<T>()` puts them in a table.
//! Adding a callback (`defrag`, say) takes a trait method with a default, a
//! generic callback beside the others and its line in `methods`.

use std::alloc::Layout;
use std::ffi::{c_int, c_ulong, c_void};
use std::ptr::NonNull;

use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::common::relocate::Mover;
use crate::glue::alloc::NATURAL_ALIGN;
use crate::glue::host::{api, shield, Io, ModuleValue, RStr, Sink};
use crate::glue::stats::{count, DEFRAG_MOVED, DEFRAG_PAUSED};

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

    /// Offers the value's own heap blocks (not the value itself: the
    /// callback moves that) to `m` for active defragmentation, starting at
    /// `cursor` (0 at the start of a pass). `Some(cursor)` asks to be called
    /// again from there: only a value whose `free_effort` exceeds the
    /// server's `active-defrag-max-scan-fields` is walked in steps, and
    /// `m.should_stop()` only answers true in such a step. The default, for
    /// a value with no heap block of its own: nothing more to move.
    fn defrag(&mut self, _m: &mut dyn Mover, _cursor: u64) -> Option<u64> {
        None
    }

    /// The work of freeing the value (about one unit per allocation, and per
    /// 16 KiB of a large one): above `active-defrag-max-scan-fields` Redis
    /// defragments it in steps, above 64 a lazy free (UNLINK, FLUSHALL
    /// ASYNC) frees it in a background thread. 1, Redis's own default for a
    /// type without the callback, unless a type says otherwise.
    fn free_effort(&self) -> usize {
        1
    }

    /// Undoes what a value living in the keyspace counts (gauges); runs once,
    /// just before Redis's `free` drops it.
    fn on_free(&self) {}

    /// Whether `on_unlink` wants to hear that this value leaves its key
    /// (asked first: the key's name is read only for a value that does).
    fn notices_unlink(&self) -> bool {
        false
    }

    /// The value leaves key `key` of database `db` (deleted, expired,
    /// evicted or overwritten; not on a flush): only for a type whose table
    /// is `with_unlink`'s, and a value that `notices_unlink`.
    fn on_unlink(&self, _key: &[u8], _db: c_int) {}
}

impl<T: StoredValue> ModuleValue for T {
    fn redis_type() -> &'static RedisType {
        <T as StoredValue>::redis_type()
    }

    unsafe fn from_raw<'a>(value: *mut c_void) -> Option<&'a mut T> {
        // SAFETY: per the contract, a boxed `T` (the default `into_raw`).
        unsafe { value.cast::<T>().as_mut() }
    }
}

/// What the callbacks of `methods` ask of a type: every `StoredValue` (a
/// boxed `T`), or a type of variable size that implements it itself (its
/// values are one block of its own layout). The methods are
/// `StoredValue`'s, with boxed values where a `T` is made.
pub trait Stored: ModuleValue {
    /// `StoredValue::ENCODING_VERSION`.
    const ENCODING_VERSION: i32;
    /// `StoredValue::OLDEST_ENCODING_VERSION`.
    const OLDEST_ENCODING_VERSION: i32;
    /// `StoredValue::load`, boxed.
    fn load_boxed(rdb: Io, encver: i32) -> Option<Box<Self>>;
    /// `StoredValue::save`.
    fn save(&self, rdb: Io);
    /// `StoredValue::aof_rewrite`.
    fn aof_rewrite(&self, aof: Sink, key: RStr);
    /// `StoredValue::mem_usage`.
    fn mem_usage(&self) -> usize;
    /// `StoredValue::digest`.
    fn digest(&self, md: &mut Digest);
    /// `StoredValue::copy`, boxed.
    fn copy_boxed(&self) -> Box<Self>;
    /// `StoredValue::defrag`.
    fn defrag(&mut self, _m: &mut dyn Mover, _cursor: u64) -> Option<u64> {
        None
    }
    /// `StoredValue::free_effort`.
    fn free_effort(&self) -> usize {
        1
    }
    /// `StoredValue::on_free`.
    fn on_free(&self) {}
    /// `StoredValue::notices_unlink`.
    fn notices_unlink(&self) -> bool {
        false
    }
    /// `StoredValue::on_unlink`.
    fn on_unlink(&self, _key: &[u8], _db: c_int) {}
}

impl<T: StoredValue> Stored for T {
    const ENCODING_VERSION: i32 = <T as StoredValue>::ENCODING_VERSION;
    const OLDEST_ENCODING_VERSION: i32 = <T as StoredValue>::OLDEST_ENCODING_VERSION;

    fn load_boxed(rdb: Io, encver: i32) -> Option<Box<T>> {
        T::load(rdb, encver).map(Box::new)
    }

    fn save(&self, rdb: Io) {
        StoredValue::save(self, rdb);
    }

    fn aof_rewrite(&self, aof: Sink, key: RStr) {
        StoredValue::aof_rewrite(self, aof, key);
    }

    fn mem_usage(&self) -> usize {
        StoredValue::mem_usage(self)
    }

    fn digest(&self, md: &mut Digest) {
        StoredValue::digest(self, md);
    }

    fn copy_boxed(&self) -> Box<T> {
        Box::new(self.copy())
    }

    fn defrag(&mut self, m: &mut dyn Mover, cursor: u64) -> Option<u64> {
        StoredValue::defrag(self, m, cursor)
    }

    fn free_effort(&self) -> usize {
        StoredValue::free_effort(self)
    }

    fn on_free(&self) {
        StoredValue::on_free(self);
    }

    fn notices_unlink(&self) -> bool {
        StoredValue::notices_unlink(self)
    }

    fn on_unlink(&self, key: &[u8], db: c_int) {
        StoredValue::on_unlink(self, key, db);
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
pub const fn methods<T: Stored + ?Sized>() -> raw::RedisModuleTypeMethods {
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
        free_effort: Some(free_effort::<T>),
        unlink: None,
        copy: Some(copy::<T>),
        defrag: Some(defrag::<T>),
        copy2: None,
        free_effort2: None,
        mem_usage2: None,
        unlink2: None,
    }
}

/// `table` with RDB aux data saved before the keys by `save` (or, where the
/// server has `aux_save2`, by `save2`, which may write nothing: then the
/// RDB holds no aux field of the module) and read by `load` (one type
/// carries the module's own state this way).
pub const fn with_aux(
    mut table: raw::RedisModuleTypeMethods,
    load: raw::RedisModuleTypeAuxLoadFunc,
    (save, save2): (
        raw::RedisModuleTypeAuxSaveFunc,
        raw::RedisModuleTypeAuxSaveFunc,
    ),
) -> raw::RedisModuleTypeMethods {
    table.aux_load = load;
    table.aux_save = save;
    table.aux_save2 = save2;
    table.aux_save_triggers = raw::REDISMODULE_AUX_BEFORE_RDB as i32;
    table
}

/// `table` with `T::on_unlink` called when a value leaves its key.
pub const fn with_unlink<T: Stored + ?Sized>(
    mut table: raw::RedisModuleTypeMethods,
) -> raw::RedisModuleTypeMethods {
    table.unlink2 = Some(unlink2::<T>);
    table
}

/// The `T` behind a value Redis passed to a callback of `T`'s type.
///
/// # Safety
/// `value` is null or a value Redis stored for `T`'s type, which `methods`
/// and `Key::set_value` make a `T` from `T::into_raw`, alive while the
/// callback runs.
unsafe fn stored<'a, T: Stored + ?Sized>(value: *const c_void) -> Option<&'a T> {
    // SAFETY: per this function's contract; only read through.
    unsafe { T::from_raw(value.cast_mut()) }.map(|v| &*v)
}

/// `rdb_load`: a boxed `T`, or null (Redis answers `Bad data format`) for
/// an unknown encoding version or bad data.
unsafe extern "C" fn rdb_load<T: Stored + ?Sized>(
    rdb: *mut raw::RedisModuleIO,
    encver: c_int,
) -> *mut c_void {
    shield(std::ptr::null_mut(), || {
        if !(T::OLDEST_ENCODING_VERSION..=T::ENCODING_VERSION).contains(&encver) {
            return std::ptr::null_mut();
        }
        // SAFETY: the stream Redis passed this callback, used while it runs.
        let rdb = unsafe { Io::from_raw(rdb) };
        T::load_boxed(rdb, encver).map_or(std::ptr::null_mut(), T::into_raw)
    })
}

/// `rdb_save`. Safety: Redis passes a value of `T`'s type and a live IO.
unsafe extern "C" fn rdb_save<T: Stored + ?Sized>(
    rdb: *mut raw::RedisModuleIO,
    value: *mut c_void,
) {
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
unsafe extern "C" fn aof_rewrite<T: Stored + ?Sized>(
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
unsafe extern "C" fn mem_usage<T: Stored + ?Sized>(value: *const c_void) -> usize {
    shield(0, || {
        // SAFETY: Redis passes a value it stored for `T`'s type.
        unsafe { stored::<T>(value) }.map_or(0, T::mem_usage)
    })
}

/// `digest`: the value's fields, then the end of its sequence. Safety: Redis
/// passes a value of `T`'s type and a live digest.
unsafe extern "C" fn digest<T: Stored + ?Sized>(
    md: *mut raw::RedisModuleDigest,
    value: *mut c_void,
) {
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
unsafe extern "C" fn free<T: Stored + ?Sized>(value: *mut c_void) {
    if value.is_null() {
        return;
    }
    shield((), || {
        // SAFETY: Redis frees a value it stored for `T`'s type (from
        // `T::into_raw`), once: the box is taken back and dropped.
        let Some(value) = (unsafe { T::from_raw(value) }) else {
            return;
        };
        // SAFETY: the reference is the whole boxed value `into_raw` gave up.
        let value = unsafe { Box::from_raw(value as *mut T) };
        value.on_free();
    })
}

/// `copy` (COPY): a boxed `StoredValue::copy`. Safety: Redis passes a value
/// of `T`'s type.
unsafe extern "C" fn copy<T: Stored + ?Sized>(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    shield(std::ptr::null_mut(), || {
        // SAFETY: Redis passes a value it stored for `T`'s type.
        unsafe { stored::<T>(value) }.map_or(std::ptr::null_mut(), |v| T::into_raw(v.copy_boxed()))
    })
}

/// `unlink2`: `Stored::on_unlink` with the key's name and database.
/// Safety: Redis passes a key context and a value of `T`'s type.
unsafe extern "C" fn unlink2<T: Stored + ?Sized>(
    ctx: *mut raw::RedisModuleKeyOptCtx,
    value: *const c_void,
) {
    shield((), || {
        // SAFETY: Redis passes a value it stored for `T`'s type.
        let Some(value) = (unsafe { stored::<T>(value) }).filter(|v| v.notices_unlink()) else {
            return;
        };
        // SAFETY: the key context Redis passed, alive while the callback runs.
        let (name, db) = unsafe {
            (
                api!(RedisModule_GetKeyNameFromOptCtx)(ctx),
                api!(RedisModule_GetDbIdFromOptCtx)(ctx),
            )
        };
        if name.is_null() {
            return;
        }
        // SAFETY: the key's name, a live string for the callback's duration.
        let key = unsafe { RStr::from_raw(name.cast_mut()) };
        value.on_unlink(key.bytes(), db);
    })
}

/// `free_effort`. Safety: Redis passes a value of `T`'s type.
unsafe extern "C" fn free_effort<T: Stored + ?Sized>(
    _key: *mut raw::RedisModuleString,
    value: *const c_void,
) -> usize {
    shield(1, || {
        // SAFETY: Redis passes a value it stored for `T`'s type.
        unsafe { stored::<T>(value) }.map_or(1, |v| v.free_effort().max(1))
    })
}

/// The `Mover` of a defrag callback: Redis's `RedisModule_DefragAlloc`.
struct DefragMover(*mut raw::RedisModuleDefragCtx);

// SAFETY: every block of the global allocator (`glue::alloc::WardenAlloc`)
// comes from Redis's allocator. `RedisModule_DefragAlloc` returns NULL and
// leaves the block alone, or copies its whole usable size into a new block of
// the same jemalloc size class (so the same size and alignment, valid for the
// block's layout with Redis's free and realloc), frees the old one and
// returns the new one. A server without it moves nothing.
unsafe impl Mover for DefragMover {
    fn relocate(&mut self, block: NonNull<u8>, layout: Layout) -> Option<NonNull<u8>> {
        // A block aligned beyond what every jemalloc block has might lose its
        // alignment in the move: it stays (no warden value has one today).
        if layout.align() > NATURAL_ALIGN {
            return None;
        }
        // SAFETY: the pointer is filled in once at module load and only read.
        let defrag_alloc = unsafe { raw::RedisModule_DefragAlloc }?;
        // SAFETY: the live defrag context of the running callback, and a
        // live block of Redis's allocator (per `Mover`'s contract).
        let new = NonNull::new(unsafe { defrag_alloc(self.0, block.as_ptr().cast()) })?;
        count(&DEFRAG_MOVED);
        Some(new.cast())
    }

    fn should_stop(&mut self) -> bool {
        // SAFETY: the pointer is filled in once at module load and only read.
        let Some(should_stop) = (unsafe { raw::RedisModule_DefragShouldStop }) else {
            return false;
        };
        // SAFETY: the live defrag context of the running callback.
        unsafe { should_stop(self.0) != 0 }
    }
}

impl DefragMover {
    /// The cursor of a step of a value defragmented in steps (`None` when
    /// the value is defragmented at once, in one call).
    fn cursor(&self) -> Option<u64> {
        // SAFETY: the pointer is filled in once at module load and only read.
        let get = unsafe { raw::RedisModule_DefragCursorGet }?;
        let mut cursor: c_ulong = 0;
        // SAFETY: the live defrag context and a local to write to.
        let status = unsafe { get(self.0, &mut cursor) };
        (status == raw::REDISMODULE_OK as c_int).then_some(cursor)
    }

    /// Stores the cursor to resume at; false when the value is not walked in steps.
    fn set_cursor(&self, cursor: u64) -> bool {
        // SAFETY: the pointer is filled in once at module load and only read.
        let Some(set) = (unsafe { raw::RedisModule_DefragCursorSet }) else {
            return false;
        };
        // SAFETY: the live defrag context of the running callback.
        unsafe { set(self.0, cursor as c_ulong) == raw::REDISMODULE_OK as c_int }
    }
}

/// `defrag` (active defragmentation): moves the value's box (at the start of
/// a pass) and then what `StoredValue::defrag` offers; 1 asks Redis to call
/// again (a value walked in steps), 0 when done. Safety: Redis passes a live
/// defrag context and the address of the key's value, of `T`'s type, which
/// it reads back after the call.
unsafe extern "C" fn defrag<T: Stored + ?Sized>(
    ctx: *mut raw::RedisModuleDefragCtx,
    _key: *mut raw::RedisModuleString,
    value: *mut *mut c_void,
) -> c_int {
    shield(0, || {
        if ctx.is_null() || value.is_null() {
            return 0;
        }
        let mut mover = DefragMover(ctx);
        let stepped = mover.cursor();
        let mut cursor = stepped.unwrap_or(0);
        // SAFETY: Redis passes the address of the value's pointer, which it
        // lets this callback replace.
        let slot = unsafe { &mut *value };
        if cursor == 0 {
            // SAFETY: the value Redis stored for `T`'s type (from `T::into_raw`).
            if let Some(v) = unsafe { T::from_raw(*slot) } {
                let layout = Layout::for_value::<T>(v);
                let old = NonNull::from(v).cast::<u8>();
                if let Some(new) = mover.relocate(old, layout) {
                    // The value now lives at `new` (`Mover`'s contract):
                    // Redis keeps its new address.
                    *slot = new.as_ptr().cast();
                }
            }
        }
        // SAFETY: the value Redis stored for `T`'s type (maybe just moved),
        // which nothing else references while this runs.
        let Some(v) = (unsafe { T::from_raw(*slot) }) else {
            return 0;
        };
        loop {
            match v.defrag(&mut mover, cursor) {
                None => return 0,
                Some(next) if stepped.is_some() && mover.set_cursor(next) => {
                    count(&DEFRAG_PAUSED);
                    return 1;
                }
                // Called at once (no step to resume at): finish now.
                Some(next) => cursor = next,
            }
        }
    })
}
