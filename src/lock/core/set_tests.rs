//! The rules of keys with several holders, as unit tests: grants, limits,
//! leases bounded by the key's expiry, validation, the holders' storage, and
//! random schedules driven the way the glue drives them.

use super::*;
use crate::common::test_rng::Rng;
use std::collections::VecDeque;

#[test]
fn shared_holders_share_and_exclude_the_exclusive() {
    let mut fence = FenceClock::default();
    let mut set = LockSet::new(SetKind::Shared, 1);
    let now = 1_000;
    assert_eq!(
        admit(Holding::Set(&set), Want::Exclusive, now),
        Admit::Now,
        "empty"
    );
    let a = set.grant(b"a", 2_000, now, &mut fence).unwrap();
    let b = set.grant(b"b", 1_500, now, &mut fence).unwrap();
    assert!(b > a, "each grant its own, larger token");
    assert_eq!(admit(Holding::Set(&set), Want::Shared, now), Admit::Now);
    assert_eq!(
        admit(Holding::Set(&set), Want::Exclusive, now),
        Admit::Later
    );
    assert_eq!(
        admit(Holding::Set(&set), Want::Limit(3), now),
        Admit::OtherKind
    );
    assert_eq!(set.next_deadline(now), Some(1_500));
    assert_eq!(set.last_deadline(now), Some(2_000));
    // b's lease ends; a still holds; then a releases: free.
    assert_eq!(set.live_count(1_600), 1);
    assert_eq!(
        set.release(b"b", None, 1_600),
        Release::NotHeld,
        "b's lease ended"
    );
    assert_eq!(
        set.release(b"a", Some(b), 1_600),
        Release::NotHeld,
        "a's token is a"
    );
    assert_eq!(set.release(b"a", Some(a), 1_600), Release::Freed);
    assert_eq!(
        admit(Holding::Set(&set), Want::Exclusive, 1_600),
        Admit::Now
    );
}

#[test]
fn a_semaphore_admits_up_to_its_limit_and_only_its_own_kind() {
    let mut fence = FenceClock::default();
    let mut set = LockSet::new(SetKind::Limit(2), 1);
    for owner in [&b"a"[..], b"b"] {
        assert_eq!(admit(Holding::Set(&set), Want::Limit(2), 0), Admit::Now);
        set.grant(owner, 100, 0, &mut fence).unwrap();
    }
    assert_eq!(admit(Holding::Set(&set), Want::Limit(2), 0), Admit::Later);
    assert_eq!(
        admit(Holding::Set(&set), Want::Limit(3), 0),
        Admit::OtherKind
    );
    assert_eq!(admit(Holding::Set(&set), Want::Shared, 0), Admit::OtherKind);
    assert_eq!(
        admit(Holding::Set(&set), Want::Exclusive, 0),
        Admit::OtherKind
    );
    assert_eq!(
        admit(Holding::Set(&set), Want::Limit(2), 100),
        Admit::Now,
        "leases ended"
    );
    assert!(set.prune(100));
    assert!(set.holders().is_empty());
}

#[test]
fn an_exclusive_holder_excludes_everyone_until_its_lease_ends() {
    let mut fence = FenceClock::default();
    let x = crate::lock::core::plain::grant(b"x", 500, 0, 0, &mut fence).unwrap();
    assert_eq!(
        admit(Holding::Exclusive(x.view()), Want::Shared, 10),
        Admit::Later
    );
    assert_eq!(
        admit(Holding::Exclusive(x.view()), Want::Exclusive, 10),
        Admit::Later
    );
    assert_eq!(
        admit(Holding::Exclusive(x.view()), Want::Limit(2), 10),
        Admit::OtherKind
    );
    assert_eq!(
        admit(Holding::Exclusive(x.view()), Want::Limit(2), 500),
        Admit::Now
    );
}

