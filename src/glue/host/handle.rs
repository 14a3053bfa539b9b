//! Handles to what Redis passes a module callback: its context (`Ctx`) and
//! strings (`RStr`). Each wraps a non-null raw pointer and is made once,
//! where Redis calls in (the command trampoline of `command_fn!`, a data
//! type's callbacks, timers, event hooks, blocked-client callbacks,
//! `OnLoad`), by an `unsafe fn from_raw` whose caller vouches for the
//! pointer; the safe glue functions take the handle, never the raw pointer.
//! They cost nothing: `#[repr(transparent)]`, `Copy`, nothing checked at run
//! time.

use std::marker::PhantomData;
use std::ptr::NonNull;

use redis_module::{raw, Context};

use crate::glue::host::api;

/// The context of the running callback (`RedisModuleCtx`): a command, a
/// timer, an event hook, a blocked client's reply, or `OnLoad`.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct Ctx(NonNull<raw::RedisModuleCtx>);

impl Ctx {
    /// Wraps the context Redis passed to a callback.
    ///
    /// # Safety
    /// `ptr` is the non-null context of the callback that is running, and the
    /// handle is used only on the main thread while that callback runs.
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut raw::RedisModuleCtx) -> Ctx {
        // SAFETY: non-null, per this function's contract.
        Ctx(unsafe { NonNull::new_unchecked(ptr) })
    }

    /// The raw context, for a Redis API call.
    #[inline(always)]
    pub fn as_ptr(self) -> *mut raw::RedisModuleCtx {
        self.0.as_ptr()
    }

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
