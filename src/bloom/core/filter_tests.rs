//! Unit tests of `filter` (its `tests` module), kept apart so the code reads on its own.

use super::*;
use crate::bloom::core::errors;

const NO_CAP: u64 = u64::MAX;

fn filter(p: f64, capacity: u64, expansion: u32) -> BloomFilter {
    BloomFilter::new(
        BloomParams {
            error_rate: p,
            capacity,
            expansion,
        },
        NO_CAP,
    )
    .expect("filter")
}

fn item(i: u64) -> ItemHash {
    ItemHash::of(format!("item:{i}").as_bytes())
}

fn absent(i: u64) -> ItemHash {
    ItemHash::of(format!("absent:{i}").as_bytes())
}

#[test]
fn geometry_matches_theory() {
    let g = geometry(1_000_000, 0.01, Sizing::Nominal).expect("geometry");
    assert_eq!(g.bits % 64, 0);
    assert!(g.bits >= 9_585_059 && g.bits < 9_585_059 + 64, "{}", g.bits);
    assert_eq!(g.hashes, 7);
    let g = geometry(1_000_000, 0.005, Sizing::Nominal).expect("geometry");
    assert_eq!(g.bits / 8, 1_378_472, "RedisBloom's bit array for 0.005");
    assert_eq!(g.hashes, 8);
    let strict = geometry(1_000_000, 0.01, Sizing::Guaranteed).expect("geometry");
    assert!(
        strict.bits > 9_585_059 && strict.bits < 9_600_000,
        "{}",
        strict.bits
    );
    assert!(expected_fpr(strict.bits, strict.hashes, 1_000_000) <= 0.01);
}

#[test]
fn nonscaling_filters_take_any_error_rate() {
    for p in [
        0.999_999,
        1e-6,
        1.1e-20,
        1e-100,
        1e-300,
        f64::MIN_POSITIVE,
        4.9e-324,
    ] {
        let g = geometry(100, p, Sizing::Guaranteed).expect("sized");
        let nominal = geometry(100, p, Sizing::Nominal).expect("sized");
        assert!(
            g.bits >= nominal.bits && g.bits <= 2 * nominal.bits + 128,
            "{p}: {g:?}"
        );
        assert!(expected_fpr(g.bits, g.hashes, 100) <= p, "{p}: {g:?}");
        assert!((1..=MAX_HASHES).contains(&g.hashes), "{p}: {g:?}");
    }
    // RedisBloom gives about 18 KB to 100 items at 1e-300.
    let g = geometry(100, 1e-300, Sizing::Guaranteed).expect("sized");
    assert!(g.bits / 8 <= 20_000, "{g:?}");
}

#[test]
fn nonscaling_size_is_near_the_theoretical_bound() {
    let f = filter(0.01, 1_000_000, 0);
    assert!(f.size() as f64 <= 1.05 * 1_198_132.0, "{}", f.size());
}

#[test]
fn scaling_size_is_not_above_redisbloom() {
    let mut f = filter(0.01, 1_000_000, 2);
    for i in 0..1_000_000 {
        f.add(item(i), 0, NO_CAP).expect("add");
    }
    assert_eq!(f.layers().len(), 1);
    assert!(f.size() <= 1_378_568, "{}", f.size());
}

#[test]
fn guaranteed_sizing_keeps_the_expected_rate_at_or_below_p() {
    for p in [0.5, 0.1, 0.05, 0.01, 0.005, 0.001, 0.0001, 1e-6, 1e-12] {
        for n in [1, 7, 100, 12_345, 1_000_000, 50_000_000] {
            let nominal = geometry(n, p, Sizing::Nominal).expect("geometry");
            let g = geometry(n, p, Sizing::Guaranteed).expect("geometry");
            let fpr = expected_fpr(g.bits, g.hashes, n);
            assert!(fpr <= p, "p={p} n={n} fpr={fpr} k={}", g.hashes);
            // Whole hashes cost little over the continuous optimum.
            assert!(
                g.bits as f64 <= nominal.bits as f64 * 1.02 + 128.0,
                "p={p} n={n}"
            );
            // Nominal sizing stays within about 1% of the rate.
            let nominal_fpr = expected_fpr(nominal.bits, nominal.hashes, n);
            assert!(nominal_fpr <= p * 1.01, "p={p} n={n} fpr={nominal_fpr}");
        }
    }
}

