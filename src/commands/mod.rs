//! The command table and its registration. Every handler (in its family's
//! folder) runs behind `guard`: a panic becomes an error reply.

pub mod docs;

use docs::{arg, chosen, flag, items, key, one_of, option, pairs, ArgDoc, Doc, Kind};

use std::ffi::{c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use redis_module::raw;

use crate::args::Args;
use crate::bloom::commands as bloom;
use crate::bloom::dump as bloom_dump;
use crate::cache::commands as cache;
use crate::core::error::WardenError;
use crate::fence;
use crate::host::{self, api, Ctx, RString};
use crate::lock::commands as lock;
use crate::lock::guard as lock_guard;
use crate::rate::commands as rate;

/// A command handler: replies itself on success; an `Err` becomes the error reply.
pub type Handler = fn(*mut Ctx, &Args) -> Result<(), WardenError>;

/// Runs a handler with the panic guard: a panic becomes an `ERR` reply.
pub fn guard(ctx: *mut Ctx, argv: *mut *mut RString, argc: c_int, handler: Handler) -> c_int {
    let argv: &[*mut RString] = if argv.is_null() || argc <= 0 {
        &[]
    } else {
        // SAFETY: Redis passes `argc` live arguments at `argv` for the duration of the call.
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

/// One row of the command table: everything Redis is told about a command.
pub struct Command {
    /// Command name as clients type it (lower case).
    pub name: &'static str,
    /// The `extern "C"` entry point made by `command_fn!`.
    pub func: unsafe extern "C" fn(*mut Ctx, *mut *mut RString, c_int) -> c_int,
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

/// Every warden command: one row each, from which registration, `COMMAND DOCS`
/// and the ACL categories are made. Each takes exactly one key, at argument 1,
/// but `DLOCK._FENCE`, which takes none (its first argument is not a key).
pub const COMMANDS: &[Command] = &[
    Command {
        name: "dlock.acquire",
        func: command_fn!(lock::acquire),
        flags: "write deny-oom blocking",
        doc: Doc {
            summary: "Takes a lock for ttl_ms and returns its fencing token; nil when another owner holds it. WAIT blocks until it is handed over; REENTRANT lets the holder add a hold (a plain repeat only renews the lease); SHARED takes a read lock, LIMIT n one of n places of a semaphore.",
            complexity: "O(1) (O(N) in the holders of a SHARED or LIMIT key)",
            arity: -4,
            args: &[key(), arg("owner", Kind::Str), arg("ttl_ms", Kind::Int), option("WAIT", "timeout_ms", Kind::Int), flag("REENTRANT"), one_of("kind", &[chosen(flag("SHARED")), chosen(option("LIMIT", "n", Kind::Int))])],
            since: "0.1.0",
        },
    },
    Command {
        name: "dlock.release",
        func: command_fn!(lock::release),
        flags: "write",
        doc: Doc {
            summary: "Drops one hold of the owner's lock (of the grant that carried token t, with TOKEN): 1 if it held it, 0 otherwise. At zero holds the lock goes to the oldest waiter.",
            complexity: "O(1)",
            arity: -3,
            args: &[key(), arg("owner", Kind::Str), option("TOKEN", "t", Kind::Int)],
            since: "0.1.0",
        },
    },
    Command {
        name: "dlock.extend",
        func: command_fn!(lock::extend),
        flags: "write fast",
        doc: Doc {
            summary: "Sets the remaining lease of the owner's lock (of the grant that carried token t, with TOKEN) to ttl_ms: 1, or 0 if it does not hold it (never re-creates a lost lock).",
            complexity: "O(1)",
            arity: -4,
            args: &[key(), arg("owner", Kind::Str), arg("ttl_ms", Kind::Int), option("TOKEN", "t", Kind::Int)],
            since: "0.1.0",
        },
    },
    Command {
        name: "dlock.guard",
        func: command_fn!(lock_guard::guard),
        flags: "write getkeys-api",
        doc: Doc {
            summary: "Runs command only while owner holds the lock with token, in the same atomic step (a fenced write); otherwise FENCED and nothing runs. The command's keys are declared, run with the caller's ACL and the OOM rule, and replicated as on its own.",
            complexity: "O(1) plus the command's own",
            arity: -5,
            args: &[key(), arg("owner", Kind::Str), arg("token", Kind::Int), arg("command", Kind::Str), ArgDoc { optional: true, ..items("arg") }],
            since: "0.3.0",
        },
    },
    Command {
        name: "dlock.info",
        func: command_fn!(lock::info),
        flags: "readonly fast",
        doc: Doc {
            summary: "Owner, token, ttl_ms, holds and waiters of a lock; nil when it is free.",
            complexity: "O(1)",
            arity: 2,
            args: &[key()],
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.reservex",
        func: command_fn!(bloom::reserve),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Creates an empty Bloom filter sized for capacity items at error_rate; with AGE, an aging filter that forgets items after window_ms (capacity is then per window).",
            complexity: "O(1)",
            arity: -4,
            args: &[key(), arg("error_rate", Kind::Double), arg("capacity", Kind::Int), one_of("shape", &[chosen(option("EXPANSION", "expansion", Kind::Int)), chosen(flag("NONSCALING")), chosen(option("AGE", "window_ms", Kind::Int))])],
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.addx",
        func: command_fn!(bloom::add),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Adds an item to a Bloom filter (created with the defaults if missing): 1 if new, 0 if it may have been present.",
            complexity: "O(k)",
            arity: 3,
            args: &[key(), arg("item", Kind::Str)],
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.maddx",
        func: command_fn!(bloom::madd),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Adds items to a Bloom filter: one 1/0 (or error) per item.",
            complexity: "O(k * n)",
            arity: -3,
            args: &[key(), items("item")],
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.insertx",
        func: command_fn!(bloom::insert),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Adds items to a Bloom filter, creating it with the given parameters unless NOCREATE.",
            complexity: "O(k * n)",
            arity: -4,
            args: &[
                key(),
                option("CAPACITY", "capacity", Kind::Int),
                option("ERROR", "error_rate", Kind::Double),
                option("EXPANSION", "expansion", Kind::Int),
                flag("NOCREATE"),
                flag("NONSCALING"),
                ArgDoc { name: "item", kind: Kind::Str, token: Some("ITEMS"), optional: false, multiple: true },
            ],
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.existsx",
        func: command_fn!(bloom::exists),
        flags: "readonly fast",
        doc: Doc {
            summary: "1 if the item may be in the filter, 0 if it certainly is not (0 for a missing key).",
            complexity: "O(k)",
            arity: 3,
            args: &[key(), arg("item", Kind::Str)],
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.mexistsx",
        func: command_fn!(bloom::mexists),
        flags: "readonly fast",
        doc: Doc {
            summary: "For each item, 1 if it may be in the filter, 0 if it certainly is not.",
            complexity: "O(k * n)",
            arity: -3,
            args: &[key(), items("item")],
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.infox",
        func: command_fn!(bloom::info),
        flags: "readonly fast",
        doc: Doc {
            summary: "Capacity, Size, Number of filters, Number of items inserted, Expansion rate, Error rate and (aging filters) Window of a filter.",
            complexity: "O(1)",
            arity: -2,
            args: &[key(), ArgDoc { name: "field", kind: Kind::Str, token: None, optional: true, multiple: false }],
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.cardx",
        func: command_fn!(bloom::card),
        flags: "readonly fast",
        doc: Doc {
            summary: "Number of items added to a filter as new (0 for a missing key).",
            complexity: "O(1)",
            arity: 2,
            args: &[key()],
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.scandumpx",
        func: command_fn!(bloom_dump::scandump),
        flags: "readonly",
        doc: Doc {
            summary: "Reads a filter in chunks, as RedisBloom's BF.SCANDUMP: iterator 0 gives [1, header], each returned iterator [next, up to 16 MiB of bits], and the end [0, \"\"].",
            complexity: "O(n) where n is the size of the chunk",
            arity: 3,
            args: &[key(), arg("iterator", Kind::Int)],
            since: "0.2.0",
        },
    },
    Command {
        name: "bf.loadchunkx",
        func: command_fn!(bloom_dump::loadchunk),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Rebuilds a filter from BF.SCANDUMPX's chunks, in order: the header creates the key (not readable until the last chunk), each chunk must be the next one, of its exact length.",
            complexity: "O(n) where n is the size of the chunk",
            arity: 4,
            args: &[key(), arg("iterator", Kind::Int), arg("data", Kind::Str)],
            since: "0.2.0",
        },
    },
    Command {
        name: "bf._addatx",
        func: command_fn!(bloom::add_at),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: adds items to an aging filter as of a master's Unix ms (replication and AOF of its adds).",
            complexity: "O(k) per item",
            arity: -4,
            args: &[key(), arg("unix_ms", Kind::Int), items("item")],
            since: "0.3.0",
        },
    },
    Command {
        name: "bf._loadx",
        func: command_fn!(bloom::load),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: rebuilds a filter layer by layer, its bits in chunks (AOF).",
            complexity: "O(n)",
            arity: -6,
            args: &[key(), items("part")],
            since: "0.1.0",
        },
    },
    Command {
        name: "rl.token",
        func: command_fn!(rate::token),
        flags: "write deny-oom fast",
        doc: Doc {
            summary: "Token bucket (golang.org/x/time/rate) on up to 8 limits at once: [allowed, remaining, wait_ms, reset_ms] of the tightest. MAXWAIT reserves tokens that will be there in time. A changed rate or burst keeps the tokens (capped at the new burst).",
            complexity: "O(N) where N is the number of limits",
            arity: -4,
            args: &[key(), pairs("limit", &[arg("rate", Kind::Str), arg("burst", Kind::Int)]), option("COST", "cost", Kind::Int), option("MAXWAIT", "max_wait_ms", Kind::Int)],
            since: "0.1.0",
        },
    },
    Command {
        name: "rl.leaky",
        func: command_fn!(rate::leaky),
        flags: "write deny-oom fast",
        doc: Doc {
            summary: "Leaky bucket as a meter: [allowed, remaining, wait_ms, reset_ms]. A changed rate or capacity keeps the level.",
            complexity: "O(1)",
            arity: -4,
            args: &[key(), arg("rate", Kind::Str), arg("capacity", Kind::Int), option("COST", "cost", Kind::Int)],
            since: "0.1.0",
        },
    },
    Command {
        name: "rl.window",
        func: command_fn!(rate::window),
        flags: "write deny-oom fast",
        doc: Doc {
            summary: "Sliding-window counter on up to 8 limits at once: [allowed, remaining, wait_ms, reset_ms] of the tightest. A changed limit or window keeps the counts.",
            complexity: "O(N) where N is the number of limits",
            arity: -4,
            args: &[key(), pairs("window", &[arg("limit", Kind::Int), arg("window_ms", Kind::Int)]), option("COST", "cost", Kind::Int)],
            since: "0.1.0",
        },
    },
    Command {
        name: "rl.gcra",
        func: command_fn!(rate::gcra),
        flags: "write deny-oom fast",
        doc: Doc {
            summary: "GCRA with redis-cell's CL.THROTTLE arguments and reply: [limited, limit, remaining, retry_after_s, reset_after_s]. The quantity (default 1) is positional as in CL.THROTTLE, or QUANTITY n.",
            complexity: "O(1)",
            arity: -5,
            args: &[
                key(),
                arg("max_burst", Kind::Int),
                arg("count", Kind::Int),
                arg("period_s", Kind::Int),
                one_of("quantity", &[chosen(arg("quantity", Kind::Int)), chosen(option("QUANTITY", "quantity", Kind::Int))]),
            ],
            since: "0.1.0",
        },
    },
    Command {
        name: "rl._set",
        func: command_fn!(rate::set_state),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: sets a rate limiter's state (kind:n:limits:pxat_ms, every limit) with an absolute expiry (replication and AOF).",
            complexity: "O(1)",
            arity: 3,
            args: &[key(), arg("state", Kind::Str)],
            since: "0.1.0",
        },
    },
    Command {
        name: "cache.set",
        func: command_fn!(cache::set),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Caches a value, fresh for ttl_ms then served stale for STALE ms: 1, or 0 when refused (an older VERSION than the stored one, or a LEASE token that is no longer current). Hands the value to clients waiting for a refresh.",
            complexity: "O(N) where N is the value's length",
            arity: -4,
            args: &[key(), arg("value", Kind::Str), arg("ttl_ms", Kind::Int), option("STALE", "stale_ms", Kind::Int), option("VERSION", "version", Kind::Int), option("LEASE", "token", Kind::Int)],
            since: "0.2.0",
        },
    },
    Command {
        name: "cache.get",
        func: command_fn!(cache::get),
        flags: "write blocking",
        doc: Doc {
            summary: "The value when fresh (and at least MINVERSION), else nil. HOT keeps an often-read key fresh. LEASE turns a miss into one refresh: [value, 0] when fresh, [stale value or nil, token] for the caller who refreshes, [stale value or nil, 0] while another does; WAIT blocks for the refreshed value instead of nil.",
            complexity: "O(1)",
            arity: -2,
            args: &[
                key(),
                option("MINVERSION", "version", Kind::Int),
                ArgDoc { name: "hot", kind: Kind::Block(&[arg("reads", Kind::Int), arg("window_ms", Kind::Int), ArgDoc { name: "ttl_ms", kind: Kind::Int, token: Some("EXTEND"), optional: false, multiple: false }]), token: Some("HOT"), optional: true, multiple: false },
                ArgDoc { name: "lease", kind: Kind::Block(&[arg("lease_ms", Kind::Int), option("WAIT", "timeout_ms", Kind::Int)]), token: Some("LEASE"), optional: true, multiple: false },
            ],
            since: "0.2.0",
        },
    },
    Command {
        name: "cache.info",
        func: command_fn!(cache::info),
        flags: "readonly fast",
        doc: Doc {
            summary: "version, fresh_ms (negative once stale), stale_ms (until the value is dropped), reads in the current HOT window, the live lease token (0 if none) and waiters of a cache key; nil when it is missing.",
            complexity: "O(1)",
            arity: 2,
            args: &[key()],
            since: "0.2.0",
        },
    },
    Command {
        name: "cache._set",
        func: command_fn!(cache::set_entry),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: sets a cache entry (value and version:fresh_until:stale_until:lease:lease_until) with absolute times (replication and AOF).",
            complexity: "O(N) where N is the value's length",
            arity: 4,
            args: &[key(), arg("value", Kind::Str), arg("state", Kind::Str)],
            since: "0.2.0",
        },
    },
    Command {
        name: "cache._meta",
        func: command_fn!(cache::set_meta),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: sets a cache entry's state but its value (version:fresh_until:stale_until:lease:lease_until) with absolute times (replication and AOF).",
            complexity: "O(1)",
            arity: 3,
            args: &[key(), arg("state", Kind::Str)],
            since: "0.2.0",
        },
    },
    Command {
        name: "dlock._sets",
        func: command_fn!(lock::set_states),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: sets the holders of a shared or limited lock (limit:floor:expiry, then owner records with absolute deadlines) for replication and AOF.",
            complexity: "O(N) where N is the number of holders",
            arity: 4,
            args: &[key(), arg("limit:floor:expiry", Kind::Str), arg("holders", Kind::Str)],
            since: "0.3.0",
        },
    },
    Command {
        name: "dlock._set",
        func: command_fn!(lock::set_state),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: sets a lock's state with an absolute deadline (replication and AOF).",
            complexity: "O(1)",
            arity: 4,
            args: &[key(), arg("owner", Kind::Str), arg("state", Kind::Str)],
            since: "0.1.0",
        },
    },
    Command {
        name: "dlock._fence",
        func: command_fn!(fence::set_floor),
        flags: "write",
        doc: Doc {
            summary: "Internal: raises the fencing-token floor to that of a master's failover epoch (replication and AOF). Takes no key.",
            complexity: "O(1)",
            arity: 2,
            args: &[arg("floor", Kind::Int)],
            since: "0.3.0",
        },
    },
];

