//! The lapse watch on the server (`lock::core::lapse`): a holder of a
//! `SHARED` or `LIMIT n` key whose lease ends while another holder's runs
//! on is dropped when it ends and told with `dlock.lost`, as the key's
//! expiry tells the last ones. One module timer, at the earliest watched
//! lease end, serves every key.
//!
//! Only a master that accepts writes drops holders: each drop is an
//! ordinary change of the set, replicated whole with its absolute deadlines
//! (`DLOCK._SETS`). Held back by a pause or a failover in progress, it is
//! retried every few ms; a node that turns replica forgets the watch (its
//! sets follow the master's). Sets are watched as a master stores them, and
//! all at once when the node becomes master or ends loading a dataset.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;

use redis_module::raw;

use crate::glue::host::{self, shield, Ctx};
use crate::glue::waiting::{self, EarliestTimer};
use crate::lock::core::lapse::LapseWatch;
use crate::lock::core::packed::PackedLock;
use crate::lock::core::set::LockSet;
use crate::lock::stats;

/// What the module does with a watched key that is due
/// (`lock::kept_grants::drop_lapsed`).
pub type DropLapsed = fn(Ctx, c_int, &[u8], i64);

thread_local! {
    /// Set by `start`.
    static DROP: std::cell::Cell<Option<DropLapsed>> = const { std::cell::Cell::new(None) };
    static WATCH: RefCell<LapseWatch> = RefCell::new(LapseWatch::default());
    /// The timer at the earliest watched lease end.
    static TIMER: EarliestTimer = const { EarliestTimer::new() };
}

/// Runs `op` on the watch, then updates the INFO gauge.
fn with_watch<R>(op: impl FnOnce(&mut LapseWatch) -> R) -> R {
    WATCH.with(|w| {
        let mut w = w.borrow_mut();
        let r = op(&mut w);
        stats::LOCKS_WATCHED.store(w.len() as i64, Ordering::Relaxed);
        r
    })
}

/// The set in `key` of the selected database was just stored with its
/// first lapse at `first_lapse` (`LockSet::first_lapse`): on a serving
/// master it is watched until then; otherwise it is not watched.
pub fn track(ctx: Ctx, key: &[u8], first_lapse: Option<i64>, now: i64) {
    match first_lapse {
        Some(at) if host::is_serving_master() => {
            let db = host::selected_db(ctx);
            with_watch(|w| w.watch(db, key, at));
            arm(ctx, now, now);
        }
        _ if watching() => forget(host::selected_db(ctx), key),
        _ => {}
    }
}

/// Whether any key is watched.
fn watching() -> bool {
    WATCH.with(|w| !w.borrow().is_empty())
}

/// The set in `key` of database `db` is gone (deleted, expired, evicted,
/// overwritten): no longer watched.
pub fn forget(db: c_int, key: &[u8]) {
    if watching() {
        with_watch(|w| w.forget(db, key));
    }
}

/// Database `db` (every database for -1) was flushed, or the node turned
/// replica (-1): nothing there is watched any more.
pub fn forget_db(db: c_int) {
    with_watch(|w| w.forget_db((db >= 0).then_some(db)));
}

/// Makes sure the timer fires when the earliest watched lease ends, not
/// before `not_before`.
fn arm(ctx: Ctx, now: i64, not_before: i64) {
    let due = with_watch(|w| w.next_due()).map(|at| at.max(not_before));
    TIMER.with(|t| t.arm(ctx, due, now, on_timer));
}

/// The timer: drops the holders whose lease ended, a batch of keys at a
/// time.
unsafe extern "C" fn on_timer(ctx: *mut raw::RedisModuleCtx, _: *mut c_void) {
    // SAFETY: the context Redis passed this timer callback.
    unsafe { waiting::on_earliest_timer(ctx, &TIMER, drop_due) }
}

/// Drops the lapsed holders of the keys due at `now`, a batch of them.
fn drop_due(ctx: Ctx, now: i64) {
    let not_before = waiting::run_master_schedule(
        ctx,
        now,
        || forget_db(-1),
        || {
            let due = with_watch(|w| w.pop_due(now));
            if let (Some((db, key)), Some(drop_lapsed)) = (&due, DROP.get()) {
                drop_lapsed(ctx, *db, key, now);
            }
            due.is_some()
        },
    );
    arm(ctx, now, not_before);
}

/// Watches every set of every database whose first lapse is ahead of its
/// last, or that lists a holder whose lease ended where nobody dropped it:
/// the node became master, or loaded a dataset as one.
fn watch_all(ctx: Ctx) {
    if stats::LOCK_KEYS.load(Ordering::Relaxed) <= 0 || !host::is_serving_master() {
        return;
    }
    let now = host::now_ms();
    let selected = host::selected_db(ctx);
    for db in 0..c_int::MAX {
        if !host::select_db(ctx, db) {
            break; // past the last database
        }
        host::scan_values::<PackedLock, LockSet, _>(ctx, |key, value| {
            if let host::Either::Second(set) = value {
                if let Some(at) = set.next_look(now) {
                    with_watch(|w| w.watch(db, key, at));
                }
            }
        });
    }
    host::select_db(ctx, selected);
    arm(ctx, now, now);
}

/// # Safety
/// Called by Redis with a valid context.
///
/// Server-event hook: the node became master, or ended loading a dataset.
unsafe extern "C" fn on_master_data(
    ctx: *mut raw::RedisModuleCtx,
    event: raw::RedisModuleEvent,
    subevent: u64,
    _data: *mut c_void,
) {
    shield((), || {
        let wanted = match event.id {
            raw::REDISMODULE_EVENT_LOADING => raw::REDISMODULE_SUBEVENT_LOADING_ENDED,
            _ => raw::REDISMODULE_EVENT_REPLROLECHANGED_NOW_MASTER,
        };
        if subevent == wanted {
            // SAFETY: the context Redis passed this event hook, used while it runs.
            watch_all(unsafe { Ctx::from_raw(ctx) });
        }
    })
}

/// # Safety
/// Called by Redis with a valid context and the event's data.
///
/// Server-event hook: `SWAPDB` traded two databases' keys, and their
/// watched keys with them.
unsafe extern "C" fn on_swapdb(
    _ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    _subevent: u64,
    data: *mut c_void,
) {
    shield((), || {
        if data.is_null() || !watching() {
            return;
        }
        // SAFETY: Redis passes a RedisModuleSwapDbInfo with SWAPDB events (checked non-null above).
        let info = unsafe { &*data.cast::<raw::RedisModuleSwapDbInfo>() };
        with_watch(|w| w.swap_dbs(info.dbnum_first, info.dbnum_second));
    })
}

/// Subscribes the became-master, loading-ended and swapped-databases
/// hooks; `drop_lapsed` drops a due key's lapsed holders.
pub fn start(ctx: Ctx, drop_lapsed: DropLapsed) -> bool {
    DROP.set(Some(drop_lapsed));
    [
        raw::REDISMODULE_EVENT_LOADING,
        raw::REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED,
    ]
    .into_iter()
    .all(|id| host::subscribe_server_event(ctx, id, on_master_data))
        && host::subscribe_server_event(ctx, raw::REDISMODULE_EVENT_SWAPDB, on_swapdb)
}
