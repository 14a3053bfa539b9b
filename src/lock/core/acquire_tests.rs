//! `acquire::decide` with a manual clock: each path on its own, at the edges
//! of leases, kinds and counts, then over random keys, queues and requests,
//! decided the way the handler drives it (serving first, then asking once
//! more) and applied to a model key (`test_model`).

use std::cell::Cell;
use std::collections::{BTreeSet, VecDeque};

use super::*;
use crate::common::fence_clock::MAX_TOKEN;
use crate::common::test_rng::Rng;
use crate::lock::core::errors;
use crate::lock::core::plain::NO_DEADLINE;
use crate::lock::core::set::Holder;
use crate::lock::core::test_model::{hand_over, Key, Queued, Waiter};

/// The manual clock's reading in these tests.
const NOW: i64 = 1_000_000;

/// A request by `owner` for `want`, a lease of 1 s, waiting when it must.
fn ask(owner: &str, want: Want) -> Ask<'_> {
    Ask {
        owner: owner.as_bytes(),
        want,
        reentrant: false,
        deadline: NOW + 1_000,
        wait: true,
    }
}

/// `decide` at `now` with every kept lease allowed.
fn decide_at<'a>(
    key: &Key,
    ask: &Ask<'a>,
    queue: Queue,
    now: i64,
    fence: &mut FenceClock,
) -> Result<Plan<'a>, WardenError> {
    decide(key.holding(), ask, queue, now, fence, |_| Ok(()))
}

/// A plain lock of `owner` with `token`, `holds` holds, until `deadline`.
fn plain_lock(owner: &str, token: i64, holds: i64, deadline: i64) -> Key {
    Key::One(LockState {
        owner: owner.as_bytes().into(),
        token,
        holds,
        deadline_ms: deadline,
    })
}

/// A set of `kind` whose holders (owner, token, deadline) hold once each;
/// its floor is their largest token.
fn set_of(kind: SetKind, holders: &[(&str, i64, i64)]) -> Key {
    let list = holders
        .iter()
        .map(|&(owner, token, deadline)| Holder::new(owner.as_bytes(), token, 1, deadline))
        .collect();
    let floor = holders.iter().map(|h| h.1).max().unwrap_or(1);
    Key::Set(LockSet::with_holders(kind, floor, list).expect("a set"))
}

/// The grant in `plan`.
fn granted<'a>(plan: Result<Plan<'a>, WardenError>) -> Grant<'a> {
    match plan {
        Ok(Plan::Grant(grant)) => grant,
        other => panic!("not a grant: {other:?}"),
    }
}

#[test]
fn a_free_key_or_an_ended_lease_is_granted_above_the_keys_floor() {
    let mut fence = FenceClock::default();
    let a = ask("a", Want::Exclusive);
    let grant = granted(decide_at(&Key::Empty, &a, Queue::Empty, NOW, &mut fence));
    assert!(grant.new && grant.token > 0);
    assert_eq!(
        grant.change,
        Change::Plain {
            state: LockState {
                owner: &b"a"[..],
                token: grant.token,
                holds: 1,
                deadline_ms: NOW + 1_000
            },
            over_set: false
        }
    );
    // A lease ends at its deadline: the next grant goes above its token,
    // even one far ahead of the clock.
    let ended = plain_lock("h", MAX_TOKEN - 1, 3, NOW);
    let grant = granted(decide_at(&ended, &a, Queue::Empty, NOW, &mut fence));
    assert_eq!(grant.token, MAX_TOKEN);
    assert!(matches!(
        grant.change,
        Change::Plain {
            over_set: false,
            ..
        }
    ));
    // No token is left above the largest: refused, and nothing drawn.
    let spent = plain_lock("h", MAX_TOKEN, 1, NOW);
    let last = fence.last();
    let refused = decide_at(&spent, &a, Queue::Empty, NOW, &mut fence);
    assert_eq!(refused, Err(WardenError::TokensExhausted));
    assert_eq!(fence.last(), last);
}

