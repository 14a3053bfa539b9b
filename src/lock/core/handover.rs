//! The hand-over of a lock to its waiters, as a pure plan: when a lock frees
//! (a release, an ended lease, a deleted key), who among the waiters at the
//! head of the key's queue gets it. The glue asks `decide` about the head,
//! applies the verdict (takes the waiter, grants, replicates, answers) and
//! asks again about the next head until the verdict is `Stop`:
//!
//! - first come, first served: only the head is ever looked at;
//! - an exclusive waiter is granted alone (the next head finds it held);
//! - consecutive `SHARED` waiters are granted together, up to the first
//!   exclusive one; `LIMIT n` waiters fill the free places, no more;
//! - a waiter whose owner already holds the lock as it asks is a repeat: its
//!   grant is renewed (same token, one place), whatever the grant rule says;
//! - a waiter of another family at the head is dropped (the glue answers it);
//! - a key that vanished may have left with its cluster slot: before the
//!   first grant, the plan asks whether it did, and then every waiter is sent
//!   to the node that serves it now.
//!
//! Times are Unix milliseconds passed in by the caller.

use crate::lock::core::set::{admit, Admit, Holding, Want};

/// The head of a key's queue, as the hand-over sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head<'a> {
    /// Nobody waits.
    Empty,
    /// A waiter of another family (a key deleted and re-created as another
    /// type may queue both kinds): not a lock waiter.
    Other,
    /// A lock waiter: what it asks for and for whom.
    Waiter {
        /// Exclusive, `SHARED` or `LIMIT n`.
        want: Want,
        /// Who will hold the lock once it is handed over.
        owner: &'a [u8],
    },
}

/// What to do with the head of the queue. `M` is the error that sends the
/// waiters to the node serving the key's slot now (the glue's text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict<M> {
    /// Grant the head's request anew: a new holder with a new token.
    Grant,
    /// The head's owner already holds the lock as it asks: renew that grant
    /// (its token, its one place) instead of taking another.
    Renew,
    /// The head must wait (or nobody waits): the hand-over ends here.
    Stop,
    /// The head is not a lock waiter: take it out and look at the next.
    Drop,
    /// The key left with its slot: every waiter is answered `M`, nothing is
    /// granted.
    SendAway(M),
}

/// Whether `owner` holds the lock in `holding` at `now` as `want` asks (a
/// plain lock's holder asking exclusive, or a live holder of a set of the
/// kind asked): its request is a repeat of its grant, not a new one.
pub fn holds_as(holding: Holding, owner: &[u8], want: Want, now: i64) -> bool {
    match holding {
        Holding::Free => false,
        Holding::Exclusive(state) => want == Want::Exclusive && state.is_held_by(owner, None, now),
        Holding::Set(set) => {
            set.kind().want() == want && set.live(now).any(|h| h.is_held_by(owner, None, now))
        }
    }
}

/// Decides what to do with `head` on a key holding `holding` at `now`.
/// `served` says whether this hand-over granted anything yet. `Holding::Free`
/// means the key is gone: then, before the first grant only, `slot_moved` is
/// asked (once, and never otherwise: it is expensive) whether the key's slot
/// is served elsewhere now, and its error sends every waiter away.
pub fn decide<M>(
    holding: Holding,
    head: Head,
    now: i64,
    served: bool,
    slot_moved: impl FnOnce() -> Option<M>,
) -> Verdict<M> {
    let (want, owner) = match head {
        Head::Empty => return Verdict::Stop,
        Head::Other => return Verdict::Drop,
        Head::Waiter { want, owner } => (want, owner),
    };
    let repeat = holds_as(holding, owner, want, now);
    if !repeat && admit(holding, want, now) != Admit::Now {
        return Verdict::Stop;
    }
    // A key that vanished may have left with its slot; a released one has not.
    if !served && matches!(holding, Holding::Free) {
        if let Some(error) = slot_moved() {
            return Verdict::SendAway(error);
        }
    }
    if repeat {
        Verdict::Renew
    } else {
        Verdict::Grant
    }
}

#[cfg(test)]
#[path = "handover_tests.rs"]
mod tests;
