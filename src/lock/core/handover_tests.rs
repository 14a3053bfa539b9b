//! The hand-over plan driven the way the glue drives it (`test_model`), on
//! the pure core's states: a lock key (empty, a plain lock or a set), a FIFO
//! queue of waiters, a manual clock, and grants made and applied with the
//! core's own functions.

use crate::common::test_rng::Rng;
use std::cell::Cell;
use std::collections::VecDeque;

use super::*;
use crate::common::fence_clock::FenceClock;
use crate::lock::core::plain;
use crate::lock::core::set::{LockSet, SetKind};
use crate::lock::core::test_model::{hand_over, waiter, Answer, Key, Queued, Waiter};

/// A slot-moved closure that counts its calls.
fn counting<'a>(moved: Option<&str>, calls: &'a Cell<u32>) -> impl Fn() -> Option<String> + 'a {
    let moved = moved.map(str::to_string);
    move || {
        calls.set(calls.get() + 1);
        moved.clone()
    }
}

fn not_moved() -> Option<String> {
    None
}

/// The owners granted, in order.
fn granted(answers: &[Answer]) -> Vec<&[u8]> {
    answers
        .iter()
        .filter_map(|a| match a {
            Answer::Granted(owner, _) => Some(&owner[..]),
            _ => None,
        })
        .collect()
}

fn queue_of(entries: &[Queued]) -> VecDeque<Queued> {
    entries.iter().cloned().collect()
}

/// Releases every live holder (the holders leave; the key stays, as an
/// `expired` lock or an empty set would).
fn release_all(key: &mut Key, now: i64) {
    match key {
        Key::One(s) => {
            let owner = s.owner.to_vec();
            assert_eq!(s.release(&owner, None, now), plain::Release::Freed);
        }
        Key::Set(set) => {
            let owners: Vec<Vec<u8>> = set.live(now).map(|h| h.owner.to_vec()).collect();
            for owner in owners {
                while set.release(&owner, None, now) == plain::Release::StillHeld {}
            }
            set.prune(now);
            assert!(set.holders().is_empty());
        }
        Key::Empty => {}
    }
}

