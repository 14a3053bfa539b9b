use std::collections::HashMap;

use super::errors::{self, BUCKET_SIZE, EXPANSION, MAX_CAPACITY, MAX_ITERATIONS};
use super::filter::*;
use crate::common::error::WardenError;
use crate::common::test_rng::Rng;

impl KickRng for Rng {
    fn next_u64(&mut self) -> u64 {
        Rng::next_u64(self)
    }
}

fn params(capacity: u64, bucket_size: u32, max_iterations: u32, expansion: u32) -> CuckooParams {
    CuckooParams {
        capacity,
        bucket_size,
        max_iterations,
        expansion,
    }
}

fn item(i: u64) -> CuckooHash {
    ItemHash::NEWEST.of(format!("item-{i}").as_bytes())
}

fn add(f: &mut CuckooFilter, h: CuckooHash, rng: &mut Rng) -> Result<Inserted, WardenError> {
    f.insert(h, rng, u64::MAX, &mut Touched::default())
}

/// Applies the final values of the slots `touched` names to `replica`,
/// growing it first, as a replica applies `CF._PLACEX`.
fn replay(replica: &mut CuckooFilter, master: &CuckooFilter, touched: &Touched) {
    let writes: Vec<_> = touched
        .slots()
        .map(|(sub, slot)| (sub, slot, u64::from(master.slot(sub, slot))))
        .collect();
    replica
        .place_all(master.filters().len(), &writes, u64::MAX)
        .unwrap();
}

/// A `CF._PLACEX` effect's (sub-filter, slot, value) writes.
type Writes = Vec<(usize, u64, u64)>;

#[test]
fn a_bad_effect_changes_nothing() {
    let mut rng = Rng(4);
    let mut f = CuckooFilter::new(params(100, 2, 20, 2), u64::MAX).unwrap();
    for i in 0..50 {
        add(&mut f, item(i), &mut rng).unwrap();
    }
    let before = f.clone();
    let m1 = f.buckets_of(1).unwrap();
    let cases: [(usize, Writes); 5] = [
        (0, vec![]),
        (2, vec![(1, m1 * 2, 1)]),
        (2, vec![(2, 0, 1)]),
        (2, vec![(0, 0, 1 << 9)]),
        (MAX_FILTERS + 1, vec![]),
    ];
    for (filters, writes) in cases {
        assert_eq!(
            f.place_all(filters, &writes, u64::MAX),
            Err(WardenError::BadFilterData)
        );
        assert_eq!(f, before);
    }
    assert_eq!(f.place_all(3, &[], 64), Err(errors::TOO_LARGE));
    assert_eq!(f, before);
    f.place_all(2, &[(1, m1 * 2 - 1, 5)], u64::MAX).unwrap();
    assert_eq!((f.filters().len(), f.items()), (2, 51));
}

