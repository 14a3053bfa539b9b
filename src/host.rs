//! Thin, safe-ish wrappers over the raw Redis module API for what the
//! `redis-module` crate does not wrap, or wraps with per-call allocations.
//!
//! Every function here must be called from the Redis main thread.

use std::ffi::{c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::core::error::WardenError;

pub use raw::{RedisModuleCtx as Ctx, RedisModuleString as RString};

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
            None => $crate::host::missing_api(stringify!($name)),
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
        RedisModule_GetBlockedClientPrivateData,
        RedisModule_GetBlockedClientHandle,
        RedisModule_GetSelectedDb,
        RedisModule_SelectDb,
        RedisModule_GetContextFlags,
        RedisModule_CreateTimer,
        RedisModule_SubscribeToServerEvent,
        RedisModule_SubscribeToKeyspaceEvents,
        RedisModule_EmitAOF,
        RedisModule_ReplyWithLongLong,
        RedisModule_ReplyWithNull,
        RedisModule_ReplyWithMap,
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

/// Where an internal command is written: the replication stream (and AOF)
/// of the running command, or an AOF rewrite. One `emit` per wire format
/// serves both.
#[derive(Clone, Copy)]
pub enum Sink {
    /// `RedisModule_Replicate` from a command or timer context.
    Replication(*mut Ctx),
    /// `RedisModule_EmitAOF` from a type's `aof_rewrite` callback.
    AofRewrite(*mut raw::RedisModuleIO),
}

/// Writes command `$cmd` with the `RedisModule_Replicate` format `$fmt` and
/// its arguments to a `Sink`.
macro_rules! emit {
    ($sink:expr, $cmd:expr, $fmt:expr, $($arg:expr),+ $(,)?) => {
        match $sink {
            $crate::host::Sink::Replication(ctx) => {
                // SAFETY: a live context; `$fmt` describes the arguments that follow.
                unsafe {
                    $crate::host::api!(RedisModule_Replicate)(ctx, $cmd.as_ptr(), $fmt.as_ptr(), $($arg),+)
                };
            }
            $crate::host::Sink::AofRewrite(io) => {
                // SAFETY: the rewrite's live IO; `$fmt` describes the arguments that follow.
                unsafe {
                    $crate::host::api!(RedisModule_EmitAOF)(io, $cmd.as_ptr(), $fmt.as_ptr(), $($arg),+)
                };
            }
        }
    };
}
pub(crate) use emit;

/// Bytes of physical memory on this machine (`u64::MAX` if unknown).
pub fn physical_memory() -> u64 {
    // Read once: sysconf(_SC_PHYS_PAGES) is a system call (sysinfo), and
    // BF.ADDX asks on every call.
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

/// The bytes of a Redis string, borrowed without copying.
///
/// # Safety
/// `s` must be a live Redis string that is neither freed nor changed while
/// the returned slice (of the caller's lifetime `'a`) is used: an argument of
/// the running command, or a string the caller owns.
pub unsafe fn bytes<'a>(s: *const RString) -> &'a [u8] {
    let mut len = 0usize;
    // SAFETY: `s` is a live string (the caller's contract); Redis writes its length.
    let ptr = unsafe { api!(RedisModule_StringPtrLen)(s, &mut len) };
    if ptr.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: Redis returned `len` readable bytes at `ptr`, alive as long as `s` is.
    unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) }
}

/// An owned Redis string created from bytes (freed on drop).
pub struct OwnedString(*mut RString);

impl OwnedString {
    /// Copies `data` into a new Redis string.
    pub fn new(ctx: *mut Ctx, data: &[u8]) -> OwnedString {
        // SAFETY: `data` is readable for its length; Redis copies it (a null context: the string is ours to free).
        OwnedString(unsafe {
            api!(RedisModule_CreateString)(ctx, data.as_ptr().cast(), data.len())
        })
    }