#[test]
fn waiters_are_served_in_arrival_order() {
    let mut fence = FenceClock::default();
    let mut now = 1_000;
    let mut key = Key::One(
        plain::grant(b"h", 1_500, 0, now, &mut fence)
            .unwrap()
            .owned(),
    );
    let mut queue = queue_of(&[
        waiter("a", Want::Exclusive),
        waiter("b", Want::Exclusive),
        waiter("c", Want::Exclusive),
    ]);
    assert!(hand_over(&mut key, &mut queue, now, &mut fence, &not_moved).is_empty());
    let mut order = Vec::new();
    let mut last_token = key.floor();
    for _ in 0..3 {
        now += 10;
        release_all(&mut key, now);
        let answers = hand_over(&mut key, &mut queue, now, &mut fence, &not_moved);
        let [Answer::Granted(owner, token)] = &answers[..] else {
            panic!("one grant per release: {answers:?}");
        };
        assert!(*token > last_token, "tokens rise");
        last_token = *token;
        order.push(owner.clone());
    }
    assert_eq!(order, [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
    assert!(queue.is_empty());
}

#[test]
fn an_exclusive_grant_stops_the_queue() {
    let mut fence = FenceClock::default();
    let mut key = Key::Empty;
    let mut queue = queue_of(&[
        waiter("a", Want::Exclusive),
        waiter("b", Want::Shared),
        waiter("c", Want::Exclusive),
    ]);
    let answers = hand_over(&mut key, &mut queue, 100, &mut fence, &not_moved);
    assert_eq!(granted(&answers), [b"a"]);
    assert_eq!(queue.len(), 2, "b and c wait behind a");
    let head = Head::Waiter {
        want: Want::Shared,
        owner: b"b",
    };
    assert_eq!(
        decide(key.holding(), head, 100, true, not_moved),
        Verdict::Stop
    );
}

#[test]
fn consecutive_shared_waiters_go_together_up_to_the_first_exclusive() {
    let mut fence = FenceClock::default();
    let now = 2_000;
    let mut key = Key::One(
        plain::grant(b"w", now, 0, 1_000, &mut fence)
            .unwrap()
            .owned(),
    );
    let old = key.floor();
    let mut queue = queue_of(&[
        waiter("r1", Want::Shared),
        waiter("r2", Want::Shared),
        waiter("r3", Want::Shared),
        waiter("w2", Want::Exclusive),
        waiter("r4", Want::Shared),
    ]);
    // The writer's lease ends at `now`: one hand-over grants r1..r3 together.
    let answers = hand_over(&mut key, &mut queue, now, &mut fence, &not_moved);
    assert_eq!(granted(&answers), [&b"r1"[..], b"r2", b"r3"]);
    let Key::Set(set) = &key else {
        panic!("a shared set: {key:?}");
    };
    assert_eq!(set.live_count(now), 3);
    assert!(
        set.holders().iter().all(|h| h.state().token > old),
        "above the floor"
    );
    assert_eq!(queue.len(), 2, "w2 stops the queue; r4 stays behind it");
    assert!(matches!(queue.front(), Some(Queued::Lock(w)) if w.owner == b"w2"));
}

#[test]
fn a_semaphore_fills_exactly_its_free_places() {
    let mut fence = FenceClock::default();
    let now = 500;
    let mut set = LockSet::new(SetKind::Limit(3), 1);
    set.grant(b"h", 10_000, now, &mut fence).unwrap();
    let mut key = Key::Set(set);
    let mut queue = queue_of(&[
        waiter("a", Want::Limit(3)),
        waiter("b", Want::Limit(3)),
        waiter("c", Want::Limit(3)),
        waiter("d", Want::Limit(3)),
    ]);
    let answers = hand_over(&mut key, &mut queue, now, &mut fence, &not_moved);
    assert_eq!(granted(&answers), [b"a", b"b"], "the two free places");
    let Key::Set(set) = &key else { panic!() };
    assert_eq!(set.live_count(now), 3);
    assert_eq!(set.validate(), Ok(()));
    assert_eq!(queue.len(), 2);
    // A semaphore of another size at the head waits too (it cannot share).
    let mut other = queue_of(&[waiter("e", Want::Limit(4))]);
    let mut roomy = Key::Set(LockSet::new(SetKind::Limit(3), 1));
    if let Key::Set(s) = &mut roomy {
        s.grant(b"h", 10_000, now, &mut fence).unwrap();
    }
    assert!(hand_over(&mut roomy, &mut other, now, &mut fence, &not_moved).is_empty());
}

#[test]
fn a_repeat_renews_its_grant_instead_of_taking_a_second_place() {
    let mut fence = FenceClock::default();
    let now = 1_000;
    let mut set = LockSet::new(SetKind::Limit(2), 1);
    let a = set.grant(b"a", 1_200, now, &mut fence).unwrap();
    set.grant(b"b", 1_200, now, &mut fence).unwrap();
    let mut key = Key::Set(set);
    // The semaphore is full; a (asking again on another connection, with
    // REENTRANT) renews its grant, c must wait.
    let mut again = waiter("a", Want::Limit(2));
    if let Queued::Lock(w) = &mut again {
        w.reentrant = true;
    }
    let mut queue = queue_of(&[again, waiter("c", Want::Limit(2))]);
    let answers = hand_over(&mut key, &mut queue, now, &mut fence, &not_moved);
    assert_eq!(answers, [Answer::Renewed(b"a".to_vec(), a)]);
    let Key::Set(set) = &key else { panic!() };
    assert_eq!(set.live_count(now), 2, "still one place each");
    assert_eq!(
        (set.holders()[0].state().holds, set.holders()[0].deadline_ms),
        (2, 2_000)
    );
    assert_eq!(queue.len(), 1, "c waits");
    // A plain lock's holder asking again renews too.
    let mut key = Key::One(
        plain::grant(b"x", 1_100, 0, now, &mut fence)
            .unwrap()
            .owned(),
    );
    let x = key.floor();
    let mut queue = queue_of(&[waiter("x", Want::Exclusive), waiter("y", Want::Exclusive)]);
    let answers = hand_over(&mut key, &mut queue, now, &mut fence, &not_moved);
    assert_eq!(answers, [Answer::Renewed(b"x".to_vec(), x)]);
    // A shared holder asking exclusive is not a repeat: it waits.
    let mut set = LockSet::new(SetKind::Shared, 1);
    set.grant(b"r", 1_500, now, &mut fence).unwrap();
    let holding = Holding::Set(&set);
    assert!(holds_as(holding, b"r", Want::Shared, now));
    assert!(!holds_as(holding, b"r", Want::Exclusive, now));
    assert!(!holds_as(holding, b"r", Want::Shared, 1_500), "lease ended");
    let head = Head::Waiter {
        want: Want::Exclusive,
        owner: b"r",
    };
    assert_eq!(decide(holding, head, now, false, not_moved), Verdict::Stop);
}

#[test]
fn an_ended_lease_frees_its_place_at_now() {
    let mut fence = FenceClock::default();
    let mut set = LockSet::new(SetKind::Limit(2), 1);
    set.grant(b"a", 100, 0, &mut fence).unwrap();
    set.grant(b"b", 500, 0, &mut fence).unwrap();
    let mut key = Key::Set(set);
    let mut queue = queue_of(&[waiter("c", Want::Limit(2))]);
    assert!(hand_over(&mut key, &mut queue, 99, &mut fence, &not_moved).is_empty());
    let answers = hand_over(&mut key, &mut queue, 100, &mut fence, &not_moved);
    assert_eq!(
        granted(&answers),
        [b"c"],
        "a's place, free from its deadline on"
    );
    let Key::Set(set) = &key else { panic!() };
    let owners: Vec<&[u8]> = set.holders().iter().map(|h| h.state().owner).collect();
    assert_eq!(owners, [b"b", b"c"], "a's ended lease is pruned");
    // A plain lock's ended lease: the waiter gets a new, larger token.
    let mut key = Key::One(plain::grant(b"x", 100, 0, 0, &mut fence).unwrap().owned());
    let old = key.floor();
    let mut queue = queue_of(&[waiter("y", Want::Exclusive)]);
    assert!(hand_over(&mut key, &mut queue, 99, &mut fence, &not_moved).is_empty());
    let answers = hand_over(&mut key, &mut queue, 100, &mut fence, &not_moved);
    assert!(matches!(&answers[..], [Answer::Granted(o, t)] if o == b"y" && *t > old));
}

#[test]
fn another_familys_waiter_is_dropped() {
    let mut fence = FenceClock::default();
    let mut key = Key::Empty;
    let mut queue = queue_of(&[
        Queued::Other,
        waiter("a", Want::Shared),
        Queued::Other,
        waiter("b", Want::Shared),
        Queued::Other,
    ]);
    let answers = hand_over(&mut key, &mut queue, 100, &mut fence, &not_moved);
    assert!(
        matches!(
            &answers[..],
            [
                Answer::Dropped,
                Answer::Granted(a, _),
                Answer::Dropped,
                Answer::Granted(b, _),
                Answer::Dropped,
            ] if a == b"a" && b == b"b"
        ),
        "{answers:?}"
    );
    assert!(queue.is_empty());
    // Dropped even on a held key: it never waits behind a lock it cannot take.
    let x = plain::grant(b"x", 1_000, 0, 0, &mut fence).unwrap().owned();
    let held = Holding::Exclusive(x.view());
    assert_eq!(
        decide(held, Head::Other, 10, false, not_moved),
        Verdict::Drop
    );
    assert_eq!(
        decide(held, Head::Empty, 10, false, not_moved),
        Verdict::Stop
    );
}

#[test]
fn slot_moved_only_when_the_key_is_gone_and_nothing_was_served() {
    let mut fence = FenceClock::default();
    let calls = Cell::new(0);
    let moved = counting(Some("MOVED 12 127.0.0.1:7001"), &calls);
    // The key is gone and its slot moved: every waiter is sent away, the
    // other family's too, after the one at the head is dropped.
    let mut key = Key::Empty;
    let entries = [
        Queued::Other,
        waiter("a", Want::Exclusive),
        Queued::Other,
        waiter("b", Want::Shared),
    ];
    let mut queue = queue_of(&entries);
    let answers = hand_over(&mut key, &mut queue, 100, &mut fence, &moved);
    let away = Answer::SentAway("MOVED 12 127.0.0.1:7001".to_string());
    assert_eq!(answers, [Answer::Dropped, away.clone(), away.clone(), away]);
    assert_eq!(calls.get(), 1, "asked once, at the first lock waiter");
    assert!(matches!(key, Key::Empty) && queue.is_empty());

    // Gone but still served here: asked once, before the first grant only.
    let calls = Cell::new(0);
    let here = counting(None, &calls);
    let mut queue = queue_of(&[
        waiter("a", Want::Shared),
        waiter("b", Want::Shared),
        waiter("c", Want::Shared),
    ]);
    let answers = hand_over(&mut key, &mut queue, 100, &mut fence, &here);
    assert_eq!(granted(&answers).len(), 3);
    assert_eq!(calls.get(), 1);

    // Never asked when the key is there: held, released, or expired.
    let calls = Cell::new(0);
    let moved = counting(Some("MOVED 12 127.0.0.1:7001"), &calls);
    let x = plain::grant(b"x", 200, 0, 0, &mut fence).unwrap().owned();
    for now in [100, 200, 300] {
        let mut key = Key::One(x.owned());
        let mut queue = queue_of(&[waiter("a", Want::Exclusive)]);
        hand_over(&mut key, &mut queue, now, &mut fence, &moved);
    }
    let mut key = Key::One(x.owned());
    release_all(&mut key, 100);
    let mut queue = queue_of(&[waiter("a", Want::Exclusive)]);
    let answers = hand_over(&mut key, &mut queue, 100, &mut fence, &moved);
    assert_eq!(granted(&answers), [b"a"], "a released key is granted");
    // Nor once something was served, nor for an empty queue or another
    // family's waiter.
    let head = Head::Waiter {
        want: Want::Shared,
        owner: b"z",
    };
    assert_eq!(
        decide(Holding::Free, head, 100, true, &moved),
        Verdict::Grant
    );
    assert_eq!(
        decide(Holding::Free, Head::Empty, 100, false, &moved),
        Verdict::Stop
    );
    assert_eq!(
        decide(Holding::Free, Head::Other, 100, false, &moved),
        Verdict::Drop
    );
    assert_eq!(calls.get(), 0, "the cluster is never asked");
}

/// A random want: mostly the key's family (a read/write lock, or a
/// semaphore of `limit`), now and then another kind.
fn random_want(rng: &mut Rng, semaphore: bool, limit: u32) -> Want {
    match (semaphore, rng.below(10)) {
        (_, 0) => Want::Limit(limit + 1),
        (false, 1..=4) | (true, 1) => Want::Exclusive,
        (false, _) => Want::Shared,
        (true, _) => Want::Limit(limit),
    }
}

/// A random key at `now`: gone, a plain lock, or a set, with leases that
/// ended or run.
fn random_key(rng: &mut Rng, semaphore: bool, limit: u32, now: i64, fence: &mut FenceClock) -> Key {
    let deadline = |rng: &mut Rng| now - 50 + rng.below(200) as i64;
    match rng.below(3) {
        0 => Key::Empty,
        1 if !semaphore => {
            let owner = format!("o{}", rng.below(5));
            Key::One(
                plain::grant(owner.as_bytes(), deadline(rng), 0, 0, fence)
                    .unwrap()
                    .owned(),
            )
        }
        _ => {
            let kind = if semaphore {
                SetKind::Limit(limit)
            } else {
                SetKind::Shared
            };
            let mut set = LockSet::new(kind, 1);
            for _ in 0..rng.below(u64::from(limit) + 1) {
                let owner = format!("o{}", rng.below(5));
                set.grant(owner.as_bytes(), deadline(rng), 0, fence)
                    .unwrap();
            }
            Key::Set(set)
        }
    }
}

/// Over random keys and queues: a grant never lands beside a live holder
/// of another grant it excludes (checked in `Key::grant`), no set holds
/// more than its limit or an owner twice, new tokens rise above the key's
/// floor, the waiters taken are exactly a prefix of the queue, the head
/// left behind could not be granted, and the cluster is asked at most once,
/// only for a gone key before any grant, a yes sending everyone away.
#[test]
fn random_queues_keep_exclusion_and_limits() {
    for seed in 1..=2_000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut fence = FenceClock::default();
        let semaphore = seed % 2 == 1;
        let limit = 1 + rng.below(4) as u32;
        let now = 1_000 + rng.below(100) as i64;
        let mut key = random_key(&mut rng, semaphore, limit, now, &mut fence);
        let entries: Vec<Queued> = (0..rng.below(8))
            .map(|_| match rng.below(12) {
                0 => Queued::Other,
                _ => Queued::Lock(Waiter {
                    owner: format!("o{}", rng.below(6)).into_bytes(),
                    want: random_want(&mut rng, semaphore, limit),
                    ttl: 1 + rng.below(300) as i64,
                    reentrant: rng.below(2) == 0,
                }),
            })
            .collect();
        let mut queue = queue_of(&entries);
        let was_gone = matches!(key, Key::Empty);
        let floor = key.floor();
        let calls = Cell::new(0);
        let moved = rng.below(4) == 0;
        let ask = counting(moved.then_some("MOVED 1 127.0.0.1:7001"), &calls);
        let answers = hand_over(&mut key, &mut queue, now, &mut fence, &ask);
        let context = format!("seed {seed}: {entries:?} -> {answers:?}, key {key:?}");

        // The answers follow the queue in order, and what is left is its tail.
        assert_eq!(answers.len() + queue.len(), entries.len(), "{context}");
        for (answer, entry) in answers.iter().zip(&entries) {
            match (answer, entry) {
                (Answer::Dropped, Queued::Other) | (Answer::SentAway(_), _) => {}
                (Answer::Granted(o, _) | Answer::Renewed(o, _), Queued::Lock(w)) => {
                    assert_eq!(o, &w.owner, "{context}")
                }
                _ => panic!("answer out of order: {context}"),
            }
        }
        // New grants rise above the key's floor; a renewal keeps its token.
        for answer in &answers {
            if let Answer::Granted(_, token) = answer {
                assert!(*token > floor, "{context}");
            }
        }
        // The cluster is asked only for a gone key, before any grant.
        assert!(calls.get() <= 1, "{context}");
        let first_lock = entries.iter().position(|e| matches!(e, Queued::Lock(_)));
        assert_eq!(
            calls.get() == 1,
            was_gone && first_lock.is_some(),
            "{context}"
        );
        let sent_away = answers.iter().any(|a| matches!(a, Answer::SentAway(_)));
        assert_eq!(
            sent_away,
            was_gone && moved && first_lock.is_some(),
            "{context}"
        );
        // Exclusion and limits.
        match &key {
            Key::Set(set) => {
                assert_eq!(set.validate(), Ok(()), "{context}");
                if let SetKind::Limit(n) = set.kind() {
                    assert!(set.live_count(now) <= n as usize, "{context}");
                }
            }
            Key::One(_) | Key::Empty => assert!(key.live(now).len() <= 1, "{context}"),
        }
        // Nobody is left behind a lock it could take now.
        if let Some(Queued::Lock(w)) = queue.front() {
            let head = Head::Waiter {
                want: w.want,
                owner: &w.owner,
            };
            assert_eq!(
                decide(key.holding(), head, now, true, not_moved),
                Verdict::Stop,
                "{context}"
            );
        }
    }
}