#[test]
fn a_holding_tells_its_floor_and_next_lease_end() {
    let mut fence = FenceClock::default();
    assert_eq!(
        (Holding::Free.floor(), Holding::Free.next_deadline(0)),
        (0, None)
    );
    let x = crate::lock::core::plain::grant(b"x", 500, 0, 0, &mut fence).unwrap();
    let held = Holding::Exclusive(x.view());
    assert_eq!((held.floor(), held.next_deadline(10)), (x.token, Some(500)));
    assert_eq!(held.next_deadline(500), None, "lease ended");
    let mut set = LockSet::new(SetKind::Shared, x.token);
    set.grant(b"a", 300, 0, &mut fence).unwrap();
    set.grant(b"b", 200, 0, &mut fence).unwrap();
    let shared = Holding::Set(&set);
    assert_eq!(shared.floor(), set.floor);
    assert!(shared.floor() > x.token);
    assert_eq!(shared.next_deadline(10), Some(200));
    assert_eq!(shared.next_deadline(250), Some(300));
}

#[test]
fn kinds_that_share_a_key() {
    use Want::*;
    assert!(Exclusive.same_kind(Shared) && Shared.same_kind(Exclusive));
    assert!(Limit(3).same_kind(Limit(3)));
    assert!(!Limit(3).same_kind(Limit(4)));
    assert!(!Limit(1).same_kind(Exclusive) && !Shared.same_kind(Limit(1)));
}

#[test]
fn an_owner_granted_again_keeps_one_grant_and_its_token() {
    let mut fence = FenceClock::default();
    let mut set = LockSet::new(SetKind::Shared, 1);
    let a = set.grant(b"a", 100, 0, &mut fence).unwrap();
    set.grant(b"b", 100, 0, &mut fence).unwrap();
    assert_eq!(set.grant(b"a", 300, 10, &mut fence), Ok(a));
    assert_eq!(set.holders().len(), 2);
    let first = set.holders()[0].state();
    assert_eq!((first.deadline_ms, first.holds), (300, 1));
    assert_eq!(set.validate(), Ok(()));
    // Once a's lease ended, a new grant to a is a new holder.
    set.prune(400);
    let again = set.grant(b"a", 900, 400, &mut fence).unwrap();
    assert!(again > a);
}

#[test]
fn the_key_expiry_bounds_every_lease() {
    let mut fence = FenceClock::default();
    let mut set = LockSet::new(SetKind::Limit(3), 1);
    set.grant(b"a", 1_000, 0, &mut fence).unwrap();
    set.grant(b"b", 5_000, 0, &mut fence).unwrap();
    assert_eq!(set.next_deadline(0), Some(1_000));
    set.expiry_bound = 500;
    assert_eq!(set.next_deadline(0), Some(500));
    set.bound_deadlines();
    let deadlines: Vec<i64> = set.holders().iter().map(|h| h.deadline_ms).collect();
    assert_eq!(deadlines, [500, 500]);
    assert_eq!(set.latest_deadline(), Some(500));
}

#[test]
fn a_lease_ending_more_than_the_slack_before_the_last_is_watched() {
    let mut fence = FenceClock::default();
    let mut set = LockSet::new(SetKind::Shared, 1);
    set.grant(b"a", 1_000, 0, &mut fence).unwrap();
    assert_eq!(set.first_lapse(0), None, "one holder: its key's expiry");
    set.grant(b"b", 1_000 + LAPSE_SLACK_MS, 0, &mut fence)
        .unwrap();
    assert_eq!(set.first_lapse(0), None, "within the slack");
    set.grant(b"c", 1_001 + LAPSE_SLACK_MS, 0, &mut fence)
        .unwrap();
    assert_eq!(set.first_lapse(0), Some(1_000));
    // Past a's end, b's is the first, within the slack of c's.
    assert_eq!(set.first_lapse(1_000), None);
    // The key's expiry bounds every lease.
    set.expiry_bound = 1_050;
    assert_eq!(set.first_lapse(0), None);
    set.expiry_bound = NO_DEADLINE;
    set.grant(b"d", NO_DEADLINE, 0, &mut fence).unwrap();
    assert_eq!(set.first_lapse(1_000), Some(1_000 + LAPSE_SLACK_MS));
}

