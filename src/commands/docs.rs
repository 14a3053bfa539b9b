//! Command documentation registered with `RedisModule_SetCommandInfo`, so
//! `COMMAND DOCS`, `COMMAND INFO` and redis-cli's hints describe every warden
//! command: summary, arity, arguments and the key spec (one key at argument 1).

use std::ffi::{c_char, c_int, CString};

use redis_module::raw;

use crate::host::{api, Ctx};

/// The kind of one argument.
#[derive(Clone, Copy)]
pub enum Kind {
    /// The key (always argument 1).
    Key,
    /// A string.
    Str,
    /// An integer.
    Int,
    /// A floating-point number.
    Double,
    /// A bare keyword such as `NONSCALING`.
    Flag,
}

/// One documented argument.
pub struct ArgDoc {
    /// Name shown in hints.
    pub name: &'static str,
    /// Its kind.
    pub kind: Kind,
    /// The keyword before it (`WAIT`, `COST`), if any.
    pub token: Option<&'static str>,
    /// Whether it may be left out.
    pub optional: bool,
    /// Whether it may repeat (`item [item ...]`).
    pub multiple: bool,
}

const fn arg(name: &'static str, kind: Kind) -> ArgDoc {
    ArgDoc {
        name,
        kind,
        token: None,
        optional: false,
        multiple: false,
    }
}

const fn key() -> ArgDoc {
    arg("key", Kind::Key)
}

const fn option(token: &'static str, name: &'static str, kind: Kind) -> ArgDoc {
    ArgDoc {
        name,
        kind,
        token: Some(token),
        optional: true,
        multiple: false,
    }
}

const fn flag(token: &'static str) -> ArgDoc {
    ArgDoc {
        name: token,
        kind: Kind::Flag,
        token: Some(token),
        optional: true,
        multiple: false,
    }
}

const fn items(name: &'static str) -> ArgDoc {
    ArgDoc {
        name,
        kind: Kind::Str,
        token: None,
        optional: false,
        multiple: true,
    }
}

/// The documentation of one command.
pub struct CommandDoc {
    /// Command name.
    pub name: &'static str,
    /// One-line summary.
    pub summary: &'static str,
    /// Time complexity.
    pub complexity: &'static str,
    /// Redis arity: exact count, or the negative of the minimum.
    pub arity: c_int,
    /// Whether the command writes its key.
    pub writes: bool,
    /// Arguments after the command name.
    pub args: &'static [ArgDoc],
}

