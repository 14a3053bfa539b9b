use super::*;
use crate::common::test_rng::Rng;

fn grant(client: u64, token: i64, ttl_ms: i64) -> Kept {
    Kept {
        id: 0,
        client,
        db: 0,
        key: format!("k{token}").into_bytes(),
        owner: b"o".to_vec(),
        token,
        ttl_ms,
    }
}

/// Pops everything due at `now`, in order.
fn drain(k: &mut Keeper, now: i64) -> Vec<(i64, Due)> {
    let mut out = Vec::new();
    while let Some((g, due)) = k.pop_due(now) {
        out.push((g.token, due));
    }
    out
}

#[test]
fn a_grant_is_renewed_every_third_of_its_ttl() {
    let mut k = Keeper::default();
    let a = k.bind(grant(1, 10, 3000), 1_000);
    assert_eq!(k.next_due(), Some(2_000));
    assert!(k.pop_due(1_999).is_none());
    assert_eq!(drain(&mut k, 2_000), vec![(10, Due::Renew)]);
    // Out of the schedule until renewed.
    assert_eq!(k.next_due(), None);
    assert_eq!(k.len(), 1);
    k.renewed(a, 2_003);
    assert_eq!(k.next_due(), Some(3_003));
}

#[test]
fn the_shortest_ttls_are_renewed_every_millisecond() {
    assert_eq!(renewal_period(1), 1);
    assert_eq!(renewal_period(2), 1);
    assert_eq!(renewal_period(3), 1);
    assert_eq!(renewal_period(7), 2);
    let mut k = Keeper::default();
    k.bind(grant(1, 1, i64::MAX), i64::MAX - 5);
    // No overflow at the end of time.
    assert_eq!(k.next_due(), Some(i64::MAX));
}

#[test]
fn grants_come_due_in_time_order_whatever_order_they_were_bound_in() {
    let mut k = Keeper::default();
    k.bind(grant(1, 30, 900), 0); // due 300
    k.bind(grant(2, 10, 300), 0); // due 100
    k.bind(grant(1, 20, 600), 0); // due 200
    assert_eq!(
        drain(&mut k, 1_000),
        vec![(10, Due::Renew), (20, Due::Renew), (30, Due::Renew)]
    );
}

#[test]
fn a_closed_connection_makes_only_its_own_grants_due_for_release_at_once() {
    let mut k = Keeper::default();
    k.bind(grant(1, 10, 30_000), 0);
    k.bind(grant(2, 11, 30_000), 0);
    k.bind(grant(1, 12, 30_000), 0);
    assert_eq!(k.client_gone(1, 50), 2);
    assert_eq!(k.client_gone(1, 60), 0, "a connection closes once");
    assert_eq!(k.client_gone(3, 60), 0, "a connection that kept nothing");
    assert_eq!(k.next_due(), Some(50));
    assert_eq!(
        drain(&mut k, 50),
        vec![(10, Due::Release), (12, Due::Release)]
    );
    assert_eq!(
        k.next_due(),
        Some(10_000),
        "client 2's grant keeps its time"
    );
}

#[test]
fn a_repeat_moves_the_grant_to_the_connection_that_made_it() {
    let mut k = Keeper::default();
    k.bind(grant(1, 10, 3_000), 0);
    k.bind(grant(2, 10, 6_000), 100);
    assert_eq!(k.len(), 1);
    assert_eq!(k.client_gone(1, 200), 0, "the old connection keeps nothing");
    assert_eq!(k.next_due(), Some(2_100));
    assert_eq!(k.client_gone(2, 300), 1);
    assert_eq!(drain(&mut k, 300), vec![(10, Due::Release)]);
}

#[test]
fn a_grant_whose_connection_closed_is_kept_again_by_a_new_binding() {
    let mut k = Keeper::default();
    k.bind(grant(1, 10, 3_000), 0);
    k.client_gone(1, 10);
    k.bind(grant(2, 10, 3_000), 20);
    assert_eq!(drain(&mut k, 20), vec![]);
    assert_eq!(k.next_due(), Some(1_020));
}

