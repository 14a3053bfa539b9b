//! Unit tests of `sketch` (its `tests` module): sizes, counting, overflow,
//! merges and windows on a manual clock.

use std::collections::HashMap;

use super::*;
use crate::common::sketch::SUB_WINDOWS;
use crate::common::test_rng::Rng;

const BIG: u64 = 1 << 30;

fn dims(width: u32, depth: u32) -> Dims {
    Dims { width, depth }
}

fn plain(width: u32, depth: u32) -> CountMin {
    CountMin::new(dims(width, depth), None, BIG).unwrap()
}

fn windowed(width: u32, depth: u32, window: u64) -> CountMin {
    CountMin::new(dims(width, depth), Some(window), BIG).unwrap()
}

fn h(item: &str) -> RowHash {
    RowHash::of(item.as_bytes())
}

/// A Zipf-like stream: item `i` of `n` drawn with weight 1 / (i + 1).
fn zipf(rng: &mut Rng, n: u64, draws: usize) -> Vec<u64> {
    let total: f64 = (1..=n).map(|i| 1.0 / i as f64).sum();
    let cumulative: Vec<f64> = (1..=n)
        .scan(0.0, |acc, i| {
            *acc += 1.0 / i as f64 / total;
            Some(*acc)
        })
        .collect();
    (0..draws)
        .map(|_| {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            cumulative.partition_point(|c| *c < u).min(n as usize - 1) as u64
        })
        .collect()
}

#[test]
fn sizes_are_checked_as_redisbloom_checks_them() {
    assert_eq!(Dims::new(Some(20), Some(5)), Ok(dims(20, 5)));
    assert_eq!(
        Dims::new(Some(u32::MAX as i64), Some(1)),
        Ok(dims(u32::MAX, 1))
    );
    for (w, d) in [
        (Some(0), Some(5)),
        (Some(5), Some(0)),
        (None, Some(5)),
        (Some(-1), Some(1)),
    ] {
        assert!(Dims::new(w, d).is_err(), "{w:?} {d:?}");
    }
    let e = Dims::new(Some(1 << 33), Some(1)).unwrap_err().to_string();
    assert_eq!(
        e,
        "ERR CMS: invalid width (an integer from 1 to 4294967295)"
    );
    let e = Dims::new(Some(1), Some(0)).unwrap_err().to_string();
    assert!(e.starts_with("ERR CMS: invalid depth"), "{e}");
    // RedisBloom's sizes for an error and a probability (its own test's).
    assert_eq!(Dims::from_error(0.001, 0.01), Ok(dims(2000, 7)));
    assert_eq!(Dims::from_error(0.1, 0.1), Ok(dims(20, 4)));
    assert_eq!(Dims::from_error(0.01, 0.5), Ok(dims(200, 1)));
    // A probability that rounds to 1 in single precision makes no rows; an
    // error that makes a width past 2^32 makes no sketch.
    for (e, p) in [(0.9, 0.9999999999999999), (1e-19, 0.9), (0.5, 1e-60)] {
        assert_eq!(
            Dims::from_error(e, p).unwrap_err().to_string(),
            "ERR CMS: invalid init arguments"
        );
    }
}

#[test]
fn a_plain_sketch_takes_what_redisbloom_takes() {
    assert_eq!(std::mem::size_of::<CountMin>(), 32);
    let s = plain(20, 5);
    assert_eq!(s.size(), 32 + 4 * 100);
    // A windowed one: at most (SUB_WINDOWS + 1) plain ones.
    let w = windowed(20, 5, 1000);
    assert!(w.size() <= (SUB_WINDOWS + 1) * s.size(), "{}", w.size());
    assert_eq!(bytes_for(dims(u32::MAX, u32::MAX), true), None);
    let e = CountMin::new(dims(1000, 10), None, 40_000).unwrap_err();
    assert!(e.to_string().contains("Insufficient memory"), "{e}");
    assert!(CountMin::new(dims(1000, 10), None, 40_032).is_ok());
    assert_eq!(
        CountMin::new(dims(10, 10), Some(99), BIG),
        Err(crate::common::sketch::BAD_WINDOW)
    );
}