    /// The raw string, valid while `self` lives.
    pub fn as_ptr(&self) -> *mut RString {
        self.0
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
pub trait ModuleValue: Sized + 'static {
    /// The Redis type whose values are `Self` (and only `Self`).
    fn redis_type() -> &'static RedisType;
}

/// What `Key::either` found.
pub enum Either<'a, T, U> {
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
    pub fn writable(ctx: *mut Ctx, name: *mut RString) -> Key {
        let mode = (raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as c_int;
        Key {
            // SAFETY: `ctx` is the live context of the call and `name` a live string; Redis returns null or a key we close on drop.
            ptr: unsafe { api!(RedisModule_OpenKey)(ctx, name, mode) },
        }
    }

    /// Opens `name` for reading only.
    pub fn readable(ctx: *mut Ctx, name: *mut RString) -> Key {
        Key {
            // SAFETY: as in `writable`.
            ptr: unsafe { api!(RedisModule_OpenKey)(ctx, name, raw::REDISMODULE_READ as c_int) },
        }
    }

    /// Whether the key holds nothing (cheap: no lookup).
    pub fn is_empty(&self) -> bool {
        // SAFETY: a key this struct opened and has not closed (checked non-null first).
        self.ptr.is_null()
            || unsafe { api!(RedisModule_KeyType)(self.ptr) }
                == raw::REDISMODULE_KEYTYPE_EMPTY as c_int
    }

    /// The key's value if it holds a `T`: `Ok(None)` for an empty key,
    /// `WRONGTYPE` for a value of any other type. The reference lives as long
    /// as this borrow of the open key.
    pub fn value<T: ModuleValue>(&mut self) -> Result<Option<&mut T>, WardenError> {
        self.value_unless::<T, T>(WardenError::WrongType)
    }

    /// Like `value`, but a key holding a `U` answers `instead` (not WRONGTYPE).
    pub fn value_unless<T: ModuleValue, U: ModuleValue>(
        &mut self,
        instead: WardenError,
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
                instead
            } else {
                WardenError::WrongType
            });
        }
        // SAFETY: values of `ours` are always a boxed `T` (`ModuleValue`), owned
        // by Redis while the key stays open; `&mut self` keeps it so.
        Ok(unsafe {
            api!(RedisModule_ModuleTypeGetValue)(self.ptr)
                .cast::<T>()
                .as_mut()
        })
    }

    /// The key's value if it holds a `T` (`Ok(Either::First)`) or a `U`
    /// (`Ok(Either::Second)`), with one type check; `WRONGTYPE` for any other.
    pub fn either<T: ModuleValue, U: ModuleValue>(
        &mut self,
    ) -> Result<Either<'_, T, U>, WardenError> {
        if self.ptr.is_null() {
            return Ok(Either::Empty);
        }
        // SAFETY: `ptr` is a key this struct opened and has not closed.
        let kind = unsafe { api!(RedisModule_KeyType)(self.ptr) };
        if kind == raw::REDISMODULE_KEYTYPE_EMPTY as c_int {
            return Ok(Either::Empty);
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
            // SAFETY: values of `T`'s type are always a boxed `T` (`ModuleValue`).
            return Ok(unsafe { value.cast::<T>().as_mut() }.map_or(Either::Empty, Either::First));
        }
        if held == *U::redis_type().raw_type.borrow() {
            // SAFETY: values of `U`'s type are always a boxed `U` (`ModuleValue`).
            return Ok(unsafe { value.cast::<U>().as_mut() }.map_or(Either::Empty, Either::Second));
        }
        Err(WardenError::WrongType)
    }

    /// Whether the key holds a `T`.
    pub fn holds<T: ModuleValue>(&self) -> bool {
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
    pub fn set_value<T: ModuleValue>(&self, value: Box<T>) {
        if self.ptr.is_null() {
            return; // only a key opened for reading can be null: nothing to store
        }
        let ours = *T::redis_type().raw_type.borrow();
        let raw_value = Box::into_raw(value).cast::<c_void>();
        // SAFETY: an open key; on success Redis owns the box and frees it with
        // the type's `free` callback, which drops a `T`.
        let status = unsafe { api!(RedisModule_ModuleTypeSetValue)(self.ptr, ours, raw_value) };
        if status != raw::REDISMODULE_OK as c_int {
            // SAFETY: not stored, so the box is still ours: take it back to free it.
            drop(unsafe { Box::from_raw(raw_value.cast::<T>()) });
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
pub fn selected_db(ctx: *mut Ctx) -> c_int {
    // SAFETY: `ctx` is the live context of the current call.
    unsafe { api!(RedisModule_GetSelectedDb)(ctx) }
}

/// Switches the context to database `db`.
pub fn select_db(ctx: *mut Ctx, db: c_int) -> bool {
    // SAFETY: as above.
    unsafe { api!(RedisModule_SelectDb)(ctx, db) == raw::REDISMODULE_OK as c_int }
}

/// Whether the server accepts a write the module starts by itself (a timer,
/// a hand-off): not while clients are paused (`CLIENT PAUSE`, `FAILOVER`),
/// on a replica, or while loading. Writing then crashes Redis 7.0 (a paused
/// server keeps expired keys it reports as missing) or diverges a replica.
pub fn writes_allowed(ctx: *mut Ctx) -> bool {
    // SAFETY: plain query of server state, from the main thread.
    if unsafe { api!(RedisModule_AvoidReplicaTraffic)() } != 0 {
        return false;
    }
    // SAFETY: `ctx` is the live context of the current callback.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx) } as u32;
    let blocked = raw::REDISMODULE_CTX_FLAGS_LOADING
        | raw::REDISMODULE_CTX_FLAGS_ASYNC_LOADING
        | raw::REDISMODULE_CTX_FLAGS_SLAVE;
    flags & raw::REDISMODULE_CTX_FLAGS_MASTER != 0 && flags & blocked == 0
}

/// Whether this node is a master (whatever else holds writes back).
pub fn is_master(ctx: *mut Ctx) -> bool {
    // SAFETY: `ctx` is the live context of the current callback.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx) } as u32;
    flags & raw::REDISMODULE_CTX_FLAGS_MASTER != 0
}

/// The `slave<i>` fields of `INFO replication` (`ip=…,port=…,state=…,
/// offset=…,lag=…`), one per connected replica. It formats the whole
/// section: call it rarely.
pub fn replica_fields(ctx: *mut Ctx) -> Vec<Vec<u8>> {
    // SAFETY: `ctx` is a live context; the data is freed below, and the
    // field texts are copied out before that.
    unsafe {
        let data = api!(RedisModule_GetServerInfo)(ctx, c"replication".as_ptr());
        if data.is_null() {
            return Vec::new();
        }
        let mut err: c_int = 0;
        let count = api!(RedisModule_ServerInfoGetFieldSigned)(
            data,
            c"connected_slaves".as_ptr(),
            &mut err,
        );
        let count = if err == 0 { count.clamp(0, 100_000) } else { 0 };
        let mut fields = Vec::with_capacity(count as usize);
        for i in 0..count {
            let Ok(name) = std::ffi::CString::new(format!("slave{i}")) else {
                continue;
            };
            let text = api!(RedisModule_ServerInfoGetFieldC)(data, name.as_ptr());
            if !text.is_null() {
                fields.push(CStr::from_ptr(text).to_bytes().to_vec());
            }
        }
        api!(RedisModule_FreeServerInfo)(ctx, data);
        fields
    }
}

/// Announces a write to `key`: signals it modified (WATCH, client-side
/// caching) and emits the keyspace event `event` (module class, `d` in
/// `notify-keyspace-events`). Every write calls this; a call that changes
/// nothing does not (the module option `NO_IMPLICIT_SIGNAL_MODIFIED` stops
/// Redis from signalling every key opened for writing).
pub fn notify(ctx: *mut Ctx, event: &CStr, key: *mut RString) {
    let class = raw::REDISMODULE_NOTIFY_MODULE;
    // SAFETY: `ctx` is a live context, `event` a C string, `key` a live string.
    unsafe {
        api!(RedisModule_SignalModifiedKey)(ctx, key);
        api!(RedisModule_NotifyKeyspaceEvent)(ctx, class, event.as_ptr(), key)
    };
}

/// Whether this call may block the client: not inside MULTI, Lua or
/// RM_Call, and not on a (writable) replica, where no hand-off can ever
/// serve it (the module writes only on a master).
pub fn may_block(ctx: *mut Ctx) -> bool {
    // SAFETY: `ctx` is the live context of the current call.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx) } as u32;
    let deny = raw::REDISMODULE_CTX_FLAGS_MULTI
        | raw::REDISMODULE_CTX_FLAGS_LUA
        | raw::REDISMODULE_CTX_FLAGS_DENY_BLOCKING
        | raw::REDISMODULE_CTX_FLAGS_SLAVE;
    flags & deny == 0
}

/// Whether the server runs in cluster mode.
pub fn is_cluster(ctx: *mut Ctx) -> bool {
    // SAFETY: as above.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx) } as u32;
    flags & raw::REDISMODULE_CTX_FLAGS_CLUSTER != 0
}

/// `CLUSTER NODES` as this node sees it (rare paths only: it formats text).
pub fn cluster_nodes(ctx: *mut Ctx) -> Option<String> {
    match redis_module::Context::new(ctx).call("CLUSTER", &["NODES"]) {
        Ok(redis_module::RedisValue::SimpleString(s))
        | Ok(redis_module::RedisValue::BulkString(s)) => Some(s),
        Ok(redis_module::RedisValue::StringBuffer(b)) => {
            Some(String::from_utf8_lossy(&b).into_owned())
        }
        Ok(redis_module::RedisValue::BulkRedisString(s)) => {
            Some(String::from_utf8_lossy(s.as_slice()).into_owned())
        }
        _ => None,
    }
}

/// Valkey 9's module option declaring that the module handles atomic slot
/// migration; without it `CLUSTER MIGRATESLOTS` refuses to run while the
/// module is loaded. Redis has no option with this bit.
const VALKEY_OPTIONS_HANDLE_ATOMIC_SLOT_MIGRATION: c_int = 1 << 5;

/// Valkey 9's context flag of the client that applies a slot import (the
/// target's end of `CLUSTER MIGRATESLOTS`). Only used to recognise Valkey 9:
/// that client also carries `REPLICATED` (checked on 9.1.2: flags
/// `PRIMARY|CLUSTER|REPLICATED|SLOT_IMPORT_CLIENT`), so `is_replay` accepts
/// the slots' keys it applies in AOF form (`DLOCK._SET`, `RL._SET`,
/// `BF._LOADX`) like the master link's. Redis gives this bit another meaning
/// (`DEBUG_ENABLED`).
const VALKEY_CTX_FLAGS_SLOT_IMPORT_CLIENT: u32 = 1 << 25;

/// Whether the server is Valkey: it exports its module API under the
/// `ValkeyModule_` names as well (Valkey 8+; it reports a Redis version).
fn is_valkey() -> bool {
    // SAFETY: reading a function pointer the server filled in at load.
    let Some(get_api) = (unsafe { raw::RedisModule_GetApi }) else {
        return false;
    };
    let mut found: *mut c_void = std::ptr::null_mut();
    // SAFETY: `get_api` writes one function pointer into `found` when it
    // knows the name; the name is a C string.
    let status = unsafe {
        get_api(
            c"ValkeyModule_GetContextFlags".as_ptr(),
            (&mut found as *mut *mut c_void).cast(),
        )
    };
    status == raw::REDISMODULE_OK as c_int && !found.is_null()
}

/// What the server offers beyond Redis 7.0, read once at load.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerFeatures {
    /// Valkey (8+).
    pub valkey: bool,
    /// Valkey 9+: atomic slot migration (`CLUSTER MIGRATESLOTS`).
    pub atomic_slot_migration: bool,
}

/// Reads what the server offers. Call from `OnLoad`.
pub fn detect_server() -> ServerFeatures {
    let valkey = is_valkey();
    // SAFETY: reading function pointers the server filled in at load; both
    // functions only return constants.
    let (flags_all, options_all) = unsafe {
        (
            raw::RedisModule_GetContextFlagsAll.map_or(0, |f| f()) as u32,
            raw::RedisModule_GetModuleOptionsAll.map_or(0, |f| f()),
        )
    };
    let atomic_slot_migration = valkey
        && flags_all & VALKEY_CTX_FLAGS_SLOT_IMPORT_CLIENT != 0
        && options_all & VALKEY_OPTIONS_HANDLE_ATOMIC_SLOT_MIGRATION != 0;
    ServerFeatures {
        valkey,
        atomic_slot_migration,
    }
}

/// Sets the module options: I/O errors are handled (a truncated RESTORE is
/// refused, not fatal), keys are signalled modified only by `notify` (a read
/// or a refused write leaves WATCH and client-side caching alone) and, on
/// Valkey 9+, atomic slot migration is supported.
pub fn set_module_options(ctx: *mut Ctx, features: ServerFeatures) {
    let mut options = (raw::REDISMODULE_OPTIONS_HANDLE_IO_ERRORS
        | raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED) as c_int;
    if features.atomic_slot_migration {
        options |= VALKEY_OPTIONS_HANDLE_ATOMIC_SLOT_MIGRATION;
    }
    // SAFETY: called from OnLoad with the load context; the server supports
    // every option bit set here (checked in `detect_server`).
    unsafe { api!(RedisModule_SetModuleOptions)(ctx, options) };
}

/// Whether this call is applied from a master (on Valkey 9 also a slot
/// import, whose client is flagged as replicated) or replayed from the AOF,
/// where outcomes must not depend on this server's clock.
pub fn is_replay(ctx: *mut Ctx) -> bool {
    // SAFETY: as above.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx) } as u32;
    flags & (raw::REDISMODULE_CTX_FLAGS_REPLICATED | raw::REDISMODULE_CTX_FLAGS_LOADING) != 0
}

/// Replicates the current command as it is. Only for commands whose effect
/// does not depend on time when applied with `is_replay` (never mixed with
/// other replication calls in one command).
pub fn replicate_verbatim(ctx: *mut Ctx) {
    // SAFETY: `ctx` is the live context of the running command.
    unsafe { api!(RedisModule_ReplicateVerbatim)(ctx) };
}

/// Where the running call comes from, as far as replicating it goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CallSource {
    /// A client's own command.
    Client,
    /// A command inside MULTI/EXEC, a script (EVAL, FCALL) or DLOCK.GUARD,
    /// which the server propagates as a unit.
    Unit,
    /// Applied from the master link (or a Valkey 9 slot import) or
    /// replayed from the AOF.
    Replay,
}

/// Where the running call comes from (one `RedisModule_GetContextFlags`).
pub fn call_source(ctx: *mut Ctx) -> CallSource {
    // SAFETY: `ctx` is the live context of the current call.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx) } as u32;
    let replay = raw::REDISMODULE_CTX_FLAGS_REPLICATED | raw::REDISMODULE_CTX_FLAGS_LOADING;
    let unit = raw::REDISMODULE_CTX_FLAGS_MULTI | raw::REDISMODULE_CTX_FLAGS_LUA;
    if flags & replay != 0 {
        CallSource::Replay
    } else if flags & unit != 0 || in_call() {
        CallSource::Unit
    } else {
        CallSource::Client
    }
}

/// Appends `tail` to `s`, an argument of the running command, in place
/// (`RedisModule_StringAppendBuffer`). False when Redis refuses: the string
/// is referenced more than once.
///
/// # Safety
/// `s` is a live argument of the call on `ctx`, and no slice of its bytes
/// (`bytes`) is used afterwards: appending may move them.
pub unsafe fn append_to_argument(ctx: *mut Ctx, s: *mut RString, tail: &[u8]) -> bool {
    // SAFETY: per the contract; `tail` is readable for its length and copied.
    let status =
        unsafe { api!(RedisModule_StringAppendBuffer)(ctx, s, tail.as_ptr().cast(), tail.len()) };
    status == raw::REDISMODULE_OK as c_int
}

/// Replies with an integer.
pub fn reply_integer(ctx: *mut Ctx, v: i64) {
    // SAFETY: `ctx` is the live context of a call that owes a reply.
    unsafe { api!(RedisModule_ReplyWithLongLong)(ctx, v) };
}

/// Replies with nil.
pub fn reply_null(ctx: *mut Ctx) {
    // SAFETY: as above.
    unsafe { api!(RedisModule_ReplyWithNull)(ctx) };
}

/// Replies with a decimal: a double in RESP3, and in RESP2 a bulk string of
/// the fewest digits that read back as `v`, with an exponent below 10^-4 as
/// `%g` writes them (`0.1` where the server's own `%.17g` would send
/// `0.10000000000000001`; `0.001`; `1e-10`).
pub fn reply_decimal(ctx: *mut Ctx, v: f64) {
    // SAFETY: a live command context.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx) } as u32;
    if flags & raw::REDISMODULE_CTX_FLAGS_RESP3 != 0 {
        // SAFETY: as above.
        unsafe { api!(RedisModule_ReplyWithDouble)(ctx, v) };
    } else {
        let text = if v != 0.0 && v.abs() < 1e-4 {
            format!("{v:e}")
        } else {
            v.to_string()
        };
        reply_bulk(ctx, text.as_bytes());
    }
}

/// Replies with a binary-safe bulk string.
pub fn reply_bulk(ctx: *mut Ctx, v: &[u8]) {
    // SAFETY: as above; `v` is readable for its length and copied by Redis.
    unsafe { api!(RedisModule_ReplyWithStringBuffer)(ctx, v.as_ptr().cast(), v.len()) };
}

/// Replies with a status string such as `OK`.
pub fn reply_status(ctx: *mut Ctx, v: &CStr) {
    // SAFETY: as above; `v` is a C string.
    unsafe { api!(RedisModule_ReplyWithSimpleString)(ctx, v.as_ptr()) };
}

/// Starts an array of `len` elements (the elements follow).
pub fn reply_array(ctx: *mut Ctx, len: usize) {
    // SAFETY: as above; the elements follow.
    unsafe { api!(RedisModule_ReplyWithArray)(ctx, len as std::ffi::c_long) };
}

/// Starts a map of `pairs` entries (a flat array of 2×pairs in RESP2).
pub fn reply_map(ctx: *mut Ctx, pairs: usize) {
    // SAFETY: as above; the entries follow.
    unsafe { api!(RedisModule_ReplyWithMap)(ctx, pairs as std::ffi::c_long) };
}

/// Replies with an error; `message` starts with its code (`ERR`, `WRONGTYPE`).
pub fn reply_error(ctx: *mut Ctx, message: &str) {
    let mut text = Vec::with_capacity(message.len() + 1);
    text.extend(
        message
            .bytes()
            .filter(|b| *b != 0 && *b != b'\r' && *b != b'\n'),
    );
    text.push(0);
    // SAFETY: as above; `text` is NUL-terminated and copied by Redis.
    unsafe { api!(RedisModule_ReplyWithError)(ctx, text.as_ptr().cast()) };
}

/// A reply of `RedisModule_Call`, freed when dropped.
pub struct CallReply(*mut raw::RedisModuleCallReply);

impl CallReply {
    /// Passes the reply on to the client of `ctx` as it is.
    pub fn forward(&self, ctx: *mut Ctx) {
        // SAFETY: `ctx` is the live context of the running command and the reply is live.
        unsafe { api!(RedisModule_ReplyWithCallReply)(ctx, self.0) };
    }

    /// The reply as a borrowed node, to read it.
    pub fn node(&self) -> ReplyNode<'_> {
        ReplyNode(self.0, std::marker::PhantomData)
    }
}