#[test]
fn bad_parameters_are_refused() {
    for p in [0.0, 1.0, -0.1, 1.5, f64::NAN, f64::INFINITY] {
        assert_eq!(
            geometry(100, p, Sizing::Nominal),
            Err(errors::BAD_ERROR_RATE),
            "{p}"
        );
    }
    assert_eq!(
        geometry(0, 0.01, Sizing::Nominal),
        Err(WardenError::NotPositive("capacity"))
    );
    let huge = geometry(u64::MAX, 0.01, Sizing::Guaranteed);
    assert_eq!(huge, Err(errors::TOO_LARGE));
    let p = BloomParams {
        error_rate: 0.01,
        capacity: 10,
        expansion: errors::EXPANSION.max as u32 + 1,
    };
    assert_eq!(p.validate(), Err(errors::EXPANSION.error()));
}

#[test]
fn size_cap_is_checked_before_allocating() {
    let params = BloomParams {
        error_rate: 0.01,
        capacity: 100_000_000_000,
        expansion: 2,
    };
    assert_eq!(BloomFilter::new(params, 128 << 20), Err(errors::TOO_LARGE));
}

#[test]
fn no_false_negatives_and_measured_rate_within_target() {
    let mut f = filter(0.01, 100_000, 0);
    for i in 0..100_000 {
        f.add(item(i), 0, NO_CAP).expect("add");
    }
    assert!((0..100_000).all(|i| f.contains(item(i), 0)));
    let fp = (0..100_000).filter(|i| f.contains(absent(*i), 0)).count();
    // Expected about 1000 (1%); allow sampling noise of several sigma.
    assert!(fp < 1_150, "false positives: {fp}");
}

#[test]
fn scaling_filter_grows_and_keeps_compound_rate() {
    let mut f = filter(0.01, 1_000, 2);
    for i in 0..20_000 {
        f.add(item(i), 0, NO_CAP).expect("add");
    }
    assert!(f.layers().len() >= 4);
    for w in f.layers().windows(2) {
        assert_eq!(w[1].capacity(), w[0].capacity() * 2);
        assert!((w[1].error_rate() - w[0].error_rate() / 2.0).abs() < 1e-15);
    }
    assert!((0..20_000).all(|i| f.contains(item(i), 0)));
    let fp = (0..100_000).filter(|i| f.contains(absent(*i), 0)).count();
    assert!(fp <= 1_000, "false positives: {fp}");
    assert!(f.items(0) <= 20_000 && f.items(0) > 19_800);
}

#[test]
fn nonscaling_filter_full_changes_nothing() {
    let mut f = filter(0.01, 10, 0);
    let mut added = 0;
    let mut i = 0;
    while added < 10 {
        if f.add(item(i), 0, NO_CAP) == Ok(Added::New) {
            added += 1;
        }
        i += 1;
    }
    let before = f.clone();
    let newcomer = (i..)
        .map(item)
        .find(|h| !f.contains(*h, 0))
        .expect("an absent item");
    assert_eq!(f.add(newcomer, 0, NO_CAP), Err(errors::FULL));
    assert_eq!(f, before);
    // Present items still answer 0, not an error.
    assert_eq!(f.add(item(0), 0, NO_CAP), Ok(Added::Present));
}

