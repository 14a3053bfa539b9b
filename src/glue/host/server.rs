//! The server's state as a module write needs it: role, pauses, loading,
//! replicas, cluster mode, where the running call comes from, and what the
//! server offers (Redis or Valkey, atomic slot migration).

use std::cell::RefCell;
use std::ffi::{c_int, c_void, CStr};
use std::sync::atomic::{AtomicPtr, Ordering};

use redis_module::raw;

use crate::glue::host::{api, in_call, Ctx, RStr};

/// Whether the server accepts a write the module starts by itself (a timer,
/// a hand-off): not while clients are paused (`CLIENT PAUSE`, `FAILOVER`),
/// on a replica, or while loading. Writing then crashes Redis 7.0 (a paused
/// server keeps expired keys it reports as missing) or diverges a replica.
pub fn writes_allowed(ctx: Ctx) -> bool {
    if writes_paused() {
        return false;
    }
    // SAFETY: `ctx` is the live context of the current callback.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx.as_ptr()) } as u32;
    let blocked = raw::REDISMODULE_CTX_FLAGS_LOADING
        | raw::REDISMODULE_CTX_FLAGS_ASYNC_LOADING
        | raw::REDISMODULE_CTX_FLAGS_SLAVE;
    flags & raw::REDISMODULE_CTX_FLAGS_MASTER != 0 && flags & blocked == 0
}

/// Whether writes are held back by a pause (`CLIENT PAUSE WRITE|ALL`, a
/// failover in progress): nothing may be replicated, and keys do not
/// expire. Asking also ends a pause whose time is up.
pub fn writes_paused() -> bool {
    // SAFETY: plain query of server state, from the main thread.
    unsafe { api!(RedisModule_AvoidReplicaTraffic)() != 0 }
}

/// Whether a module-made write may be propagated now, whatever the role (a
/// replica's goes to its own AOF only): not while clients are paused (Redis
/// asserts that nothing is propagated then) or while loading.
pub fn propagation_allowed(ctx: Ctx) -> bool {
    if writes_paused() {
        return false;
    }
    // SAFETY: `ctx` is the live context of the current callback.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx.as_ptr()) } as u32;
    flags & (raw::REDISMODULE_CTX_FLAGS_LOADING | raw::REDISMODULE_CTX_FLAGS_ASYNC_LOADING) == 0
}

/// The id of the client connection running the call, if the caller is one:
/// `None` inside a script or a module's call (their clients are not
/// connections, and never close).
pub fn connection_id(ctx: Ctx) -> Option<u64> {
    // SAFETY: `ctx` is the live context of the current call.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx.as_ptr()) } as u32;
    // Valkey 9 runs a script's calls on the caller's own client.
    if flags & raw::REDISMODULE_CTX_FLAGS_LUA != 0 || in_call() {
        return None;
    }
    // SAFETY: `ctx` is the live context of the current call.
    let id = unsafe { api!(RedisModule_GetClientId)(ctx.as_ptr()) };
    (id != 0 && connection_is_open(id)).then_some(id)
}

/// Whether the client connection `id` is open (a linked client: not a
/// script's or a module call's, not one already freed).
pub fn connection_is_open(id: u64) -> bool {
    // SAFETY: a null info pointer only asks whether the id is a linked
    // client; nothing is written.
    unsafe {
        api!(RedisModule_GetClientInfoById)(std::ptr::null_mut(), id)
            == raw::REDISMODULE_OK as c_int
    }
}

/// A server-event hook, as Redis calls it.
pub type EventHook =
    unsafe extern "C" fn(*mut raw::RedisModuleCtx, raw::RedisModuleEvent, u64, *mut c_void);

thread_local! {
    /// Every hook subscribed, with its event, in subscription order.
    static HOOKS: RefCell<Vec<(u64, EventHook)>> = const { RefCell::new(Vec::new()) };
}