impl Drop for CallReply {
    fn drop(&mut self) {
        // SAFETY: the reply came from RedisModule_Call and is freed once, here.
        unsafe { api!(RedisModule_FreeCallReply)(self.0) };
    }
}

/// A node of a `CallReply` (the reply itself or an element of it), valid while
/// the reply lives.
#[derive(Clone, Copy)]
pub struct ReplyNode<'a>(
    *mut raw::RedisModuleCallReply,
    std::marker::PhantomData<&'a CallReply>,
);

impl<'a> ReplyNode<'a> {
    /// Element `i` of an array reply; `None` past its end or for another type.
    pub fn element(self, i: usize) -> Option<ReplyNode<'a>> {
        // SAFETY: the node is part of a live reply; out-of-range indexes and
        // non-array replies return NULL.
        let e = unsafe { api!(RedisModule_CallReplyArrayElement)(self.0, i) };
        (!e.is_null()).then_some(ReplyNode(e, std::marker::PhantomData))
    }

    /// The value of an integer reply; `None` for other types.
    pub fn integer(self) -> Option<i64> {
        // SAFETY: the node is part of a live reply.
        let kind = unsafe { api!(RedisModule_CallReplyType)(self.0) };
        // SAFETY: as above; the reply is an integer.
        (kind == raw::REDISMODULE_REPLY_INTEGER as c_int)
            .then(|| unsafe { api!(RedisModule_CallReplyInteger)(self.0) })
    }

    /// Whether an array reply has no elements (a string reply no bytes).
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The number of elements of an array (or bytes of a string) reply.
    pub fn len(self) -> usize {
        // SAFETY: the node is part of a live reply.
        unsafe { api!(RedisModule_CallReplyLength)(self.0) }
    }

    /// The bytes of a string, status or error reply; empty for other types.
    pub fn bytes(self) -> &'a [u8] {
        let mut len = 0;
        // SAFETY: the node is part of a live reply; the bytes live as long as it.
        unsafe {
            let p = api!(RedisModule_CallReplyStringPtr)(self.0, &mut len);
            if p.is_null() {
                return &[];
            }
            std::slice::from_raw_parts(p.cast::<u8>(), len)
        }
    }

    /// Whether the reply is nil (a null bulk string or array).
    pub fn is_null(self) -> bool {
        // SAFETY: the node is part of a live reply.
        let kind = unsafe { api!(RedisModule_CallReplyType)(self.0) };
        kind == raw::REDISMODULE_REPLY_NULL as c_int
    }
}

