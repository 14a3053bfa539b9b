//! Grants taken away wholesale, where Redis calls no per-key callback:
//! `FLUSHDB` / `FLUSHALL` on a master, and the node turning replica (its
//! holders now talk to a node that follows another master). Both look for
//! lock keys with a whole SCAN of the databases involved, only when lock
//! keys exist (`stats::LOCK_KEYS`), and tell the holders with `dlock.lost`
//! (`lock::lost`).
//!
//! A flush is seen before it empties the databases; what it took is checked
//! by a 0 ms timer, after the command: `DEBUG RELOAD` flushes and loads the
//! same locks back, and those were not lost.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;

use redis_module::raw;
use redis_module::Context;

use crate::glue::host::{self, shield, Ctx, Either, Key, OwnedString};
use crate::glue::waiting;
use crate::lock::core::packed::PackedLock;
use crate::lock::core::set::LockSet;
use crate::lock::keep;
use crate::lock::lapse_watch;
use crate::lock::lost;
use crate::lock::stats::LOCK_KEYS;

/// A lock key a flush took, with the grants it held then.
struct Taken {
    db: c_int,
    key: Vec<u8>,
    tokens: Vec<i64>,
}

thread_local! {
    /// What flushes took, to check once they are done.
    static FLUSHED: RefCell<Vec<Taken>> = const { RefCell::new(Vec::new()) };
}

/// The grants' tokens of a lock value.
fn tokens(value: &Either<'_, PackedLock, LockSet>) -> Vec<i64> {
    match value {
        Either::Empty => Vec::new(),
        Either::First(lock) => vec![lock.token()],
        Either::Second(set) => set.holders().iter().map(|h| h.state().token).collect(),
    }
}

/// Every lock key with grants in database `db` (or every database for -1),
/// leaving `ctx`'s selected database as it was.
fn held_keys(ctx: Ctx, db: c_int) -> Vec<Taken> {
    let mut found = Vec::new();
    if LOCK_KEYS.load(Ordering::Relaxed) <= 0 {
        return found;
    }
    let selected = host::selected_db(ctx);
    let (first, last) = if db < 0 { (0, c_int::MAX) } else { (db, db) };
    for db in first..=last {
        if !host::select_db(ctx, db) {
            break; // past the last database
        }
        host::scan_values::<PackedLock, LockSet, _>(ctx, |key, value| {
            let tokens = tokens(&value);
            if !tokens.is_empty() {
                found.push(Taken {
                    db,
                    key: key.to_vec(),
                    tokens,
                });
            }
        });
    }
    host::select_db(ctx, selected);
    found
}

/// # Safety
/// Called by Redis with a valid context and the event's flush info.
///
/// Server-event hook: a flush is about to empty databases. On a serving
/// master, the lock keys there are noted and checked after it.
unsafe extern "C" fn on_flush(
    ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    subevent: u64,
    data: *mut c_void,
) {
    shield((), || {
        if subevent != raw::REDISMODULE_SUBEVENT_FLUSHDB_START
            || data.is_null()
            || !host::is_serving_master()
        {
            return;
        }
        // SAFETY: Redis passes a RedisModuleFlushInfo with FLUSHDB events (checked non-null above).
        let db = unsafe { (*data.cast::<raw::RedisModuleFlushInfo>()).dbnum };
        lapse_watch::forget_db(db);
        // SAFETY: the context Redis passed this event hook, used while it runs.
        let ctx = unsafe { Ctx::from_raw(ctx) };
        let taken = held_keys(ctx, db);
        if taken.is_empty() {
            return;
        }
        let first = FLUSHED.with(|f| {
            let mut f = f.borrow_mut();
            let first = f.is_empty();
            f.extend(taken);
            first
        });
        if first {
            waiting::start_timer(ctx, 0, check_flushed, ());
        }
    })
}

/// The timer after a flush: a key that does not hold its grants again
/// (as after `DEBUG RELOAD`) lost them.
fn check_flushed(ctx: &Context, (): ()) {
    // SAFETY: the context of this timer callback, used while it runs.
    let ctx = unsafe { Ctx::from_raw(ctx.ctx) };
    shield((), || {
        let taken = FLUSHED.with(|f| std::mem::take(&mut *f.borrow_mut()));
        for t in taken {
            if !host::select_db(ctx, t.db) {
                continue;
            }
            let name = OwnedString::new(Some(ctx), &t.key);
            let mut key = Key::readable(ctx, name.as_rstr());
            let back = key
                .either::<PackedLock, LockSet>()
                .is_ok_and(|value| tokens(&value) == t.tokens);
            if !back {
                keep::value_unlinked(&t.key, t.db, t.tokens);
            }
        }
    })
}

/// # Safety
/// Called by Redis with a valid context.
///
/// Server-event hook: the node turned replica. Every grant held here is
/// lost to its holder (the node now follows another master's data).
unsafe extern "C" fn on_role_changed(
    ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    subevent: u64,
    _data: *mut c_void,
) {
    shield((), || {
        if subevent != raw::REDISMODULE_EVENT_REPLROLECHANGED_NOW_REPLICA {
            return;
        }
        // SAFETY: the context Redis passed this event hook, used while it runs.
        let ctx = unsafe { Ctx::from_raw(ctx) };
        for t in held_keys(ctx, -1) {
            lost::note(t.db, &t.key);
        }
        keep::demoted(ctx);
        lapse_watch::forget_db(-1);
    })
}

/// Subscribes the flush and role-change hooks.
pub fn start(ctx: Ctx) -> bool {
    host::subscribe_server_event(ctx, raw::REDISMODULE_EVENT_FLUSHDB, on_flush)
        && host::subscribe_server_event(
            ctx,
            raw::REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED,
            on_role_changed,
        )
}
