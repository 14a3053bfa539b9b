//! Handles to what Redis passes a module callback. Each wraps a non-null
//! raw pointer and is made once, where Redis calls in (the command
//! trampoline of `command_fn!`, a data type's callbacks, timers, event hooks,
//! blocked-client callbacks, `OnLoad`), by an `unsafe fn from_raw` whose
//! caller vouches for the pointer; the safe glue functions take the handle,
//! never the raw pointer. They cost nothing: `#[repr(transparent)]`, `Copy`,
//! nothing checked at run time.

use std::ptr::NonNull;

use redis_module::{raw, Context};

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