thread_local! {
    /// Whether a command warden runs through `call` is running.
    static IN_CALL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this code runs inside a command warden started with `call` (the
/// command of a DLOCK.GUARD): its arguments are shared with the caller's, and
/// the server propagates what it does with the caller's execution unit.
pub fn in_call() -> bool {
    IN_CALL.with(|c| c.get())
}

/// Clears `IN_CALL` when the call returns, also on a panic.
struct CallScope;

impl Drop for CallScope {
    fn drop(&mut self) {
        IN_CALL.with(|c| c.set(false));
    }
}

/// Runs `argv` (the command name first) with `RedisModule_Call` and the
/// format `format`, which must start with `v` (the argv form), e.g.
/// `c"v!CM0"`. `Err(errno)` when Redis refused to run it.
pub fn call(ctx: *mut Ctx, format: &CStr, argv: &[*mut RString]) -> Result<CallReply, c_int> {
    let Some((&name, rest)) = argv.split_first() else {
        return Err(libc::EINVAL);
    };
    if format.to_bytes().first() != Some(&b'v') {
        return Err(libc::EINVAL);
    }
    IN_CALL.with(|c| c.set(true));
    let _scope = CallScope;
    // SAFETY: `name` is a live string; its bytes are NUL-terminated (an sds).
    // The `v` format takes an argv pointer and a count, which `rest` provides
    // for the duration of the call; Redis takes its own references.
    let reply = unsafe {
        let name = api!(RedisModule_StringPtrLen)(name, std::ptr::null_mut());
        *libc::__errno_location() = 0;
        api!(RedisModule_Call)(ctx, name, format.as_ptr(), rest.as_ptr(), rest.len())
    };
    if reply.is_null() {
        // SAFETY: reading this thread's errno, which RedisModule_Call set.
        return Err(unsafe { *libc::__errno_location() });
    }
    Ok(CallReply(reply))
}

/// `COMMAND INFO <name>`, or `None` when the server cannot answer it.
pub fn command_info(ctx: *mut Ctx, name: &[u8]) -> Option<CallReply> {
    // SAFETY: `ctx` is live; the `cb` format takes a C string and a buffer
    // with its length, both readable during the call.
    let reply = unsafe {
        api!(RedisModule_Call)(
            ctx,
            c"COMMAND".as_ptr(),
            c"cb".as_ptr(),
            c"INFO".as_ptr(),
            name.as_ptr(),
            name.len(),
        )
    };
    (!reply.is_null()).then_some(CallReply(reply))
}

/// Whether the running call only asks which arguments are keys (a command
/// registered with `getkeys-api`).
pub fn is_keys_position_request(ctx: *mut Ctx) -> bool {
    // SAFETY: `ctx` is the live context of the current call.
    unsafe { api!(RedisModule_IsKeysPositionRequest)(ctx) != 0 }
}

/// Declares argument `pos` of the running call a key with the access flags
/// `flags` (`REDISMODULE_CMD_KEY_*`), in a keys request.
pub fn key_at(ctx: *mut Ctx, pos: usize, flags: c_int) {
    // SAFETY: as above; Redis ignores positions outside the arguments.
    unsafe { api!(RedisModule_KeyAtPosWithFlags)(ctx, pos as c_int, flags) };
}

/// The positions of the keys in `argv` (the command name first), each with its
/// access flags, as the server finds them for that command; empty for an
/// unknown command or a wrong number of arguments.
pub fn command_keys(ctx: *mut Ctx, argv: &[*mut RString]) -> Vec<(usize, c_int)> {
    let mut count: c_int = 0;
    let mut flags: *mut c_int = std::ptr::null_mut();
    // SAFETY: `argv` holds live strings for the duration of the call; Redis
    // only reads them (the pointer is `*mut` in the C signature alone).
    let positions = unsafe {
        api!(RedisModule_GetCommandKeysWithFlags)(
            ctx,
            argv.as_ptr().cast_mut(),
            argv.len() as c_int,
            &mut count,
            &mut flags,
        )
    };
    if positions.is_null() {
        return Vec::new();
    }
    let count = count.max(0) as usize;
    // SAFETY: Redis returned `count` positions and as many flags, allocated
    // with its allocator; they are copied, then each array is freed once.
    unsafe {
        let found = (0..count)
            .filter_map(|i| {
                let pos = usize::try_from(*positions.add(i)).ok()?;
                let key_flags = if flags.is_null() { 0 } else { *flags.add(i) };
                Some((pos, key_flags))
            })
            .collect();
        api!(RedisModule_Free)(positions.cast());
        if !flags.is_null() {
            api!(RedisModule_Free)(flags.cast());
        }
        found
    }
}

/// Writes a warning line to the server log.
pub fn log_warning(ctx: *mut Ctx, message: &str) {
    redis_module::Context::new(ctx).log_warning(message);
}

/// Runs `f`, turning a panic into `fallback` so it never unwinds into Redis.
pub fn shield<R>(fallback: R, f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}