/// Every warden command's documentation.
pub const DOCS: &[CommandDoc] = &[
    CommandDoc {
        name: "dlock.acquire",
        summary: "Takes a lock for ttl_ms and returns its fencing token; nil when another owner holds it. WAIT blocks until it is handed over; REENTRANT lets the holder add a hold (a plain repeat only renews the lease).",
        complexity: "O(1)",
        arity: -4,
        writes: true,
        args: &[key(), arg("owner", Kind::Str), arg("ttl_ms", Kind::Int), option("WAIT", "timeout_ms", Kind::Int), flag("REENTRANT")],
    },
    CommandDoc {
        name: "dlock.release",
        summary: "Drops one hold of the owner's lock: 1 if it held it, 0 otherwise. At zero holds the lock goes to the oldest waiter.",
        complexity: "O(1)",
        arity: 3,
        writes: true,
        args: &[key(), arg("owner", Kind::Str)],
    },
    CommandDoc {
        name: "dlock.extend",
        summary: "Sets the remaining lease of the owner's lock to ttl_ms: 1, or 0 if it does not hold it (never re-creates a lost lock).",
        complexity: "O(1)",
        arity: 4,
        writes: true,
        args: &[key(), arg("owner", Kind::Str), arg("ttl_ms", Kind::Int)],
    },
    CommandDoc {
        name: "dlock.info",
        summary: "Owner, token, ttl_ms, holds and waiters of a lock; nil when it is free.",
        complexity: "O(1)",
        arity: 2,
        writes: false,
        args: &[key()],
    },
    CommandDoc {
        name: "dlock._set",
        summary: "Internal: sets a lock's state with an absolute deadline (replication and AOF).",
        complexity: "O(1)",
        arity: 4,
        writes: true,
        args: &[key(), arg("owner", Kind::Str), arg("state", Kind::Str)],
    },
    CommandDoc {
        name: "bf.reservex",
        summary: "Creates an empty Bloom filter sized for capacity items at error_rate.",
        complexity: "O(1)",
        arity: -4,
        writes: true,
        args: &[key(), arg("error_rate", Kind::Double), arg("capacity", Kind::Int), option("EXPANSION", "expansion", Kind::Int), flag("NONSCALING")],
    },
    CommandDoc {
        name: "bf.addx",
        summary: "Adds an item to a Bloom filter (created with the defaults if missing): 1 if new, 0 if it may have been present.",
        complexity: "O(k)",
        arity: 3,
        writes: true,
        args: &[key(), arg("item", Kind::Str)],
    },
    CommandDoc {
        name: "bf.maddx",
        summary: "Adds items to a Bloom filter: one 1/0 (or error) per item.",
        complexity: "O(k * n)",
        arity: -3,
        writes: true,
        args: &[key(), items("item")],
    },
    CommandDoc {
        name: "bf.insertx",
        summary: "Adds items to a Bloom filter, creating it with the given parameters unless NOCREATE.",
        complexity: "O(k * n)",
        arity: -4,
        writes: true,
        args: &[
            key(),
            option("CAPACITY", "capacity", Kind::Int),
            option("ERROR", "error_rate", Kind::Double),
            option("EXPANSION", "expansion", Kind::Int),
            flag("NOCREATE"),
            flag("NONSCALING"),
            ArgDoc { name: "item", kind: Kind::Str, token: Some("ITEMS"), optional: false, multiple: true },
        ],
    },
    CommandDoc {
        name: "bf.existsx",
        summary: "1 if the item may be in the filter, 0 if it certainly is not (0 for a missing key).",
        complexity: "O(k)",
        arity: 3,
        writes: false,
        args: &[key(), arg("item", Kind::Str)],
    },
    CommandDoc {
        name: "bf.mexistsx",
        summary: "For each item, 1 if it may be in the filter, 0 if it certainly is not.",
        complexity: "O(k * n)",
        arity: -3,
        writes: false,
        args: &[key(), items("item")],
    },
    CommandDoc {
        name: "bf.infox",
        summary: "Capacity, Size, Number of filters, Number of items inserted, Expansion rate and Error rate of a filter.",
        complexity: "O(1)",
        arity: -2,
        writes: false,
        args: &[key(), ArgDoc { name: "field", kind: Kind::Str, token: None, optional: true, multiple: false }],
    },
    CommandDoc {
        name: "bf.cardx",
        summary: "Number of items added to a filter as new (0 for a missing key).",
        complexity: "O(1)",
        arity: 2,
        writes: false,
        args: &[key()],
    },
    CommandDoc {
        name: "bf._loadx",
        summary: "Internal: rebuilds a filter layer by layer, its bits in chunks (AOF).",
        complexity: "O(n)",
        arity: -6,
        writes: true,
        args: &[key(), items("part")],
    },
    CommandDoc {
        name: "rl.token",
        summary: "Token bucket (golang.org/x/time/rate): [allowed, remaining, wait_ms, reset_ms]. MAXWAIT reserves tokens that will be there in time.",
        complexity: "O(1)",
        arity: -4,
        writes: true,
        args: &[key(), arg("rate", Kind::Str), arg("burst", Kind::Int), option("COST", "cost", Kind::Int), option("MAXWAIT", "max_wait_ms", Kind::Int)],
    },
    CommandDoc {
        name: "rl.leaky",
        summary: "Leaky bucket as a meter: [allowed, remaining, wait_ms, reset_ms].",
        complexity: "O(1)",
        arity: -4,
        writes: true,
        args: &[key(), arg("rate", Kind::Str), arg("capacity", Kind::Int), option("COST", "cost", Kind::Int)],
    },
    CommandDoc {
        name: "rl.window",
        summary: "Sliding-window counter: [allowed, remaining, wait_ms, reset_ms].",
        complexity: "O(1)",
        arity: -4,
        writes: true,
        args: &[key(), arg("limit", Kind::Int), arg("window_ms", Kind::Int), option("COST", "cost", Kind::Int)],
    },
    CommandDoc {
        name: "rl.gcra",
        summary: "GCRA with redis-cell's CL.THROTTLE reply: [limited, limit, remaining, retry_after_s, reset_after_s].",
        complexity: "O(1)",
        arity: -5,
        writes: true,
        args: &[key(), arg("max_burst", Kind::Int), arg("count", Kind::Int), arg("period_s", Kind::Int), option("QUANTITY", "quantity", Kind::Int)],
    },
    CommandDoc {
        name: "rl._set",
        summary: "Internal: sets a rate limiter's state with an absolute expiry (replication and AOF).",
        complexity: "O(1)",
        arity: 3,
        writes: true,
        args: &[key(), arg("state", Kind::Str)],
    },
];

