//! The filter-level guarantees of aging filters, with a manual clock:
//! presence for the whole window, absence after window + slot, the
//! false-positive rate under steady and bursty arrivals at capacity, and the
//! memory bound.

use crate::bloom::core::aging::*;
use crate::bloom::core::errors;
use crate::bloom::core::filter::{Added, BloomFilter, BloomParams, ItemHash};
use crate::common::test_rng::Rng;

fn aging_filter(p: f64, capacity: u64, window: u64) -> BloomFilter {
    BloomFilter::new_aging(p, capacity, window, u64::MAX).expect("aging filter")
}

fn item(seed: u64, i: u64) -> ItemHash {
    ItemHash::of(format!("item:{seed}:{i}").as_bytes())
}

fn never_added(i: u64) -> ItemHash {
    ItemHash::of(format!("never:{i}").as_bytes())
}

/// Share of `probes` never-added items the filter reports at `now`.
fn fp_rate(f: &BloomFilter, now: u64, probes: u64) -> f64 {
    let hits = (0..probes)
        .filter(|&i| f.contains(never_added(i), now))
        .count();
    hits as f64 / probes as f64
}

/// Random schedules of adds (some repeated) and checks at capacity: an item
/// is present whenever its last add is at most a window ago, and items
/// whose last add is past window + slot show up no more often than the
/// error rate (checked over all such probes of all schedules).
#[test]
fn property_present_through_the_window_gone_after_the_slack() {
    let (window, capacity, p) = (1_000u64, 200u64, 0.01);
    let slack = window + window / GENERATIONS;
    let (mut stale_probes, mut stale_hits) = (0u64, 0u64);
    for seed in 1..=40u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut f = aging_filter(p, capacity, window);
        // Last add time of each item id.
        let mut last_add: Vec<Option<u64>> = vec![None; 600];
        let mut arrivals: Vec<u64> = Vec::new();
        let mut now = rng.below(1_000_000);
        for _ in 0..1_500 {
            now += match rng.below(10) {
                0 => rng.below(2 * window),
                1..=3 => 0,
                _ => rng.below(window / 50),
            };
            // Stay within capacity: at most `capacity` adds per window.
            arrivals.retain(|&t| t + window > now);
            if arrivals.len() < capacity as usize && rng.below(3) > 0 {
                let id = rng.below(last_add.len() as u64);
                f.add(item(seed, id), now, u64::MAX)
                    .expect("within capacity");
                last_add[id as usize] = Some(now);
                arrivals.push(now);
            }
            for (id, at) in last_add.iter().enumerate() {
                let Some(at) = *at else { continue };
                let found = f.contains(item(seed, id as u64), now);
                if now <= at + window {
                    assert!(
                        found,
                        "seed {seed}: item {id} added at {at} absent at {now}"
                    );
                } else if now >= at + slack {
                    stale_probes += 1;
                    stale_hits += u64::from(found);
                }
            }
        }
    }
    assert!(stale_probes > 100_000, "{stale_probes}");
    let rate = stale_hits as f64 / stale_probes as f64;
    assert!(rate <= p, "stale items present at {rate}");
}

#[test]
fn steady_arrivals_at_capacity_keep_the_rate() {
    let (window, capacity, p) = (10_000u64, 20_000u64, 0.01);
    let mut f = aging_filter(p, capacity, window);
    let step = window as f64 / capacity as f64;
    let mut worst: f64 = 0.0;
    for i in 0..(4 * capacity) {
        let now = (i as f64 * step) as u64;
        f.add(item(0, i), now, u64::MAX).expect("steady");
        if i % (capacity / 8) == 0 {
            worst = worst.max(fp_rate(&f, now, 20_000));
        }
    }
    assert!(worst <= p, "{worst}");
    assert!(worst > 0.0, "the probe sees false positives at all");
}

/// The whole capacity at the end of one slot, and again just over a
/// window later: both bursts are live at once, at the bound.
#[test]
fn bursts_at_capacity_keep_the_rate() {
    let (window, capacity, p) = (10_000u64, 20_000u64, 0.01);
    let mut f = aging_filter(p, capacity, window);
    let first = window / GENERATIONS - 1;
    for i in 0..capacity {
        f.add(item(1, i), first, u64::MAX).expect("first burst");
    }
    let second = first + window;
    for i in 0..capacity {
        f.add(item(2, i), second, u64::MAX).expect("second burst");
    }
    assert!((0..capacity).all(|i| f.contains(item(2, i), second)));
    let rate = fp_rate(&f, second, 100_000);
    assert!(rate <= p, "{rate}");
    assert!(f.layers().len() <= MAX_BLOCKS);
}