#[test]
fn a_live_lock_makes_others_wait_until_its_lease_ends() {
    let mut fence = FenceClock::default();
    let key = plain_lock("h", 7, 1, NOW + 500);
    let b = ask("b", Want::Exclusive);
    let last = fence.last();
    for now in [NOW, NOW + 499] {
        let plan = decide_at(&key, &b, Queue::Empty, now, &mut fence);
        assert_eq!(plan, Ok(Plan::Wait { look_at: NOW + 500 }));
    }
    let no_wait = Ask { wait: false, ..b };
    assert_eq!(
        decide_at(&key, &no_wait, Queue::Empty, NOW, &mut fence),
        Ok(Plan::Nil)
    );
    assert_eq!(
        fence.last(),
        last,
        "no token drawn for a request that waits"
    );
    let grant = granted(decide_at(&key, &b, Queue::Empty, NOW + 500, &mut fence));
    assert!(grant.new && grant.token > 7);
    // A lease without end (a PERSISTed key) is waited for without end.
    let kept = plain_lock("h", 7, 1, NO_DEADLINE);
    let plan = decide_at(&kept, &b, Queue::Empty, NOW, &mut fence);
    assert_eq!(
        plan,
        Ok(Plan::Wait {
            look_at: NO_DEADLINE
        })
    );
}

#[test]
fn a_holders_repeat_renews_its_grant_after_its_kept_lease_is_checked() {
    let mut fence = FenceClock::default();
    let key = plain_lock("a", 42, 2, NOW + 10);
    let asked = Cell::new(None);
    let check = |token| {
        asked.set(Some(token));
        Ok(())
    };
    let renewal = |reentrant| Ask {
        reentrant,
        ..ask("a", Want::Exclusive)
    };
    for (reentrant, holds) in [(false, 2), (true, 3)] {
        let a = renewal(reentrant);
        let plan = decide(key.holding(), &a, Queue::Empty, NOW, &mut fence, check);
        let state = LockState {
            owner: &b"a"[..],
            token: 42,
            holds,
            deadline_ms: NOW + 1_000,
        };
        let expected = Grant {
            token: 42,
            new: false,
            change: Change::Renew { state },
        };
        assert_eq!(plan, Ok(Plan::Grant(expected)));
        assert_eq!(asked.take(), Some(42));
    }
    // A kept grant's lease refused: the repeat is refused.
    let a = renewal(true);
    let too_short = |_| Err(errors::keep_ttl_too_short(1_000));
    let plan = decide(key.holding(), &a, Queue::Empty, NOW, &mut fence, too_short);
    assert_eq!(plan, Err(errors::keep_ttl_too_short(1_000)));
    // A count that would overflow is refused before the kept lease is asked.
    let full = plain_lock("a", 42, i64::MAX, NOW + 10);
    let plan = decide(full.holding(), &a, Queue::Empty, NOW, &mut fence, check);
    assert_eq!(plan, Err(errors::HOLDS_OVERFLOW));
    assert_eq!(asked.get(), None);
    // Without REENTRANT the count stays: no overflow.
    let plain_repeat = granted(decide_at(
        &full,
        &renewal(false),
        Queue::Empty,
        NOW,
        &mut fence,
    ));
    assert!(matches!(plain_repeat.change, Change::Renew { state } if state.holds == i64::MAX));
}

#[test]
fn queued_waiters_go_first_on_a_free_lock_unless_they_ask_another_kind() {
    let mut fence = FenceClock::default();
    let a = ask("a", Want::Exclusive);
    let ended = plain_lock("h", 5, 1, NOW);
    for key in [Key::Empty, ended] {
        for front in [Some(Want::Exclusive), Some(Want::Shared), None] {
            let queue = Queue::Waiting { front };
            let plan = decide_at(&key, &a, queue, NOW, &mut fence);
            assert_eq!(plan, Ok(Plan::ServeFirst), "{key:?} {front:?}");
        }
        let semaphore = Queue::Waiting {
            front: Some(Want::Limit(2)),
        };
        let plan = decide_at(&key, &a, semaphore, NOW, &mut fence);
        assert_eq!(plan, Err(errors::KIND_MISMATCH));
    }
    // A held lock: the request waits behind its holder (the waiters are
    // served when it frees), and its holder's repeat is not held back.
    let held = plain_lock("a", 5, 1, NOW + 300);
    let queue = Queue::Waiting {
        front: Some(Want::Limit(2)),
    };
    let plan = decide_at(&held, &ask("b", Want::Exclusive), queue, NOW, &mut fence);
    assert_eq!(plan, Ok(Plan::Wait { look_at: NOW + 300 }));
    let repeat = granted(decide_at(&held, &a, queue, NOW, &mut fence));
    assert_eq!((repeat.token, repeat.new), (5, false));
}

