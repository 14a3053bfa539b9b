//! `DLOCK.ACQUIRE` as a pure decision: what the handler read (the request,
//! the key's lock, its queue of waiters, the clock) goes in, a `Plan` comes
//! out — serve the queued waiters first, wait, answer nil, or grant with the
//! change the key gets — and the glue applies it in one pass (replicate,
//! store, keep, notify, count, reply), as it applies the hand-over's
//! verdicts (`handover`). A waiter the hand-over lets in gets its change
//! from the same functions (`grant`, `renew`).
//!
//! - First come, first served: on a key whose lock is free, queued waiters
//!   go before the caller, unless the oldest asks for another kind of lock
//!   (the key will take that kind: the request is refused); on a set, a
//!   request waits behind every waiter still queued once they were served.
//! - A holder's repeat renews its grant (its token, the lease asked for and,
//!   with `REENTRANT`, one more hold): a plain lock's holder asking
//!   exclusive, or a live holder of a set asking the set's kind.
//! - Otherwise the grant rule (`set::admit`): a request of another kind than
//!   the key's lock is refused, one that must wait for holders to leave
//!   waits (with `WAIT`) or is answered nil.
//! - A grant on a set of the kind asked, with live holders, joins it (the
//!   holders whose lease ended are dropped first); any other grant replaces
//!   the key's lock, its token above the key's floor.
//!
//! A kept grant's renewal is checked by the caller's `kept_lease`, given the
//! grant's token, before anything changes. Times are Unix milliseconds
//! passed in by the caller.

use crate::common::error::WardenError;
use crate::common::fence_clock::FenceClock;
use crate::lock::core::errors;
use crate::lock::core::handover::holds_as;
use crate::lock::core::plain::{self, Acquire, LockState};
use crate::lock::core::set::{admit, Admit, Holding, LockSet, SetKind, Want};

/// An ACQUIRE (or a waiter's request) as the decision sees it, its values
/// checked by the parser and `plain::lease_deadline`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ask<'a> {
    /// Who takes the lock.
    pub owner: &'a [u8],
    /// Exclusive, `SHARED` or `LIMIT n`.
    pub want: Want,
    /// `REENTRANT`: a holder's repeat adds a hold.
    pub reentrant: bool,
    /// The lease end a grant or renewal gets (absolute ms).
    pub deadline: i64,
    /// `WAIT` was given and the caller may block: a request that cannot be
    /// granted now waits (else it is answered nil).
    pub wait: bool,
}

/// The key's queue of blocked clients, as the handler read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queue {
    /// Nobody waits.
    Empty,
    /// Clients wait; the oldest asks for `front` (`None`: it waits for
    /// another family's command).
    Waiting { front: Option<Want> },
    /// The waiters were just served (`Plan::ServeFirst`), and some are
    /// still queued (`waiting`): not served again by this request.
    Served { waiting: bool },
}

/// What to do with an ACQUIRE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan<'a> {
    /// Hand the lock to the queued waiters first, then read the key and its
    /// queue again and ask again (with `Queue::Served`).
    ServeFirst,
    /// Not now: the caller blocks, the key looked at again at `look_at`
    /// (when the next lease ends).
    Wait { look_at: i64 },
    /// Not now, and the caller does not wait: nil.
    Nil,
    /// Granted, or a holder's grant renewed.
    Grant(Grant<'a>),
}

/// A grant to apply to the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant<'a> {
    /// The caller's token: a new one, or its grant's when renewed.
    pub token: i64,
    /// A new grant (counted in `locks_granted`), not a holder's repeat.
    pub new: bool,
    /// What the key gets.
    pub change: Change<'a>,
}

/// How a grant changes the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change<'a> {
    /// The plain lock `state` (the caller's) replaces what the key held:
    /// nothing, a lock whose lease ended, or (`over_set`) a set without a
    /// live holder, which ACQUIRE replicates as the lock's state
    /// (`DLOCK._SET`) rather than in its own call.
    Plain {
        state: LockState<&'a [u8]>,
        over_set: bool,
    },
    /// The caller's plain lock renewed: its lease and hold count become
    /// `state`'s.
    Renew { state: LockState<&'a [u8]> },
    /// The caller's holder of the set in the key renewed: its lease to
    /// `Ask::deadline`, `holds` holds. `prune`: holders whose lease ended
    /// are dropped first.
    SetRenew { holds: i64, prune: bool },
    /// The caller joins the set in the key with `Grant::token`. `prune`:
    /// holders whose lease ended are dropped first.
    SetJoin { prune: bool },
    /// A new set of `kind` (`new_set`), the caller its one holder, replaces
    /// what the key held.
    SetNew { kind: SetKind },
}

