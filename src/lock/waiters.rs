//! Clients blocked in `DLOCK.ACQUIRE … WAIT`: what each asked for, the
//! lock family's entry in the waiting machinery (`glue::waiting`), and the
//! hand-over of a lock to the waiters at the head of the queue
//! (`lock::core::handover`), replicated as `DLOCK._SET` or `DLOCK._SETS`.

use std::ffi::c_int;
use std::sync::atomic::AtomicI64;

use crate::common::error::WardenError;
use crate::glue::fence::with_fence;
use crate::glue::host::{self, Ctx, Key, RStr};
use crate::glue::waiting::{self, Answer, Waited};
use crate::lock::call::{apply_grant, lock_of, look_again, store_set_changes};
use crate::lock::core::acquire::{self, Ask};
use crate::lock::core::handover::{self, Head, Verdict};
use crate::lock::core::packed::PackedLock;
use crate::lock::core::set::{LockSet, Want};
use crate::lock::events;
use crate::lock::keep;
use crate::lock::replicas;
use crate::lock::stats;

/// What a client blocked in `DLOCK.ACQUIRE … WAIT` asked for.
pub(super) struct LockWaiter {
    /// Who will hold the lock once it is handed over.
    pub(super) owner: Vec<u8>,
    /// Lease length asked for; the lease starts at the hand-off.
    pub(super) ttl_ms: i64,
    /// Exclusive, `SHARED` or `LIMIT n`.
    pub(super) want: Want,
    /// `REENTRANT`: if its owner holds the lock by then, one more hold.
    pub(super) reentrant: bool,
    /// `KEEP`: the connection that waits, which the grant will be bound to.
    pub(super) keeper: Option<u64>,
}

/// Locks as a `waiting::Waited`: a free lock goes to the oldest waiter.
pub(super) struct Locks;

/// The lock family's entry in the waiting machinery.
pub(super) static LOCKS: Locks = Locks;

impl Waited for Locks {
    fn serve(&self, ctx: Ctx, key: &mut Key, name: RStr, db: c_int, now: i64) {
        serve_waiters(ctx, key, name, db, now);
    }

    fn holds_own(&self, key: &Key) -> bool {
        key.holds::<PackedLock>() || key.holds::<LockSet>()
    }

    fn gauge(&self) -> &'static AtomicI64 {
        &stats::LOCKS_WAITING
    }
}

/// Hands the lock to the waiters at the head of the queue while the grant
/// rule lets them in: one exclusive waiter, or consecutive shared (or
/// semaphore) waiters together, replicated as one change of the set. `key`
/// is open for writing on `db`. Returns whether a waiter got the lock.
pub(super) fn serve_waiters(ctx: Ctx, key: &mut Key, name: RStr, db: c_int, now: i64) -> bool {
    let key_bytes = name.bytes();
    let (served, set_changed) = hand_over(ctx, key, name, db, key_bytes, now);
    if set_changed {
        store_set_changes(ctx, key, name, now);
    }
    look_again(ctx, key, db, key_bytes, now);
    served
}