#[test]
fn a_retry_puts_the_grant_back_at_the_given_time_and_keeps_what_is_due() {
    let mut k = Keeper::default();
    k.bind(grant(1, 10, 3_000), 0);
    k.client_gone(1, 5);
    let (g, due) = k.pop_due(5).unwrap();
    assert_eq!(due, Due::Release);
    k.retry_at(g.id, 10);
    assert!(k.pop_due(9).is_none());
    assert_eq!(drain(&mut k, 10), vec![(10, Due::Release)]);
}

#[test]
fn a_copy_elsewhere_does_not_end_the_kept_grant() {
    let mut k = Keeper::default();
    let a = k.bind(grant(1, 10, 300), 0); // on "k10", db 0
    assert_eq!(k.remove_on(10, 0, b"copy"), None);
    assert_eq!(k.remove_on(10, 1, b"k10"), None);
    assert!(k.contains(a));
    assert_eq!(k.remove_on(10, 0, b"k10").map(|g| g.token), Some(10));
    assert!(!k.contains(a));
}

/// A copy of a kept lock (`COPY`, `RESTORE`) carries its token; kept too
/// (its owner's repeat with KEEP on the copy), each is renewed and ended on
/// its own key.
#[test]
fn a_copy_kept_too_is_another_grant_with_the_same_token() {
    let mut k = Keeper::default();
    let original = k.bind(grant(1, 10, 300), 0);
    let copy = k.bind(
        Kept {
            key: b"copy".to_vec(),
            ..grant(1, 10, 600)
        },
        0,
    );
    assert_ne!(original, copy);
    assert_eq!(k.len(), 2);
    assert_eq!(k.renewed_lease(10, 0, b"k10"), Some(300));
    assert_eq!(k.renewed_lease(10, 0, b"copy"), Some(600));
    assert_eq!(drain(&mut k, 100), vec![(10, Due::Renew)]);
    assert_eq!(drain(&mut k, 200), vec![(10, Due::Renew)]);
    assert_eq!(
        k.remove_on(10, 0, b"copy").map(|g| g.key),
        Some(b"copy".to_vec())
    );
    assert!(k.contains(original));
    assert_eq!(k.extended(10, 0, b"k10", 900, 300), Some(1));
}

#[test]
fn an_extension_renews_with_the_new_ttl_from_then() {
    let mut k = Keeper::default();
    k.bind(grant(1, 10, 900), 0);
    assert_eq!(k.next_due(), Some(300));
    assert_eq!(k.extended(10, 0, b"k10", 90, 50), Some(1));
    assert_eq!(k.next_due(), Some(80));
    let (g, _) = k.pop_due(80).unwrap();
    assert_eq!(g.ttl_ms, 90);
    k.renewed(g.id, 80);
    assert_eq!(k.next_due(), Some(110));
    // Another key's extension, or a grant whose connection closed, changes nothing.
    assert_eq!(k.extended(10, 0, b"other", 9_000, 90), None);
    assert_eq!(k.next_due(), Some(110));
    k.client_gone(1, 100);
    assert_eq!(k.extended(10, 0, b"k10", 9_000, 100), None);
    assert_eq!(k.next_due(), Some(100), "still due for release");
}

#[test]
fn removed_and_cleared_grants_are_never_due() {
    let mut k = Keeper::default();
    let a = k.bind(grant(1, 10, 300), 0);
    k.bind(grant(1, 11, 300), 0);
    assert_eq!(k.remove(a).map(|g| g.token), Some(10));
    assert_eq!(k.remove(a), None);
    assert_eq!(drain(&mut k, 1_000), vec![(11, Due::Renew)]);
    k.bind(grant(2, 12, 300), 0);
    let cleared = k.clear();
    assert_eq!(cleared.len(), 2);
    assert!(k.is_empty());
    assert_eq!(k.next_due(), None);
    assert_eq!(k.client_gone(2, 0), 0);
}