#[test]
fn growth_past_the_cap_is_refused_and_changes_nothing() {
    let params = BloomParams {
        error_rate: 0.01,
        capacity: 100,
        expansion: 2,
    };
    let cap = BloomFilter::new(params, NO_CAP).expect("filter").size() + 100;
    let mut f = BloomFilter::new(params, cap).expect("filter fits");
    let mut i = 0;
    let err = loop {
        match f.add(item(i), 0, cap) {
            Ok(_) => i += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(err, errors::TOO_LARGE);
    assert_eq!(f.layers().len(), 1);
}

#[test]
fn stored_layers_are_validated() {
    let f = filter(0.01, 100, 2);
    let l = &f.layers()[0];
    let (cap, rate, k) = (l.capacity(), l.error_rate(), l.hashes());
    let words = || l.words().to_vec();
    assert!(Layer::from_parts(Hashing::Warden, cap, rate, k, 0, words()).is_ok());
    let bad = Err(WardenError::BadFilterData);
    assert_eq!(
        Layer::from_parts(Hashing::Warden, cap, rate, 0, 0, words()),
        bad
    );
    assert_eq!(
        Layer::from_parts(Hashing::Warden, cap, rate, MAX_HASHES + 1, 0, words()),
        bad
    );
    assert_eq!(
        Layer::from_parts(Hashing::Warden, cap, rate, k, 0, vec![]),
        bad
    );
    assert_eq!(
        Layer::from_parts(Hashing::Warden, cap, 1.5, k, 0, words()),
        bad
    );
    assert_eq!(
        Layer::from_parts(Hashing::Warden, 0, rate, k, 0, words()),
        bad
    );
    assert_eq!(
        Layer::from_parts(Hashing::Warden, 100, rate, k, 101, words()),
        bad
    );
    assert_eq!(
        Layer::zeroed(Hashing::Warden, (cap, rate, k, 0), 100, u64::MAX),
        bad,
        "not whole words"
    );
    let huge = Layer::zeroed(Hashing::Warden, (cap, rate, k, 0), 1 << 40, 1 << 20);
    assert_eq!(huge, Err(errors::TOO_LARGE), "checked before allocating");
    let empty = BloomFilter::from_parts(Hashing::Warden, 0.01, 0, vec![], None);
    assert_eq!(empty, Err(WardenError::BadFilterData));
}

#[test]
fn stored_filter_fields_are_checked_before_the_layers() {
    let bad = Err(WardenError::BadFilterData);
    assert_eq!(
        BloomFilter::check_parts(Hashing::Warden, 0.01, 2, (3, false)),
        Ok((2, 3))
    );
    assert_eq!(
        BloomFilter::check_parts(Hashing::Warden, 0.01, 0, (1, false)),
        Ok((0, 1))
    );
    assert_eq!(
        BloomFilter::check_parts(
            Hashing::Warden,
            0.01,
            errors::EXPANSION.max,
            (MAX_LAYERS as u64, false)
        ),
        Ok((errors::EXPANSION.max as u32, MAX_LAYERS))
    );
    for (rate, expansion, count) in [
        (0.01, 2, 0),
        (0.01, 2, MAX_LAYERS as u64 + 1),
        (0.01, 2, u64::MAX),
        (0.01, errors::EXPANSION.max + 1, 1),
        (0.01, u64::from(u32::MAX) + 2, 1),
        (0.01, 0, 2),
        (0.0, 2, 1),
        (1.0, 2, 1),
        (f64::NAN, 2, 1),
        (-0.5, 2, 1),
    ] {
        assert_eq!(
            BloomFilter::check_parts(Hashing::Warden, rate, expansion, (count, false)),
            bad,
            "{rate} {expansion} {count}"
        );
    }
    let f = filter(0.01, 100, 3);
    let (hashing, rate, expansion, layers, _) = f.clone().into_parts();
    assert_eq!(
        BloomFilter::from_parts(hashing, rate, u64::from(expansion), layers, None),
        Ok(f)
    );
}

#[test]
fn a_relocated_filter_keeps_its_items_and_resumes_by_layer() {
    use crate::common::relocate::tests::TestMover;
    let mut f = filter(0.01, 10, 2);
    for i in 0..200 {
        f.add(item(i), 0, NO_CAP).expect("add");
    }
    let layers = f.layers().len();
    assert!(layers > 3, "{layers} layers");
    let before = f.clone();
    // Stopped after every move past the first two: one layer per step.
    let mut m = TestMover {
        budget: 2,
        ..TestMover::default()
    };
    let mut from = 0;
    let mut steps = 0;
    while let Some(next) = f.relocate(from, &mut m) {
        assert!(next > from || from == 0);
        from = next;
        steps += 1;
        m.budget = m.moved + 1;
    }
    assert!(steps >= layers - 2, "{steps} steps for {layers} layers");
    assert_eq!(m.moved, 1 + layers, "the layer table and every bit array");
    assert_eq!(f, before);
    assert!((0..200).all(|i| f.contains(item(i), 0)));
}

fn redisbloom_filter(p: f64, capacity: u64, expansion: u32) -> BloomFilter {
    let params = BloomParams {
        error_rate: p,
        capacity,
        expansion,
    };
    BloomFilter::new_with(Hashing::RedisBloom, params, NO_CAP).expect("filter")
}

fn rb_item(i: u64) -> ItemHash {
    ItemHash::redisbloom(format!("item:{i}").as_bytes())
}

/// A filter with RedisBloom's hashing finds every item added, grows as
/// RedisBloom's does (capacity × expansion, rate halved, RedisBloom's sizes)
/// and keeps about its false-positive rate.
#[test]
fn redisbloom_hashing_finds_every_item_and_grows_as_redisbloom() {
    for (p, capacity, expansion, n) in [
        (0.01, 100, 2, 1_500),
        (0.001, 50, 4, 3_000),
        (0.1, 10, 1, 200),
        (0.01, 1_000, 0, 1_000),
        (0.5, 1, 3, 100),
    ] {
        let mut f = redisbloom_filter(p, capacity, expansion);
        assert_eq!(f.hashing(), Hashing::RedisBloom);
        for i in 0..n {
            f.add(rb_item(i), 0, NO_CAP).expect("add");
        }
        assert!((0..n).all(|i| f.contains(rb_item(i), 0)), "{p} {capacity}");
        let first = if expansion == 0 { p } else { p / 2.0 };
        let mut cap = capacity;
        let mut rate = first;
        for l in f.layers() {
            let g = redisbloom_geometry(cap, rate).expect("geometry");
            assert_eq!((l.capacity(), l.error_rate()), (cap, rate));
            assert_eq!((l.bytes() * 8, l.hashes()), (g.bits, g.hashes));
            cap *= u64::from(expansion);
            rate /= 2.0;
        }
        let fp = (0..20_000)
            .filter(|i| f.contains(ItemHash::redisbloom(format!("absent:{i}").as_bytes()), 0))
            .count();
        assert!((fp as f64) < 20_000.0 * p * 1.5 + 10.0, "{p}: {fp}");
    }
    // The two hashings place an item's bits differently.
    let mut native = filter(0.01, 100, 2);
    native.add(item(1), 0, NO_CAP).expect("add");
    let mut rb = redisbloom_filter(0.01, 100, 2);
    rb.add(rb_item(1), 0, NO_CAP).expect("add");
    assert_ne!(native.layers()[0].words(), rb.layers()[0].words());
    assert_eq!(rb.hash(b"item:1"), rb_item(1));
    assert_eq!(native.hash(b"item:1"), item(1));
}

#[test]
fn stored_layers_are_checked_by_their_hashing() {
    let f = redisbloom_filter(0.01, 100, 2);
    let l = &f.layers()[0];
    let words = || l.words().to_vec();
    let (cap, rate, k) = (l.capacity(), l.error_rate(), l.hashes());
    assert!(Layer::from_parts(Hashing::RedisBloom, cap, rate, k, 0, words()).is_ok());
    let bad = Err(WardenError::BadFilterData);
    let longer = [l.words(), &[0; 2]].concat();
    assert_eq!(
        Layer::from_parts(Hashing::RedisBloom, cap, rate, k, 0, longer),
        bad
    );
    // An aging filter never has RedisBloom's hashing.
    assert_eq!(
        BloomFilter::check_parts(Hashing::RedisBloom, 0.01, 0, (0, true)),
        Err(WardenError::BadFilterData)
    );
    let (hashing, rate, expansion, layers, _) = f.clone().into_parts();
    assert_eq!(hashing, Hashing::RedisBloom);
    let back = BloomFilter::from_parts(hashing, rate, u64::from(expansion), layers, None);
    assert_eq!(back, Ok(f));
}

#[test]
fn the_filter_is_no_larger_with_its_hashing() {
    assert_eq!(std::mem::size_of::<BloomFilter>(), 40);
}

#[test]
fn redisbloom_layers_are_sized_and_checked_as_redisbloom_sizes_them() {
    // BF.INFO sizes RedisBloom reports (1M at 0.005: 1,378,472 bytes, 8 hashes).
    let g = redisbloom_geometry(1_000_000, 0.005).expect("geometry");
    assert_eq!((g.bits / 8, g.hashes), (1_378_472, 8));
    assert_eq!(redisbloom_geometry(1, 0.9).expect("geometry").bits, 64);
    assert_eq!(
        redisbloom_geometry(0, 0.01),
        Err(WardenError::NotPositive("capacity"))
    );
    assert_eq!(redisbloom_geometry(1 << 62, 1e-300), Err(errors::TOO_LARGE));
    let check =
        |c, p, k, items, bits| Layer::check_header(Hashing::RedisBloom, c, p, k, items, bits);
    assert_eq!(check(100, 0.005, 8, 0, 1152), Ok(()));
    assert_eq!(check(100, 0.01, 7, 100, 960), Ok(()));
    let bad = Err(WardenError::BadFilterData);
    assert_eq!(check(100, 0.01, 7, 101, 960), bad, "items");
    assert_eq!(check(100, 0.01, 9, 0, 960), bad, "hashes");
    assert_eq!(check(100, 0.01, 7, 0, 960 + 128), bad, "too large");
    assert_eq!(check(100, 0.01, 7, 0, 960 - 128), bad, "truncated");
    assert_eq!(check(100, 0.01, 7, 0, 961), bad, "part word");
    assert_eq!(check(1 << 40, 0.01, 7, 0, 64), bad);
    assert_eq!(check(0, 0.01, 7, 0, 64), bad);
}
