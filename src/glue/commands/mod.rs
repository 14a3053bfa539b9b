//! The command table and its registration. Every handler (in its family's
//! folder) runs behind `guard`: a panic becomes an error reply.

pub mod docs;

use docs::Doc;

use std::ffi::{c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use redis_module::raw;

use crate::common::error::WardenError;
use crate::glue::args::Args;
use crate::glue::host::{self, api, Ctx, RStr};

/// A command handler: replies itself on success; an `Err` becomes the error reply.
pub type Handler = fn(Ctx, &Args) -> Result<(), WardenError>;

/// Runs a handler with the panic guard: a panic becomes an `ERR` reply.
/// The command side of the FFI boundary: the context and the arguments
/// become handles here, once per call.
///
/// # Safety
/// `ctx`, `argv` and `argc` are what Redis passed to a command function: the
/// live context of the call and `argc` live arguments at `argv` (or null),
/// valid until the command function returns.
pub unsafe fn guard(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    handler: Handler,
) -> c_int {
    // SAFETY: the command's own context, used only during this call (this
    // function's contract).
    let ctx = unsafe { Ctx::from_raw(ctx) };
    let argv: &[RStr] = if argv.is_null() || argc <= 0 {
        &[]
    } else {
        // SAFETY: Redis passes `argc` live, non-null arguments at `argv`, kept
        // for the duration of the call (this function's contract); an `RStr`
        // is a transparent non-null string pointer.
        unsafe { std::slice::from_raw_parts(argv.cast::<RStr>(), argc as usize) }
    };
    let args = Args::new(argv);
    let outcome = catch_unwind(AssertUnwindSafe(|| handler(ctx, &args)));
    let err = match outcome {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(_) => {
            host::log_warning(
                ctx,
                "warden: a command handler panicked; replied with an error",
            );
            Some(WardenError::Internal)
        }
    };
    if let Some(e) = err {
        host::reply_error(ctx, &e.to_string());
    }
    raw::REDISMODULE_OK as c_int
}

/// Turns a `Handler` path into an `extern "C"` command function.
macro_rules! command_fn {
    ($handler:path) => {{
        unsafe extern "C" fn trampoline(
            ctx: *mut redis_module::raw::RedisModuleCtx,
            argv: *mut *mut redis_module::raw::RedisModuleString,
            argc: std::ffi::c_int,
        ) -> std::ffi::c_int {
            // SAFETY: Redis calls a command function with its live context and
            // `argc` live arguments at `argv`, valid until it returns.
            unsafe { $crate::glue::commands::guard(ctx, argv, argc, $handler) }
        }
        trampoline as unsafe extern "C" fn(_, _, _) -> _
    }};
}
pub(crate) use command_fn;

/// One row of the command table: everything Redis is told about a command.
pub struct Command {
    /// Command name as clients type it (lower case).
    pub name: &'static str,
    /// The `extern "C"` entry point made by `command_fn!`.
    pub func: unsafe extern "C" fn(
        *mut raw::RedisModuleCtx,
        *mut *mut raw::RedisModuleString,
        c_int,
    ) -> c_int,
    /// Redis command flags (`write` also marks the key spec read-write).
    pub flags: &'static str,
    /// What `COMMAND DOCS` and `COMMAND INFO` show.
    pub doc: Doc,
}

impl Command {
    /// Whether the command writes its key.
    pub fn writes(&self) -> bool {
        self.flags.split(' ').any(|f| f == "write")
    }

    /// Whether the command takes a key (at argument 1).
    pub fn has_key(&self) -> bool {
        self.doc.has_key()
    }
}

/// The rows of every command, family by family (each family's `table`).
pub type Families = [&'static [Command]];

/// Every row of `families`.
fn rows(families: &'static Families) -> impl Iterator<Item = &'static Command> {
    families.iter().flat_map(|family| family.iter())
}

/// Registers the command table with Redis.
pub fn register(ctx: Ctx, families: &'static Families) -> Result<(), String> {
    for spec in rows(families) {
        let name = CString::new(spec.name).map_err(|e| e.to_string())?;
        let flags = CString::new(spec.flags).map_err(|e| e.to_string())?;
        let key = c_int::from(spec.has_key());
        // SAFETY: called from OnLoad with the load context; `name` and `flags` are C strings and `spec.func` a command entry point.
        let status = unsafe {
            api!(RedisModule_CreateCommand)(
                ctx.as_ptr(),
                name.as_ptr(),
                Some(spec.func),
                flags.as_ptr(),
                key,
                key,
                key,
            )
        };
        if status != raw::REDISMODULE_OK as c_int {
            return Err(format!("cannot register command {}", spec.name));
        }
    }
    add_acl_categories(ctx, families);
    let rows =
        rows(families).map(|c| (c.name, c.writes(), c.flags.contains("getkeys-api"), &c.doc));
    docs::register(ctx, rows)
}

/// The ACL category of a command's family (`dlock`, `bloom`, `ratelimit`, `cache`).
fn family_category(name: &str) -> &'static str {
    match name.split('.').next() {
        Some("dlock") => "dlock",
        Some("bf") => "bloom",
        Some("cache") => "cache",
        _ => "ratelimit",
    }
}

/// Sets each command's ACL categories where the server lets a module:
/// `read`/`write`/`fast`/`blocking` as its flags say (Redis 7.2+, Valkey 8+),
/// and one category per family where a module may add categories (Redis
/// 7.4+, Valkey 8+). Redis 7.0 has neither function; the README's ACL recipe
/// covers it there. Best effort: a refusal is logged, the module still loads.
fn add_acl_categories(ctx: Ctx, families: &'static Families) {
    // SAFETY: reading function pointers the server filled in at load.
    let (add, Some(set)) = (unsafe { raw::RedisModule_AddACLCategory }, unsafe {
        raw::RedisModule_SetCommandACLCategories
    }) else {
        return;
    };
    let family_categories = add.is_some();
    for (family, name) in [
        ("dlock", c"dlock"),
        ("bloom", c"bloom"),
        ("ratelimit", c"ratelimit"),
        ("cache", c"cache"),
    ] {
        let Some(add) = add else { break };
        // SAFETY: called from OnLoad with the load context, as required.
        if unsafe { add(ctx.as_ptr(), name.as_ptr()) } != raw::REDISMODULE_OK as c_int {
            host::log_warning(ctx, &format!("warden: cannot add ACL category {family}"));
        }
    }
    for spec in rows(families) {
        let mut categories = Vec::new();
        if family_categories {
            categories.push(family_category(spec.name));
        }
        for (flag, category) in [
            ("write", "write"),
            ("readonly", "read"),
            ("fast", "fast"),
            ("blocking", "blocking"),
        ] {
            if spec.flags.split(' ').any(|f| f == flag) {
                categories.push(category);
            }
        }
        if categories.is_empty() {
            continue;
        }
        let (Ok(name), Ok(categories)) =
            (CString::new(spec.name), CString::new(categories.join(" ")))
        else {
            continue; // table names and categories hold no NUL
        };
        // SAFETY: the command was registered above; both strings are C strings.
        let ok = unsafe {
            let command = api!(RedisModule_GetCommand)(ctx.as_ptr(), name.as_ptr());
            !command.is_null() && set(command, categories.as_ptr()) == raw::REDISMODULE_OK as c_int
        };
        if !ok {
            host::log_warning(
                ctx,
                &format!("warden: cannot set the ACL categories of {}", spec.name),
            );
        }
    }
}