#[test]
fn counts_add_up_and_an_unseen_item_counts_zero() {
    let mut s = plain(1000, 5);
    assert_eq!(s.incr(&h("bar"), 5).value, 5);
    assert_eq!(s.incr(&h("baz"), 42).value, 42);
    assert_eq!(s.incr(&h("bar"), 0).value, 5);
    assert_eq!(s.query(&h("bar"), 0).value, 5);
    assert_eq!(s.query(&h("foo"), 0).value, 0);
    assert_eq!(s.count(0), 47);
}

/// Property: over random streams on sketches of every shape (tiny ones
/// collide a lot), no count is ever below the item's true count, and
/// conservative update never counts above the update that adds to every cell.
#[test]
fn no_count_is_ever_under_and_none_above_plain_update() {
    let mut rng = Rng(0x5eed);
    for (width, depth) in [(1, 1), (2, 2), (5, 2), (16, 3), (100, 4), (1000, 7)] {
        let mut s = plain(width, depth);
        let mut all_rows = vec![0u64; width as usize * depth as usize];
        let mut truth: HashMap<u64, u64> = HashMap::new();
        for _ in 0..3000 {
            let item = rng.below(300);
            let by = if rng.below(10) == 0 {
                rng.below(1000)
            } else {
                1
            };
            let hash = RowHash::of(&item.to_le_bytes());
            s.incr(&hash, by);
            for row in 0..depth {
                all_rows[row as usize * width as usize + hash.column(row, width)] += by;
            }
            *truth.entry(item).or_default() += by;
        }
        for item in 0..300u64 {
            let hash = RowHash::of(&item.to_le_bytes());
            let got = s.query(&hash, 0).value;
            let linear = (0..depth)
                .map(|row| all_rows[row as usize * width as usize + hash.column(row, width)])
                .min()
                .unwrap();
            let want = truth.get(&item).copied().unwrap_or(0);
            assert!(got >= want, "{width}x{depth} item {item}: {got} < {want}");
            assert!(
                got <= linear,
                "{width}x{depth} item {item}: {got} > {linear}"
            );
        }
    }
}

/// RedisBloom's overflow rule: a counter stops at 2^32 − 1 and the item is
/// reported as overflowed; other items still count.
#[test]
fn counters_saturate_and_report_overflow() {
    let mut s = plain(5, 2);
    let half = (1u64 << 31) - 1;
    assert_eq!(s.incr(&h("a"), half).value, half);
    assert_eq!(s.incr(&h("a"), half).value, 2 * half);
    let e = s.incr(&h("a"), half);
    assert_eq!((e.value, e.overflow), (u64::from(u32::MAX), true));
    assert_eq!(s.query(&h("a"), 0).value, u64::from(u32::MAX));
    assert!(!s.query(&h("zz-unseen"), 0).overflow);
    let e = s.incr(&h("b"), u64::MAX);
    assert!(e.overflow);
    assert_eq!(s.count(0), MAX_COUNT, "the total saturates");
    let mut one = plain(1, 1);
    assert!(one.incr(&h("x"), u64::from(u32::MAX)).overflow);
}