/// Registers the command table with Redis.
pub fn register(ctx: *mut Ctx) -> Result<(), String> {
    for spec in COMMANDS {
        let name = CString::new(spec.name).map_err(|e| e.to_string())?;
        let flags = CString::new(spec.flags).map_err(|e| e.to_string())?;
        let key = c_int::from(spec.has_key());
        // SAFETY: called from OnLoad with the load context; `name` and `flags` are C strings and `spec.func` a command entry point.
        let status = unsafe {
            api!(RedisModule_CreateCommand)(
                ctx,
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
    add_acl_categories(ctx);
    let rows = COMMANDS
        .iter()
        .map(|c| (c.name, c.writes(), c.flags.contains("getkeys-api"), &c.doc));
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
    for (family, name) in [
        ("dlock", c"dlock"),
        ("bloom", c"bloom"),
        ("ratelimit", c"ratelimit"),
        ("cache", c"cache"),
    ] {
        // SAFETY: called from OnLoad with the load context, as required.
        if unsafe { add(ctx, name.as_ptr()) } != raw::REDISMODULE_OK as c_int {
            host::log_warning(ctx, &format!("warden: cannot add ACL category {family}"));
        }
    }
    for spec in COMMANDS {
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
        let (Ok(name), Ok(categories)) =
            (CString::new(spec.name), CString::new(categories.join(" ")))
        else {
            continue; // table names and categories hold no NUL
        };
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
