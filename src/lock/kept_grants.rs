//! What the module does with a kept grant that is due (`lock::keep`), and
//! with a set whose holder lapsed (`lock::lapse_watch`): renew
//! its lease, or release it when its connection closed. Each is an ordinary
//! lock change, replicated with absolute deadlines (`DLOCK._SET`,
//! `DLOCK._SETS`, `DEL`); the caller runs it only on a master that accepts
//! writes.

use crate::common::error::WardenError;
use crate::glue::host::{self, Ctx, Key, OwnedString, RStr, Sink};
use crate::glue::waiting;
use crate::lock::call::{
    lock_of, look_again, replicate_state, store_holds, store_set_changes, Lock,
};
use crate::lock::core::keep::{Applied, Due, Kept, Replicated};
use crate::lock::core::plain::Release;
use crate::lock::events;
use crate::lock::lapse_watch;
use crate::lock::lost;
use crate::lock::replicas;
use crate::lock::waiters::serve_waiters;
use std::ffi::c_int;

/// Does what is due for `grant`. Too few replicas: not possible now,
/// retried; any other error: the key holds something else now.
pub fn apply(ctx: Ctx, grant: &Kept, due: Due, now: i64) -> Result<Applied, WardenError> {
    if !host::select_db(ctx, grant.db) {
        return Ok(Applied::Gone);
    }
    let name = OwnedString::new(Some(ctx), &grant.key);
    let name = name.as_rstr();
    let mut key = Key::writable(ctx, name);
    let done = match due {
        Due::Renew => {
            replicas::require(ctx, now)?;
            renew(ctx, &mut key, name, grant, now, false)
        }
        Due::Settle => renew(ctx, &mut key, name, grant, now, true),
        Due::Release => release(ctx, &mut key, name, grant, now),
        Due::Hold => return hold(&mut key, grant, now),
        Due::Revert {
            replicated,
            key_expiry,
        } => revert(&mut key, grant, replicated, key_expiry),
    };
    done.map(|done| if done { Applied::Done } else { Applied::Gone })
}

/// Renews a kept lease to `ttl_ms` from now (never shortening it: an EXTEND
/// or a renewal held in a pause may have made it longer) and replicates it
/// — with `settle`, also a lease that is long enough (one renewed in memory
/// only). False when the grant is gone.
fn renew(
    ctx: Ctx,
    key: &mut Key,
    name: RStr,
    grant: &Kept,
    now: i64,
    settle: bool,
) -> Result<bool, WardenError> {
    let deadline = now.saturating_add(grant.ttl_ms);
    match lock_of(key)? {
        Lock::One(mut state) => {
            if state.owner != grant.owner.as_slice() || state.token != grant.token {
                return Ok(false);
            }
            if state.deadline_ms >= deadline && !settle {
                return Ok(true);
            }
            state.deadline_ms = state.deadline_ms.max(deadline);
            let lease = state.deadline_ms;
            replicate_state(ctx, name, None, &state);
            key.set_abs_expire(lease);
        }
        Lock::Set(set) => {
            // Nothing changes in memory unless it is replicated: a replica's
            // copy (and `DEBUG DIGEST`) must stay the master's.
            let bound = set.expiry_bound;
            let lease = set
                .holder_mut(&grant.owner, Some(grant.token), now)
                .map(|holder| holder.deadline_ms.min(bound));
            match lease {
                Some(lease) if lease >= deadline && !settle => return Ok(true),
                Some(_) => {}
                None if set.live_count(now) < set.holders().len() => {
                    // Its lease ended (a pause or too few replicas held the
                    // renewals back): dropped and told like any lapse, once.
                    set.bound_deadlines();
                    store_set_changes(ctx, key, name, now);
                    return Ok(false);
                }
                None => return Ok(false),
            }
            set.bound_deadlines();
            let holder = set
                .holder_mut(&grant.owner, Some(grant.token), now)
                .ok_or(WardenError::Internal)?;
            holder.deadline_ms = holder.deadline_ms.max(deadline);
            store_set_changes(ctx, key, name, now);
        }
        Lock::Free => return Ok(false),
    }
    host::notify(ctx, events::EXTEND, name);
    look_again(ctx, key, grant.db, &grant.key, now);
    Ok(true)
}