/// Random binds, renewals, retries, removals and closed connections: every
/// grant is in the schedule at most once, due ones come out in time order,
/// each connection's release covers exactly the grants it kept last.
#[test]
fn random_schedules_keep_every_grant_once_and_in_order() {
    for seed in 1..=300u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut k = Keeper::default();
        let mut holder: HashMap<i64, (u64, bool)> = HashMap::new();
        let mut now = 0i64;
        for _ in 0..200 {
            now += rng.below(50) as i64;
            let token = 1 + rng.below(20) as i64;
            let client = 1 + rng.below(4);
            match rng.below(6) {
                0 | 1 => {
                    k.bind(grant(client, token, 1 + rng.below(600) as i64), now);
                    holder.insert(token, (client, false));
                }
                2 => {
                    k.remove_on(token, 0, format!("k{token}").as_bytes());
                    holder.remove(&token);
                }
                3 => {
                    let gone = holder
                        .values()
                        .filter(|(c, released)| *c == client && !released)
                        .count();
                    assert_eq!(k.client_gone(client, now), gone, "seed {seed}");
                    for (c, released) in holder.values_mut() {
                        *released |= *c == client;
                    }
                }
                _ => {
                    let mut last = i64::MIN;
                    loop {
                        let at = k.next_due();
                        let Some((g, due)) = k.pop_due(now) else {
                            assert!(at.is_none_or(|at| at > now), "seed {seed}");
                            break;
                        };
                        let at = at.expect("a due grant has a time");
                        assert!(last <= at && at <= now, "seed {seed}: out of order");
                        last = at;
                        let (_, released) = holder[&g.token];
                        assert_eq!(due == Due::Release, released, "seed {seed}");
                        match rng.below(3) {
                            0 => k.renewed(g.id, now),
                            1 => k.retry_at(g.id, now + 1),
                            _ => {
                                k.remove(g.id);
                                holder.remove(&g.token);
                            }
                        }
                    }
                }
            }
            assert_eq!(k.len(), holder.len(), "seed {seed}");
            assert!(k.schedule.len() <= k.len(), "seed {seed}");
            let mut seen = std::collections::HashSet::new();
            for (_, t) in &k.schedule {
                assert!(seen.insert(*t), "seed {seed}: grant {t} scheduled twice");
                assert!(k.grants.contains_key(t), "seed {seed}");
            }
        }
    }
}

#[test]
fn liveness_gives_up_on_a_silent_host_within_the_lease_and_a_second_and_a_half() {
    assert_eq!(
        liveness(MIN_KEPT_TTL_MS),
        Liveness {
            idle_s: 1,
            interval_s: 1,
            probes: 1,
            user_timeout_ms: 600
        }
    );
    assert_eq!(liveness(3_000).user_timeout_ms, 3_500);
    assert_eq!(liveness(60_000).idle_s, 30);
    let huge = liveness(i64::MAX);
    assert_eq!((huge.idle_s, huge.user_timeout_ms), (32_767, u32::MAX));
    for ttl in (MIN_KEPT_TTL_MS..1_000_000).step_by(997) {
        let l = liveness(ttl);
        // The kernel gives up at the first keepalive timer at or past the
        // user timeout since the last thing heard, once a probe is out:
        // probes start after `idle_s` and come every `interval_s`.
        let (idle, interval) = (i64::from(l.idle_s) * 1_000, i64::from(l.interval_s) * 1_000);
        let user_timeout = i64::from(l.user_timeout_ms);
        let bound = user_timeout.max(idle) + interval;
        assert!(bound <= ttl + 2_000, "{ttl}: {bound}");
        assert!(user_timeout > ttl, "{ttl}: never before the lease");
    }
}

#[test]
fn a_connection_keeping_nothing_any_more_is_reported_once() {
    let mut k = Keeper::default();
    let a = k.bind(grant(1, 10, 300), 0);
    let b = k.bind(grant(1, 11, 300), 0);
    k.bind(grant(2, 12, 300), 0);
    k.remove(a);
    assert!(
        k.take_emptied().is_empty(),
        "connection 1 still keeps a grant"
    );
    k.remove(b);
    assert_eq!(k.take_emptied(), [1]);
    assert!(k.take_emptied().is_empty());
    // A grant moved to another connection empties the first.
    k.bind(grant(3, 12, 300), 0);
    assert_eq!(k.take_emptied(), [2]);
    // A closed connection is not reported: its socket is gone.
    k.client_gone(3, 5);
    k.remove_on(12, 0, b"k12");
    assert!(k.take_emptied().is_empty());
    k.bind(grant(4, 13, 300), 0);
    k.clear();
    assert_eq!(k.take_emptied(), [4]);
}
