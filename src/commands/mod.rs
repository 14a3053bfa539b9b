//! The command table and its registration. Every handler (in its family's
//! folder) runs behind `guard`: a panic becomes an error reply.

pub mod docs;

use std::ffi::{c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use redis_module::raw;

use crate::args::Args;
use crate::bloom::commands as bloom;
use crate::core::error::WardenError;
use crate::host::{self, api, Ctx, RString};
use crate::lock::commands as lock;
use crate::rate::commands as rate;

/// A command handler: replies itself on success; an `Err` becomes the error reply.
pub type Handler = fn(*mut Ctx, &Args) -> Result<(), WardenError>;

/// Runs a handler with the panic guard: a panic becomes an `ERR` reply.
pub fn guard(ctx: *mut Ctx, argv: *mut *mut RString, argc: c_int, handler: Handler) -> c_int {
    let argv: &[*mut RString] = if argv.is_null() || argc <= 0 {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(argv, argc as usize) }
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
            $crate::commands::guard(ctx, argv, argc, $handler)
        }
        trampoline as unsafe extern "C" fn(_, _, _) -> _
    }};
}

/// One row of the command table.
pub struct CommandSpec {
    /// Command name as clients type it.
    pub name: &'static str,
    /// The `extern "C"` entry point made by `command_fn!`.
    pub func: unsafe extern "C" fn(*mut Ctx, *mut *mut RString, c_int) -> c_int,
    /// Redis command flags.
    pub flags: &'static str,
}

/// Every warden command. Each takes exactly one key, at argument 1.
pub fn table() -> Vec<CommandSpec> {
    vec![
        CommandSpec {
            name: "dlock.acquire",
            func: command_fn!(lock::acquire),
            flags: "write deny-oom blocking",
        },
        CommandSpec {
            name: "dlock.release",
            func: command_fn!(lock::release),
            flags: "write",
        },
        CommandSpec {
            name: "dlock.extend",
            func: command_fn!(lock::extend),
            flags: "write deny-oom fast",
        },
        CommandSpec {
            name: "dlock.info",
            func: command_fn!(lock::info),
            flags: "readonly fast",
        },
        CommandSpec {
            name: "bf.reservex",
            func: command_fn!(bloom::reserve),
            flags: "write deny-oom",
        },
        CommandSpec {
            name: "bf.addx",
            func: command_fn!(bloom::add),
            flags: "write deny-oom",
        },
        CommandSpec {
            name: "bf.maddx",
            func: command_fn!(bloom::madd),
            flags: "write deny-oom",
        },
        CommandSpec {
            name: "bf.insertx",
            func: command_fn!(bloom::insert),
            flags: "write deny-oom",
        },
        CommandSpec {
            name: "bf.existsx",
            func: command_fn!(bloom::exists),
            flags: "readonly fast",
        },
        CommandSpec {
            name: "bf.mexistsx",
            func: command_fn!(bloom::mexists),
            flags: "readonly fast",
        },
        CommandSpec {
            name: "bf.infox",
            func: command_fn!(bloom::info),
            flags: "readonly fast",
        },
        CommandSpec {
            name: "bf.cardx",
            func: command_fn!(bloom::card),
            flags: "readonly fast",
        },
        CommandSpec {
            name: "bf._loadx",
            func: command_fn!(bloom::load),
            flags: "write deny-oom",
        },
        CommandSpec {
            name: "rl.token",
            func: command_fn!(rate::token),
            flags: "write deny-oom fast",
        },
        CommandSpec {
            name: "rl.leaky",
            func: command_fn!(rate::leaky),
            flags: "write deny-oom fast",
        },
        CommandSpec {
            name: "rl.window",
            func: command_fn!(rate::window),
            flags: "write deny-oom fast",
        },
        CommandSpec {
            name: "rl.gcra",
            func: command_fn!(rate::gcra),
            flags: "write deny-oom fast",
        },
        CommandSpec {
            name: "rl._set",
            func: command_fn!(rate::set_state),
            flags: "write deny-oom",
        },
        CommandSpec {
            name: "dlock._set",
            func: command_fn!(lock::set_state),
            flags: "write deny-oom",
        },
    ]
}

/// Registers the command table with Redis.
pub fn register(ctx: *mut Ctx) -> Result<(), String> {
    for spec in table() {
        let name = CString::new(spec.name).map_err(|e| e.to_string())?;
        let flags = CString::new(spec.flags).map_err(|e| e.to_string())?;
        let status = unsafe {
            api!(RedisModule_CreateCommand)(
                ctx,
                name.as_ptr(),
                Some(spec.func),
                flags.as_ptr(),
                1,
                1,
                1,
            )
        };
        if status != raw::REDISMODULE_OK as c_int {
            return Err(format!("cannot register command {}", spec.name));
        }
    }
    add_acl_categories(ctx);
    docs::register(ctx)
}

/// The ACL category of a command's family (`dlock`, `bloom`, `ratelimit`).
fn family_category(name: &str) -> &'static str {
    match name.split('.').next() {
        Some("dlock") => "dlock",
        Some("bf") => "bloom",
        _ => "ratelimit",
    }
}

/// Where the server has module ACL categories (Redis 7.2+, Valkey 8+): one
/// per family, set on each command with `read`/`write`/`fast`/`blocking` as
/// its flags say. Redis 7.0 has neither function; the README's ACL recipe
/// covers it there. Best effort: a refusal is logged, the module still loads.
fn add_acl_categories(ctx: *mut Ctx) {
    // SAFETY: reading function pointers the server filled in at load.
    let (Some(add), Some(set)) = (unsafe { raw::RedisModule_AddACLCategory }, unsafe {
        raw::RedisModule_SetCommandACLCategories
    }) else {
        return;
    };
    for family in ["dlock", "bloom", "ratelimit"] {
        let name = CString::new(family).expect("no NUL");
        // SAFETY: called from OnLoad with the load context, as required.
        if unsafe { add(ctx, name.as_ptr()) } != raw::REDISMODULE_OK as c_int {
            host::log_warning(ctx, &format!("warden: cannot add ACL category {family}"));
        }
    }
    for spec in table() {
        let mut categories = vec![family_category(spec.name)];
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
        let name = CString::new(spec.name).expect("no NUL");
        let categories = CString::new(categories.join(" ")).expect("no NUL");
        // SAFETY: the command was registered above; both strings are C strings.
        let ok = unsafe {
            let command = api!(RedisModule_GetCommand)(ctx, name.as_ptr());
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
