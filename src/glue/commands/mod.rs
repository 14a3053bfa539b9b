//! The command table and its registration. Every handler (in its family's
//! folder) runs behind `guard`: a panic becomes an error reply.

pub mod docs;

use docs::Doc;

use std::ffi::{c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use redis_module::raw;

use crate::common::error::WardenError;
use crate::common::grammar::Grammar;
use crate::glue::args::{Args, Called};
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
    called: Called,
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
    let args = Args::new(argv, called);
    let outcome = catch_unwind(AssertUnwindSafe(|| handler(ctx, &args)));
    let err = match outcome {
        Ok(Ok(())) => None,
        // Named as the client called it (an alias's grammar is its command's).
        Ok(Err(WardenError::WrongArity(_))) if called == Called::Alias && !argv.is_empty() => {
            let name = String::from_utf8_lossy(argv[0].bytes()).to_ascii_lowercase();
            Some(WardenError::WrongArity(name.into()))
        }
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

/// Turns a `Handler` path into the command's `extern "C"` entry points: one
/// for its own name and one for its alias (the same handler, told it was
/// called by the alias).
macro_rules! command_fn {
    ($handler:path) => {{
        unsafe extern "C" fn trampoline<const ALIAS: bool>(
            ctx: *mut redis_module::raw::RedisModuleCtx,
            argv: *mut *mut redis_module::raw::RedisModuleString,
            argc: std::ffi::c_int,
        ) -> std::ffi::c_int {
            let called = match ALIAS {
                true => $crate::glue::args::Called::Alias,
                false => $crate::glue::args::Called::Own,
            };
            // SAFETY: Redis calls a command function with its live context and
            // `argc` live arguments at `argv`, valid until it returns.
            unsafe { $crate::glue::commands::guard(ctx, argv, argc, $handler, called) }
        }
        $crate::glue::commands::Entry {
            own: trampoline::<false>,
            alias: trampoline::<true>,
        }
    }};
}
pub(crate) use command_fn;

/// A command function as Redis calls it.
pub type CommandFn = unsafe extern "C" fn(
    *mut raw::RedisModuleCtx,
    *mut *mut raw::RedisModuleString,
    c_int,
) -> c_int;

/// A command's entry points, made by `command_fn!` from its one handler.
pub struct Entry {
    /// Called by the command's own name.
    pub own: CommandFn,
    /// Called by its alias (`Command::alias`), when registered.
    pub alias: CommandFn,
}

/// A set of another module's command names that warden can also answer to,
/// chosen at load with `aliases <set>[,<set>]`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AliasSet {
    /// RedisBloom's commands and data types, under its names and in its layouts.
    RedisBloom,
    /// redis-cell's `CL.THROTTLE`.
    RedisCell,
}

impl AliasSet {
    /// Every set.
    pub const ALL: [AliasSet; 2] = [AliasSet::RedisBloom, AliasSet::RedisCell];

    /// The set's name in the `aliases` module argument.
    pub fn name(self) -> &'static str {
        match self {
            AliasSet::RedisBloom => "redisbloom",
            AliasSet::RedisCell => "redis-cell",
        }
    }

    /// The set named `text` (exact, lower case).
    pub fn named(text: &[u8]) -> Option<AliasSet> {
        Self::ALL
            .into_iter()
            .find(|set| set.name().as_bytes() == text)
    }

    /// The module whose names the set holds.
    pub fn module(self) -> &'static str {
        match self {
            AliasSet::RedisBloom => "RedisBloom",
            AliasSet::RedisCell => "redis-cell",
        }
    }

    fn bit(self) -> u8 {
        match self {
            AliasSet::RedisBloom => 1,
            AliasSet::RedisCell => 2,
        }
    }
}

/// The alias sets chosen at load (none by default).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct AliasSets(u8);

impl AliasSets {
    /// These sets and `set`.
    pub fn with(self, set: AliasSet) -> AliasSets {
        AliasSets(self.0 | set.bit())
    }

