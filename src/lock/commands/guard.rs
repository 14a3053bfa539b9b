//! `DLOCK.GUARD key owner token command [arg ...]`: a fenced write. The
//! holder and token are checked and the command runs in the same step, so a
//! holder that paused past its lease cannot write: the data that lives in
//! Redis enforces the fencing token itself.
//!
//! The command runs through `RedisModule_Call` as the caller (its ACL user),
//! with the server's OOM rule and replicated as it would be on its own (`!`).
//! Its keys are declared to the server (`getkeys-api`), so cluster routing,
//! `CROSSSLOT` and ACL key patterns cover them as they cover the lock key.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_int;
use std::hash::{BuildHasherDefault, Hasher};

use redis_module::raw;

use crate::common::error::WardenError;
use crate::common::grammar::{arg, items, key, optional, Arg, Grammar, Kind, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::lock::call::{lock_of, owner, Lock};
use crate::lock::core::errors;
use crate::lock::core::guard::refusal;
use crate::lock::core::plain::TOKEN;
use crate::lock::replicas;

/// `DLOCK.GUARD key owner token command [arg ...]`: the words as given; the
/// command checks them in its own order (nesting first).
pub struct Guard<'a> {
    /// The owner, unchecked.
    pub owner: &'a [u8],
    /// The token, unparsed.
    pub token: &'a [u8],
}

/// Where DLOCK.GUARD's carried command starts.
pub const COMMAND_AT: usize = 4;

impl<'a> Request<'a> for Guard<'a> {
    const NAME: &'static str = "dlock.guard";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        arg("owner", Kind::Str),
        arg("token", Kind::Int),
        arg("command", Kind::Str),
        optional(items("arg")),
    ]);

    fn empty() -> Self {
        Guard {
            owner: &[],
            token: &[],
        }
    }

    fn reads(arg: &'static Arg) -> bool {
        matches!(arg.name, "owner" | "token")
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "owner" => self.owner = word,
            "token" => self.token = word,
            _ => {}
        }
        Ok(())
    }
}

impl Guard<'_> {
    /// The owner and token, checked as an ACQUIRE's would be.
    pub fn checked(&self) -> Result<(&[u8], i64), WardenError> {
        Ok((owner(self.owner)?, TOKEN.parse(self.token)?))
    }
}

/// The most verdicts kept; past it the cache starts over (only names the
/// server knows are kept, so this bounds nothing a client could grow).
const MAX_VERDICTS: usize = 1024;

/// Command names up to this length are lower-cased on the stack.
const SHORT_NAME: usize = 32;

/// What `COMMAND INFO` told of one command name.
#[derive(Clone, Copy)]
struct Verdict {
    /// Why it cannot run guarded (`lock::core::guard::refusal`); `None`: it can.
    refusal: Option<&'static str>,
    /// Whether it has subcommands (whose own flags then decide).
    container: bool,
}

/// FNV-1a over a command name: the verdict map's keys are names the server
/// knows (at most `MAX_VERDICTS`), so the map needs no keyed hash, and FNV
/// costs a fraction of SipHash on every guarded call.
#[derive(Default)]
struct NameHasher(u64);

impl Hasher for NameHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash;
    }
}

thread_local! {
    /// The verdict per lower-case command name (`container|sub` for a
    /// subcommand), read from `COMMAND INFO` once per name.
    static VERDICTS: RefCell<HashMap<Vec<u8>, Verdict, BuildHasherDefault<NameHasher>>> =
        RefCell::new(HashMap::default());
}

/// `DLOCK.GUARD key owner token command [arg ...]`
pub fn guard(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if host::is_keys_position_request(ctx) {
        declare_keys(ctx, args);
        return Ok(());
    }
    let request = args.parse::<Guard>()?;
    if host::in_call() {
        // Reached from a guarded command (directly or through a script): no
        // chain of calls may grow deep enough to exhaust the server's stack.
        return Err(errors::not_guardable(
            "dlock.guard",
            "DLOCK.GUARD does not nest",
        ));
    }
    let (owner, token) = request.checked()?;
    check_runnable(ctx, args)?;
    let now = host::now_ms();
    replicas::require(ctx, now)?;
    let held = {
        let mut key = Key::readable(ctx, args.raw(1));
        match lock_of(&mut key)? {
            Lock::Free => false,
            Lock::One(s) => s.is_held_by(owner, Some(token), now),
            Lock::Set(set) => set.live(now).any(|h| h.is_held_by(owner, Some(token), now)),
        }
    };
    if !held {
        return Err(errors::fenced(args.bytes(1)));
    }
    match host::call(ctx, c"v!CM0", args.raw_from(COMMAND_AT)) {
        Ok(reply) => {
            reply.forward(ctx);
            Ok(())
        }
        Err(errno) => Err(call_error(errno, command_name(args))),
    }
}

