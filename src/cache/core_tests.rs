//! Unit tests of `cache::core`: freshness, versions, leases, HOT reads and
//! the entry's block (kept apart: the module and its tests exceed one file's
//! length).

use super::*;

const T0: i64 = 1_800_000_000_000;

fn set(ttl_ms: i64, stale_ms: i64, version: i64, lease: Option<i64>) -> SetRequest {
    SetRequest {
        ttl_ms,
        stale_ms,
        version,
        lease,
    }
}

fn entry(value: &[u8], ttl: i64, stale: i64, version: i64) -> CacheEntry {
    CacheEntry::stored(value, &set(ttl, stale, version, None), None, T0).unwrap()
}

#[test]
fn a_value_is_fresh_then_stale_then_gone() {
    let e = entry(b"v", 100, 50, 0);
    assert!(e.is_fresh(0, T0));
    assert!(e.is_fresh(0, T0 + 99));
    assert!(!e.is_fresh(0, T0 + 100));
    assert_eq!(e.stale_value(0, T0 + 100), Some(&b"v"[..]));
    assert_eq!(e.stale_value(0, T0 + 149), Some(&b"v"[..]));
    assert_eq!(e.stale_value(0, T0 + 150), None);
    assert_eq!(e.expires_at(), T0 + 150);
    assert_eq!(e.read(0, T0 + 120), Read::Vacant);
}

#[test]
fn min_version_turns_an_older_fresh_value_into_a_miss() {
    let e = entry(b"v", 100, 50, 7);
    assert!(e.is_fresh(7, T0));
    assert!(!e.is_fresh(8, T0));
    assert_eq!(e.read(8, T0), Read::Vacant);
    assert_eq!(e.stale_value(8, T0), None, "too old to serve even stale");
}

#[test]
fn older_versions_are_refused_while_the_value_lives() {
    let e = entry(b"v", 100, 50, 7);
    assert!(!e.may_set(&set(10, 0, 6, None), T0 + 149));
    assert!(e.may_set(&set(10, 0, 7, None), T0));
    assert!(e.may_set(&set(10, 0, 8, None), T0));
    // Once the value is gone its version guards nothing.
    assert!(e.may_set(&set(10, 0, 0, None), T0 + 150));
}

#[test]
fn a_lease_set_lands_only_while_its_lease_is_current() {
    let mut fence = FenceClock::default();
    let mut e = entry(b"old", 10, 1000, 0);
    let lease = e.take_lease(500, T0 + 20, &mut fence).unwrap();
    assert_eq!(e.read(0, T0 + 20), Read::Refreshing);
    assert!(e.may_set(&set(10, 0, 0, Some(lease.token)), T0 + 519));
    assert!(
        !e.may_set(&set(10, 0, 0, Some(lease.token)), T0 + 520),
        "lapsed"
    );
    assert!(!e.may_set(&set(10, 0, 0, Some(lease.token + 1)), T0 + 30));
    // A plain SET replaces the entry and with it the lease.
    let replaced = CacheEntry::stored(b"new", &set(10, 0, 0, None), Some(&e), T0 + 30).unwrap();
    assert!(!replaced.may_set(&set(10, 0, 0, Some(lease.token)), T0 + 31));
    assert_eq!(
        e.expires_at(),
        T0 + 1010,
        "the stale end is later than the lease"
    );
}

#[test]
fn leases_take_fencing_tokens_and_outlive_the_value() {
    let mut fence = FenceClock::starting_at(T0 * 1000 + 5);
    let mut e = entry(b"v", 10, 10, 3);
    let first = e.take_lease(100, T0 + 30, &mut fence).unwrap();
    assert_eq!(first.token, (T0 + 30) * 1000);
    assert_eq!(e.stale_value(0, T0 + 30), None, "past its stale period");
    assert_eq!(e.live_version(T0 + 30), 0, "a dead value guards nothing");
    assert_eq!(e.expires_at(), T0 + 130);
    let second = e.take_lease(100, T0 + 30, &mut fence).unwrap();
    assert!(second.token > first.token);
}