    /// Whether `set` was chosen.
    pub fn contains(self, set: AliasSet) -> bool {
        self.0 & set.bit() != 0
    }
}

/// Another module's name for a command: registered only when its set is
/// chosen, with the row's handler, flags, key positions and docs; only the
/// name and the reply style (the handler sees `Called::Alias`) differ.
pub struct Alias {
    /// The set that registers it.
    pub set: AliasSet,
    /// The name as that module's clients type it (lower case).
    pub name: &'static str,
}

/// One row of the command table: everything Redis is told about a command.
pub struct Command {
    /// Command name as clients type it (lower case).
    pub name: &'static str,
    /// The `extern "C"` entry points made by `command_fn!`.
    pub func: Entry,
    /// Another module's name for the same command, if any.
    pub alias: Option<Alias>,
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

/// Answers a keys request (Redis asking a `getkeys-api` command which of
/// its arguments are keys, as it does for a grammar with counted keys): the
/// key at 1 (read-write when `writes`) and the keys `grammar`'s count names
/// (read); true when the call was one, and nothing else is to be done.
pub fn answer_keys_request(ctx: Ctx, args: &Args, grammar: Grammar, writes: bool) -> bool {
    if !host::is_keys_position_request(ctx) {
        return false;
    }
    let own = match writes {
        true => raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_UPDATE,
        false => raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS,
    };
    if grammar.has_key() && args.len() > 1 {
        host::key_at(ctx, 1, own as c_int);
    }
    let read = (raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS) as c_int;
    if let Some(at) = grammar.counted_keys_at().filter(|at| *at < args.len()) {
        let count = crate::common::parse::parse_i64(args.bytes(at)).unwrap_or(0);
        let count = usize::try_from(count).unwrap_or(0);
        for pos in (at + 1..args.len()).take(count) {
            host::key_at(ctx, pos, read);
        }
    }
    true
}

/// Each command's name, arity and alias, as a family's unit test pins them.
#[cfg(test)]
pub fn pinned(commands: &[Command]) -> Vec<(&'static str, i32, Option<&'static str>)> {
    commands
        .iter()
        .map(|c| {
            (
                c.name,
                c.doc.grammar.arity(),
                c.alias.as_ref().map(|a| a.name),
            )
        })
        .collect()
}

/// A family's commands, its ACL category (`None`: none of its own), and
/// the alias set whose module the names are (`None`: warden's own).
pub type Group = (&'static [Command], Option<&'static CStr>, Option<AliasSet>);

/// Every row of `groups`, with its group's ACL category and set.
fn rows(
    groups: &[Group],
) -> impl Iterator<Item = (Option<&'static CStr>, Option<AliasSet>, &'static Command)> + '_ {
    groups
        .iter()
        .flat_map(|(commands, category, set)| commands.iter().map(move |c| (*category, *set, c)))
}

/// A row's registered names: its own, and its alias when its set is chosen.
fn names(
    (category, set, spec): (Option<&'static CStr>, Option<AliasSet>, &'static Command),
    aliases: AliasSets,
) -> impl Iterator<Item = Named> {
    let alias = spec
        .alias
        .as_ref()
        .filter(|a| aliases.contains(a.set))
        .map(|a| Named {
            name: a.name,
            func: spec.func.alias,
            set: Some(a.set),
            category,
            spec,
        });
    std::iter::once(Named {
        name: spec.name,
        func: spec.func.own,
        set,
        category,
        spec,
    })
    .chain(alias)
}

/// One name a row is registered under.
struct Named {
    name: &'static str,
    func: CommandFn,
    /// The alias set, for an alias or another module's command.
    set: Option<AliasSet>,
    /// Its family's ACL category.
    category: Option<&'static CStr>,
    spec: &'static Command,
}

