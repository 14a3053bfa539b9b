//! The `warden` section of INFO: the module's version, then each family's
//! fields (`Family::info`), in the order the families are registered.

use std::cell::Cell;
use std::ffi::c_int;

use redis_module::raw;

use crate::glue::family::Family;
use crate::glue::host::{api, shield, Ctx};

thread_local! {
    /// The families whose fields INFO shows (set by `register`).
    static FAMILIES: Cell<&'static [&'static Family]> = const { Cell::new(&[]) };
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
        for field in FAMILIES.get().iter().flat_map(|f| f.info.iter()) {
            // SAFETY: as above; the name is a C string that outlives the call.
            unsafe {
                api!(RedisModule_InfoAddFieldLongLong)(ctx, field.name.as_ptr(), field.value())
            };
        }
    })
}

/// Registers the INFO callback, showing the fields of `families`.
pub fn register(ctx: Ctx, families: &'static [&'static Family]) -> bool {
    FAMILIES.set(families);
    // SAFETY: called from OnLoad with the load context.
    unsafe {
        api!(RedisModule_RegisterInfoFunc)(ctx.as_ptr(), Some(info)) == raw::REDISMODULE_OK as c_int
    }
}