#[test]
fn hot_reads_extend_freshness_never_shorten_it() {
    let hot = Hot {
        reads: 3,
        window_ms: 100,
        extend_ms: 1000,
    };
    let mut e = entry(b"v", 500, 200, 0);
    assert!(!e.count_read(&hot, T0 + 10));
    assert!(!e.count_read(&hot, T0 + 20));
    assert!(e.count_read(&hot, T0 + 30), "third read in the window");
    assert_eq!(e.fresh_until(), T0 + 1130, "extend_ms + window_ms ahead");
    assert_eq!(e.stale_until(), T0 + 1330, "the stale period follows");
    assert!(!e.count_read(&hot, T0 + 30), "already fresh that long");
    for t in 31..110 {
        assert!(
            !e.count_read(&hot, T0 + t),
            "once per window (read at +{t})"
        );
        assert!(
            e.fresh_until() - (T0 + t) >= hot.extend_ms,
            "at least extend_ms left"
        );
    }
    // A new window starts the count again.
    assert!(!e.count_read(&hot, T0 + 200));
    assert_eq!(e.reads(), 1);
    let long = Hot {
        extend_ms: 10,
        ..hot
    };
    let before = e.clone();
    for t in 0..5 {
        e.count_read(&long, T0 + 210 + t);
    }
    assert_eq!(e.fresh_until(), before.fresh_until(), "never shortened");
}

#[test]
fn meta_round_trips_and_validates() {
    let mut fence = FenceClock::default();
    let mut e = entry(b"v", 10, 20, 4);
    e.take_lease(50, T0 + 5, &mut fence).unwrap();
    let meta = e.meta();
    assert!(meta.validate(true).is_ok());
    let mut other = entry(b"v", 1, 1, 0);
    other.apply_meta(&meta);
    assert_eq!(other.meta(), meta);
    let bad = [
        Meta {
            version: -1,
            ..meta
        },
        Meta {
            stale_until: meta.fresh_until - 1,
            ..meta
        },
        Meta {
            lease: Some(Lease {
                token: 0,
                until_ms: 1,
            }),
            ..meta
        },
        Meta {
            lease: Some(Lease {
                token: MAX_TOKEN + 1,
                until_ms: 1,
            }),
            ..meta
        },
    ];
    for m in bad {
        assert!(m.validate(true).is_err(), "{m:?}");
    }
    assert!(Meta { version: 1, ..meta }.validate(false).is_err());
    assert!(Meta {
        version: 0,
        lease: None,
        ..meta
    }
    .validate(false)
    .is_err());
    assert!(Meta { version: 0, ..meta }.validate(false).is_ok());
}

#[test]
fn huge_periods_are_range_errors_not_overflow() {
    let far = i64::MAX - 5;
    assert_eq!(
        CacheEntry::stored(b"v", &set(10, 0, 0, None), None, far),
        Err(WardenError::OutOfRange("ttl"))
    );
    assert_eq!(
        CacheEntry::stored(b"v", &set(1, i64::MAX - 10, 0, None), None, T0),
        Err(WardenError::OutOfRange("stale"))
    );
    let mut fence = FenceClock::default();
    assert_eq!(
        new_lease(10, far, &mut fence),
        Err(WardenError::OutOfRange("lease"))
    );
}

#[test]
fn a_plain_entry_costs_32_bytes_besides_its_value() {
    assert_eq!(std::mem::size_of::<CacheEntry>(), 32, "one size class");
    let e = entry(&[7u8; 100], 10, 0, 0);
    assert_eq!(e.heap_bytes(), 4 + 100, "a string's buffer: 3 + 100 + 1");
    assert!(e.extra().is_none());
    for (stale, version) in [(5, 0), (0, 9)] {
        let e = entry(&[7u8; 100], 10, stale, version);
        assert_eq!(e.heap_bytes(), 4 + 100 + 8, "{stale} {version}: one field");
        assert_eq!(e.value(), Some(&[7u8; 100][..]));
        assert_eq!((e.version(), e.stale_until()), (version, T0 + 10 + stale));
    }
}

