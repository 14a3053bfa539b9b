//! Calling other commands from a module (`RedisModule_Call`), their
//! replies, and the keys of a command.

use std::ffi::{c_int, CStr};

use redis_module::raw;

use crate::glue::host::{api, emit, log_warning, Ctx, RStr, Sink};

/// A reply of `RedisModule_Call`, freed when dropped.
pub struct CallReply(*mut raw::RedisModuleCallReply);

impl CallReply {
    /// Takes ownership of a reply `RedisModule_Call` returned (`None` for
    /// null: the call was refused).
    pub(super) fn from_raw(reply: *mut raw::RedisModuleCallReply) -> Option<CallReply> {
        (!reply.is_null()).then_some(CallReply(reply))
    }

    /// Passes the reply on to the client of `ctx` as it is.
    pub fn forward(&self, ctx: Ctx) {
        // SAFETY: `ctx` is the live context of the running command and the reply is live.
        unsafe { api!(RedisModule_ReplyWithCallReply)(ctx.as_ptr(), self.0) };
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
/// command a guard runs): its arguments are shared with the caller's, and
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
pub fn call(ctx: Ctx, format: &CStr, argv: &[RStr]) -> Result<CallReply, c_int> {
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
    // for the duration of the call (an `RStr` is a transparent string
    // pointer); Redis takes its own references.
    let reply = unsafe {
        let name = api!(RedisModule_StringPtrLen)(name.as_ptr(), std::ptr::null_mut());
        *libc::__errno_location() = 0;
        api!(RedisModule_Call)(
            ctx.as_ptr(),
            name,
            format.as_ptr(),
            rest.as_ptr().cast::<*mut raw::RedisModuleString>(),
            rest.len(),
        )
    };
    if reply.is_null() {
        // SAFETY: reading this thread's errno, which RedisModule_Call set.
        return Err(unsafe { *libc::__errno_location() });
    }
    Ok(CallReply(reply))
}

/// `COMMAND INFO <name>`, or `None` when the server cannot answer it.
pub fn command_info(ctx: Ctx, name: &[u8]) -> Option<CallReply> {
    // SAFETY: `ctx` is live; the `cb` format takes a C string and a buffer
    // with its length, both readable during the call.
    let reply = unsafe {
        api!(RedisModule_Call)(
            ctx.as_ptr(),
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
pub fn is_keys_position_request(ctx: Ctx) -> bool {
    // SAFETY: `ctx` is the live context of the current call.
    unsafe { api!(RedisModule_IsKeysPositionRequest)(ctx.as_ptr()) != 0 }
}

/// Declares argument `pos` of the running call a key with the access flags
/// `flags` (`REDISMODULE_CMD_KEY_*`), in a keys request.
pub fn key_at(ctx: Ctx, pos: usize, flags: c_int) {
    // SAFETY: as above; Redis ignores positions outside the arguments.
    unsafe { api!(RedisModule_KeyAtPosWithFlags)(ctx.as_ptr(), pos as c_int, flags) };
}

/// The positions of the keys in `argv` (the command name first), each with its
/// access flags, as the server finds them for that command; empty for an
/// unknown command or a wrong number of arguments.
pub fn command_keys(ctx: Ctx, argv: &[RStr]) -> Vec<(usize, c_int)> {
    let mut count: c_int = 0;
    let mut flags: *mut c_int = std::ptr::null_mut();
    // SAFETY: `argv` holds live strings for the duration of the call (an
    // `RStr` is a transparent string pointer); Redis only reads them (the
    // pointer is `*mut` in the C signature alone).
    let positions = unsafe {
        api!(RedisModule_GetCommandKeysWithFlags)(
            ctx.as_ptr(),
            argv.as_ptr()
                .cast::<*mut raw::RedisModuleString>()
                .cast_mut(),
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

/// Emits `RESTORE key 0 <payload>` to an AOF rewrite, the payload being
/// `DUMP key` in the key's database: how another module's type rewrites
/// its keys where no command rebuilds a value (as that module does), so
/// its own server replays the file too. Nothing is emitted, and
/// a warning logged, when the dump fails.
pub fn emit_restore_of(aof: Sink, key: RStr) {
    let Sink::AofRewrite(io) = aof else {
        return;
    };
    // SAFETY: `io` is the live IO of the running AOF rewrite callback; the
    // thread-safe context is made, used and freed here, selecting the key's
    // database before the call; the reply is read and freed before it.
    let payload = unsafe {
        let db = api!(RedisModule_GetDbIdFromIO)(io.as_ptr());
        let ctx = api!(RedisModule_GetThreadSafeContext)(std::ptr::null_mut());
        api!(RedisModule_SelectDb)(ctx, db);
        let reply = api!(RedisModule_Call)(ctx, c"DUMP".as_ptr(), c"s".as_ptr(), key.as_ptr());
        let payload = CallReply::from_raw(reply).and_then(|r| {
            let kind = api!(RedisModule_CallReplyType)(r.0);
            (kind == raw::REDISMODULE_REPLY_STRING as c_int).then(|| r.node().bytes().to_vec())
        });
        api!(RedisModule_FreeThreadSafeContext)(ctx);
        payload
    };
    match payload {
        Some(p) => emit(aof, c"RESTORE", (key, 0i64, p.as_slice())),
        None => {
            // SAFETY: as above; the IO's context is the rewrite's.
            let ctx = unsafe { Ctx::from_raw(api!(RedisModule_GetContextFromIO)(io.as_ptr())) };
            log_warning(
                ctx,
                "warden: AOF rewrite: DUMP of a key failed; the key is left out",
            );
        }
    }
}