/// Decides an ACQUIRE of `ask` on a key holding `holding` at `now`, with
/// `queue` waiting on it. A new grant's token comes from `fence`;
/// `kept_lease` refuses the renewal of the kept grant of a token (`KEEP`'s
/// limits). Errors change nothing.
pub fn decide<'a>(
    holding: Holding,
    ask: &Ask<'a>,
    queue: Queue,
    now: i64,
    fence: &mut FenceClock,
    kept_lease: impl FnOnce(i64) -> Result<(), WardenError>,
) -> Result<Plan<'a>, WardenError> {
    match holding {
        Holding::Free | Holding::Exclusive(_) if ask.want == Want::Exclusive => {
            plain_lock(holding, ask, queue, now, fence, kept_lease)
        }
        _ => in_set(holding, ask, queue, now, fence, kept_lease),
    }
}

/// An exclusive request on a key holding a plain lock or nothing.
fn plain_lock<'a>(
    holding: Holding,
    ask: &Ask<'a>,
    queue: Queue,
    now: i64,
    fence: &mut FenceClock,
    kept_lease: impl FnOnce(i64) -> Result<(), WardenError>,
) -> Result<Plan<'a>, WardenError> {
    let current = match holding {
        Holding::Exclusive(state) => Some(state),
        _ => None,
    };
    if let Queue::Waiting { front } = queue {
        if current.is_none_or(|s| !s.is_live(now)) {
            refuse_other_kind(front, ask.want)?;
            return Ok(Plan::ServeFirst);
        }
    }
    let mut renewed = current;
    let (owner, deadline) = (ask.owner, ask.deadline);
    match plain::acquire(renewed.as_mut(), owner, deadline, ask.reentrant, now, fence)? {
        Acquire::Granted(state) => Ok(Plan::Grant(Grant {
            token: state.token,
            new: true,
            change: Change::Plain {
                state,
                over_set: false,
            },
        })),
        Acquire::Reentered { token } => {
            kept_lease(token)?;
            let holds = renewed.ok_or(WardenError::Internal)?.holds;
            let state = LockState {
                owner,
                token,
                holds,
                deadline_ms: deadline,
            };
            Ok(Plan::Grant(Grant {
                token,
                new: false,
                change: Change::Renew { state },
            }))
        }
        Acquire::Busy => Ok(not_now(ask, current.map_or(now, |s| s.deadline_ms))),
    }
}

/// A `SHARED` or `LIMIT n` request, or any on a key holding a set.
fn in_set<'a>(
    holding: Holding,
    ask: &Ask<'a>,
    queue: Queue,
    now: i64,
    fence: &mut FenceClock,
    kept_lease: impl FnOnce(i64) -> Result<(), WardenError>,
) -> Result<Plan<'a>, WardenError> {
    let served = matches!(queue, Queue::Served { .. });
    let is_set = matches!(holding, Holding::Set(_));
    if is_set && !served && holds_as(holding, ask.owner, ask.want, now) {
        return renew(holding, ask, now, kept_lease).map(Plan::Grant);
    }
    let admitted = admit(holding, ask.want, now);
    if admitted == Admit::OtherKind {
        return Err(errors::KIND_MISMATCH);
    }
    let look_at = holding.next_deadline(now);
    if let Queue::Waiting { front } = queue {
        if look_at.is_none() {
            refuse_other_kind(front, ask.want)?;
        }
        return Ok(Plan::ServeFirst);
    }
    if admitted == Admit::Later || queue == (Queue::Served { waiting: true }) {
        return Ok(not_now(ask, look_at.unwrap_or(now)));
    }
    grant(holding, ask, now, fence).map(Plan::Grant)
}

/// Refuses a request on a free key whose oldest waiter (`front`) asks for
/// another kind of lock: the key will take that kind.
fn refuse_other_kind(front: Option<Want>, want: Want) -> Result<(), WardenError> {
    match front {
        Some(head) if !head.same_kind(want) => Err(errors::KIND_MISMATCH),
        _ => Ok(()),
    }
}

/// A request that cannot be granted now: it waits until `look_at` when it
/// may, else nil.
fn not_now<'a>(ask: &Ask, look_at: i64) -> Plan<'a> {
    match ask.wait {
        true => Plan::Wait { look_at },
        false => Plan::Nil,
    }
}

/// Whether the set has holders whose lease ended (to be dropped).
fn has_lapsed(set: &LockSet, now: i64) -> bool {
    set.live_count(now) < set.holders().len()
}