/// Registers the commands of `groups` with Redis, with the aliases of the
/// chosen sets, and their ACL categories. A name another module already has
/// is refused, naming it.
pub fn register(ctx: Ctx, groups: &[Group], aliases: AliasSets) -> Result<(), String> {
    let all = || rows(groups).flat_map(move |row| names(row, aliases));
    for named in all() {
        let name = CString::new(named.name).map_err(|e| e.to_string())?;
        // Counted keys (`numkeys key ...`) are declared through the keys API
        // too: Redis 7.0 routes a cluster call and checks slots by the
        // command's first/last/step range alone, which cannot hold them.
        let flags = match named.spec.doc.grammar.counted_keys_at() {
            Some(_) => format!("{} getkeys-api", named.spec.flags),
            None => named.spec.flags.to_string(),
        };
        let flags = CString::new(flags).map_err(|e| e.to_string())?;
        let key = c_int::from(named.spec.has_key());
        // SAFETY: called from OnLoad with the load context; `name` and `flags` are C strings and `named.func` a command entry point.
        let status = unsafe {
            api!(RedisModule_CreateCommand)(
                ctx.as_ptr(),
                name.as_ptr(),
                Some(named.func),
                flags.as_ptr(),
                key,
                key,
                key,
            )
        };
        if status != raw::REDISMODULE_OK as c_int {
            return Err(match named.set {
                Some(set) => format!(
                    "cannot register command {} (module argument 'aliases {}'): the name is \
                     taken, by another module (such as {}) or by the server",
                    named.name.to_ascii_uppercase(),
                    set.name(),
                    set.module()
                ),
                None => format!("cannot register command {}", named.name),
            });
        }
    }
    add_acl_categories(ctx, groups, all());
    let docs = all().map(|n| {
        let c = n.spec;
        (n.name, c.writes(), c.flags.contains("getkeys-api"), &c.doc)
    });
    docs::register(ctx, docs)
}

/// Sets each command's ACL categories where the server lets a module:
/// `read`/`write`/`fast`/`blocking` as its flags say (Redis 7.2+, Valkey 8+),
/// and its family's category where a module may add categories (Redis 7.4+,
/// Valkey 8+). Redis 7.0 has neither function; the ACL recipe in
/// docs/operations.md covers it there. Best effort: a refusal is logged, the module still loads.
fn add_acl_categories(ctx: Ctx, groups: &[Group], commands: impl Iterator<Item = Named>) {
    // SAFETY: reading function pointers the server filled in at load.
    let (add, Some(set)) = (unsafe { raw::RedisModule_AddACLCategory }, unsafe {
        raw::RedisModule_SetCommandACLCategories
    }) else {
        return;
    };
    let family_categories = add.is_some();
    let mut added: Vec<&CStr> = Vec::new();
    for category in groups.iter().filter_map(|(_, category, _)| *category) {
        if added.contains(&category) {
            continue; // a family's foreign commands share its category
        }
        added.push(category);
        let Some(add) = add else { break };
        // SAFETY: called from OnLoad with the load context, as required.
        if unsafe { add(ctx.as_ptr(), category.as_ptr()) } != raw::REDISMODULE_OK as c_int {
            let category = category.to_string_lossy();
            host::log_warning(ctx, &format!("warden: cannot add ACL category {category}"));
        }
    }
    for Named {
        name,
        category,
        spec,
        ..
    } in commands
    {
        let mut categories = Vec::new();
        if let Some(category) = category.filter(|_| family_categories) {
            categories.push(category.to_str().unwrap_or_default());
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
        let (Ok(c_name), Ok(categories)) = (CString::new(name), CString::new(categories.join(" ")))
        else {
            continue; // table names and categories hold no NUL
        };
        // SAFETY: the command was registered above; both strings are C strings.
        let ok = unsafe {
            let command = api!(RedisModule_GetCommand)(ctx.as_ptr(), c_name.as_ptr());
            !command.is_null() && set(command, categories.as_ptr()) == raw::REDISMODULE_OK as c_int
        };
        if !ok {
            host::log_warning(
                ctx,
                &format!("warden: cannot set the ACL categories of {name}"),
            );
        }
    }
}
