//! Keys and strings: open keys and their typed values, expiry, keyspace
//! notifications, argument bytes and owned strings.

use std::ffi::{c_int, c_void, CStr};

use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::common::error::WardenError;
use crate::glue::host::{api, Ctx, RStr};

/// An owned Redis string created from bytes (freed on drop).
pub struct OwnedString(*mut raw::RedisModuleString);

impl OwnedString {
    /// Copies `data` into a new Redis string, created on `ctx` (`None`: on no
    /// context).
    pub fn new(ctx: Option<Ctx>, data: &[u8]) -> OwnedString {
        let ctx = ctx.map_or(std::ptr::null_mut(), Ctx::as_ptr);
        // SAFETY: `ctx` is null or a live context; `data` is readable for its
        // length; Redis copies it (the string is ours to free).
        OwnedString(unsafe {
            api!(RedisModule_CreateString)(ctx, data.as_ptr().cast(), data.len())
        })
    }

    /// The string, for as long as `self` is borrowed.
    pub fn as_rstr(&self) -> RStr<'_> {
        // SAFETY: a string this struct created and frees only on drop, and
        // never changes.
        unsafe { RStr::from_raw(self.0) }
    }
}

impl Drop for OwnedString {
    fn drop(&mut self) {
        // SAFETY: the string was created by `new` and is freed once, here.
        unsafe { api!(RedisModule_FreeString)(std::ptr::null_mut(), self.0) }
    }
}

/// A Rust type stored as the values of one Redis module type: the binding
/// that lets `Key::value` hand out typed references and nothing else.
/// Implemented for every `data_type::StoredValue`, whose type's callbacks
/// are `data_type::methods::<Self>()`.
///
/// A value is handed to Redis as one pointer (`into_raw`): a boxed `Self`'s
/// address, or, for a type of variable size (`lock::core::packed`), the
/// start of its one block, from which `from_raw` finds the whole value.
pub trait ModuleValue: 'static {
    /// The Redis type whose values are `Self` (and only `Self`).
    fn redis_type() -> &'static RedisType;

    /// The value behind a pointer Redis keeps for it.
    ///
    /// # Safety
    /// `value` is null or a pointer `into_raw` returned for a `Self` that is
    /// still alive and not otherwise referenced for `'a`.
    unsafe fn from_raw<'a>(value: *mut c_void) -> Option<&'a mut Self>;

    /// The pointer Redis keeps for `value` (its owner from now on).
    fn into_raw(value: Box<Self>) -> *mut c_void {
        Box::into_raw(value).cast::<c_void>()
    }
}