#[test]
fn no_false_negatives_under_random_adds_and_deletes() {
    for seed in 1..=24u64 {
        let mut rng = Rng(seed * 7919);
        let b = [1, 2, 3, 4, 8][(seed % 5) as usize];
        let expansion = [1, 2, 3][(seed % 3) as usize];
        let max_iterations = [1, 5, 20, 500][(seed % 4) as usize];
        // Both hashes: filters made before hash kinds keep murmur3.
        let kind = [ItemHash::Murmur3, ItemHash::Xxh3][(seed % 2) as usize];
        let item = |i: u64| kind.of(format!("item-{i}").as_bytes());
        let mut f = CuckooFilter::new(params(64, b, max_iterations, expansion), u64::MAX)
            .unwrap()
            .with_item_hash(kind);
        // The multiset of items added and not deleted.
        let mut held: HashMap<u64, u64> = HashMap::new();
        let mut deleted_total = 0;
        for _ in 0..3000 {
            let pick = rng.below(100);
            if pick < 60 || held.is_empty() {
                let i = rng.below(400);
                match add(&mut f, item(i), &mut rng) {
                    Ok(Inserted::Added) => *held.entry(i).or_default() += 1,
                    Ok(Inserted::Exists) => unreachable!("insert never answers Exists"),
                    // Many copies of one item fill its buckets in every sub-filter.
                    Err(errors::MAX_EXPANSIONS | errors::TOO_LARGE) => {}
                    Err(e) => panic!("seed {seed}: {e}"),
                }
            } else if pick < 95 {
                let keys: Vec<u64> = held.keys().copied().collect();
                let i = keys[rng.below(keys.len() as u64) as usize];
                assert!(f.delete(item(i)), "seed {seed}: a held item deletes");
                deleted_total += 1;
                let n = held.get_mut(&i).unwrap();
                *n -= 1;
                if *n == 0 {
                    held.remove(&i);
                }
            } else {
                f.compact();
            }
            for (&i, &n) in &held {
                assert!(f.contains(item(i)), "seed {seed}: item {i} lost");
                assert!(f.count(item(i)) >= n, "seed {seed}: item {i} count");
            }
            assert_eq!(f.items(), held.values().sum::<u64>());
        }
        assert!(deleted_total > 0);
        let stored = f.filters().to_vec();
        let again = CuckooFilter::from_stored(
            f.params(),
            f.fingerprint_bits(),
            (f.items(), f.deletes()),
            stored,
            (None, kind),
        );
        assert_eq!(again.as_ref(), Ok(&f), "seed {seed}: its parts rebuild it");
    }
}

#[test]
fn a_failed_insert_changes_nothing() {
    let mut rng = Rng(99);
    for b in [1, 2, 4] {
        let mut f = CuckooFilter::new(params(2 * u64::from(b), b, 20, 0), u64::MAX).unwrap();
        let mut failures = 0;
        for i in 0..500 {
            let before = f.clone();
            match add(&mut f, item(i), &mut rng) {
                Ok(_) => {}
                Err(e) => {
                    assert_eq!(e, errors::FULL);
                    assert_eq!(f, before, "b={b}: a refused insert is undone");
                    failures += 1;
                }
            }
        }
        assert!(failures > 0, "b={b}: a filter that cannot grow fills");
        assert_eq!(f.filters().len(), 1);
    }
}

#[test]
fn replaying_the_touched_slots_rebuilds_the_same_filter() {
    for (seed, b) in [(3u64, 1u32), (5, 2), (11, 4)] {
        let mut rng = Rng(seed);
        let mut master = CuckooFilter::new(params(100, b, 50, 2), u64::MAX).unwrap();
        let mut replica = master.clone();
        let mut random_writes = 0;
        for i in 0..2000 {
            let mut touched = Touched::default();
            master
                .insert(item(i), &mut rng, u64::MAX, &mut touched)
                .unwrap();
            random_writes += u32::from(touched.random);
            replay(&mut replica, &master, &touched);
            assert_eq!(replica, master, "b={b} item {i}");
        }
        assert!(random_writes > 0, "b={b}: some inserts kicked");
        assert!(master.filters().len() > 1, "b={b}: and grew");
    }
}

#[test]
fn an_insert_without_a_walk_is_marked_replayable() {
    let mut rng = Rng(1);
    let mut f = CuckooFilter::new(params(1000, 4, 500, 1), u64::MAX).unwrap();
    let mut touched = Touched::default();
    f.insert(item(1), &mut rng, u64::MAX, &mut touched).unwrap();
    assert!(!touched.random);
    assert_eq!(touched.slots().count(), 1);
}

