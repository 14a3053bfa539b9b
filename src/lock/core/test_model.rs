//! The glue as the core's unit tests drive it, on the pure core's states: a
//! lock key (empty, a plain lock or a set) that grants are applied to the
//! way `lock::call` applies them, a FIFO queue of waiters, and the
//! hand-over loop over `handover::decide`, granting with `acquire::grant`
//! and `acquire::renew`.

use std::collections::VecDeque;

use crate::common::fence_clock::FenceClock;
use crate::lock::core::acquire::{self, new_set, Ask, Change, Grant};
use crate::lock::core::handover::{decide, Head, Verdict};
use crate::lock::core::plain::LockState;
use crate::lock::core::set::{Holding, LockSet, Want};

/// A lock key as the glue reads it.
#[derive(Debug, Clone)]
pub enum Key {
    /// The key is gone.
    Empty,
    /// A plain lock (live or not).
    One(LockState),
    /// Shared holders or a semaphore's.
    Set(LockSet),
}

impl Key {
    pub fn holding(&self) -> Holding<'_> {
        match self {
            Key::Empty => Holding::Free,
            Key::One(s) => Holding::Exclusive(s.view()),
            Key::Set(set) => Holding::Set(set),
        }
    }

    /// The largest token granted on the key (0 for none).
    pub fn floor(&self) -> i64 {
        self.holding().floor()
    }

    /// The holders whose lease runs at `now`.
    pub fn live(&self, now: i64) -> Vec<LockState> {
        match self {
            Key::Empty => Vec::new(),
            Key::One(s) => [s.clone()].into_iter().filter(|s| s.is_live(now)).collect(),
            Key::Set(set) => set.live(now).map(|h| h.owned()).collect(),
        }
    }

    /// Applies `grant`, made for `ask` at `now`, as `lock::call::
    /// apply_grant` does. Replacing the key must not drop a live holder
    /// (that would be two grants at once), and a set's `prune` says
    /// exactly whether a holder's lease ended.
    pub fn apply(&mut self, grant: &Grant, ask: &Ask, now: i64) {
        let replaces = matches!(grant.change, Change::Plain { .. } | Change::SetNew { .. });
        if replaces {
            let live = self.live(now);
            assert!(live.is_empty(), "{grant:?} beside live holders {live:?}");
        }
        match (grant.change, &mut *self) {
            (Change::Plain { state, .. }, _) => *self = Key::One(state.owned()),
            (Change::SetNew { kind }, _) => *self = Key::Set(new_set(kind, ask, grant.token)),
            (Change::Renew { state }, Key::One(s)) => {
                assert_eq!((&*s.owner, s.token), (state.owner, state.token));
                (s.holds, s.deadline_ms) = (state.holds, state.deadline_ms);
            }
            (Change::SetJoin { prune } | Change::SetRenew { prune, .. }, Key::Set(set)) => {
                assert_eq!(set.prune(now), prune, "{grant:?} on {set:?}");
                grant.apply_to_set(set, ask, now).expect("a set's change");
            }
            (change, key) => panic!("{change:?} on {key:?}"),
        }
    }
}

/// What a blocked `DLOCK.ACQUIRE … WAIT` asked for.
#[derive(Debug, Clone)]
pub struct Waiter {
    pub owner: Vec<u8>,
    pub want: Want,
    pub ttl: i64,
    pub reentrant: bool,
}

impl Waiter {
    /// Its request served at `now`.
    pub fn ask(&self, now: i64) -> Ask<'_> {
        Ask {
            owner: &self.owner,
            want: self.want,
            reentrant: self.reentrant,
            deadline: now + self.ttl,
            wait: false,
        }
    }
}

/// One entry of a key's queue.
#[derive(Debug, Clone)]
pub enum Queued {
    Lock(Waiter),
    /// Another family's waiter.
    Other,
}

pub fn waiter(owner: &str, want: Want) -> Queued {
    Queued::Lock(Waiter {
        owner: owner.as_bytes().to_vec(),
        want,
        ttl: 1_000,
        reentrant: false,
    })
}

/// What a waiter taken from the queue was answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Granted(Vec<u8>, i64),
    Renewed(Vec<u8>, i64),
    /// Another family's waiter, taken out.
    Dropped,
    /// Sent to the node that serves the slot now.
    SentAway(String),
}

/// The glue's loop over the hand-over plan: asks about the head, applies
/// the verdict, until `Stop`. Returns the answers in the order they were
/// given.
pub fn hand_over(
    key: &mut Key,
    queue: &mut VecDeque<Queued>,
    now: i64,
    fence: &mut FenceClock,
    slot_moved: &dyn Fn() -> Option<String>,
) -> Vec<Answer> {
    let mut answers = Vec::new();
    let mut served = false;
    loop {
        let head = match queue.front() {
            None => Head::Empty,
            Some(Queued::Other) => Head::Other,
            Some(Queued::Lock(w)) => Head::Waiter {
                want: w.want,
                owner: &w.owner,
            },
        };
        let verdict = decide(key.holding(), head, now, served, slot_moved);
        match verdict {
            Verdict::Stop => return answers,
            Verdict::Drop => {
                assert!(matches!(queue.pop_front(), Some(Queued::Other)));
                answers.push(Answer::Dropped);
            }
            Verdict::SendAway(error) => {
                assert!(!served, "sent away after a grant");
                answers.extend(queue.drain(..).map(|_| Answer::SentAway(error.clone())));
                return answers;
            }
            Verdict::Grant | Verdict::Renew => {
                let Some(Queued::Lock(w)) = queue.pop_front() else {
                    panic!("granted a non-lock waiter");
                };
                let ask = w.ask(now);
                let grant = match verdict {
                    Verdict::Grant => acquire::grant(key.holding(), &ask, now, fence),
                    _ => acquire::renew(key.holding(), &ask, now, |_| Ok(())),
                }
                .expect("a grant the plan allowed");
                key.apply(&grant, &ask, now);
                let token = grant.token;
                answers.push(match verdict {
                    Verdict::Grant => Answer::Granted(w.owner, token),
                    _ => Answer::Renewed(w.owner, token),
                });
                served = true;
            }
        }
    }
}