/// What `Key::either` found.
pub enum Either<'a, T: ?Sized, U: ?Sized> {
    /// An empty key.
    Empty,
    /// A `T`.
    First(&'a mut T),
    /// A `U`.
    Second(&'a mut U),
}

/// An open key, closed on drop.
pub struct Key {
    ptr: *mut raw::RedisModuleKey,
}

impl Key {
    /// Opens `name` for reading and writing.
    pub fn writable(ctx: Ctx, name: RStr) -> Key {
        let mode = (raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as c_int;
        Key {
            // SAFETY: `ctx` is the live context of the call and `name` a live string; Redis returns null or a key we close on drop.
            ptr: unsafe { api!(RedisModule_OpenKey)(ctx.as_ptr(), name.as_ptr(), mode) },
        }
    }

    /// Opens `name` for reading only.
    pub fn readable(ctx: Ctx, name: RStr) -> Key {
        Key {
            // SAFETY: as in `writable`.
            ptr: unsafe {
                api!(RedisModule_OpenKey)(
                    ctx.as_ptr(),
                    name.as_ptr(),
                    raw::REDISMODULE_READ as c_int,
                )
            },
        }
    }

    /// The key's value if it holds a `T`: `Ok(None)` for an empty key,
    /// `WRONGTYPE` for a value of any other type. The reference lives as long
    /// as this borrow of the open key.
    pub fn value<T: ModuleValue + ?Sized>(&mut self) -> Result<Option<&mut T>, WardenError> {
        self.value_unless::<T, T>(|| WardenError::WrongType)
    }

    /// Like `value`, but a key holding a `U` answers `instead()` (not
    /// WRONGTYPE). A function, so the usual path builds and drops no error.
    #[inline]
    pub fn value_unless<T: ModuleValue + ?Sized, U: ModuleValue + ?Sized>(
        &mut self,
        instead: impl FnOnce() -> WardenError,
    ) -> Result<Option<&mut T>, WardenError> {
        if self.ptr.is_null() {
            return Ok(None);
        }
        // SAFETY: `ptr` is a key this struct opened and has not closed.
        let kind = unsafe { api!(RedisModule_KeyType)(self.ptr) };
        if kind == raw::REDISMODULE_KEYTYPE_EMPTY as c_int {
            return Ok(None);
        }
        let ours = *T::redis_type().raw_type.borrow();
        if kind != raw::REDISMODULE_KEYTYPE_MODULE as c_int {
            return Err(WardenError::WrongType);
        }
        // SAFETY: an open key holding a module value.
        let held = unsafe { api!(RedisModule_ModuleTypeGetType)(self.ptr) };
        if held != ours {
            let other = *U::redis_type().raw_type.borrow();
            return Err(if held == other {
                instead()
            } else {
                WardenError::WrongType
            });
        }
        // SAFETY: values of `ours` are always a `T` handed over by
        // `T::into_raw` (`ModuleValue`), owned by Redis while the key stays
        // open; `&mut self` keeps it so.
        Ok(unsafe { T::from_raw(api!(RedisModule_ModuleTypeGetValue)(self.ptr)) })
    }

    /// The key's value if it holds a `T` (`Ok(Either::First)`) or a `U`
    /// (`Ok(Either::Second)`), with one type check; `WRONGTYPE` for any other.
    pub fn either<T: ModuleValue + ?Sized, U: ModuleValue + ?Sized>(
        &mut self,
    ) -> Result<Either<'_, T, U>, WardenError> {
        Ok(self.either_and(|_| ())?.0)
    }

    /// `either` and the key's expiry (`abs_expire`), read only when the key
    /// holds a `T` or a `U`: an empty key costs no expiry lookup.
    pub fn either_expiring<T: ModuleValue + ?Sized, U: ModuleValue + ?Sized>(
        &mut self,
    ) -> Result<(Either<'_, T, U>, Option<i64>), WardenError> {
        self.either_and(Key::abs_expire)
    }

    /// `either`, with `read` of the open key once it is known to hold a `T`
    /// or a `U` (`X::default()` for an empty key).
    #[inline(always)]
    fn either_and<T: ModuleValue + ?Sized, U: ModuleValue + ?Sized, X: Default>(
        &mut self,
        read: impl FnOnce(&Key) -> X,
    ) -> Result<(Either<'_, T, U>, X), WardenError> {
        if self.ptr.is_null() {
            return Ok((Either::Empty, X::default()));
        }
        // SAFETY: `ptr` is a key this struct opened and has not closed.
        let kind = unsafe { api!(RedisModule_KeyType)(self.ptr) };
        if kind == raw::REDISMODULE_KEYTYPE_EMPTY as c_int {
            return Ok((Either::Empty, X::default()));
        }
        if kind != raw::REDISMODULE_KEYTYPE_MODULE as c_int {
            return Err(WardenError::WrongType);
        }
        // SAFETY: an open key holding a module value.
        let held = unsafe { api!(RedisModule_ModuleTypeGetType)(self.ptr) };
        // SAFETY: as above; the value is owned by Redis while the key stays
        // open, and `&mut self` keeps it so.
        let value = unsafe { api!(RedisModule_ModuleTypeGetValue)(self.ptr) };
        if held == *T::redis_type().raw_type.borrow() {
            let extra = read(self);
            // SAFETY: values of `T`'s type are always a `T` from `T::into_raw`.
            let found = unsafe { T::from_raw(value) }.map_or(Either::Empty, Either::First);
            return Ok((found, extra));
        }
        if held == *U::redis_type().raw_type.borrow() {
            let extra = read(self);
            // SAFETY: values of `U`'s type are always a `U` from `U::into_raw`.
            let found = unsafe { U::from_raw(value) }.map_or(Either::Empty, Either::Second);
            return Ok((found, extra));
        }
        Err(WardenError::WrongType)
    }

    /// Whether the key holds nothing (of any type).
    pub fn is_empty(&self) -> bool {
        // SAFETY: `ptr` is null or a key this struct opened and has not closed.
        self.ptr.is_null()
            || unsafe { api!(RedisModule_KeyType)(self.ptr) }
                == raw::REDISMODULE_KEYTYPE_EMPTY as c_int
    }

    /// Whether the key holds a `T`.
    pub fn holds<T: ModuleValue + ?Sized>(&self) -> bool {
        if self.ptr.is_null() {
            return false;
        }
        // SAFETY: `ptr` is a key this struct opened and has not closed.
        let kind = unsafe { api!(RedisModule_KeyType)(self.ptr) };
        // SAFETY: as above; asked only of a key holding a module value.
        kind == raw::REDISMODULE_KEYTYPE_MODULE as c_int
            && unsafe { api!(RedisModule_ModuleTypeGetType)(self.ptr) }
                == *T::redis_type().raw_type.borrow()
    }

    /// Stores `value` in the key (replacing what was there; drops the key's TTL).
    pub fn set_value<T: ModuleValue + ?Sized>(&self, value: Box<T>) {
        if self.ptr.is_null() {
            return; // only a key opened for reading can be null: nothing to store
        }
        let ours = *T::redis_type().raw_type.borrow();
        let raw_value = T::into_raw(value);
        // SAFETY: an open key; on success Redis owns the value and frees it
        // with the type's `free` callback, which drops a `T`.
        let status = unsafe { api!(RedisModule_ModuleTypeSetValue)(self.ptr, ours, raw_value) };
        if status != raw::REDISMODULE_OK as c_int {
            // SAFETY: not stored, so the value is still ours (from `into_raw`
            // just above): take it back to free it.
            if let Some(value) = unsafe { T::from_raw(raw_value) } {
                // SAFETY: the reference is the boxed value `into_raw` gave up.
                drop(unsafe { Box::from_raw(value as *mut T) });
            }
        }
    }

    /// The key's expiry as an absolute Unix time in ms, `None` when it has none.
    pub fn abs_expire(&self) -> Option<i64> {
        if self.ptr.is_null() {
            return None; // a missing key opened for reading
        }
        // SAFETY: `ptr` is a key this struct opened and has not closed.
        let at = unsafe { api!(RedisModule_GetAbsExpire)(self.ptr) };
        (at >= 0).then_some(at)
    }

    /// Sets the key's expiry to an absolute Unix time in ms.
    pub fn set_abs_expire(&self, at_ms: i64) {
        if self.ptr.is_null() {
            return;
        }
        // SAFETY: a key this struct opened and has not closed.
        unsafe { api!(RedisModule_SetAbsExpire)(self.ptr, at_ms) };
    }

    /// Sets the key's absolute expiry, or removes it (`None`: never expires).
    pub fn set_abs_expire_or_persist(&self, at_ms: Option<i64>) {
        self.set_abs_expire(at_ms.unwrap_or(raw::REDISMODULE_NO_EXPIRE as i64));
    }

    /// Deletes the key.
    pub fn delete(&self) {
        if self.ptr.is_null() {
            return;
        }
        // SAFETY: a key this struct opened and has not closed.
        unsafe { api!(RedisModule_DeleteKey)(self.ptr) };
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: a key this struct opened, closed exactly once.
            unsafe { api!(RedisModule_CloseKey)(self.ptr) }
        }
    }
}

