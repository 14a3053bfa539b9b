//! The cache hand-over plan with a manual clock: each verdict on its own, at
//! the edges of freshness and leases, then driven the way the glue drives
//! it over random entries and queues.

use std::cell::Cell;
use std::collections::{BTreeSet, VecDeque};

use super::*;
use crate::cache::core::{new_lease, SetRequest};
use crate::common::fence_clock::FenceClock;
use crate::common::test_rng::Rng;

const T0: i64 = 1_800_000_000_000;

/// An entry stored at `T0`: fresh for `ttl` ms, stale `stale` ms more.
fn entry(value: &[u8], ttl: i64, stale: i64, version: i64) -> CacheEntry {
    let request = SetRequest {
        ttl_ms: ttl,
        stale_ms: stale,
        version,
        lease: None,
    };
    CacheEntry::stored(value, &request, None, T0).expect("an entry")
}

fn waiter(min_version: i64) -> Head {
    Head::Waiter { min_version }
}

/// A slot-moved answer that counts how often it is asked.
fn counting<'a>(moved: Option<&'a str>, calls: &'a Cell<u32>) -> impl Fn() -> Option<String> + 'a {
    move || {
        calls.set(calls.get() + 1);
        moved.map(str::to_string)
    }
}

fn not_moved() -> Option<String> {
    None
}

#[test]
fn satisfied_waiters_ask_at_most_the_version_of_a_fresh_value() {
    let e = entry(b"v", 100, 50, 7);
    assert_eq!(fresh_version(Some(&e), T0), Some(7));
    assert_eq!(fresh_version(Some(&e), T0 + 99), Some(7));
    assert_eq!(fresh_version(Some(&e), T0 + 100), None, "stale");
    assert_eq!(fresh_version(None, T0), None);
    let mut fence = FenceClock::default();
    let lease = new_lease(500, T0, &mut fence).unwrap();
    let lease_only = CacheEntry::lease_only(lease, T0);
    assert_eq!(fresh_version(Some(&lease_only), T0), None, "no value");
    assert!(satisfies(7, 0) && satisfies(7, 7) && !satisfies(7, 8));
    assert!(satisfies(0, 0) && !satisfies(0, 1));
}

#[test]
fn nobody_waiting_stops_and_another_familys_waiter_is_dropped() {
    let calls = Cell::new(0);
    let moved = counting(Some("MOVED 1 h:1"), &calls);
    assert_eq!(decide(None, Head::Empty, T0, &moved), Verdict::Stop);
    assert_eq!(decide(None, Head::Other, T0, &moved), Verdict::Drop);
    let e = entry(b"v", 100, 0, 0);
    assert_eq!(decide(Some(&e), Head::Other, T0, &moved), Verdict::Drop);
    assert_eq!(calls.get(), 0, "the cluster is never asked");
}

#[test]
fn a_head_the_fresh_value_satisfies_stops_the_hand_over() {
    let e = entry(b"v", 100, 0, 3);
    assert_eq!(
        decide(Some(&e), waiter(3), T0 + 99, not_moved),
        Verdict::Stop
    );
    // Too old a version, no lease running: the head refreshes it.
    assert_eq!(decide(Some(&e), waiter(4), T0, not_moved), Verdict::Lease);
}

#[test]
fn a_running_refresh_is_waited_for_until_its_lease_ends() {
    let mut fence = FenceClock::default();
    let mut e = entry(b"old", 10, 1_000, 2);
    let lease = e.take_lease(500, T0 + 20, &mut fence).unwrap();
    assert_eq!(lease.until_ms, T0 + 520);
    for now in [T0 + 20, T0 + 519] {
        let verdict = decide(Some(&e), waiter(0), now, not_moved);
        assert_eq!(verdict, Verdict::LookAt(T0 + 520));
    }
    // A value fresh but too old waits for the refresh too.
    let mut fresh = entry(b"v", 1_000, 0, 2);
    fresh.take_lease(100, T0, &mut fence).unwrap();
    assert_eq!(
        decide(Some(&fresh), waiter(3), T0, not_moved),
        Verdict::LookAt(T0 + 100)
    );
    // The lease is over at its end: the head takes the next one.
    assert_eq!(
        decide(Some(&e), waiter(0), T0 + 520, not_moved),
        Verdict::Lease
    );
}