#[test]
fn filled_to_capacity_it_stays_one_sub_filter_below_redisbloom_memory_and_rate() {
    // RedisBloom 2.8.2 measured on this machine (CF.RESERVE key 100000
    // BUCKETSIZE b, filled with 100000 items): MEMORY USAGE and FP rate.
    let redisbloom = [
        (1u32, 262_256u64, 0.581),
        (2, 262_256, 1.205),
        (4, 131_168, 2.359),
    ];
    for (b, rb_bytes, rb_rate) in redisbloom {
        let cap = 100_000;
        let mut rng = Rng(42);
        let mut f = CuckooFilter::new(params(cap, b, 500, 1), u64::MAX).unwrap();
        for i in 0..cap {
            add(&mut f, item(i), &mut rng).unwrap();
        }
        assert_eq!(f.filters().len(), 1, "b={b}: capacity fits the first table");
        let probes = 200_000;
        let hits = (0..probes).filter(|i| f.contains(item(cap + i))).count();
        let rate = hits as f64 * 100.0 / probes as f64;
        assert!(rate < rb_rate, "b={b}: rate {rate}% vs {rb_rate}%");
        if b > 1 {
            assert!(
                f.size() < rb_bytes,
                "b={b}: {} bytes vs {rb_bytes}",
                f.size()
            );
        }
    }
}

#[test]
fn compact_moves_items_down_and_drops_emptied_sub_filters() {
    for expansion in [1, 2] {
        let mut rng = Rng(17);
        let mut f = CuckooFilter::new(params(100, 2, 50, expansion), u64::MAX).unwrap();
        for i in 0..600 {
            add(&mut f, item(i), &mut rng).unwrap();
        }
        let grown = f.filters().len();
        assert!(grown > 2);
        for i in 0..560 {
            assert!(f.delete(item(i)));
        }
        assert_eq!(f.deletes(), 560);
        f.compact();
        assert!(
            f.filters().len() < grown,
            "expansion {expansion}: sub-filters dropped"
        );
        assert_eq!(f.deletes(), 0);
        assert_eq!(f.items(), 40);
        for i in 560..600 {
            assert!(f.contains(item(i)), "expansion {expansion}: item {i} kept");
        }
        let parts = f.filters().to_vec();
        assert!(CuckooFilter::from_parts(f.params(), f.fingerprint_bits(), (40, 0), parts).is_ok());
    }
}

#[test]
fn count_and_delete_follow_copies() {
    let mut rng = Rng(5);
    let mut f = CuckooFilter::new(params(1000, 2, 500, 1), u64::MAX).unwrap();
    let k = ItemHash::NEWEST.of(b"k1");
    assert_eq!(f.count(k), 0);
    assert!(!f.delete(k), "nothing to delete");
    add(&mut f, k, &mut rng).unwrap();
    add(&mut f, k, &mut rng).unwrap();
    assert_eq!(f.count(k), 2);
    assert_eq!(
        f.insert_unique(k, &mut rng, u64::MAX, &mut Touched::default()),
        Ok(Inserted::Exists)
    );
    assert!(f.delete(k));
    assert_eq!(f.count(k), 1);
    assert!(f.delete(k));
    assert!(!f.contains(k));
    assert!(!f.delete(k));
    assert_eq!((f.items(), f.deletes()), (0, 2));
}

#[test]
fn parameters_out_of_range_are_named() {
    let ok = params(1000, 2, 20, 1);
    assert_eq!(ok.validate(), Ok(()));
    let cases = [
        (params(1000, 0, 20, 1), BUCKET_SIZE.error()),
        (params(1000, 256, 20, 1), BUCKET_SIZE.error()),
        (params(1000, 2, 0, 1), MAX_ITERATIONS.error()),
        (params(1000, 2, 65_536, 1), MAX_ITERATIONS.error()),
        (params(1000, 2, 20, 32_769), EXPANSION.error()),
        (params(3, 2, 20, 1), errors::bad_capacity()),
        (params((1 << 30) + 1, 2, 20, 1), errors::bad_capacity()),
    ];
    for (p, e) in cases {
        assert_eq!(p.validate(), Err(e), "{p:?}");
    }
    assert!(params(4, 2, 1, 0).validate().is_ok());
    assert!(params(1 << 30, 255, 65_535, 32_768).validate().is_ok());
}