/// The database the context works on.
pub fn selected_db(ctx: Ctx) -> c_int {
    // SAFETY: `ctx` is the live context of the current call.
    unsafe { api!(RedisModule_GetSelectedDb)(ctx.as_ptr()) }
}

/// Switches the context to database `db`.
pub fn select_db(ctx: Ctx, db: c_int) -> bool {
    // SAFETY: as above.
    unsafe { api!(RedisModule_SelectDb)(ctx.as_ptr(), db) == raw::REDISMODULE_OK as c_int }
}

/// Calls `visit` with the name and the value of every key of the selected
/// database holding a `T` or a `U`: a whole SCAN, O(keys), for rare events
/// (a flush, a role change). `visit` must not change the keyspace.
pub fn scan_values<T, U, F>(ctx: Ctx, mut visit: F)
where
    T: ModuleValue + ?Sized,
    U: ModuleValue + ?Sized,
    F: FnMut(&[u8], Either<'_, T, U>),
{
    /// Redis's per-key callback: `visit` for the keys of the wanted types.
    unsafe extern "C" fn each<T, U, F>(
        _ctx: *mut raw::RedisModuleCtx,
        name: *mut raw::RedisModuleString,
        key: *mut raw::RedisModuleKey,
        visit: *mut c_void,
    ) where
        T: ModuleValue + ?Sized,
        U: ModuleValue + ?Sized,
        F: FnMut(&[u8], Either<'_, T, U>),
    {
        if key.is_null() || name.is_null() {
            return;
        }
        // SAFETY: `visit` is the `F` `scan_values` passed, alive for the scan.
        let visit = unsafe { &mut *visit.cast::<F>() };
        let mut open = std::mem::ManuallyDrop::new(Key { ptr: key });
        // SAFETY: the key's name, live for the callback's duration.
        let name = unsafe { RStr::from_raw(name) };
        // Redis closes the key it lent (ManuallyDrop: not closed here).
        match open.either::<T, U>() {
            Ok(Either::Empty) | Err(_) => {}
            Ok(found) => visit(name.bytes(), found),
        }
    }
    // SAFETY: a new cursor, destroyed below.
    let cursor = unsafe { api!(RedisModule_ScanCursorCreate)() };
    let data = (&mut visit as *mut F).cast::<c_void>();
    // SAFETY: `ctx` is live; `each` matches the closure passed as `data`,
    // which outlives the loop; the cursor is live until destroyed.
    unsafe {
        while api!(RedisModule_Scan)(ctx.as_ptr(), cursor, Some(each::<T, U, F>), data) != 0 {}
        api!(RedisModule_ScanCursorDestroy)(cursor);
    }
}

/// Emits the keyspace event `event` (module class, `d` in
/// `notify-keyspace-events`) on `key` of the selected database, without
/// signalling a write: news about a key (a holder lost it).
pub fn announce(ctx: Ctx, event: &CStr, key: RStr) {
    let class = raw::REDISMODULE_NOTIFY_MODULE;
    // SAFETY: `ctx` is a live context, `event` a C string, `key` a live string.
    unsafe {
        api!(RedisModule_NotifyKeyspaceEvent)(ctx.as_ptr(), class, event.as_ptr(), key.as_ptr())
    };
}

/// Announces a write to `key`: signals it modified (WATCH, client-side
/// caching) and emits the keyspace event `event` (`announce`). Every write
/// calls this; a call that changes nothing does not (the module option
/// `NO_IMPLICIT_SIGNAL_MODIFIED` stops Redis from signalling every key
/// opened for writing).
pub fn notify(ctx: Ctx, event: &CStr, key: RStr) {
    // SAFETY: `ctx` is a live context, `key` a live string.
    unsafe { api!(RedisModule_SignalModifiedKey)(ctx.as_ptr(), key.as_ptr()) };
    announce(ctx, event, key);
}

/// Appends `tail` to `s`, an argument of the running command, in place
/// (`RedisModule_StringAppendBuffer`). False when Redis refuses: the string
/// is referenced more than once.
///
/// # Safety
/// `s` is a live argument of the call on `ctx`, and no slice of its bytes
/// (`RStr::bytes`) is used afterwards: appending may move them.
pub unsafe fn append_to_argument(ctx: Ctx, s: RStr, tail: &[u8]) -> bool {
    // SAFETY: per the contract; `tail` is readable for its length and copied.
    let status = unsafe {
        api!(RedisModule_StringAppendBuffer)(
            ctx.as_ptr(),
            s.as_ptr(),
            tail.as_ptr().cast(),
            tail.len(),
        )
    };
    status == raw::REDISMODULE_OK as c_int
}