#[test]
fn merges_add_weighted_counters_and_refuse_overflow_unchanged() {
    let (mut a, mut b, c) = (plain(1000, 5), plain(1000, 5), plain(1000, 5));
    for i in 0..100 {
        a.incr(&h(&format!("foo{i}")), 1);
        b.incr(&h(&format!("bar{i}")), 1);
    }
    let sum = merge(&c, &[(&a, 1), (&b, 1)], 0).unwrap();
    let mut d = c.clone();
    d.apply(sum).unwrap();
    assert_eq!(d.count(0), 200);
    assert_eq!(d.query(&h("foo7"), 0).value, 1);
    // Subtracting a sketch merged in leaves exactly the other.
    let mut e = c.clone();
    e.apply(merge(&c, &[(&d, 1), (&b, -1)], 0).unwrap())
        .unwrap();
    assert_eq!(e.cells(), a.cells());
    assert_eq!(e.count(0), 100);
    assert_eq!(e.query(&h("bar3"), 0).value, 0);
    // Subtracting it twice goes negative: refused.
    let err = merge(&e, &[(&e, 1), (&b, -1)], 0).unwrap_err();
    assert_eq!(err.to_string(), "ERR CMS: MERGE overflow");
    // A weight that overflows 64 bits, or a counter past 2^32 − 1.
    assert!(merge(&c, &[(&a, i64::MAX)], 0).is_err());
    let mut big = plain(1000, 5);
    big.incr(&h("x"), u64::from(u32::MAX) - 1);
    assert!(merge(&c, &[(&big, 2)], 0).is_err());
    assert!(merge(&c, &[(&big, 1)], 0).is_ok());
    // Other sizes, other windows.
    assert_eq!(
        merge(&c, &[(&plain(1000, 4), 1)], 0)
            .unwrap_err()
            .to_string(),
        "ERR CMS: width/depth is not equal"
    );
    assert_eq!(
        merge(&c, &[(&windowed(1000, 5, 1000), 1)], 0)
            .unwrap_err()
            .to_string(),
        "ERR CMS: window is not equal"
    );
    let w = windowed(1000, 5, 1000);
    assert!(merge(&w, &[(&windowed(1000, 5, 2000), 1)], 0).is_err());
}

#[test]
fn a_window_counts_the_last_window_and_forgets_within_a_slot() {
    let window = 60_000;
    let slot = window / SUB_WINDOWS;
    let mut s = windowed(1000, 5, window);
    let t0 = 1_700_000_000_000u64;
    let add = |s: &mut CountMin, at: u64, item: &str, by: u64| {
        let slot_ms = s.ring().unwrap().slot_of(at);
        s.rotate_to(slot_ms).unwrap();
        s.incr(&h(item), by)
    };
    assert_eq!(add(&mut s, t0, "a", 3).value, 3);
    assert_eq!(add(&mut s, t0 + slot, "a", 4).value, 7);
    assert_eq!(s.query(&h("a"), t0 + window).value, 7);
    assert_eq!(s.count(t0 + window), 7);
    // Reads never write: past the window the first slot is out, then both.
    let first_gone = t0 - t0 % slot + 5 * slot;
    assert_eq!(s.query(&h("a"), first_gone).value, 4);
    assert_eq!(s.query(&h("a"), first_gone + slot).value, 0);
    assert_eq!(s.count(first_gone + slot), 0);
    // A write that far on clears what it reuses.
    assert_eq!(add(&mut s, first_gone + slot, "b", 1).value, 1);
    assert_eq!(s.counts().iter().sum::<u64>(), 1);
    assert_eq!(s.query(&h("a"), first_gone + slot).value, 0);
    // A clock behind the head counts as the head.
    assert_eq!(s.query(&h("b"), t0).value, 1);
    assert!(!s.rotate_to(t0 - t0 % slot).unwrap());
    assert!(plain(10, 2).rotate_to(0).is_err());
}

/// The stated bound, measured: over a Zipf stream spread across a window,
/// each item's windowed count lies between its true count over the last
/// window and its count over the live slots plus 2/width of everything
/// counted there, for at least 1 − 2^−depth of the items.
#[test]
fn the_window_error_bound_holds() {
    let (width, depth, window) = (200u32, 4u32, 10_000u64);
    let mut rng = Rng(42);
    let mut s = windowed(width, depth, window);
    let t0 = 1_800_000_000_000u64;
    let stream = zipf(&mut rng, 2000, 40_000);
    let events: Vec<(u64, u64)> = stream
        .iter()
        .enumerate()
        .map(|(i, item)| (t0 + i as u64, *item))
        .collect();
    for (at, item) in &events {
        let slot_ms = s.ring().unwrap().slot_of(*at);
        s.rotate_to(slot_ms).unwrap();
        s.incr(&RowHash::of(&item.to_le_bytes()), 1);
    }
    let now = t0 + events.len() as u64;
    let ring = *s.ring().unwrap();
    let oldest_live = ring.slot_of(now) - SUB_WINDOWS * ring.slot_ms();
    let mut in_window: HashMap<u64, u64> = HashMap::new();
    let mut in_live: HashMap<u64, u64> = HashMap::new();
    for (at, item) in &events {
        if *at + window >= now {
            *in_window.entry(*item).or_default() += 1;
        }
        if *at >= oldest_live {
            *in_live.entry(*item).or_default() += 1;
        }
    }
    let n: u64 = in_live.values().sum();
    assert_eq!(s.count(now), n);
    let slack = 2 * n / u64::from(width);
    let mut beyond = 0;
    for item in 0..2000u64 {
        let got = s.query(&RowHash::of(&item.to_le_bytes()), now).value;
        let low = in_window.get(&item).copied().unwrap_or(0);
        let high = in_live.get(&item).copied().unwrap_or(0) + slack;
        assert!(got >= low, "item {item}: {got} < {low}");
        beyond += u64::from(got > high);
    }
    // At most 2^-4 of 2000 items (125) may exceed it; conservative update
    // keeps far fewer there.
    assert!(beyond <= 2000 >> depth, "{beyond} items beyond the bound");
}

