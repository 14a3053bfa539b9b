//! Command documentation registered with `RedisModule_SetCommandInfo`, so
//! `COMMAND DOCS`, `COMMAND INFO` and redis-cli's hints describe every warden
//! command: summary, arity, arguments and the key specs (one key at argument
//! 1; a grammar's counted keys, `numkeys key [key ...]`, as a second spec).
//! Arity and arguments come from the command's grammar (`common::grammar`),
//! the one the command's calls are parsed by.

use std::ffi::{c_char, c_int, CString};

use redis_module::raw;

use crate::common::grammar::{Arg, Grammar, Kind};
use crate::glue::host::{api, Ctx};

/// Keeps a string alive for the server's lifetime and returns its pointer.
fn leak(text: &str) -> *const c_char {
    CString::new(text)
        .map(|c| c.into_raw().cast_const())
        .unwrap_or(std::ptr::null())
}

fn c_arg(a: &Arg) -> raw::RedisModuleCommandArg {
    let type_ = match a.kind {
        Kind::Key => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
        Kind::Str => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
        Kind::Int => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER,
        Kind::Double => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_DOUBLE,
        Kind::Flag => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_PURE_TOKEN,
        Kind::Block(_) => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_BLOCK,
        Kind::OneOf(_) => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_ONEOF,
    };
    let subargs = match a.kind {
        Kind::Block(parts) | Kind::OneOf(parts) => c_args(parts).leak().as_mut_ptr(),
        _ => std::ptr::null_mut(),
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
        // The command's own key is spec 0, its counted keys spec 1.
        key_spec_index: match (a.kind, a.multiple) {
            (Kind::Key, false) => 0,
            (Kind::Key, true) => 1,
            _ => -1,
        },
        token: a.token.map_or(std::ptr::null(), leak),
        summary: std::ptr::null(),
        since: std::ptr::null(),
        flags: flags as c_int,
        deprecated_since: std::ptr::null(),
        subargs,
        display_text: std::ptr::null(),
    }
}

/// The arguments of `docs` in Redis's form, ending with the zeroed terminator.
fn c_args(docs: &[Arg]) -> Vec<raw::RedisModuleCommandArg> {
    let mut args: Vec<raw::RedisModuleCommandArg> = docs.iter().map(c_arg).collect();
    // SAFETY: an all-zero argument is the terminator Redis expects (plain data, no references).
    args.push(unsafe { std::mem::zeroed() });
    args
}

/// The documentation of one command.
pub struct Doc {
    /// One-line summary.
    pub summary: &'static str,
    /// Time complexity.
    pub complexity: &'static str,
    /// The arguments after the command name, which also give the arity and
    /// parse calls (the command's typed request's grammar).
    pub grammar: Grammar,
    /// The warden version that added the command (`COMMAND DOCS` "since").
    pub since: &'static str,
}

impl Doc {
    /// Whether the command takes a key: its first argument is documented as one.
    pub fn has_key(&self) -> bool {
        self.grammar.has_key()
    }
}

/// Registers the documentation of each command given as (name, whether it
/// writes its key, whether it carries another command whose keys it declares
/// through `getkeys-api`, doc); the commands must exist.
pub fn register<'a>(
    ctx: Ctx,
    commands: impl Iterator<Item = (&'a str, bool, bool, &'a Doc)>,
) -> Result<(), String> {
    let version: &'static raw::RedisModuleCommandInfoVersion =
        Box::leak(Box::new(raw::RedisModuleCommandInfoVersion {
            version: 1,
            sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
            sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
            sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
        }));
    for (name, writes, carries_command, doc) in commands {
        let c_name = CString::new(name).map_err(|e| e.to_string())?;
        // SAFETY: called from OnLoad with the load context, after the command was created.
        let command = unsafe { api!(RedisModule_GetCommand)(ctx.as_ptr(), c_name.as_ptr()) };
        if command.is_null() {
            return Err(format!("no command {} to document", name));
        }
        // A command that carries another only reads its own key.
        let access = if writes && !carries_command {
            raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_UPDATE
        } else {
            raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS
        };
        // One key at argument 1 (none for a keyless command); for a command that carries another, a spec
        // of unknown shape (INCOMPLETE, VARIABLE_FLAGS) so the server asks
        // the command for that one's keys; then the terminating zeroed entry.
        let mut key_specs = Vec::with_capacity(3);
        if doc.has_key() {
            key_specs.push(raw::RedisModuleCommandKeySpec {
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
            });
        }
        if let Some(count_at) = doc.grammar.counted_keys_at() {
            // The keys a command reads besides its own: as many as the
            // integer at `count_at` says, right after it.
            key_specs.push(raw::RedisModuleCommandKeySpec {
                notes: std::ptr::null(),
                flags: u64::from(raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS),
                begin_search_type:
                    raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX,
                bs: raw::RedisModuleCommandKeySpec__bindgen_ty_1 {
                    index: raw::RedisModuleCommandKeySpec__bindgen_ty_1__bindgen_ty_1 {
                        pos: count_at as c_int,
                    },
                },
                find_keys_type: raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_KEYNUM,
                fk: raw::RedisModuleCommandKeySpec__bindgen_ty_2 {
                    keynum: raw::RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_2 {
                        keynumidx: 0,
                        firstkey: 1,
                        keystep: 1,
                    },
                },
            });
        }
        if carries_command {
            // SAFETY: all-zero is a valid key spec (plain data, no references);
            // the fields that matter are set next.
            let mut carried: raw::RedisModuleCommandKeySpec = unsafe { std::mem::zeroed() };
            carried.notes = leak("the keys of the command carried in the arguments");
            // RW as the widest access; the command's own flags come per call.
            carried.flags = u64::from(
                raw::REDISMODULE_CMD_KEY_RW
                    | raw::REDISMODULE_CMD_KEY_INCOMPLETE
                    | raw::REDISMODULE_CMD_KEY_VARIABLE_FLAGS,
            );
            carried.begin_search_type =
                raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_UNKNOWN;
            carried.find_keys_type =
                raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_UNKNOWN;
            key_specs.push(carried);
        }
        // SAFETY: an all-zero key spec is the terminator Redis expects (plain data, no references).
        key_specs.push(unsafe { std::mem::zeroed() });
        let key_specs = key_specs.leak();
        let args = c_args(doc.grammar.args);
        let info = raw::RedisModuleCommandInfo {
            version,
            summary: leak(doc.summary),
            complexity: leak(doc.complexity),
            since: leak(doc.since),
            history: std::ptr::null_mut(),
            tips: std::ptr::null(),
            arity: doc.grammar.arity(),
            key_specs: key_specs.as_mut_ptr(),
            args: args.leak().as_mut_ptr(),
        };
        // SAFETY: `command` is a registered command; `info` and everything it points to are leaked, so they outlive the server's use.
        let status = unsafe { api!(RedisModule_SetCommandInfo)(command, &info) };
        if status != raw::REDISMODULE_OK as c_int {
            return Err(format!("the documentation of {} was refused", name));
        }
    }
    Ok(())
}