#[test]
fn only_a_lease_on_a_gone_key_asks_whether_its_slot_moved() {
    let calls = Cell::new(0);
    let moved = counting(Some("MOVED 1 h:1"), &calls);
    let stale = entry(b"v", 10, 100, 0);
    assert_eq!(
        decide(Some(&stale), waiter(0), T0 + 50, &moved),
        Verdict::Lease
    );
    assert_eq!(calls.get(), 0, "a key that is here did not move");
    let verdict = decide(None, waiter(0), T0, &moved);
    assert_eq!(verdict, Verdict::SendAway("MOVED 1 h:1".to_string()));
    assert_eq!(calls.get(), 1);
    let here = counting(None, &calls);
    assert_eq!(decide(None, waiter(5), T0, &here), Verdict::Lease);
    assert_eq!(calls.get(), 2);
}

/// One entry of a key's queue: a cache waiter's `MINVERSION`, or another
/// family's waiter.
type Queued = Option<i64>;

/// What a waiter taken from the queue was answered.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Answer {
    /// The fresh value of this version.
    Fresh(i64),
    /// The lease's token, with the stale value or nil.
    Lease(i64, Option<Vec<u8>>),
    Dropped,
    SentAway,
}

/// The glue's `serve_waiters` on a model key: answers the satisfied
/// waiters, then applies the verdicts about the head until one ends it.
fn serve(
    entry: &mut Option<CacheEntry>,
    queue: &mut VecDeque<(usize, Queued)>,
    lease_ms: i64,
    now: i64,
    fence: &mut FenceClock,
    slot_moved: &dyn Fn() -> Option<String>,
) -> Vec<(usize, Answer)> {
    let mut answers = Vec::new();
    if let Some(version) = fresh_version(entry.as_ref(), now) {
        queue.retain(|&(at, w)| match w {
            Some(min) if satisfies(version, min) => {
                answers.push((at, Answer::Fresh(version)));
                false
            }
            _ => true,
        });
    }
    loop {
        let head = match queue.front() {
            None => Head::Empty,
            Some((_, None)) => Head::Other,
            Some(&(_, Some(min_version))) => Head::Waiter { min_version },
        };
        match decide(entry.as_ref(), head, now, slot_moved) {
            Verdict::Stop | Verdict::LookAt(_) => return answers,
            Verdict::Drop => {
                let (at, _) = queue.pop_front().expect("a head");
                answers.push((at, Answer::Dropped));
            }
            Verdict::SendAway(_) => {
                answers.extend(queue.drain(..).map(|(at, _)| (at, Answer::SentAway)));
                return answers;
            }
            Verdict::Lease => {
                let (at, Some(min)) = queue.pop_front().expect("a head") else {
                    panic!("a lease for another family's waiter");
                };
                let (lease, stale) = match entry {
                    Some(e) => {
                        let lease = e.take_lease(lease_ms, now, fence).unwrap();
                        (lease, e.stale_value(min, now).map(<[u8]>::to_vec))
                    }
                    None => {
                        let lease = new_lease(lease_ms, now, fence).unwrap();
                        *entry = Some(CacheEntry::lease_only(lease, now));
                        (lease, None)
                    }
                };
                answers.push((at, Answer::Lease(lease.token, stale)));
                return answers;
            }
        }
    }
}

/// A random entry at `T0`: none, a lease-only one, or a value fresh, stale
/// or past its stale period, each with or without a lease running.
fn random_entry(rng: &mut Rng, fence: &mut FenceClock) -> Option<CacheEntry> {
    let mut e = match rng.below(4) {
        0 => return None,
        1 => {
            let lease = new_lease(1 + rng.below(100) as i64, T0 - 50, fence).unwrap();
            CacheEntry::lease_only(lease, T0 - 50)
        }
        _ => {
            let request = SetRequest {
                ttl_ms: 1 + rng.below(100) as i64,
                stale_ms: rng.below(100) as i64,
                version: rng.below(4) as i64,
                lease: None,
            };
            CacheEntry::stored(b"v", &request, None, T0 - 50).unwrap()
        }
    };
    if rng.below(2) == 0 {
        e.take_lease(1 + rng.below(100) as i64, T0 - 50, fence)
            .unwrap();
    }
    Some(e)
}

