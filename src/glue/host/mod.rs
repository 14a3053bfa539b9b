//! Thin, safe-ish wrappers over the raw Redis module API for what the
//! `redis-module` crate does not wrap, or wraps with per-call allocations.
//!
//! Every function here must be called from the Redis main thread. Split by
//! concern: the handles Redis's pointers become at the FFI boundary
//! (`handle`), keys (`key`), replies (`reply`), calls into the server
//! (`call`), internal commands written to the replication stream or an AOF
//! rewrite (`emit`), the server's state (`server`) and a client's socket
//! (`socket`); this file holds the API table itself.

use std::panic::{catch_unwind, AssertUnwindSafe};

use redis_module::raw;

mod call;
mod emit;
mod handle;
mod key;
mod reply;
mod server;
mod socket;

pub use call::*;
pub use emit::*;
pub use handle::*;
pub use key::*;
pub use reply::*;
pub use server::*;
pub use socket::*;

/// Resolves a Redis API function pointer; a missing one is a bug caught at load
/// time by `check_api` and turned into an error reply by the panic guard here.
macro_rules! api {
    ($name:ident) => {{
        #[allow(unused_unsafe)]
        // SAFETY: the pointer is written once by RedisModule_Init before any
        // command runs, and only read afterwards, on the main thread.
        let f = unsafe { redis_module::raw::$name };
        match f {
            Some(f) => f,
            None => $crate::glue::host::missing_api(stringify!($name)),
        }
    }};
}
pub(crate) use api;

/// Panics with the name of a Redis API function the server does not export.
#[cold]
pub fn missing_api(name: &str) -> ! {
    panic!("redis-server does not export {name}")
}

/// Verifies at load time that the server exports every function warden calls.
pub fn check_api() -> Result<(), &'static str> {
    macro_rules! need {
        ($($name:ident),*) => {
            // SAFETY: filled in once by RedisModule_Init, read on the main thread.
            $(if unsafe { raw::$name }.is_none() { return Err(stringify!($name)); })*
        };
    }
    need!(
        RedisModule_Milliseconds,
        RedisModule_OpenKey,
        RedisModule_CloseKey,
        RedisModule_KeyType,
        RedisModule_ModuleTypeGetType,
        RedisModule_ModuleTypeGetValue,
        RedisModule_ModuleTypeSetValue,
        RedisModule_SetAbsExpire,
        RedisModule_GetAbsExpire,
        RedisModule_AvoidReplicaTraffic,
        RedisModule_NotifyKeyspaceEvent,
        RedisModule_SignalModifiedKey,
        RedisModule_DeleteKey,
        RedisModule_Replicate,
        RedisModule_ReplicateVerbatim,
        RedisModule_StringAppendBuffer,
        RedisModule_InfoAddFieldCString,
        RedisModule_StringPtrLen,
        RedisModule_CreateString,
        RedisModule_FreeString,
        RedisModule_BlockClient,
        RedisModule_UnblockClient,
        RedisModule_SetDisconnectCallback,
        RedisModule_GetClientId,
        RedisModule_GetClientInfoById,
        RedisModule_GetKeyNameFromOptCtx,
        RedisModule_GetDbIdFromOptCtx,
        RedisModule_GetDetachedThreadSafeContext,
        RedisModule_GetBlockedClientPrivateData,
        RedisModule_GetBlockedClientHandle,
        RedisModule_GetSelectedDb,
        RedisModule_SelectDb,
        RedisModule_Scan,
        RedisModule_ScanCursorCreate,
        RedisModule_ScanCursorDestroy,
        RedisModule_GetContextFlags,
        RedisModule_CreateTimer,
        RedisModule_StopTimer,
        RedisModule_SubscribeToServerEvent,
        RedisModule_SubscribeToKeyspaceEvents,
        RedisModule_EmitAOF,
        RedisModule_ReplyWithLongLong,
        RedisModule_ReplyWithNull,
        RedisModule_ReplyWithMap,
        RedisModule_ReplyWithBool,
        RedisModule_ReplyWithStringBuffer,
        RedisModule_ReplyWithSimpleString,
        RedisModule_ReplyWithError,
        RedisModule_CreateCommand,
        RedisModule_RegisterInfoFunc,
        RedisModule_InfoAddSection,
        RedisModule_InfoAddFieldLongLong,
        RedisModule_RegisterNumericConfig,
        RedisModule_RegisterStringConfig,
        RedisModule_LoadConfigs,
        RedisModule_RetainString,
        RedisModule_HoldString,
        RedisModule_DigestAddStringBuffer,
        RedisModule_DigestAddLongLong,
        RedisModule_DigestEndSequence,
        RedisModule_ReplyWithArray,
        RedisModule_ReplyWithDouble,
        RedisModule_GetCommand,
        RedisModule_SetCommandInfo,
        RedisModule_Call,
        RedisModule_CallReplyType,
        RedisModule_CallReplyLength,
        RedisModule_CallReplyArrayElement,
        RedisModule_CallReplyStringPtr,
        RedisModule_CallReplyInteger,
        RedisModule_FreeCallReply,
        RedisModule_ReplyWithCallReply,
        RedisModule_IsKeysPositionRequest,
        RedisModule_KeyAtPosWithFlags,
        RedisModule_GetCommandKeysWithFlags,
        RedisModule_GetServerInfo,
        RedisModule_FreeServerInfo,
        RedisModule_ServerInfoGetFieldC,
        RedisModule_ServerInfoGetFieldSigned,
        RedisModule_Free
    );
    Ok(())
}

/// Bytes of physical memory on this machine (`u64::MAX` if unknown).
pub fn physical_memory() -> u64 {
    // Read once: sysconf(_SC_PHYS_PAGES) is a system call (sysinfo), and
    // a filter's add asks on every call.
    static PHYSICAL: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *PHYSICAL.get_or_init(|| {
        // SAFETY: sysconf only reads system information.
        let (pages, page_size) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        match (u64::try_from(pages), u64::try_from(page_size)) {
            (Ok(p), Ok(s)) if p > 0 && s > 0 => p.saturating_mul(s),
            _ => u64::MAX,
        }
    })
}

/// The server's wall clock in Unix milliseconds (the clock key expiry uses).
pub fn now_ms() -> i64 {
    // SAFETY: a plain read of the server clock.
    unsafe { api!(RedisModule_Milliseconds)() }
}

/// Writes a warning line to the server log.
pub fn log_warning(ctx: Ctx, message: &str) {
    ctx.context().log_warning(message);
}

/// Runs `f`, turning a panic into `fallback` so it never unwinds into Redis.
pub fn shield<R>(fallback: R, f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}