#[test]
fn a_shared_request_joins_a_shared_set_and_drops_its_lapsed_holders() {
    let mut fence = FenceClock::default();
    let mut key = set_of(SetKind::Shared, &[("x", 10, NOW + 500), ("y", 11, NOW - 1)]);
    let a = ask("a", Want::Shared);
    let grant = granted(decide_at(&key, &a, Queue::Empty, NOW, &mut fence));
    assert_eq!(grant.change, Change::SetJoin { prune: true });
    assert!(grant.new && grant.token > 11);
    key.apply(&grant, &a, NOW);
    let live: Vec<_> = key
        .live(NOW)
        .iter()
        .map(|h| (h.owner.to_vec(), h.token))
        .collect();
    assert_eq!(live, [(b"x".to_vec(), 10), (b"a".to_vec(), grant.token)]);
    assert_eq!(key.floor(), grant.token);
    // Nothing lapsed: nothing to drop.
    let b = ask("b", Want::Shared);
    let grant = granted(decide_at(&key, &b, Queue::Empty, NOW, &mut fence));
    assert_eq!(grant.change, Change::SetJoin { prune: false });
}

#[test]
fn a_set_without_live_holders_is_replaced_by_any_kind() {
    let mut fence = FenceClock::default();
    let key = set_of(SetKind::Limit(2), &[("x", 10, NOW), ("y", 20, NOW - 5)]);
    let shared = granted(decide_at(
        &key,
        &ask("a", Want::Shared),
        Queue::Empty,
        NOW,
        &mut fence,
    ));
    assert_eq!(
        shared.change,
        Change::SetNew {
            kind: SetKind::Shared
        }
    );
    assert!(shared.token > 20);
    let limit = granted(decide_at(
        &key,
        &ask("a", Want::Limit(2)),
        Queue::Empty,
        NOW,
        &mut fence,
    ));
    assert_eq!(
        limit.change,
        Change::SetNew {
            kind: SetKind::Limit(2)
        }
    );
    // A plain lock over a set is replicated as the lock's state.
    let a = ask("a", Want::Exclusive);
    let exclusive = granted(decide_at(&key, &a, Queue::Empty, NOW, &mut fence));
    assert!(matches!(
        exclusive.change,
        Change::Plain { over_set: true, .. }
    ));
    assert!(exclusive.token > limit.token);
    // The key's expiry ends every lease (`expiry_bound`): then so.
    let Key::Set(mut set) = set_of(SetKind::Shared, &[("x", 10, NOW + 900)]) else {
        unreachable!()
    };
    set.expiry_bound = NOW;
    let bounded = Key::Set(set);
    let grant = granted(decide_at(&bounded, &a, Queue::Empty, NOW, &mut fence));
    assert!(matches!(grant.change, Change::Plain { over_set: true, .. }));
}

#[test]
fn a_full_semaphore_waits_for_its_first_lease_to_end() {
    let mut fence = FenceClock::default();
    let key = set_of(
        SetKind::Limit(2),
        &[("x", 10, NOW + 300), ("y", 11, NOW + 200)],
    );
    let c = ask("c", Want::Limit(2));
    assert_eq!(
        decide_at(&key, &c, Queue::Empty, NOW, &mut fence),
        Ok(Plan::Wait { look_at: NOW + 200 })
    );
    let no_wait = Ask { wait: false, ..c };
    assert_eq!(
        decide_at(&key, &no_wait, Queue::Empty, NOW, &mut fence),
        Ok(Plan::Nil)
    );
    // One lease ended: its place is free, the lapsed holder dropped.
    let grant = granted(decide_at(&key, &c, Queue::Empty, NOW + 200, &mut fence));
    assert_eq!(grant.change, Change::SetJoin { prune: true });
    // The key's expiry comes first when it ends earlier.
    let Key::Set(mut set) = key else {
        unreachable!()
    };
    set.expiry_bound = NOW + 50;
    let plan = decide_at(&Key::Set(set), &c, Queue::Empty, NOW, &mut fence);
    assert_eq!(plan, Ok(Plan::Wait { look_at: NOW + 50 }));
}