/// The live holder `owner` of `set`: its token and hold count.
fn live_holder(set: &LockSet, owner: &[u8], now: i64) -> Option<(i64, i64)> {
    set.live(now)
        .find(|h| h.is_held_by(owner, None, now))
        .map(|h| (h.token, h.holds))
}

/// A new grant of `ask` on a key holding `holding`, whose grant rule lets
/// it in at `now` (a new request, or the waiter the hand-over let in). A
/// set of the kind asked with live holders is joined (an owner holding it
/// already keeps its grant, its lease renewed); anything else is replaced,
/// the token above the key's floor.
pub fn grant<'a>(
    holding: Holding,
    ask: &Ask<'a>,
    now: i64,
    fence: &mut FenceClock,
) -> Result<Grant<'a>, WardenError> {
    let floor = holding.floor();
    let Some(kind) = ask.want.set_kind() else {
        let state = plain::grant(ask.owner, ask.deadline, floor, now, fence)?;
        let over_set = matches!(holding, Holding::Set(_));
        return Ok(Grant {
            token: state.token,
            new: true,
            change: Change::Plain { state, over_set },
        });
    };
    let (token, change) = match holding {
        Holding::Set(set) if set.kind() == kind && set.live_count(now) > 0 => {
            let prune = has_lapsed(set, now);
            match live_holder(set, ask.owner, now) {
                // A waiter of the same owner was served first: one grant
                // per owner, renewed.
                Some((token, holds)) => (token, Change::SetRenew { holds, prune }),
                None => (set.next_token(now, fence)?, Change::SetJoin { prune }),
            }
        }
        _ => (
            fence.next_above(floor.max(1), now)?,
            Change::SetNew { kind },
        ),
    };
    Ok(Grant {
        token,
        new: true,
        change,
    })
}

/// A holder's repeat of its grant on a key holding `holding` (`holds_as`
/// said so): its token, the lease renewed to the deadline asked and, with
/// `REENTRANT`, one more hold; refused when its kept grant may not take
/// that lease (`kept_lease`, asked first) or the count would overflow.
pub fn renew<'a>(
    holding: Holding,
    ask: &Ask<'a>,
    now: i64,
    kept_lease: impl FnOnce(i64) -> Result<(), WardenError>,
) -> Result<Grant<'a>, WardenError> {
    let (token, holds, prune) = match holding {
        Holding::Exclusive(state) => (state.token, state.holds, false),
        Holding::Set(set) => {
            let (token, holds) = live_holder(set, ask.owner, now).ok_or(WardenError::Internal)?;
            (token, holds, has_lapsed(set, now))
        }
        Holding::Free => return Err(WardenError::Internal),
    };
    kept_lease(token)?;
    let holds = holds
        .checked_add(i64::from(ask.reentrant))
        .ok_or(errors::HOLDS_OVERFLOW)?;
    let change = match holding {
        Holding::Set(_) => Change::SetRenew { holds, prune },
        _ => Change::Renew {
            state: LockState {
                owner: ask.owner,
                token,
                holds,
                deadline_ms: ask.deadline,
            },
        },
    };
    Ok(Grant {
        token,
        new: false,
        change,
    })
}

/// The set a `Change::SetNew` grant makes: `kind`, the caller its one
/// holder with `token`, the key's floor.
pub fn new_set(kind: SetKind, ask: &Ask, token: i64) -> LockSet {
    let mut set = LockSet::new(kind, token);
    set.join(ask.owner, token, ask.deadline);
    set
}

impl Grant<'_> {
    /// Applies a `SetRenew` or `SetJoin` grant for `ask` to the set in the
    /// key, once its lapsed holders were dropped (`prune`): every lease is
    /// bounded by the key's expiry (`LockSet::bound_deadlines`), then the
    /// caller's holder is renewed, or joins. Other changes are not the
    /// set's: `Internal`.
    pub fn apply_to_set(&self, set: &mut LockSet, ask: &Ask, now: i64) -> Result<(), WardenError> {
        set.bound_deadlines();
        match self.change {
            Change::SetJoin { .. } => set.join(ask.owner, self.token, ask.deadline),
            Change::SetRenew { holds, .. } => {
                let holder = set
                    .holder_mut(ask.owner, None, now)
                    .ok_or(WardenError::Internal)?;
                holder.set_holds(holds);
                holder.deadline_ms = ask.deadline;
            }
            _ => return Err(WardenError::Internal),
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "acquire_tests.rs"]
mod tests;