#[test]
fn windowed_merges_align_slots_and_skip_those_a_source_no_longer_holds() {
    let window = 4_000;
    let t0 = 1_900_000_000_000u64;
    let at = |s: &mut CountMin, t: u64, item: &str| {
        let slot_ms = s.ring().unwrap().slot_of(t);
        s.rotate_to(slot_ms).unwrap();
        s.incr(&h(item), 1);
    };
    let (mut a, mut b) = (windowed(100, 3, window), windowed(100, 3, window));
    at(&mut a, t0, "old");
    at(&mut a, t0 + 3_000, "a");
    at(&mut b, t0 + 2_000, "b");
    let dest = windowed(100, 3, window);
    let now = t0 + 5_500;
    let merged = merge(&dest, &[(&a, 1), (&b, 2)], now).unwrap();
    let mut d = dest.clone();
    d.apply(merged).unwrap();
    assert_eq!(d.ring().unwrap().head_ms(), d.ring().unwrap().slot_of(now));
    assert_eq!(d.query(&h("a"), now).value, 1);
    assert_eq!(d.query(&h("b"), now).value, 2);
    assert_eq!(
        d.query(&h("old"), now).value,
        0,
        "out of the window at the merge"
    );
    assert_eq!(d.count(now), 3);
    // The same merge later finds b's slot gone too.
    let later = t0 + 2_000 + 5 * 1_000;
    let mut d2 = dest.clone();
    d2.apply(merge(&dest, &[(&a, 1), (&b, 2)], later).unwrap())
        .unwrap();
    assert_eq!(d2.query(&h("b"), later).value, 0);
    assert_eq!(d2.query(&h("a"), later).value, 1);
}

#[test]
fn stored_sketches_are_checked() {
    let s = plain(10, 3);
    let back = CountMin::from_stored(s.dims(), None, s.counts(), s.cells().to_vec()).unwrap();
    assert_eq!(back, s);
    assert!(CountMin::from_stored(dims(10, 3), None, &[0], vec![0; 29]).is_err());
    assert!(CountMin::from_stored(dims(10, 3), None, &[0, 0], vec![0; 30]).is_err());
    assert!(CountMin::from_stored(dims(0, 3), None, &[0], vec![]).is_err());
    let w = windowed(10, 3, 1000);
    let back =
        CountMin::from_stored(w.dims(), Some((1000, 0)), w.counts(), w.cells().to_vec()).unwrap();
    assert_eq!(back, w);
    assert!(CountMin::from_stored(dims(10, 3), Some((1000, 1)), &[0; RING], vec![0; 150]).is_err());
    assert!(CountMin::from_stored(dims(10, 3), Some((10, 0)), &[0; RING], vec![0; 150]).is_err());
    let mut l = plain(10, 3);
    l.load_chunk(0, 9, 28, &[5, 6]).unwrap();
    assert_eq!(&l.cells()[28..], &[5, 6]);
    assert_eq!(l.count(0), 9);
    assert!(l.load_chunk(0, 9, 29, &[5, 6]).is_err());
    assert!(l.load_chunk(1, 9, 0, &[5]).is_err());
    assert!(l.load_chunk(0, MAX_COUNT + 1, 0, &[5]).is_err());
    assert!(CountMin::from_stored(dims(1, 1), None, &[MAX_COUNT + 1], vec![0]).is_err());
}