#[test]
fn growth_stops_at_the_size_cap_and_at_max_filters() {
    let mut rng = Rng(8);
    let p = params(4, 1, 1, 1);
    let one = CuckooFilter::new(p, u64::MAX).unwrap().size();
    let mut f = CuckooFilter::new(p, one + 64).unwrap();
    let mut capped = false;
    for i in 0..200 {
        capped |= f.insert(item(i), &mut rng, one + 64, &mut Touched::default())
            == Err(errors::TOO_LARGE);
    }
    assert!(capped, "growth past the cap is refused");
    assert!(f.size() <= one + 64 + 64);
    let mut g = CuckooFilter::new(p, u64::MAX).unwrap();
    for i in 0..10_000 {
        let _ = add(&mut g, item(i % 3), &mut rng);
    }
    assert_eq!(g.filters().len(), MAX_FILTERS);
    assert_eq!(add(&mut g, item(0), &mut rng), Err(errors::MAX_EXPANSIONS));
    // Largest expansion: the next tables are refused by the cap, and their
    // sizes overflow soon after.
    let mut h = CuckooFilter::new(params(1 << 20, 255, 1, 32_768), 1 << 30).unwrap();
    assert_eq!(h.grow(1 << 30), Err(errors::TOO_LARGE));
    assert!(h.buckets_of(1).is_some());
    assert_eq!(h.buckets_of(5), None);
    assert!(CuckooFilter::new(params(1 << 30, 4, 1, 1), 1 << 20) == Err(errors::TOO_LARGE));
}

#[test]
fn stored_parts_are_checked() {
    let mut rng = Rng(3);
    let p = params(100, 2, 20, 2);
    let mut f = CuckooFilter::new(p, u64::MAX).unwrap();
    for i in 0..300 {
        add(&mut f, item(i), &mut rng).unwrap();
    }
    let fb = f.fingerprint_bits();
    let (items, deletes) = (f.items(), f.deletes());
    let subs = f.filters().to_vec();
    assert_eq!(
        CuckooFilter::from_parts(p, fb, (items, deletes), subs.clone()).as_ref(),
        Ok(&f)
    );
    let bad = |r: Result<CuckooFilter, WardenError>| assert_eq!(r, Err(WardenError::BadFilterData));
    bad(CuckooFilter::from_parts(
        p,
        fb,
        (items + 1, deletes),
        subs.clone(),
    ));
    bad(CuckooFilter::from_parts(
        p,
        0,
        (items, deletes),
        subs.clone(),
    ));
    bad(CuckooFilter::from_parts(
        p,
        33,
        (items, deletes),
        subs.clone(),
    ));
    bad(CuckooFilter::from_parts(p, fb, (0, 0), Vec::new()));
    // A delete count CF.INFOX could only show negative.
    let most = CuckooFilter::from_parts(p, fb, (items, MAX_DELETES), subs.clone());
    assert_eq!(most.map(|f| f.deletes()), Ok(MAX_DELETES));
    bad(CuckooFilter::from_parts(
        p,
        fb,
        (items, MAX_DELETES + 1),
        subs.clone(),
    ));
    let mut swapped = subs.clone();
    swapped.swap(0, 1);
    bad(CuckooFilter::from_parts(p, fb, (items, deletes), swapped));
    // A sub-filter's words: exactly as many as its slots need, tail zero.
    let b = p.bucket_size;
    let m = subs[0].buckets();
    let mut words = subs[0].words().to_vec();
    assert!(SubFilter::from_parts(m, b, fb, words.clone()).is_ok());
    *words.last_mut().unwrap() = 1;
    assert!(SubFilter::from_parts(m, b, fb, words.clone()).is_err());
    words.pop();
    assert!(SubFilter::from_parts(m, b, fb, words).is_err());
    assert!(SubFilter::from_parts(0, b, fb, vec![0]).is_err());
    assert!(SubFilter::from_parts(u64::MAX, b, fb, vec![0]).is_err());
}