#[test]
fn a_request_of_another_kind_is_refused_and_a_writer_waits_for_readers() {
    let mut fence = FenceClock::default();
    let semaphore = set_of(SetKind::Limit(2), &[("x", 10, NOW + 300)]);
    for want in [Want::Limit(3), Want::Shared, Want::Exclusive] {
        let plan = decide_at(&semaphore, &ask("a", want), Queue::Empty, NOW, &mut fence);
        assert_eq!(plan, Err(errors::KIND_MISMATCH), "{want:?}");
    }
    let plain = plain_lock("x", 10, 1, NOW + 300);
    let plan = decide_at(
        &plain,
        &ask("a", Want::Limit(1)),
        Queue::Empty,
        NOW,
        &mut fence,
    );
    assert_eq!(plan, Err(errors::KIND_MISMATCH));
    // A read/write lock: readers wait for the writer, the writer for readers.
    let plan = decide_at(
        &plain,
        &ask("a", Want::Shared),
        Queue::Empty,
        NOW,
        &mut fence,
    );
    assert_eq!(plan, Ok(Plan::Wait { look_at: NOW + 300 }));
    let readers = set_of(
        SetKind::Shared,
        &[("x", 10, NOW + 300), ("y", 11, NOW + 100)],
    );
    let plan = decide_at(
        &readers,
        &ask("x", Want::Exclusive),
        Queue::Empty,
        NOW,
        &mut fence,
    );
    assert_eq!(plan, Ok(Plan::Wait { look_at: NOW + 100 }));
}

#[test]
fn a_set_holders_repeat_renews_its_place_after_its_kept_lease_is_checked() {
    let mut fence = FenceClock::default();
    let mut key = set_of(SetKind::Shared, &[("a", 10, NOW + 5), ("y", 11, NOW - 1)]);
    let a = Ask {
        reentrant: true,
        ..ask("a", Want::Shared)
    };
    let asked = Cell::new(None);
    let check = |token| {
        asked.set(Some(token));
        Ok(())
    };
    let plan = decide(key.holding(), &a, Queue::Empty, NOW, &mut fence, check);
    let expected = Grant {
        token: 10,
        new: false,
        change: Change::SetRenew {
            holds: 2,
            prune: true,
        },
    };
    assert_eq!(plan, Ok(Plan::Grant(expected)));
    assert_eq!(asked.take(), Some(10));
    key.apply(&expected, &a, NOW);
    let live = key.live(NOW);
    assert_eq!(live.len(), 1);
    assert_eq!((live[0].holds, live[0].deadline_ms), (2, NOW + 1_000));
    // Queued waiters do not hold a holder's repeat back.
    let queue = Queue::Waiting {
        front: Some(Want::Exclusive),
    };
    let repeat = granted(decide_at(&key, &a, queue, NOW, &mut fence));
    assert!(matches!(repeat.change, Change::SetRenew { holds: 3, .. }));
    // In a set, the kept lease is asked first, then the count checked.
    let Key::Set(set) = &mut key else {
        unreachable!()
    };
    set.holder_mut(b"a", None, NOW)
        .expect("a")
        .set_holds(i64::MAX);
    let refused = |_| Err(errors::keep_capacity(5));
    let plan = decide(key.holding(), &a, Queue::Empty, NOW, &mut fence, refused);
    assert_eq!(plan, Err(errors::keep_capacity(5)));
    let plan = decide(key.holding(), &a, Queue::Empty, NOW, &mut fence, check);
    assert_eq!(plan, Err(errors::HOLDS_OVERFLOW));
    assert_eq!(asked.take(), Some(10));
}