#[test]
fn more_than_capacity_in_a_window_is_full_and_changes_nothing() {
    let mut f = aging_filter(0.01, 100, 1_000);
    let mut added = 0;
    let outcome = loop {
        match f.add(item(3, added), 0, u64::MAX) {
            Ok(_) => added += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(outcome, errors::AGING_FULL);
    // Every block full (adds that were false positives in an open block
    // changed nothing and took no room).
    assert_eq!(f.layers().len(), MAX_BLOCKS);
    assert_eq!(f.items(0), MAX_BLOCKS as u64 * block_capacity(100));
    assert!(added >= f.items(0));
    let before = f.clone();
    assert_eq!(f.add(item(3, added), 1, u64::MAX), Err(errors::AGING_FULL));
    assert_eq!(f, before);
    // Once the blocks retire there is room again.
    assert_eq!(f.add(item(3, added), 1_250, u64::MAX), Ok(Added::New));
    assert_eq!(f.layers().len(), 1);
}

/// An item already in a block that still takes adds by time stays put, even
/// when that block is full: it lives a window from now already.
#[test]
fn an_item_in_a_full_block_within_its_slot_changes_nothing() {
    let mut f = aging_filter(0.01, 8, 1_000);
    assert_eq!(f.add(item(7, 0), 0, u64::MAX), Ok(Added::New));
    assert_eq!(f.add(item(7, 1), 0, u64::MAX), Ok(Added::New));
    let before = f.clone();
    for now in [0, 100, 249] {
        assert_eq!(f.add(item(7, 0), now, u64::MAX), Ok(Added::Present));
    }
    assert_eq!(f, before, "no block opened for a present item");
    // After the slot it goes into a new block, and its window starts again.
    assert_eq!(f.add(item(7, 0), 250, u64::MAX), Ok(Added::Refreshed));
    assert_eq!(f.layers().len(), 2);
}

/// A filter whose blocks all retired takes adds again even at the size cap
/// (the retired blocks' bytes are not counted against the new one).
#[test]
fn retired_blocks_make_room_under_the_size_cap() {
    let mut f = aging_filter(0.01, 100, 1_000);
    let mut i = 0;
    while f.add(item(8, i), 0, u64::MAX).is_ok() {
        i += 1;
    }
    let cap = f.size();
    assert_eq!(f.add(item(8, 9_999), 1, cap), Err(errors::AGING_FULL));
    assert_eq!(f.add(item(8, 9_999), 1_250, cap), Ok(Added::New));
    assert_eq!(f.layers().len(), 1);
}

#[test]
fn an_item_added_again_starts_its_window_again() {
    let mut f = aging_filter(0.01, 100, 1_000);
    assert_eq!(f.add(item(4, 0), 0, u64::MAX), Ok(Added::New));
    assert_eq!(f.add(item(4, 0), 100, u64::MAX), Ok(Added::Present));
    assert_eq!(f.add(item(4, 0), 900, u64::MAX), Ok(Added::Refreshed));
    assert!(f.contains(item(4, 0), 1_900));
    assert!(!f.contains(item(4, 0), 900 + 1_250));
}

#[test]
fn reads_skip_retired_blocks_and_adds_drop_them() {
    let mut f = aging_filter(0.01, 100, 1_000);
    f.add(item(5, 0), 0, u64::MAX).expect("add");
    assert_eq!(f.items(1_249), 1);
    assert_eq!(f.items(1_250), 0);
    assert!(!f.contains(item(5, 0), 1_250));
    assert_eq!(f.layers().len(), 1, "a read changes nothing");
    assert_eq!(f.add(item(5, 1), 1_250, u64::MAX), Ok(Added::New));
    assert_eq!(f.aging().map(|a| a.opened().to_vec()), Some(vec![1_250]));
}

/// Memory against a non-scaling filter of the same capacity and rate.
#[test]
fn memory_stays_within_the_documented_multiples() {
    let (capacity, p) = (1_000_000u64, 0.01);
    let plain = BloomFilter::new(
        BloomParams {
            error_rate: p,
            capacity,
            expansion: 0,
        },
        u64::MAX,
    )
    .expect("plain")
    .size() as f64;
    let mut f = aging_filter(p, capacity, 40_000);
    // Steady arrivals: a slot's share per slot, for two windows.
    for i in 0..(2 * capacity) {
        f.add(item(6, i), i / 25, u64::MAX).expect("steady");
    }
    let steady = f.size() as f64 / plain;
    assert!(steady <= 1.9, "steady {steady}");
    let largest = MAX_BLOCKS as f64 * f.layers()[0].bytes() as f64 / plain;
    assert!(largest <= 4.9, "largest {largest}");
}
