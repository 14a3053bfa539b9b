//! The `warden` section of INFO: the counters and gauges of `stats`, in a
//! fixed order.

use std::ffi::{c_int, CStr};
use std::sync::atomic::Ordering;

use redis_module::raw;

use crate::glue::fence;
use crate::glue::host::{api, shield, Ctx};
use crate::glue::stats;

/// The fields of the section, in the order INFO shows them.
fn fields() -> [(&'static CStr, i64); 28] {
    let load = |c: &std::sync::atomic::AtomicI64| c.load(Ordering::Relaxed);
    let (fence_floor, room) = fence::headroom();
    [
        (c"locks_granted", load(&stats::LOCKS_GRANTED)),
        (c"locks_contended", load(&stats::LOCKS_CONTENDED)),
        (c"locks_handed_off", load(&stats::LOCKS_HANDED_OFF)),
        (c"locks_waiting", load(&stats::LOCKS_WAITING)),
        (c"locks_kept", load(&stats::LOCKS_KEPT)),
        (c"locks_kept_renewals", load(&stats::LOCKS_KEPT_RENEWALS)),
        (c"locks_lost", load(&stats::LOCKS_LOST)),
        (c"locks_watched", load(&stats::LOCKS_WATCHED)),
        (c"lock_keys", load(&stats::LOCK_KEYS)),
        (c"fence_floor", fence_floor),
        (c"fence_tokens_left", room.tokens),
        (c"fence_promotions_left", room.promotions),
        (c"bf_filters", load(&stats::BF_FILTERS)),
        (c"bf_bytes", load(&stats::BF_BYTES)),
        (c"cf_filters", load(&stats::CF_FILTERS)),
        (c"cf_bytes", load(&stats::CF_BYTES)),
        (c"rl_allowed", load(&stats::RL_ALLOWED)),
        (c"rl_denied", load(&stats::RL_DENIED)),
        (c"cache_hits", load(&stats::CACHE_HITS)),
        (c"cache_misses", load(&stats::CACHE_MISSES)),
        (c"cache_leases", load(&stats::CACHE_LEASES)),
        (c"cache_stale_served", load(&stats::CACHE_STALE_SERVED)),
        (c"cache_waiting", load(&stats::CACHE_WAITING)),
        (c"effects_in_place", load(&stats::EFFECTS_IN_PLACE)),
        (c"effects_as_commands", load(&stats::EFFECTS_AS_COMMANDS)),
        (
            c"replays_without_effect",
            load(&stats::REPLAYS_WITHOUT_EFFECT),
        ),
        (c"defrag_moved", load(&stats::DEFRAG_MOVED)),
        (c"defrag_paused", load(&stats::DEFRAG_PAUSED)),
    ]
}

/// # Safety
/// Called by Redis with a live INFO context.
unsafe extern "C" fn info(ctx: *mut raw::RedisModuleInfoCtx, _for_crash_report: c_int) {
    shield((), || {
        // SAFETY: `ctx` is the INFO context Redis passed; "" names the module's section.
        unsafe { api!(RedisModule_InfoAddSection)(ctx, c"".as_ptr()) };
        let version = concat!(env!("CARGO_PKG_VERSION"), "\0");
        // SAFETY: as above; both texts are C strings that outlive the call.
        unsafe {
            api!(RedisModule_InfoAddFieldCString)(ctx, c"version".as_ptr(), version.as_ptr().cast())
        };
        for (name, value) in fields() {
            // SAFETY: as above; `name` is a C string that outlives the call.
            unsafe { api!(RedisModule_InfoAddFieldLongLong)(ctx, name.as_ptr(), value) };
        }
    })
}

/// Registers the INFO callback.
pub fn register(ctx: Ctx) -> bool {
    // SAFETY: called from OnLoad with the load context.
    unsafe {
        api!(RedisModule_RegisterInfoFunc)(ctx.as_ptr(), Some(info)) == raw::REDISMODULE_OK as c_int
    }
}