#[test]
fn waiters_on_a_set_go_first_and_are_not_served_twice() {
    let mut fence = FenceClock::default();
    let live = set_of(SetKind::Shared, &[("x", 10, NOW + 300)]);
    let a = ask("a", Want::Shared);
    // With live holders the key keeps its kind: any oldest waiter goes first.
    let other = Queue::Waiting {
        front: Some(Want::Limit(4)),
    };
    assert_eq!(
        decide_at(&live, &a, other, NOW, &mut fence),
        Ok(Plan::ServeFirst)
    );
    // Without, the key takes the oldest waiter's kind.
    let lapsed = set_of(SetKind::Shared, &[("x", 10, NOW - 1)]);
    let plan = decide_at(&lapsed, &a, other, NOW, &mut fence);
    assert_eq!(plan, Err(errors::KIND_MISMATCH));
    // Once served: behind the waiters left, the request waits.
    let behind = Queue::Served { waiting: true };
    let plan = decide_at(&live, &a, behind, NOW, &mut fence);
    assert_eq!(plan, Ok(Plan::Wait { look_at: NOW + 300 }));
    let none_left = Queue::Served { waiting: false };
    let grant = granted(decide_at(&live, &a, none_left, NOW, &mut fence));
    assert_eq!(grant.change, Change::SetJoin { prune: false });
    // A waiter of the same owner was served: its grant is renewed, counted
    // as a grant, its count kept, no kept lease asked.
    let served = set_of(
        SetKind::Shared,
        &[("x", 10, NOW + 300), ("a", 12, NOW + 50)],
    );
    let asked = Cell::new(false);
    let check = |_| {
        asked.set(true);
        Ok(())
    };
    let reentrant = Ask {
        reentrant: true,
        ..a
    };
    let plan = decide(
        served.holding(),
        &reentrant,
        none_left,
        NOW,
        &mut fence,
        check,
    );
    let expected = Grant {
        token: 12,
        new: true,
        change: Change::SetRenew {
            holds: 1,
            prune: false,
        },
    };
    assert_eq!(plan, Ok(Plan::Grant(expected)));
    assert!(!asked.get());
}

/// A random key at `now`: gone, a plain lock or a set, with leases that
/// ended, run, or have no end, and now and then a key expiry before them.
fn random_key(rng: &mut Rng, now: i64) -> Key {
    let deadline = |rng: &mut Rng| match rng.below(8) {
        0 => NO_DEADLINE,
        1 => now,
        _ => now - 50 + rng.below(200) as i64,
    };
    let owner = |rng: &mut Rng| format!("o{}", rng.below(4));
    match rng.below(4) {
        0 => Key::Empty,
        1 => {
            let holds = [1, 2, i64::MAX][rng.below(3) as usize];
            let deadline = deadline(rng);
            plain_lock(&owner(rng), 1 + rng.below(100) as i64, holds, deadline)
        }
        _ => {
            let kind = match rng.below(3) {
                0 => SetKind::Shared,
                _ => SetKind::Limit(1 + rng.below(3) as u32),
            };
            let most = match kind {
                SetKind::Limit(n) => u64::from(n),
                SetKind::Shared => 4,
            };
            let mut holders: Vec<(String, i64, i64)> = Vec::new();
            for token in 1..=rng.below(most + 1) as i64 {
                let o = owner(rng);
                if holders.iter().all(|h| h.0 != o) {
                    holders.push((o, token * 3, deadline(rng)));
                }
            }
            let list: Vec<_> = holders.iter().map(|h| (h.0.as_str(), h.1, h.2)).collect();
            let mut key = set_of(kind, &list);
            if let (Key::Set(set), 0) = (&mut key, rng.below(6)) {
                set.expiry_bound = now - 20 + rng.below(100) as i64;
            }
            key
        }
    }
}

fn random_want(rng: &mut Rng) -> Want {
    match rng.below(4) {
        0 => Want::Exclusive,
        1 => Want::Shared,
        _ => Want::Limit(1 + rng.below(3) as u32),
    }
}