/// Subscribes `hook` to the server event `id` (from OnLoad: `ctx` is the
/// load context). Redis keeps one callback per event per module, so the
/// first subscription to an event installs `dispatch`, which calls every
/// hook of that event in subscription order.
pub fn subscribe_server_event(ctx: Ctx, id: u64, hook: EventHook) -> bool {
    let first = HOOKS.with(|h| {
        let mut hooks = h.borrow_mut();
        let first = !hooks.iter().any(|(event, _)| *event == id);
        hooks.push((id, hook));
        first
    });
    if !first {
        return true;
    }
    let event = raw::RedisModuleEvent { id, dataver: 1 };
    // SAFETY: `ctx` is the live load context; `dispatch` has Redis's signature.
    unsafe {
        api!(RedisModule_SubscribeToServerEvent)(ctx.as_ptr(), event, Some(dispatch))
            == raw::REDISMODULE_OK as c_int
    }
}

/// # Safety
/// Called by Redis with a valid context and the event's data.
///
/// The one callback of every event the module follows: its hooks, in turn.
unsafe extern "C" fn dispatch(
    ctx: *mut raw::RedisModuleCtx,
    event: raw::RedisModuleEvent,
    subevent: u64,
    data: *mut c_void,
) {
    let hook_at = |i: usize| {
        HOOKS.with(|h| {
            h.borrow()
                .iter()
                .filter(|(id, _)| *id == event.id)
                .nth(i)
                .map(|(_, hook)| *hook)
        })
    };
    let mut i = 0;
    while let Some(hook) = hook_at(i) {
        // SAFETY: Redis's own arguments, passed on unchanged.
        unsafe { hook(ctx, event, subevent, data) };
        i += 1;
    }
}

/// The module's detached context (`make_detached_context`).
static DETACHED: AtomicPtr<raw::RedisModuleCtx> = AtomicPtr::new(std::ptr::null_mut());

/// Makes the module's detached context, from OnLoad's `load`.
pub fn make_detached_context(load: Ctx) -> bool {
    // SAFETY: OnLoad's live context; the detached context lives as long as
    // the module and is never freed.
    let ctx = unsafe { api!(RedisModule_GetDetachedThreadSafeContext)(load.as_ptr()) };
    DETACHED.store(ctx, Ordering::Relaxed);
    !ctx.is_null()
}

/// The module's detached context: for what runs without a context of its
/// own (a data type's callback) and must start a timer. Main thread only.
pub fn detached_context() -> Option<Ctx> {
    let ctx = DETACHED.load(Ordering::Relaxed);
    // SAFETY: made once at load and never freed; used on the main thread.
    (!ctx.is_null()).then(|| unsafe { Ctx::from_raw(ctx) })
}

/// Whether this node is a master and not loading, asked without a context
/// (from a data type's callback).
pub fn is_serving_master() -> bool {
    // SAFETY: a null context asks only for server-wide flags.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(std::ptr::null_mut()) } as u32;
    let busy = raw::REDISMODULE_CTX_FLAGS_LOADING | raw::REDISMODULE_CTX_FLAGS_ASYNC_LOADING;
    flags & raw::REDISMODULE_CTX_FLAGS_MASTER != 0 && flags & busy == 0
}

/// Whether this node is a master (whatever else holds writes back).
pub fn is_master(ctx: Ctx) -> bool {
    // SAFETY: `ctx` is the live context of the current callback.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx.as_ptr()) } as u32;
    flags & raw::REDISMODULE_CTX_FLAGS_MASTER != 0
}

/// The `slave<i>` fields of `INFO replication` (`ip=…,port=…,state=…,
/// offset=…,lag=…`), one per connected replica. It formats the whole
/// section: call it rarely.
pub fn replica_fields(ctx: Ctx) -> Vec<Vec<u8>> {
    // SAFETY: `ctx` is a live context; the data is freed below, and the
    // field texts are copied out before that.
    unsafe {
        let data = api!(RedisModule_GetServerInfo)(ctx.as_ptr(), c"replication".as_ptr());
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
        api!(RedisModule_FreeServerInfo)(ctx.as_ptr(), data);
        fields
    }
}