/// Over random entries and queues, served as the glue serves them: the
/// answers follow the queue, every waiter the fresh value satisfies gets
/// it and no other does, at most one lease is taken (to the oldest waiter
/// left, with a stale value only of a version it accepts), the cluster is
/// asked at most once and only about a gone key, and the waiter left at the
/// head waits for a refresh that runs. Every verdict is seen.
#[test]
fn random_queues_get_fresh_values_then_one_lease() {
    let mut seen = BTreeSet::new();
    for seed in 1..=5_000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut fence = FenceClock::default();
        let mut entry = random_entry(&mut rng, &mut fence);
        let now = T0 + rng.below(100) as i64;
        let waiters: Vec<Queued> = (0..rng.below(6))
            .map(|_| (rng.below(8) > 0).then(|| rng.below(5) as i64))
            .collect();
        let mut queue: VecDeque<(usize, Queued)> = waiters.iter().copied().enumerate().collect();
        let before = entry
            .as_ref()
            .map(|e| (e.read(0, now), e.version(), e.stale_value(0, now).is_some()));
        let fresh = fresh_version(entry.as_ref(), now);
        let was_gone = entry.is_none();
        let calls = Cell::new(0);
        let moved = rng.below(3) == 0;
        let slot_moved = counting(moved.then_some("MOVED"), &calls);
        let answers = serve(&mut entry, &mut queue, 200, now, &mut fence, &slot_moved);
        let context = format!("seed {seed}: {before:?} {waiters:?} -> {answers:?}, left {queue:?}");

        // Each waiter is answered at most once, the fresh ones first, then
        // the rest in queue order; the waiters left keep their order.
        let mut positions: Vec<usize> = answers.iter().map(|a| a.0).collect();
        positions.extend(queue.iter().map(|q| q.0));
        let mut sorted = positions.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), waiters.len(), "{context}");
        let is_fresh = |a: &&(usize, Answer)| matches!(a.1, Answer::Fresh(_));
        let fresh_ones: Vec<usize> = answers.iter().filter(is_fresh).map(|a| a.0).collect();
        let rest: Vec<usize> = (answers.iter().filter(|a| !is_fresh(a)).map(|a| a.0))
            .chain(queue.iter().map(|q| q.0))
            .collect();
        for order in [fresh_ones, rest] {
            assert!(order.windows(2).all(|w| w[0] < w[1]), "{context}");
        }
        for (at, answer) in &answers {
            let asked = waiters[*at];
            match answer {
                Answer::Fresh(v) => {
                    seen.insert("fresh");
                    assert_eq!(Some(*v), fresh, "{context}");
                    assert!(satisfies(*v, asked.expect("a cache waiter")), "{context}");
                }
                Answer::Lease(token, stale) => {
                    seen.insert(if stale.is_some() {
                        "lease, stale"
                    } else {
                        "lease"
                    });
                    assert!(*token > 0, "{context}");
                    let min = asked.expect("a cache waiter");
                    if stale.is_some() {
                        assert!(entry.as_ref().unwrap().version() >= min, "{context}");
                    }
                }
                Answer::Dropped => {
                    seen.insert("dropped");
                    assert_eq!(asked, None, "{context}");
                }
                Answer::SentAway => {
                    seen.insert("sent away");
                    assert!(was_gone && moved, "{context}");
                }
            }
        }
        // Nobody left could have had the fresh value.
        if let Some(version) = fresh {
            for (_, w) in &queue {
                assert!(!w.is_some_and(|min| satisfies(version, min)), "{context}");
            }
        }
        let leases = answers
            .iter()
            .filter(|a| matches!(a.1, Answer::Lease(..)))
            .count();
        assert!(leases <= 1, "{context}");
        // The cluster is asked at most once, only about a gone key.
        assert!(
            calls.get() <= 1 && (calls.get() == 0 || was_gone),
            "{context}"
        );
        // The head left waits for a refresh that runs now.
        if let Some(&(_, Some(min_version))) = queue.front() {
            let verdict = decide(entry.as_ref(), Head::Waiter { min_version }, now, not_moved);
            match verdict {
                Verdict::LookAt(at) => {
                    seen.insert("look at");
                    assert!(at > now, "{context}");
                }
                other => panic!("{other:?} left for the head: {context}"),
            }
        }
    }
    for path in [
        "fresh",
        "lease",
        "lease, stale",
        "dropped",
        "sent away",
        "look at",
    ] {
        assert!(seen.contains(path), "never {path}: {seen:?}");
    }
}