thread_local! {
    /// Whether a keys request of DLOCK.GUARD is being answered: the carried
    /// command's keys are not asked for again from inside it, so arguments
    /// that nest DLOCK.GUARD thousands deep cannot exhaust the server's stack.
    static DECLARING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Clears `DECLARING` when a keys request is answered, also on a panic.
struct Declaring;

impl Drop for Declaring {
    fn drop(&mut self) {
        DECLARING.with(|d| d.set(false));
    }
}

/// Answers a keys request: the lock key (read), then the keys of the guarded
/// command with the access the server gives them for that command. A nested
/// request (the carried command is itself a DLOCK.GUARD) declares only its
/// lock key; such a call is refused when it runs.
fn declare_keys(ctx: Ctx, args: &Args) {
    if args.len() < 2 {
        return;
    }
    if DECLARING.with(|d| d.replace(true)) {
        host::key_at(
            ctx,
            1,
            (raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS) as c_int,
        );
        return;
    }
    let _declaring = Declaring;
    host::key_at(
        ctx,
        1,
        (raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS) as c_int,
    );
    if args.len() > COMMAND_AT {
        for (pos, flags) in host::command_keys(ctx, args.raw_from(COMMAND_AT)) {
            host::key_at(ctx, COMMAND_AT + pos, flags);
        }
    }
}

/// The guarded command's name, lower case, for messages and verdicts.
fn command_name(args: &Args) -> String {
    String::from_utf8_lossy(args.bytes(COMMAND_AT)).to_lowercase()
}

/// Refuses a command DLOCK.GUARD must not run (see `lock::core::guard`), or one
/// the server does not know.
fn check_runnable(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let mut buffer = [0u8; SHORT_NAME];
    let given = args.bytes(COMMAND_AT);
    let owned;
    let name: &[u8] = match buffer.get_mut(..given.len()) {
        // The common case, without an allocation: a short name.
        Some(short) => {
            short.copy_from_slice(given);
            short.make_ascii_lowercase();
            short
        }
        None => {
            owned = given.to_ascii_lowercase();
            &owned
        }
    };
    let Some(mut verdict) = verdict_of(ctx, name) else {
        return Err(WardenError::UnknownCommand(command_name(args)));
    };
    if verdict.container && args.len() > COMMAND_AT + 1 {
        let mut full = name.to_vec();
        full.push(b'|');
        full.extend(args.bytes(COMMAND_AT + 1).to_ascii_lowercase());
        match verdict_of(ctx, &full) {
            Some(sub) => verdict = sub,
            // An unknown subcommand is left to the server's own error.
            None => return Ok(()),
        }
    }
    match verdict.refusal {
        Some(why) => Err(errors::not_guardable(&command_name(args), why)),
        None => Ok(()),
    }
}

/// The verdict on `name`, from the cache or `COMMAND INFO`; `None` when the
/// server does not know the command.
fn verdict_of(ctx: Ctx, name: &[u8]) -> Option<Verdict> {
    if let Some(verdict) = VERDICTS.with(|v| v.borrow().get(name).copied()) {
        return Some(verdict);
    }
    let info = host::command_info(ctx, name)?;
    let entry = info.node().element(0).filter(|e| !e.is_null())?;
    let flags = entry.element(2)?;
    // A reply without a first key position (no server has sent one) counts
    // as keyless: refused.
    let first_key = entry.element(3).and_then(|n| n.integer()).unwrap_or(0);
    let verdict = Verdict {
        refusal: refusal(
            name,
            (0..flags.len()).filter_map(|i| Some(flags.element(i)?.bytes())),
            first_key,
        ),
        container: entry.element(9).is_some_and(|subs| !subs.is_empty()),
    };
    VERDICTS.with(|v| {
        let mut v = v.borrow_mut();
        if v.len() >= MAX_VERDICTS {
            v.clear();
        }
        v.insert(name.to_vec(), verdict);
    });
    Some(verdict)
}

/// The error for a guarded command the server refused to run.
fn call_error(errno: c_int, name: String) -> WardenError {
    match errno {
        // The command passed `check_runnable`, so the server knows it: what
        // it does not know is the subcommand.
        libc::ENOENT => WardenError::UnknownSubcommand(name),
        libc::EPERM => WardenError::NotServedHere,
        libc::EINVAL => WardenError::WrongArity(name.into()),
        libc::EACCES => WardenError::NoPermission(name),
        libc::ENOSPC => WardenError::OutOfMemory,
        libc::EROFS => WardenError::ReadOnlyReplica,
        libc::ENETDOWN => WardenError::ClusterDown,
        other => WardenError::CallRefused(other),
    }
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Guard as Request>::NAME,
    func: command_fn!(guard),
    alias: None,
    flags: "write getkeys-api",
    doc: Doc {
        summary: "Runs command only while owner holds the lock with token, in the same atomic step (a fenced write); otherwise FENCED and nothing runs. The command's keys are declared, run with the caller's ACL and the OOM rule, and replicated as on its own.",
        complexity: "O(1) plus the command's own",
        grammar: <Guard as Request>::GRAMMAR,
        since: "0.3.0",
    },
};