#[test]
fn blocks_move_and_copy_with_their_extras() {
    let mut m = crate::common::relocate::tests::TestMover::default();
    let mut fence = FenceClock::default();
    for (value, stale, version) in [(&b""[..], 0, 0), (b"v", 5, 0), (&[9u8; 300][..], 0, 7)] {
        let mut e = entry(value, 10, stale, version);
        e.take_lease(50, T0, &mut fence).unwrap();
        let before = e.clone();
        e.relocate(&mut m);
        assert_eq!(e, before);
        assert_eq!(e.value(), Some(value));
        let fields = usize::from(stale > 0) + usize::from(version > 0) + 2;
        assert_eq!(e.heap_bytes(), 4 + value.len() + 8 * fields);
        assert_eq!(e.version(), version);
    }
    assert_eq!(m.moved, 3);
    let both = entry(b"v", 10, 5, 9);
    assert_eq!(both.heap_bytes(), 4 + 1 + 16);
    assert_eq!(
        (both.version(), both.stale_until(), both.lease()),
        (9, T0 + 15, None)
    );
    let lease = new_lease(10, T0, &mut fence).unwrap();
    let only = CacheEntry::lease_only(lease, T0);
    assert_eq!((only.value(), only.lease()), (None, Some(lease)));
    assert_eq!(only.clone(), only);
}

#[test]
fn extras_come_and_go_with_the_state() {
    let mut fence = FenceClock::default();
    let mut e = entry(b"v", 10, 0, 0);
    let lease = e.take_lease(50, T0, &mut fence).unwrap();
    assert_eq!(e.lease(), Some(lease));
    assert_eq!((e.version(), e.stale_until()), (0, T0 + 10));
    let meta = Meta {
        lease: None,
        ..e.meta()
    };
    e.apply_meta(&meta);
    assert!(e.extra().is_none(), "a plain state stores no extras");
    assert_eq!(e.meta(), meta);
    let hot = Hot {
        reads: 1,
        window_ms: 5,
        extend_ms: 100,
    };
    let mut stale = entry(b"v", 10, 20, 0);
    assert!(stale.count_read(&hot, T0));
    assert_eq!(
        (stale.fresh_until(), stale.stale_until()),
        (T0 + 105, T0 + 125)
    );
}

#[test]
fn random_schedules_never_serve_stale_as_fresh_or_accept_old_versions() {
    // A small deterministic generator: no dependency needed.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut fence = FenceClock::default();
    for _ in 0..200 {
        let mut e: Option<CacheEntry> = None;
        let mut now = T0;
        let mut leases: Vec<i64> = Vec::new();
        for _ in 0..100 {
            now += next(40) as i64;
            if e.as_ref().is_some_and(|e| now >= e.expires_at()) {
                e = None; // Redis expired the key
            }
            match next(3) {
                0 => {
                    let lease = match next(3) {
                        0 => leases.last().copied(),
                        1 => leases.first().copied(),
                        _ => None,
                    };
                    let req = set(1 + next(30) as i64, next(30) as i64, next(5) as i64, lease);
                    let allowed = e.as_ref().is_none_or(|e| e.may_set(&req, now));
                    let allowed = allowed && (lease.is_none() || e.is_some());
                    if allowed {
                        let stored = CacheEntry::stored(b"x", &req, e.as_ref(), now).unwrap();
                        if let Some(prev) = &e {
                            assert!(req.version >= prev.live_version(now));
                            if let Some(t) = lease {
                                assert_eq!(prev.live_lease(now).map(|l| l.token), Some(t));
                            }
                        }
                        e = Some(stored);
                    }
                }
                1 => {
                    if let Some(entry) = &e {
                        let min = next(5) as i64;
                        if entry.is_fresh(min, now) {
                            assert!(now < entry.fresh_until() && entry.version() >= min);
                        }
                    }
                }
                _ => {
                    let entry = e.get_or_insert_with(|| {
                        let lease = new_lease(20, now, &mut fence).unwrap();
                        leases.push(lease.token);
                        CacheEntry::lease_only(lease, now)
                    });
                    if entry.read(0, now) == Read::Vacant {
                        let lease = entry.take_lease(20, now, &mut fence).unwrap();
                        leases.push(lease.token);
                    }
                    let live: Vec<_> = entry.live_lease(now).into_iter().collect();
                    assert!(live.len() <= 1);
                    assert!(entry.expires_at() >= now, "a live entry outlives now");
                }
            }
        }
    }
}
