//! Handles to what Redis passes a module callback: its context (`Ctx`),
//! strings (`RStr`) and RDB or AOF stream (`Io`). Each wraps a non-null raw
//! pointer and is made once, where Redis calls in (the command trampoline
//! of `command_fn!`, a data type's callbacks, timers, event hooks,
//! blocked-client callbacks, `OnLoad`), by an `unsafe fn from_raw` whose
//! caller vouches for the pointer; the safe glue functions take the handle,
//! never the raw pointer. They cost nothing: `#[repr(transparent)]`, `Copy`,
//! nothing checked at run time.

use std::marker::PhantomData;
use std::ptr::NonNull;

use redis_module::error::Error;
use redis_module::{raw, Context, RedisBuffer};

use crate::glue::host::api;

/// A pointer Redis passed the running callback, for as long as it runs: a
/// context (`Ctx`) or an RDB or AOF stream (`Io`).
#[repr(transparent)]
pub struct Handle<T>(NonNull<T>);

impl<T> Clone for Handle<T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Handle<T> {}

impl<T> Handle<T> {
    /// Wraps a pointer Redis passed a callback.
    ///
    /// # Safety
    /// `ptr` is the non-null context or stream Redis passed the callback that
    /// is running, and the handle is used only on the main thread while that
    /// callback runs.
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut T) -> Handle<T> {
        // SAFETY: non-null, per this function's contract.
        Handle(unsafe { NonNull::new_unchecked(ptr) })
    }

    /// The raw pointer, for a Redis API call.
    #[inline(always)]
    pub fn as_ptr(self) -> *mut T {
        self.0.as_ptr()
    }
}

/// The context of the running callback (`RedisModuleCtx`): a command, a
/// timer, an event hook, a blocked client's reply, or `OnLoad`.
pub type Ctx = Handle<raw::RedisModuleCtx>;

impl Ctx {
    /// The `redis-module` crate's wrapper of this context (logging, timers,
    /// calls by name).
    pub fn context(self) -> Context {
        Context::new(self.as_ptr())
    }
}

/// A Redis string (`RedisModuleString`) alive for `'a`: an argument of the
/// running command, a key name Redis passed a callback, or an `OwnedString`.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct RStr<'a>(
    NonNull<raw::RedisModuleString>,
    PhantomData<&'a raw::RedisModuleString>,
);

impl<'a> RStr<'a> {
    /// Wraps a string Redis passed a callback (or one the caller owns).
    ///
    /// # Safety
    /// `ptr` is a non-null Redis string that stays alive for `'a`, used only
    /// on the main thread, whose bytes change during `'a` only through
    /// `append_to_argument` (whose own contract covers bytes read before).
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut raw::RedisModuleString) -> RStr<'a> {
        // SAFETY: non-null, per this function's contract.
        RStr(unsafe { NonNull::new_unchecked(ptr) }, PhantomData)
    }

    /// The raw string, for a Redis API call.
    #[inline(always)]
    pub fn as_ptr(self) -> *mut raw::RedisModuleString {
        self.0.as_ptr()
    }

    /// The string's bytes, borrowed without copying.
    #[inline]
    pub fn bytes(self) -> &'a [u8] {
        let mut len = 0usize;
        // SAFETY: a live string (the handle's contract); Redis writes its length.
        let ptr = unsafe { api!(RedisModule_StringPtrLen)(self.as_ptr(), &mut len) };
        if ptr.is_null() || len == 0 {
            return &[];
        }
        // SAFETY: Redis returned `len` readable bytes at `ptr`, alive and
        // unchanged for `'a` (the handle's contract).
        unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) }
    }
}

/// The RDB or AOF stream Redis passed a data type's callback
/// (`RedisModuleIO`): `rdb_load`, `rdb_save`, `aof_rewrite`, aux load and
/// save. Reads fail (`Err`) on a truncated or bad payload, since warden sets
/// `HANDLE_IO_ERRORS`.
pub type Io = Handle<raw::RedisModuleIO>;

impl Io {
    /// Reads an unsigned integer.
    pub fn load_unsigned(self) -> Result<u64, Error> {
        raw::load_unsigned(self.as_ptr())
    }

    /// Reads a signed integer.
    pub fn load_signed(self) -> Result<i64, Error> {
        raw::load_signed(self.as_ptr())
    }

    /// Reads a double.
    pub fn load_double(self) -> Result<f64, Error> {
        raw::load_double(self.as_ptr())
    }

    /// Reads a byte string (freed when the buffer drops).
    pub fn load_string_buffer(self) -> Result<RedisBuffer, Error> {
        raw::load_string_buffer(self.as_ptr())
    }

    /// Writes an unsigned integer.
    pub fn save_unsigned(self, value: u64) {
        raw::save_unsigned(self.as_ptr(), value);
    }

    /// Writes a signed integer.
    pub fn save_signed(self, value: i64) {
        raw::save_signed(self.as_ptr(), value);
    }

    /// Writes a double.
    pub fn save_double(self, value: f64) {
        raw::save_double(self.as_ptr(), value);
    }

    /// Writes a byte string.
    pub fn save_slice(self, bytes: &[u8]) {
        raw::save_slice(self.as_ptr(), bytes);
    }
}