#[test]
fn a_lapsed_holder_still_listed_is_looked_at_at_once() {
    let mut fence = FenceClock::default();
    let mut set = LockSet::new(SetKind::Shared, 1);
    let a = set.grant(b"a", 1_000, 0, &mut fence).unwrap();
    set.grant(b"b", 5_000, 0, &mut fence).unwrap();
    assert_eq!(set.next_look(0), Some(1_000), "the first lapse ahead");
    assert_eq!(set.lapsed_tokens(999).count(), 0);
    // Past a's end (nobody dropped it: a restart, a promotion): now.
    assert_eq!(set.next_look(2_000), Some(2_000));
    assert_eq!(set.lapsed_tokens(2_000).collect::<Vec<_>>(), [a]);
    // Every lease over: the key's expiry ends the set, nothing to watch.
    assert_eq!(set.next_look(6_000), None);
    assert!(set.prune(2_000));
    assert_eq!(set.next_look(2_000), None, "one holder left");
}

#[test]
fn no_holder_runs_past_the_key_expiry() {
    // The key read past its expiry (in MULTI or a script): its holders
    // are over, however long their own leases.
    let mut fence = FenceClock::default();
    let mut set = LockSet::new(SetKind::Shared, 1);
    set.grant(b"a", 10_000, 0, &mut fence).unwrap();
    set.expiry_bound = 500;
    assert_eq!(set.live_count(499), 1);
    assert_eq!(set.live_count(500), 0);
    assert_eq!(admit(Holding::Set(&set), Want::Exclusive, 600), Admit::Now);
    assert_eq!(
        admit(Holding::Set(&set), Want::Exclusive, 400),
        Admit::Later
    );
    assert!(set.prune(600));
    assert!(set.holders().is_empty());
}

#[test]
fn stored_sets_are_validated() {
    let mut fence = FenceClock::default();
    let mut set = LockSet::new(SetKind::Limit(1), 1);
    set.grant(b"a", 100, 0, &mut fence).unwrap();
    assert_eq!(set.validate(), Ok(()));
    let a = set.holders()[0].clone();
    let two = vec![a.clone(), a.clone()];
    let over = LockSet::with_holders(SetKind::Limit(1), set.floor, two.clone()).unwrap();
    assert!(over.validate().is_err(), "two holders of a limit of one");
    let twice = LockSet::with_holders(SetKind::Shared, set.floor, two).unwrap();
    assert!(twice.validate().is_err(), "one owner twice");
    let low = LockSet::with_holders(SetKind::Shared, 0, vec![a.clone()]).unwrap();
    assert!(low.validate().is_err(), "floor below the tokens");
    let wide = Holder::new(b"b", set.floor, 1, 100);
    let above = LockSet::with_holders(SetKind::Shared, set.floor - 1, vec![wide]).unwrap();
    assert!(above.validate().is_err(), "a token above the floor");
    let huge = LockSet::new(SetKind::Limit(MAX_LIMIT as u32 + 1), 1);
    assert!(huge.validate().is_err());
    for bad in [
        Holder::new(b"", 1, 1, 100),
        Holder::new(b"b", 1, 0, 100),
        Holder::new(b"b", 1, 1, 0),
        Holder::new(b"b", 0, 1, 100),
    ] {
        let set = LockSet::with_holders(SetKind::Shared, 1, vec![bad]).unwrap();
        assert!(set.validate().is_err(), "{set:?}");
    }
}

#[test]
fn a_set_is_32_bytes_and_its_list_exactly_its_holders() {
    use crate::common::relocate::tests::TestMover;
    assert_eq!(std::mem::size_of::<LockSet>(), 32);
    assert_eq!(std::mem::size_of::<Holder>(), 16);
    let mut fence = FenceClock::default();
    let mut set = LockSet::new(SetKind::Limit(3), 1);
    assert_eq!(set.kind(), SetKind::Limit(3));
    let owners = [&b"a"[..], &[b'w'; 300], b"c"];
    for owner in owners {
        set.grant(owner, 1_000, 0, &mut fence).unwrap();
    }
    // Holds past the compact form's 7 move the grant to a wide block.
    set.holder_mut(b"c", None, 0).unwrap().set_holds(9);
    assert_eq!(set.holders()[2].state().holds, 9);
    assert_eq!(set.release(b"c", None, 0), Release::StillHeld);
    assert_eq!(set.holders()[2].state().holds, 8);
    let copy = set.clone();
    assert_eq!(copy, set);
    let mut m = TestMover::default();
    assert_eq!(set.relocate(0, &mut m), None);
    assert_eq!(m.moved, 4, "the list and each holder's block");
    assert_eq!(set, copy);
    // A walk stopped after two moves resumes at the second holder.
    let mut m = TestMover {
        budget: 2,
        ..TestMover::default()
    };
    assert_eq!(set.relocate(0, &mut m), Some(1));
    m.budget = usize::MAX;
    assert_eq!(set.relocate(1, &mut m), None);
    assert_eq!(set, copy);
    assert_eq!(set.release(b"a", None, 0), Release::Freed);
    let owners: Vec<&[u8]> = set.live(0).map(|h| h.owner).collect();
    assert_eq!(owners, [&[b'w'; 300][..], b"c"]);
}