#[test]
fn one_slot_fingerprints_widen_with_the_capacity() {
    let bits = |capacity, b| params(capacity, b, 500, 2).fingerprint_bits();
    assert_eq!(bits(2, 1), 11);
    assert_eq!(bits(1 << 19, 1), 11, "2¹⁹ items: 256 a value");
    assert_eq!(bits((1 << 19) + 1, 1), 12);
    assert_eq!(bits(1_000_000, 1), 12);
    assert_eq!(bits(10_000_000, 1), 16);
    assert_eq!(bits(MAX_CAPACITY, 1), 22);
    assert!(bits(MAX_CAPACITY, 1) <= MAX_FINGERPRINT_BITS);
    // Wider buckets keep their width at every capacity.
    assert_eq!(bits(MAX_CAPACITY, 2), 9);
    assert_eq!(bits(MAX_CAPACITY, 4), 9);
}

#[test]
fn a_full_pair_of_buckets_moves_one_fingerprint_before_it_walks() {
    // Two filters fed the same items with different generators stay equal
    // while no insert walks: moving one fingerprint is decided by the
    // filter's state alone, so a replica replaying the call decides the same.
    let p = params(120_000, 2, 500, 1);
    let mut a = CuckooFilter::new(p, u64::MAX).unwrap();
    let mut b = CuckooFilter::new(p, u64::MAX).unwrap();
    let (mut rng_a, mut rng_b) = (Rng(1), Rng(2));
    let (mut shifted, mut walked_from_half) = (0, 0);
    let mut diverged = false;
    for i in 0..80_000u64 {
        let (mut ta, mut tb) = (Touched::default(), Touched::default());
        a.insert(item(i), &mut rng_a, u64::MAX, &mut ta).unwrap();
        b.insert(item(i), &mut rng_b, u64::MAX, &mut tb).unwrap();
        if !ta.random && ta.slots().count() == 2 {
            shifted += 1;
        }
        if ta.random || tb.random {
            diverged = true;
            walked_from_half += u64::from(i >= 60_000 && ta.random);
        } else if !diverged {
            assert_eq!(a, b, "item {i}: no walk yet, so the same state");
        }
    }
    assert!(
        shifted > 1000,
        "inserts that moved one fingerprint: {shifted}"
    );
    // Measured: about 1 in 10 inserts from half to two thirds of the
    // capacity walk without the move, 1 in 230 with it.
    assert!(
        walked_from_half < 200,
        "walks from 60k to 80k items: {walked_from_half}"
    );
}

/// The add without a walk decides as `insert` does whenever `insert` needs
/// no walk, and refuses, changing nothing, exactly when it would walk.
#[test]
fn the_add_without_a_walk_is_insert_up_to_the_walk() {
    let mut rng = Rng(5);
    let mut f = CuckooFilter::new(params(64, 2, 500, 1), u64::MAX).unwrap();
    let (mut refused, mut moved) = (0, 0);
    for i in 0..200u64 {
        let before = f.clone();
        let mut by_insert = f.clone();
        let mut touched = Touched::default();
        by_insert
            .insert(item(i), &mut rng, u64::MAX, &mut touched)
            .unwrap();
        if f.insert_without_walk(item(i)) {
            assert!(!touched.random, "item {i}");
            assert_eq!(f, by_insert, "item {i}: the same slots as insert");
            moved += usize::from(touched.slots().count() == 2);
        } else {
            assert!(touched.random, "item {i}: refused only where insert walks");
            assert_eq!(f, before, "item {i}: refused, and nothing changed");
            refused += 1;
        }
        f = by_insert;
        assert!(f.contains(item(i)));
    }
    assert!(refused > 0 && moved > 0, "{refused} walks, {moved} moves");
    assert_eq!(f.items(), 200);
}