/// Whether this call may block the client: not inside MULTI, Lua or
/// RM_Call, and not on a (writable) replica, where no hand-off can ever
/// serve it (the module writes only on a master).
pub fn may_block(ctx: Ctx) -> bool {
    // SAFETY: `ctx` is the live context of the current call.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx.as_ptr()) } as u32;
    let deny = raw::REDISMODULE_CTX_FLAGS_MULTI
        | raw::REDISMODULE_CTX_FLAGS_LUA
        | raw::REDISMODULE_CTX_FLAGS_DENY_BLOCKING
        | raw::REDISMODULE_CTX_FLAGS_SLAVE;
    flags & deny == 0
}

/// Whether the server runs in cluster mode.
pub fn is_cluster(ctx: Ctx) -> bool {
    // SAFETY: as above.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx.as_ptr()) } as u32;
    flags & raw::REDISMODULE_CTX_FLAGS_CLUSTER != 0
}

/// `CLUSTER NODES` as this node sees it (rare paths only: it formats text).
pub fn cluster_nodes(ctx: Ctx) -> Option<String> {
    match ctx.context().call("CLUSTER", &["NODES"]) {
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
/// the slots' keys it applies in AOF form (the families' internal
/// commands) like the master link's. Redis gives this bit another meaning
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
pub fn set_module_options(ctx: Ctx, features: ServerFeatures) {
    let mut options = (raw::REDISMODULE_OPTIONS_HANDLE_IO_ERRORS
        | raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED) as c_int;
    if features.atomic_slot_migration {
        options |= VALKEY_OPTIONS_HANDLE_ATOMIC_SLOT_MIGRATION;
    }
    // SAFETY: called from OnLoad with the load context; the server supports
    // every option bit set here (checked in `detect_server`).
    unsafe { api!(RedisModule_SetModuleOptions)(ctx.as_ptr(), options) };
}

/// Whether this call is applied from a master (on Valkey 9 also a slot
/// import, whose client is flagged as replicated) or replayed from the AOF,
/// where outcomes must not depend on this server's clock.
pub fn is_replay(ctx: Ctx) -> bool {
    // SAFETY: as above.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx.as_ptr()) } as u32;
    flags & (raw::REDISMODULE_CTX_FLAGS_REPLICATED | raw::REDISMODULE_CTX_FLAGS_LOADING) != 0
}

/// Replicates the current command as it is. Only for commands whose effect
/// does not depend on time when applied with `is_replay` (never mixed with
/// other replication calls in one command).
pub fn replicate_verbatim(ctx: Ctx) {
    // SAFETY: `ctx` is the live context of the running command.
    unsafe { api!(RedisModule_ReplicateVerbatim)(ctx.as_ptr()) };
}

/// Replicates the current call's arguments `argv` (all but its name) under
/// the command name `name`: a call by an alias, as its own command.
pub fn replicate_as(ctx: Ctx, name: &CStr, argv: &[RStr]) {
    let strings: Vec<_> = argv.iter().map(|a| a.as_ptr()).collect();
    // SAFETY: `ctx` is the live context of the running command; `strings`
    // holds `argv`'s live strings, as many as given; `name` is a C string.
    unsafe {
        api!(RedisModule_Replicate)(
            ctx.as_ptr(),
            name.as_ptr(),
            c"v".as_ptr(),
            strings.as_ptr(),
            strings.len(),
        )
    };
}

/// Where the running call comes from, as far as replicating it goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CallSource {
    /// A client's own command.
    Client,
    /// A command inside MULTI/EXEC, a script (EVAL, FCALL) or a command warden
    /// runs for its caller (`call`),
    /// which the server propagates as a unit.
    Unit,
    /// Applied from the master link (or a Valkey 9 slot import) or
    /// replayed from the AOF.
    Replay,
}

/// Where the running call comes from (one `RedisModule_GetContextFlags`).
pub fn call_source(ctx: Ctx) -> CallSource {
    // SAFETY: `ctx` is the live context of the current call.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx.as_ptr()) } as u32;
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
