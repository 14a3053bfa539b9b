//! The hand-over of a cache key to its waiters (`CACHE.GET … LEASE … WAIT`),
//! as a pure plan: when the key changes (a SET, a lease that ends, a key
//! deleted), the glue answers every waiter the fresh value satisfies
//! (`fresh_version`, `satisfies`), then asks `decide` about the head of the
//! queue and applies the verdict, until one ends the hand-over:
//!
//! - first come, first served: only the head is looked at after the
//!   satisfied waiters were answered;
//! - while a refresh runs (a live lease), the waiters wait for it: the key
//!   is looked at again when its lease ends;
//! - with no value fresh enough and no lease, the head takes the lease (and
//!   the stale value, when it may have it); the others wait for its refresh;
//! - a waiter of another family at the head is dropped (the glue answers
//!   it);
//! - a key that vanished may have left with its cluster slot: before a lease
//!   on a missing key the plan asks whether it did, and then every waiter is
//!   sent to the node that serves it now.
//!
//! Times are Unix milliseconds passed in by the caller. (A module of
//! `cache::core`, so the lint holds it to the core's purity.)

use crate::cache::core::{CacheEntry, Read};

/// The head of a key's queue, as the hand-over sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    /// Nobody waits.
    Empty,
    /// A waiter of another family (a key deleted and re-created as another
    /// type may queue both kinds): not a cache waiter.
    Other,
    /// A cache waiter and the `MINVERSION` it asked for.
    Waiter { min_version: i64 },
}

/// What to do with the head of the queue. `M` is the error that sends the
/// waiters to the node serving the key's slot now (the glue's text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict<M> {
    /// Nothing more to hand over now (nobody waits, or the head was
    /// answered with the fresh value).
    Stop,
    /// The head is not a cache waiter: take it out and look at the next.
    Drop,
    /// A refresh runs: the waiters wait for it, the key looked at again when
    /// its lease ends, at this time.
    LookAt(i64),
    /// The head takes the lease: on the entry, or in a new lease-only entry
    /// when the key is gone. The others wait for its refresh.
    Lease,
    /// The key left with its slot: every waiter is answered `M`, no lease
    /// is taken.
    SendAway(M),
}

/// The version every satisfied waiter is answered with: the value's, when
/// the entry holds a value fresh at `now`.
pub fn fresh_version(entry: Option<&CacheEntry>, now: i64) -> Option<i64> {
    entry
        .filter(|e| e.is_fresh(0, now))
        .map(CacheEntry::version)
}

/// Whether a waiter that asked for `min_version` takes a fresh value of
/// `version` (versions are never negative: 0 is any).
pub fn satisfies(version: i64, min_version: i64) -> bool {
    min_version <= version
}

/// Decides what to do with `head` on a key holding `entry` (`None`: the key
/// is gone) at `now`, once the satisfied waiters were answered. Only for a
/// lease on a gone key is `slot_moved` asked (once: it is expensive) whether
/// the key's slot is served elsewhere now; its error sends every waiter
/// away.
pub fn decide<M>(
    entry: Option<&CacheEntry>,
    head: Head,
    now: i64,
    slot_moved: impl FnOnce() -> Option<M>,
) -> Verdict<M> {
    let min_version = match head {
        Head::Empty => return Verdict::Stop,
        Head::Other => return Verdict::Drop,
        Head::Waiter { min_version } => min_version,
    };
    let Some(entry) = entry else {
        return match slot_moved() {
            Some(error) => Verdict::SendAway(error),
            None => Verdict::Lease,
        };
    };
    match entry.read(min_version, now) {
        Read::Fresh => Verdict::Stop,
        Read::Refreshing => match entry.live_lease(now) {
            Some(lease) => Verdict::LookAt(lease.until_ms),
            None => Verdict::LookAt(now),
        },
        Read::Vacant => Verdict::Lease,
    }
}

#[cfg(test)]
#[path = "core_handover_tests.rs"]
mod tests;
