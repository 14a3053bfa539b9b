//! `CACHE.SET`: stores a value with its ttl (and a stale window, a version,
//! the lease it ends), and hands it to the clients waiting for it.

use crate::cache::call::{apply, store};
use crate::cache::config;
use crate::cache::core::{CacheEntry, Meta, SetRequest, LEASE_TOKEN, STALE_MS, TTL_MS, VERSION};
use crate::cache::errors;
use crate::cache::events;
use crate::cache::waiters::serve_waiters;
use crate::cache::wire::{emit_entry, meta_text, parse_meta, Expiry};
use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, option, Arg, Grammar, Kind, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::effect;
use crate::glue::host::{self, Ctx, Key, Sink};
use crate::glue::waiting::{self};

/// Where `CACHE.SET` carries its ttl: a replicated call may carry its effect
/// there instead (`ttl@meta`).
pub const TTL_AT: usize = 3;

/// `CACHE.SET key value ttl_ms [STALE stale_ms] [VERSION v] [LEASE token]`
pub struct Set<'a> {
    /// The value.
    pub value: &'a [u8],
    /// Periods, version and lease.
    pub request: SetRequest,
}

impl<'a> Request<'a> for Set<'a> {
    const NAME: &'static str = "cache.set";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        arg("value", Kind::Str),
        arg("ttl_ms", Kind::Int),
        option("STALE", "stale_ms", Kind::Int),
        option("VERSION", "version", Kind::Int),
        option("LEASE", "token", Kind::Int),
    ]);

    fn empty() -> Self {
        Set {
            value: &[],
            request: SetRequest {
                ttl_ms: 0,
                stale_ms: 0,
                version: 0,
                lease: None,
            },
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        let r = &mut self.request;
        match arg.name {
            "value" => self.value = word,
            "ttl_ms" => r.ttl_ms = TTL_MS.parse(word)?,
            "stale_ms" => r.stale_ms = STALE_MS.parse(word)?,
            "version" => r.version = VERSION.parse(word)?,
            "token" => r.lease = Some(LEASE_TOKEN.parse(word)?),
            _ => {}
        }
        Ok(())
    }
}

/// `CACHE.SET key value ttl_ms [STALE stale_ms] [VERSION v] [LEASE token]`
pub fn set(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let Set { value, request } = match args.parse::<Set>() {
        Ok(set) => set,
        Err(r) if r.at == TTL_AT => return apply_replayed_set(ctx, args, r.error),
        Err(r) => return Err(r.error),
    };
    if value.len() > config::cache_max_value_bytes() {
        return Err(errors::VALUE_TOO_LARGE);
    }
    let now = host::now_ms();
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let (entry, meta) = {
        let current = key.value::<CacheEntry>()?;
        let allowed = match current.as_deref() {
            Some(entry) => entry.may_set(&request, now),
            // A lease ends with its key: a DEL voided it.
            None => request.lease.is_none(),
        };
        if !allowed {
            host::reply_integer(ctx, 0);
            return Ok(());
        }
        let meta = Meta::stored(&request, now)?;
        (
            CacheEntry::new(Some(value), &meta, current.as_deref()),
            meta,
        )
    };
    let text = meta_text(&meta, Expiry::AtEnd);
    // SAFETY: `args[3]` is the ttl, parsed into a number before this call;
    // its bytes are not read again by the command.
    if !unsafe { effect::replicate_in_place(ctx, args.raw(3), text.as_bytes()) } {
        emit_entry(
            Sink::Replication(ctx),
            name,
            value,
            Some(args.raw(2)),
            &meta,
            Expiry::AtEnd,
        );
    }
    store(&key, entry);
    host::notify(ctx, events::SET, name);
    let db = host::selected_db(ctx);
    if waiting::count(db, args.bytes(1)) > 0 {
        serve_waiters(ctx, &mut key, name, db, now);
    }
    host::reply_integer(ctx, 1);
    Ok(())
}

/// A SET whose ttl (`args[3]`) did not parse: from a master or the AOF it
/// may carry its effect (`ttl@meta`), applied like `CACHE._SET` and
/// replicated as it came; otherwise it is the error `e`.
fn apply_replayed_set(ctx: Ctx, args: &Args, e: WardenError) -> Result<(), WardenError> {
    let Some(text) = effect::replayed(ctx, args.bytes(3)) else {
        return Err(e);
    };
    let parsed = parse_meta(text)?;
    // Verbatim is safe here: this argv already carries the absolute state.
    apply(ctx, args.raw(1), Some(args.bytes(2)), parsed, |_, _| {
        host::replicate_verbatim(ctx)
    })?;
    host::reply_integer(ctx, 1);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Set as Request>::NAME,
    func: command_fn!(set),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Caches a value, fresh for ttl_ms then served stale for STALE ms: 1, or 0 when refused (an older VERSION than the stored one, or a LEASE token that is no longer current). Hands the value to clients waiting for a refresh.",
        complexity: "O(N) where N is the value's length",
        grammar: <Set as Request>::GRAMMAR,
        since: "0.2.0",
    },
};