/// Keeps a string alive for the server's lifetime and returns its pointer.
fn leak(text: &str) -> *const c_char {
    CString::new(text)
        .map(|c| c.into_raw().cast_const())
        .unwrap_or(std::ptr::null())
}

fn c_arg(a: &ArgDoc) -> raw::RedisModuleCommandArg {
    let type_ = match a.kind {
        Kind::Key => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
        Kind::Str => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
        Kind::Int => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER,
        Kind::Double => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_DOUBLE,
        Kind::Flag => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_PURE_TOKEN,
    };
    let mut flags = 0;
    if a.optional {
        flags |= raw::REDISMODULE_CMD_ARG_OPTIONAL;
    }
    if a.multiple {
        flags |= raw::REDISMODULE_CMD_ARG_MULTIPLE;
    }
    raw::RedisModuleCommandArg {
        name: leak(a.name),
        type_,
        key_spec_index: if matches!(a.kind, Kind::Key) { 0 } else { -1 },
        token: a.token.map_or(std::ptr::null(), leak),
        summary: std::ptr::null(),
        since: std::ptr::null(),
        flags: flags as c_int,
        deprecated_since: std::ptr::null(),
        subargs: std::ptr::null_mut(),
        display_text: std::ptr::null(),
    }
}

/// Registers the documentation of every command (the commands must exist).
pub fn register(ctx: *mut Ctx) -> Result<(), String> {
    let version: &'static raw::RedisModuleCommandInfoVersion =
        Box::leak(Box::new(raw::RedisModuleCommandInfoVersion {
            version: 1,
            sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
            sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
            sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
        }));
    for doc in DOCS {
        let name = CString::new(doc.name).map_err(|e| e.to_string())?;
        let command = unsafe { api!(RedisModule_GetCommand)(ctx, name.as_ptr()) };
        if command.is_null() {
            return Err(format!("no command {} to document", doc.name));
        }
        let access = if doc.writes {
            raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_UPDATE
        } else {
            raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS
        };
        // One key at argument 1, then the terminating zeroed entry.
        let key_specs = Box::leak(Box::new([
            raw::RedisModuleCommandKeySpec {
                notes: std::ptr::null(),
                flags: u64::from(access),
                begin_search_type:
                    raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX,
                bs: raw::RedisModuleCommandKeySpec__bindgen_ty_1 {
                    index: raw::RedisModuleCommandKeySpec__bindgen_ty_1__bindgen_ty_1 { pos: 1 },
                },
                find_keys_type: raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE,
                fk: raw::RedisModuleCommandKeySpec__bindgen_ty_2 {
                    range: raw::RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_1 {
                        lastkey: 0,
                        keystep: 1,
                        limit: 0,
                    },
                },
            },
            unsafe { std::mem::zeroed() },
        ]));
        let mut args: Vec<raw::RedisModuleCommandArg> = doc.args.iter().map(c_arg).collect();
        args.push(unsafe { std::mem::zeroed() });
        let info = raw::RedisModuleCommandInfo {
            version,
            summary: leak(doc.summary),
            complexity: leak(doc.complexity),
            since: leak("1.0.0"),
            history: std::ptr::null_mut(),
            tips: std::ptr::null(),
            arity: doc.arity,
            key_specs: key_specs.as_mut_ptr(),
            args: args.leak().as_mut_ptr(),
        };
        let status = unsafe { api!(RedisModule_SetCommandInfo)(command, &info) };
        if status != raw::REDISMODULE_OK as c_int {
            return Err(format!("the documentation of {} was refused", doc.name));
        }
    }
    Ok(())
}