/// One key under a random schedule, driven the way the glue drives it:
/// the holders (one exclusive, or a set), a FIFO queue of waiters with
/// timeouts, and a hand-off after every event.
struct Model {
    exclusive: Option<LockState>,
    set: Option<LockSet>,
    queue: VecDeque<(Vec<u8>, Want, i64, u64)>, // owner, want, wait deadline, arrival
    fence: FenceClock,
    arrivals: u64,
    /// Arrival numbers of waiters in the order they were granted.
    granted_order: Vec<u64>,
}

impl Model {
    fn holding(&self) -> Holding<'_> {
        match (&self.exclusive, &self.set) {
            (Some(x), _) => Holding::Exclusive(x.view()),
            (None, Some(s)) => Holding::Set(s),
            (None, None) => Holding::Free,
        }
    }

    /// Grants `want` to `owner`, replacing a key whose holders all left.
    fn grant(&mut self, owner: &[u8], want: Want, deadline: i64, now: i64) {
        let floor = self.floor();
        if self.live_count(now) == 0 {
            self.exclusive = None;
            self.set = None;
        }
        match want.set_kind() {
            None => {
                let s =
                    crate::lock::core::plain::grant(owner, deadline, floor, now, &mut self.fence);
                self.exclusive = Some(s.unwrap().owned());
            }
            Some(kind) => {
                let set = self.set.get_or_insert_with(|| LockSet::new(kind, floor));
                set.grant(owner, deadline, now, &mut self.fence).unwrap();
            }
        }
    }

    fn floor(&self) -> i64 {
        let x = self.exclusive.as_ref().map_or(0, |s| s.token);
        x.max(self.set.as_ref().map_or(0, |s| s.floor))
    }

    fn live_count(&self, now: i64) -> usize {
        match self.holding() {
            Holding::Free => 0,
            Holding::Exclusive(x) => usize::from(x.is_live(now)),
            Holding::Set(s) => s.live_count(now),
        }
    }

    /// Serves the head of the queue while it can be granted.
    fn serve(&mut self, now: i64) {
        self.queue.retain(|w| w.2 > now); // waiters whose WAIT ran out leave
        while let Some(&(ref owner, want, _, arrival)) = self.queue.front() {
            match admit(self.holding(), want, now) {
                Admit::Now => {
                    let owner = owner.clone();
                    self.queue.pop_front();
                    self.grant(&owner, want, now + 50, now);
                    self.granted_order.push(arrival);
                }
                _ => break,
            }
        }
    }

    fn check(&self, now: i64) {
        // Never shared (or anyone) beside a live exclusive holder, never
        // more than the limit.
        if let (Some(x), Some(s)) = (&self.exclusive, &self.set) {
            assert!(
                !(x.is_live(now) && s.live_count(now) > 0),
                "exclusive beside a set"
            );
        }
        if let Some(s) = &self.set {
            if let SetKind::Limit(n) = s.kind() {
                assert!(s.live_count(now) <= n as usize, "over the limit");
            }
        }
        // No waiter is left behind a key it could have now (no starvation
        // by a free key); grants follow arrival order.
        if let Some(&(_, want, _, _)) = self.queue.front() {
            assert_ne!(
                admit(self.holding(), want, now),
                Admit::Now,
                "head not served"
            );
        }
        assert!(
            self.granted_order.windows(2).all(|w| w[0] < w[1]),
            "grants out of order"
        );
    }
}