/// The token `owner` holds as `want` asks on `key` at `now`, with its count.
fn held(key: &Key, owner: &[u8], now: i64) -> Option<(i64, i64)> {
    key.live(now)
        .into_iter()
        .find(|h| &*h.owner == owner)
        .map(|h| (h.token, h.holds))
}

/// Every path of `decide` over random keys, requests and queues: serving
/// first only when waiters wait (never twice), errors and waits draw no
/// token, a refusal is a kind the key or its oldest waiter excludes, a wait
/// is a request the grant rule or the queue holds back (nil without WAIT),
/// a grant applied leaves the caller holding as it asked, beside no holder
/// it excludes, a new token above the key's floor, a repeat its own token.
/// Each outcome is seen.
#[test]
fn random_requests_take_every_path_and_keep_the_rules() {
    let mut seen = BTreeSet::new();
    for seed in 1..=20_000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let now = NOW + rng.below(100) as i64;
        let mut key = random_key(&mut rng, now);
        let owner = format!("o{}", rng.below(5));
        let a = Ask {
            owner: owner.as_bytes(),
            want: random_want(&mut rng),
            reentrant: rng.below(2) == 0,
            deadline: now + 1 + rng.below(500) as i64,
            wait: rng.below(2) == 0,
        };
        let queue = match rng.below(4) {
            0 | 1 => Queue::Empty,
            2 => Queue::Waiting {
                front: (rng.below(4) > 0).then(|| random_want(&mut rng)),
            },
            _ => Queue::Served {
                waiting: rng.below(2) == 0,
            },
        };
        let mut fence = FenceClock::default();
        let last = fence.last();
        let floor = key.floor();
        let before = held(&key, a.owner, now);
        let admitted = admit(key.holding(), a.want, now);
        let repeat = holds_as(key.holding(), a.owner, a.want, now);
        let free = key.live(now).is_empty();
        let plan = decide_at(&key, &a, queue, now, &mut fence);
        let context = format!("seed {seed}: {a:?} {queue:?} on {key:?} -> {plan:?}");
        let drawn = fence.last() != last;
        match plan {
            Ok(Plan::ServeFirst) => {
                seen.insert("serve first");
                assert!(matches!(queue, Queue::Waiting { .. }), "{context}");
                assert!(!drawn && !repeat, "{context}");
            }
            Err(e) => {
                seen.insert(match e {
                    errors::KIND_MISMATCH => "other kind",
                    errors::HOLDS_OVERFLOW => "overflow",
                    _ => panic!("{context}"),
                });
                assert!(!drawn, "{context}");
                if e == errors::KIND_MISMATCH {
                    let front_differs = matches!(queue, Queue::Waiting { front: Some(f) }
                        if !f.same_kind(a.want));
                    assert!(
                        admitted == Admit::OtherKind || (free && front_differs),
                        "{context}"
                    );
                }
            }
            Ok(Plan::Wait { .. }) | Ok(Plan::Nil) => {
                seen.insert(if a.wait { "wait" } else { "nil" });
                assert_eq!(matches!(plan, Ok(Plan::Wait { .. })), a.wait, "{context}");
                assert!(!drawn, "{context}");
                // After serving, a holder is held back like anyone: it held
                // nothing when it asked (its waiter was served).
                let behind = queue == Queue::Served { waiting: true };
                let served = matches!(queue, Queue::Served { .. });
                assert!(admitted == Admit::Later || behind, "{context}");
                assert!(!free || behind, "{context}");
                assert!(!repeat || served, "{context}");
                if let Ok(Plan::Wait { look_at }) = plan {
                    let next = key.holding().next_deadline(now);
                    assert_eq!(look_at, next.unwrap_or(now), "{context}");
                }
            }
            Ok(Plan::Grant(grant)) => {
                seen.insert(match grant.change {
                    Change::Plain {
                        over_set: false, ..
                    } => "plain",
                    Change::Plain { over_set: true, .. } => "plain over a set",
                    Change::Renew { .. } => "renew",
                    Change::SetRenew { .. } if grant.new => "set renew after serving",
                    Change::SetRenew { .. } => "set renew",
                    Change::SetJoin { prune: true } => "join, pruning",
                    Change::SetJoin { prune: false } => "join",
                    Change::SetNew { .. } => "new set",
                });
                assert!(
                    !matches!(queue, Queue::Waiting { .. }) || repeat,
                    "{context}"
                );
                let after = match before {
                    Some((token, holds)) => {
                        assert!(!drawn && grant.token == token, "{context}");
                        (token, holds + i64::from(a.reentrant && !grant.new))
                    }
                    None => {
                        assert!(grant.new && drawn && grant.token > floor, "{context}");
                        (grant.token, 1)
                    }
                };
                key.apply(&grant, &a, now);
                assert_eq!(held(&key, a.owner, now), Some(after), "{context}");
                assert!(holds_as(key.holding(), a.owner, a.want, now), "{context}");
                match &key {
                    Key::Set(set) => {
                        assert_eq!(set.validate(), Ok(()), "{context}");
                        if let SetKind::Limit(n) = set.kind() {
                            assert!(set.live_count(now) <= n as usize, "{context}");
                        }
                    }
                    _ => assert_eq!(key.live(now).len(), 1, "{context}"),
                }
            }
        }
    }
    let every = [
        "serve first",
        "other kind",
        "overflow",
        "wait",
        "nil",
        "plain",
        "plain over a set",
        "renew",
        "set renew",
        "set renew after serving",
        "join, pruning",
        "join",
        "new set",
    ];
    for path in every {
        assert!(seen.contains(path), "never took {path}: {seen:?}");
    }
}

