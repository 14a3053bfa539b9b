//! `dlock.lost`: the keyspace event (module class, `d`) a lock's key gets
//! when a grant on it ends by anything but its holder's RELEASE — its lease
//! ended, the key was deleted, overwritten or evicted, a flush or a role
//! change took it (`bulk_loss`), or (for a kept grant) its connection
//! closed or `SWAPDB` moved it —
//! so a holder subscribed to the key can stop its work. Losses are noted
//! where they are seen (a data type's unlink callback runs in the middle of
//! the server's delete) and announced from a 0 ms timer, after what removed
//! the key, once per key.

use std::cell::{Cell, RefCell};
use std::ffi::c_int;

use redis_module::Context;

use crate::glue::host::{self, shield, Ctx, OwnedString, RStr};
use crate::glue::waiting;
use crate::lock::events;
use crate::lock::stats;

thread_local! {
    /// Keys to announce.
    static PENDING: RefCell<Vec<(c_int, Vec<u8>)>> = const { RefCell::new(Vec::new()) };
    /// Whether the announcing timer is pending.
    static ARMED: Cell<bool> = const { Cell::new(false) };
}

/// A grant on `key` of database `db` was lost: announced shortly.
pub fn note(db: c_int, key: &[u8]) {
    PENDING.with(|p| p.borrow_mut().push((db, key.to_vec())));
    if ARMED.replace(true) {
        return;
    }
    match host::detached_context() {
        Some(ctx) => waiting::start_timer(ctx, 0, announce, ()),
        None => ARMED.set(false),
    }
}

/// A grant on `name` (of the selected database) was lost where the module
/// itself ends it, outside any delete of the server's: announced at once
/// (a kept grant released because its connection closed).
pub fn announce_now(ctx: Ctx, name: RStr) {
    stats::count(&stats::LOCKS_LOST);
    host::announce(ctx, events::LOST, name);
}

/// The timer: `dlock.lost` on every key noted.
fn announce(ctx: &Context, (): ()) {
    // SAFETY: the context of this timer callback, used while it runs.
    let ctx = unsafe { Ctx::from_raw(ctx.ctx) };
    shield((), || {
        ARMED.set(false);
        let mut pending = PENDING.with(|p| std::mem::take(&mut *p.borrow_mut()));
        // One event per key, however many ways it was seen lost at once.
        pending.sort_unstable();
        pending.dedup();
        for (db, key) in pending {
            stats::count(&stats::LOCKS_LOST);
            if host::select_db(ctx, db) {
                let name = OwnedString::new(Some(ctx), &key);
                host::announce(ctx, events::LOST, name.as_rstr());
            }
        }
    })
}