/// Random schedules of exclusive, shared and limit acquires (with and
/// without waiting), releases, expiries and waiter timeouts never exceed
/// the limit, never grant beside an exclusive holder, and serve waiters in
/// arrival order with none left behind a lock it could take.
#[test]
fn random_schedules_keep_the_rules() {
    for seed in 1..=300u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut m = Model {
            exclusive: None,
            set: None,
            queue: VecDeque::new(),
            fence: FenceClock::default(),
            arrivals: 0,
            granted_order: Vec::new(),
        };
        let limit = 1 + rng.below(4) as u32;
        let mut now = 1_000;
        for _ in 0..400 {
            now += rng.below(20) as i64;
            let owner = format!("o{}", rng.below(6)).into_bytes();
            // Even seeds: a read/write lock; odd seeds: a semaphore, with
            // now and then a request of the other kind.
            let want = match (seed % 2, rng.below(10)) {
                (0, 0..=4) => Want::Exclusive,
                (0, _) => Want::Shared,
                (_, 0) => Want::Exclusive,
                _ => Want::Limit(limit),
            };
            match rng.below(4) {
                0 | 1 => {
                    // A new request: FIFO behind waiters, or granted, or queued.
                    let held = match m.holding() {
                        Holding::Exclusive(x) => x.is_held_by(&owner, None, now),
                        Holding::Set(s) => s.live(now).any(|h| *h.owner == *owner),
                        Holding::Free => false,
                    };
                    let admitted = admit(m.holding(), want, now);
                    if !held && m.queue.is_empty() && admitted == Admit::Now {
                        m.grant(&owner, want, now + 1 + rng.below(100) as i64, now);
                        m.arrivals += 1;
                        m.granted_order.push(m.arrivals);
                    } else if !held && admitted != Admit::OtherKind && rng.below(2) == 0 {
                        m.arrivals += 1;
                        let wait_until = now + 1 + rng.below(200) as i64;
                        m.queue.push_back((owner, want, wait_until, m.arrivals));
                    }
                }
                2 => {
                    // A holder releases.
                    match (&mut m.exclusive, &mut m.set) {
                        (Some(x), _) => {
                            let o = x.owner.to_vec();
                            if x.release(&o, None, now) == Release::Freed {
                                m.exclusive = None;
                            }
                        }
                        (None, Some(s)) => {
                            let first = s.live(now).next().map(|h| h.owner.to_vec());
                            if let Some(o) = first {
                                s.release(&o, None, now);
                            }
                        }
                        _ => {}
                    }
                }
                _ => {} // time passes: leases and waits run out
            }
            if let Some(s) = &mut m.set {
                s.prune(now);
            }
            m.serve(now);
            m.check(now);
        }
    }
}

#[test]
fn consecutive_shared_waiters_are_granted_together_and_a_writer_is_not_starved() {
    let mut fence = FenceClock::default();
    let x = crate::lock::core::plain::grant(b"x", 100, 0, 0, &mut fence).unwrap();
    // Queue: shared r1, shared r2, exclusive w, shared r3.
    let queue = [Want::Shared, Want::Shared, Want::Exclusive, Want::Shared];
    assert_eq!(
        admit(Holding::Exclusive(x.view()), queue[0], 50),
        Admit::Later
    );
    // At 100 the exclusive lease ends: r1 and r2 go together, w stops r3.
    let mut set = LockSet::new(SetKind::Shared, x.token);
    let mut served = 0;
    for want in queue {
        let holding = if served == 0 {
            Holding::Free
        } else {
            Holding::Set(&set)
        };
        if admit(holding, want, 100) != Admit::Now {
            break;
        }
        set.grant(format!("r{served}").as_bytes(), 200, 100, &mut fence)
            .unwrap();
        served += 1;
    }
    assert_eq!(
        served, 2,
        "the two shared waiters at the head, not the one behind w"
    );
    assert!(set.holders().iter().all(|h| h.state().token > x.token));
}