/// The handler's loop over random keys and queues of waiters: it asks,
/// serves the queue when told to (`test_model::hand_over`), and asks once
/// more; the second answer never serves again. A new grant to the caller
/// leaves nobody queued (first come, first served), and the waiters served
/// first got the lock before the caller.
#[test]
fn the_handler_serves_first_then_asks_once_more() {
    let mut seen = BTreeSet::new();
    for seed in 1..=5_000u64 {
        let mut rng = Rng(seed.wrapping_mul(0xD1B5_4A32_D192_ED03));
        let now = NOW + rng.below(100) as i64;
        let mut key = random_key(&mut rng, now);
        let mut queue: VecDeque<Queued> = (0..rng.below(4))
            .map(|_| match rng.below(10) {
                0 => Queued::Other,
                _ => Queued::Lock(Waiter {
                    owner: format!("o{}", rng.below(5)).into_bytes(),
                    want: random_want(&mut rng),
                    ttl: 1 + rng.below(300) as i64,
                    reentrant: false,
                }),
            })
            .collect();
        let owner = format!("o{}", rng.below(5));
        let a = Ask {
            owner: owner.as_bytes(),
            want: random_want(&mut rng),
            reentrant: false,
            deadline: now + 1 + rng.below(500) as i64,
            wait: true,
        };
        let mut fence = FenceClock::default();
        let context = format!("seed {seed}: {a:?} {queue:?} on {key:?}");
        let mut asked = match queue.front() {
            None => Queue::Empty,
            Some(Queued::Other) => Queue::Waiting { front: None },
            Some(Queued::Lock(w)) => Queue::Waiting {
                front: Some(w.want),
            },
        };
        let mut served = Vec::new();
        let plan = loop {
            let plan = decide_at(&key, &a, asked, now, &mut fence);
            if plan != Ok(Plan::ServeFirst) {
                break plan;
            }
            assert!(served.is_empty(), "served twice: {context}");
            served = hand_over(&mut key, &mut queue, now, &mut fence, &|| None);
            asked = Queue::Served {
                waiting: !queue.is_empty(),
            };
        };
        if !served.is_empty() {
            seen.insert("served first");
        }
        if let Ok(Plan::Grant(grant)) = plan {
            seen.insert("granted");
            if grant.new {
                assert!(queue.is_empty(), "granted before a waiter: {context}");
            }
            key.apply(&grant, &a, now);
        }
    }
    assert!(
        seen.contains("served first") && seen.contains("granted"),
        "{seen:?}"
    );
}
