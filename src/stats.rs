//! Counters shown in the `warden` section of INFO.

use std::ffi::c_int;
use std::sync::atomic::{AtomicI64, Ordering};

use redis_module::raw;

use crate::commands::lock_waiters;
use crate::host::{api, shield};
use crate::types::bloom;

/// New lock grants, including hand-offs to waiters.
pub static LOCKS_GRANTED: AtomicI64 = AtomicI64::new(0);
/// Acquires that found the lock held by another owner.
pub static LOCKS_CONTENDED: AtomicI64 = AtomicI64::new(0);
/// Grants made by handing a released or expired lock to a waiter.
pub static LOCKS_HANDED_OFF: AtomicI64 = AtomicI64::new(0);

/// Rate-limiter calls that were allowed.
pub static RL_ALLOWED: AtomicI64 = AtomicI64::new(0);
/// Rate-limiter calls that were denied.
pub static RL_DENIED: AtomicI64 = AtomicI64::new(0);

/// Adds one to a counter.
pub fn count(counter: &AtomicI64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

unsafe extern "C" fn info(ctx: *mut raw::RedisModuleInfoCtx, _for_crash_report: c_int) {
    shield((), || {
        let field = |name: &std::ffi::CStr, value: i64| unsafe {
            api!(RedisModule_InfoAddFieldLongLong)(ctx, name.as_ptr(), value);
        };
        unsafe { api!(RedisModule_InfoAddSection)(ctx, c"".as_ptr()) };
        field(c"locks_granted", LOCKS_GRANTED.load(Ordering::Relaxed));
        field(c"locks_contended", LOCKS_CONTENDED.load(Ordering::Relaxed));
        field(
            c"locks_handed_off",
            LOCKS_HANDED_OFF.load(Ordering::Relaxed),
        );
        field(c"locks_waiting", lock_waiters::total_waiting() as i64);
        field(c"bf_filters", bloom::FILTERS.load(Ordering::Relaxed));
        field(c"bf_bytes", bloom::FILTER_BYTES.load(Ordering::Relaxed));
        field(c"rl_allowed", RL_ALLOWED.load(Ordering::Relaxed));
        field(c"rl_denied", RL_DENIED.load(Ordering::Relaxed));
    })
}

/// Registers the INFO callback.
pub fn register(ctx: *mut raw::RedisModuleCtx) -> bool {
    unsafe { api!(RedisModule_RegisterInfoFunc)(ctx, Some(info)) == raw::REDISMODULE_OK as c_int }
}
