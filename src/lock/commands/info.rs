//! `DLOCK.INFO`: a lock's holder (or holders), lease, holds and waiters.

use std::ops::Deref;

use crate::common::error::WardenError;
use crate::common::grammar::{key, shape_only_request, Grammar, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::glue::waiting;
use crate::lock::call::{lock_of, Lock};
use crate::lock::core::plain::{ttl_left, LockState};
use crate::lock::core::set::{LockSet, SetKind};

shape_only_request!(
    /// `DLOCK.INFO key`
    Info,
    "dlock.info",
    Grammar::new(&[key()])
);

/// `DLOCK.INFO key`
pub fn info(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Info>()?;
    let now = host::now_ms();
    let name = args.raw(1);
    let mut key = Key::readable(ctx, name);
    // The key's expiry is read once, by `lock_of`: a plain lock's deadline,
    // a set's bound.
    match lock_of(&mut key)? {
        Lock::Set(set) => {
            let pttl = ttl_left(set.expiry_bound, now);
            info_set(ctx, set, waiting::count_in(ctx, name), pttl, now);
        }
        Lock::One(state) if state.is_live(now) => {
            let waiters = waiting::count_in(ctx, name);
            host::reply_map(ctx, 5);
            reply_grant(ctx, &state, state.ttl_ms(now));
            host::reply_bulk(ctx, b"waiters");
            host::reply_integer(ctx, waiters as i64);
        }
        _ => host::reply_null(ctx),
    }
    Ok(())
}

/// DLOCK.INFO of a set: the fields of a plain lock for the holder whose lease
/// ends last (`ttl_ms` is the key's PTTL), then `mode` (`shared` or
/// `limit`), `limit` for a semaphore, and `holders`, each with its own
/// owner, token, ttl_ms and holds; nil when no lease runs.
fn info_set(ctx: Ctx, set: &LockSet, waiters: usize, pttl: i64, now: i64) {
    let Some(last) = set.live(now).max_by_key(|h| h.deadline_ms) else {
        host::reply_null(ctx);
        return;
    };
    let limit = match set.kind() {
        SetKind::Shared => None,
        SetKind::Limit(n) => Some(i64::from(n)),
    };
    host::reply_map(ctx, 7 + usize::from(limit.is_some()));
    reply_grant(ctx, &last, pttl);
    host::reply_bulk(ctx, b"waiters");
    host::reply_integer(ctx, waiters as i64);
    host::reply_bulk(ctx, b"mode");
    host::reply_bulk(ctx, if limit.is_some() { b"limit" } else { b"shared" });
    if let Some(n) = limit {
        host::reply_bulk(ctx, b"limit");
        host::reply_integer(ctx, n);
    }
    host::reply_bulk(ctx, b"holders");
    host::reply_array(ctx, set.live_count(now));
    for h in set.live(now) {
        let ttl = match pttl {
            -1 => h.ttl_ms(now),
            bound => h.ttl_ms(now).min(bound),
        };
        host::reply_map(ctx, 4);
        reply_grant(ctx, &h, ttl);
    }
}

/// The `owner`, `token`, `ttl_ms` and `holds` fields of one grant in a
/// DLOCK.INFO map.
fn reply_grant<O: Deref<Target = [u8]>>(ctx: Ctx, grant: &LockState<O>, ttl_ms: i64) {
    host::reply_bulk(ctx, b"owner");
    host::reply_bulk(ctx, &grant.owner);
    host::reply_bulk(ctx, b"token");
    host::reply_integer(ctx, grant.token);
    host::reply_bulk(ctx, b"ttl_ms");
    host::reply_integer(ctx, ttl_ms);
    host::reply_bulk(ctx, b"holds");
    host::reply_integer(ctx, grant.holds);
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Info as Request>::NAME,
    func: command_fn!(info),
    alias: None,
    flags: "readonly fast",
    doc: Doc {
        summary: "Owner, token, ttl_ms, holds and waiters of a lock; nil when it is free.",
        complexity: "O(1)",
        grammar: <Info as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