/// Renews a kept lease to `ttl_ms` from now in memory only, while writes
/// are paused (nothing may be replicated then): the key does not reach its
/// deadline, so it is still there, with its grant, when writes resume and
/// the lease is replicated (`Due::Settle`). A key already past its deadline
/// reads as gone (Redis hides it until the pause ends).
fn hold(key: &mut Key, grant: &Kept, now: i64) -> Result<Applied, WardenError> {
    let deadline = now.saturating_add(grant.ttl_ms);
    let key_expiry_ms = key.abs_expire();
    let replicated = match lock_of(key)? {
        Lock::One(state) => {
            if state.owner != grant.owner.as_slice() || state.token != grant.token {
                return Ok(Applied::Gone);
            }
            if state.deadline_ms >= deadline {
                return Ok(Applied::Done);
            }
            Replicated {
                lease_ms: state.deadline_ms,
                key_expiry_ms,
            }
        }
        Lock::Set(set) => {
            let bound = set.expiry_bound;
            let Some(holder) = set.holder_mut(&grant.owner, Some(grant.token), now) else {
                return Ok(Applied::Gone);
            };
            if holder.deadline_ms.min(bound) >= deadline {
                return Ok(Applied::Done);
            }
            let lease_ms = holder.deadline_ms;
            holder.deadline_ms = deadline;
            Replicated {
                lease_ms,
                key_expiry_ms,
            }
        }
        Lock::Free => return Ok(Applied::Gone),
    };
    key.set_abs_expire(key_expiry_ms.map_or(deadline, |at| at.max(deadline)));
    Ok(Applied::Held(replicated))
}

/// Puts a lease renewed in memory only back to what replicas have (the node
/// turned replica before it could replicate it), if the key still holds the
/// grant; with `key_expiry`, the key's expiry too.
fn revert(
    key: &mut Key,
    grant: &Kept,
    replicated: Replicated,
    key_expiry: bool,
) -> Result<bool, WardenError> {
    // The holder is found whatever its lease (`holder_mut` asks it to run
    // at the time given).
    let any_time = i64::MIN;
    match lock_of(key)? {
        Lock::One(state) if state.owner == grant.owner.as_slice() && state.token == grant.token => {
        }
        Lock::Set(set) => match set.holder_mut(&grant.owner, Some(grant.token), any_time) {
            Some(holder) => holder.deadline_ms = replicated.lease_ms,
            None => return Ok(false),
        },
        _ => return Ok(false),
    }
    if key_expiry {
        key.set_abs_expire_or_persist(replicated.key_expiry_ms);
    }
    Ok(true)
}

/// Releases a kept grant whose connection closed, every hold at once
/// (`dlock.release`, and `dlock.lost`: its holder did not release it), and
/// hands the lock to the waiters at the head of its queue.
fn release(
    ctx: Ctx,
    key: &mut Key,
    name: RStr,
    grant: &Kept,
    now: i64,
) -> Result<bool, WardenError> {
    let (db, owner, token) = (grant.db, grant.owner.as_slice(), Some(grant.token));
    match lock_of(key)? {
        Lock::One(state) => {
            if state.owner != owner || state.token != grant.token {
                return Ok(false);
            }
            // No hold left: a hand-over sees a free lock.
            store_holds(key, 0)?;
            host::notify(ctx, events::RELEASE, name);
            lost::announce_now(ctx, name);
            let handed_off =
                waiting::count(db, &grant.key) > 0 && serve_waiters(ctx, key, name, db, now);
            if !handed_off {
                key.delete();
                host::emit(Sink::Replication(ctx), c"DEL", (name,));
            }
        }
        Lock::Set(set) => {
            let Some(holder) = set.holder_mut(owner, token, now) else {
                return Ok(false);
            };
            holder.set_holds(1);
            if set.release(owner, token, now) != Release::Freed {
                return Err(WardenError::Internal);
            }
            set.bound_deadlines();
            host::notify(ctx, events::RELEASE, name);
            lost::announce_now(ctx, name);
            store_set_changes(ctx, key, name, now);
            if waiting::count(db, &grant.key) > 0 {
                serve_waiters(ctx, key, name, db, now);
            }
        }
        Lock::Free => return Ok(false),
    }
    Ok(true)
}

/// Drops the holders of the set in (`db`, `key`) whose lease ended (told
/// with `dlock.lost` and replicated by `store_set_changes`, which watches
/// the set again), then serves its waiters. A set renewed since is watched
/// again at its new first lapse.
pub fn drop_lapsed(ctx: Ctx, db: c_int, key: &[u8], now: i64) {
    if !host::select_db(ctx, db) {
        return;
    }
    let name = OwnedString::new(Some(ctx), key);
    let name = name.as_rstr();
    let mut open = Key::writable(ctx, name);
    let Ok(Lock::Set(set)) = lock_of(&mut open) else {
        return;
    };
    if set.live_count(now) == set.holders().len() {
        lapse_watch::track(ctx, key, set.first_lapse(now), now);
        return;
    }
    // Like every change to the holders, this keeps a bound an external TTL
    // change (`PEXPIRE` to an earlier time) put on the leases left.
    set.bound_deadlines();
    store_set_changes(ctx, &mut open, name, now);
    if waiting::count(db, key) > 0 {
        serve_waiters(ctx, &mut open, name, db, now);
    }
}