/// The grants of `serve_waiters`: applies the hand-over plan's verdicts
/// (`lock::core::handover`) to the head of the queue until it says stop.
/// Returns whether a waiter got the lock, and whether a set changed (its
/// state is not replicated yet).
fn hand_over(
    ctx: Ctx,
    key: &mut Key,
    name: RStr,
    db: c_int,
    key_bytes: &[u8],
    now: i64,
) -> (bool, bool) {
    let (mut served, mut set_changed) = (false, false);
    // The head's owner, copied out of the queue: the plan may ask the
    // cluster (`CLUSTER NODES`), which is not done while the queue is borrowed.
    let mut owner = Vec::new();
    loop {
        let lock = match lock_of(key) {
            Ok(lock) => lock,
            Err(e) => {
                // Another command overwrote the key: its lock waiters get
                // the error a request would get now (WRONGTYPE).
                waiting::fail_front::<LockWaiter>(ctx, db, key_bytes, &e.to_string());
                return (served, set_changed);
            }
        };
        let front = waiting::front::<LockWaiter, _>(db, key_bytes, |w| {
            owner.clear();
            owner.extend_from_slice(&w.owner);
            w.want
        });
        let head = match front {
            Some(want) => Head::Waiter {
                want,
                owner: &owner,
            },
            None if waiting::count(db, key_bytes) == 0 => Head::Empty,
            None => Head::Other,
        };
        // A key that vanished may have left with its slot (MIGRATE,
        // resharding): granting here would write a key this node no longer
        // serves.
        let moved = || waiting::moved_error(ctx, key_bytes);
        let repeat = match handover::decide(lock.holding(), head, now, served, moved) {
            Verdict::Stop => return (served, set_changed),
            Verdict::Drop => {
                // Another family's waiter at the head: answered with an error.
                waiting::pop_front::<LockWaiter>(db, key_bytes);
                continue;
            }
            Verdict::SendAway(error) => {
                // Send the waiters to the node that serves the slot now.
                waiting::fail_all(db, key_bytes, &error);
                return (false, false);
            }
            Verdict::Grant => false,
            Verdict::Renew => true,
        };
        if let Err(e) = replicas::require(ctx, now) {
            // Too few replicas for a grant: the waiters learn it now and
            // can look for a master that has them.
            waiting::fail_all(db, key_bytes, &e.to_string());
            return (served, set_changed);
        }
        let Some(waiter) = waiting::pop_front::<LockWaiter>(db, key_bytes) else {
            return (served, set_changed);
        };
        let asked = &waiter.payload;
        if asked.keeper.is_some() {
            if let Err(e) = keep::check_capacity(asked.ttl_ms) {
                // Room for its renewals went while it waited: refused to it alone.
                waiter.answer(Answer::Error(e.to_string()));
                continue;
            }
        }
        match grant_waiter(ctx, key, name, asked, repeat, now) {
            Ok((token, changed_set)) => {
                let (owner, ttl) = (&asked.owner, asked.ttl_ms);
                keep::granted(ctx, asked.keeper, key_bytes, owner, token, ttl, now);
                host::notify(ctx, events::ACQUIRE, name);
                waiter.answer(Answer::Integer(token));
                stats::count(&stats::LOCKS_GRANTED);
                stats::count(&stats::LOCKS_HANDED_OFF);
                served = true;
                set_changed |= changed_set;
            }
            Err(NotGranted::Own(e)) => {
                // This waiter's own request (a lease too short for the kept
                // grant it repeats): refused to it alone.
                waiter.answer(Answer::Error(e.to_string()));
            }
            Err(NotGranted::Key(e)) => {
                // The waiter already taken is answered too: none is left hanging.
                let error = e.to_string();
                waiter.answer(Answer::Error(error.clone()));
                waiting::fail_all(db, key_bytes, &error);
                return (served, set_changed);
            }
        }
        // After an exclusive grant the next waiter finds the lock held (only a
        // repeat of the same owner goes on).
    }
}

/// Why a waiter the hand-over let in was not granted.
enum NotGranted {
    /// Its own request (the kept lease it repeats refused): answered alone.
    Own(WardenError),
    /// The key: every waiter is answered.
    Key(WardenError),
}

/// The grant of a waiter the hand-over let in (`repeat`: its owner holds
/// the lock already), made by `lock::core::acquire` on the key as it is now
/// and applied. Returns its token and whether a set changed (not
/// replicated yet).
fn grant_waiter(
    ctx: Ctx,
    key: &mut Key,
    name: RStr,
    asked: &LockWaiter,
    repeat: bool,
    now: i64,
) -> Result<(i64, bool), NotGranted> {
    let ask = Ask {
        owner: &asked.owner,
        want: asked.want,
        reentrant: asked.reentrant,
        deadline: now.saturating_add(asked.ttl_ms),
        wait: false,
    };
    let lock = lock_of(key).map_err(NotGranted::Key)?;
    let lease_refused = std::cell::Cell::new(false);
    let grant = if repeat {
        let ttl_ms = ask.deadline - now;
        let kept_lease = |token| {
            let checked = keep::check_lease(ctx, name.bytes(), token, ttl_ms);
            lease_refused.set(checked.is_err());
            checked
        };
        acquire::renew(lock.holding(), &ask, now, kept_lease)
    } else {
        with_fence(|fence| acquire::grant(lock.holding(), &ask, now, fence))
    };
    let grant = grant.map_err(|e| match lease_refused.get() {
        true => NotGranted::Own(e),
        false => NotGranted::Key(e),
    })?;
    let changed_set =
        apply_grant(ctx, key, name, &ask, &grant, None, now).map_err(NotGranted::Key)?;
    Ok((grant.token, changed_set))
}
