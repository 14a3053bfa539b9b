//! Unit tests of `heavy_keeper` (its `tests` module): RedisBloom's replies,
//! the heap, decay, determinism, recall on a Zipf stream and windows on a
//! manual clock.

use std::collections::HashMap;

use super::*;
use crate::common::sketch::SUB_WINDOWS;
use crate::common::test_rng::Rng;

const BIG: u64 = 1 << 30;

fn params(k: u32, width: u32, depth: u32, decay: f64) -> Params {
    Params {
        k,
        width,
        depth,
        decay,
    }
}

fn topk(k: u32, width: u32, depth: u32, decay: f64) -> TopK {
    TopK::new(params(k, width, depth, decay), None, 7, BIG).unwrap()
}

fn names(list: &[(&[u8], u64)]) -> Vec<String> {
    list.iter()
        .map(|(i, _)| String::from_utf8_lossy(i).into_owned())
        .collect()
}

fn add_all(t: &mut TopK, items: &[&str]) -> Vec<Option<String>> {
    items
        .iter()
        .map(|i| {
            t.add(i.as_bytes(), 1)
                .map(|e| String::from_utf8_lossy(&e).into_owned())
        })
        .collect()
}

/// A Zipf stream over `n` items (weight 1 / rank^s).
fn zipf(rng: &mut Rng, n: usize, s: f64, draws: usize) -> Vec<usize> {
    let weights: Vec<f64> = (1..=n).map(|i| 1.0 / (i as f64).powf(s)).collect();
    let total: f64 = weights.iter().sum();
    let mut cumulative = Vec::with_capacity(n);
    let mut acc = 0.0;
    for w in &weights {
        acc += w / total;
        cumulative.push(acc);
    }
    (0..draws)
        .map(|_| {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            cumulative.partition_point(|c| *c < u).min(n - 1)
        })
        .collect()
}

#[test]
fn parameters_and_sizes_are_checked() {
    assert!(Params::check_decay(1.0).is_ok());
    for d in [0.0, -0.1, 1.0000001, 42.0, f64::NAN] {
        assert_eq!(
            Params::check_decay(d).unwrap_err().to_string(),
            "ERR TopK: invalid decay value. must be '<= 1' & '> 0'"
        );
    }
    assert_eq!(
        bad_param("k").to_string(),
        "ERR TopK: invalid k (an integer from 1 to 4294967295)"
    );
    let e = TopK::new(params(3, 2_000_000_000, 200_000_000, 1.0), None, 1, BIG).unwrap_err();
    assert!(e
        .to_string()
        .contains("Insufficient memory to create topk data structure"));
    let t = topk(10, 50, 5, 0.9);
    // A header, 8 bytes a bucket and 24 an entry: far below RedisBloom's 2 KiB table.
    assert_eq!(
        t.size(),
        std::mem::size_of::<TopK>() as u64 + 8 * 250 + 24 * 10
    );
    assert!(std::mem::size_of::<TopK>() <= 128);
    let w = TopK::new(params(10, 50, 5, 0.9), Some(1000), 1, BIG).unwrap();
    assert!(w.size() <= (SUB_WINDOWS + 1) * t.size());
}

/// RedisBloom's own flow tests (`test_add_query_count`, `test_incrby`,
/// `test_list_info`, `test_empty_string`), on sketches wide enough that
/// their few items never share a bucket.
#[test]
fn replies_are_redisbloom_s() {
    let mut t = topk(20, 50, 5, 0.9);
    assert_eq!(add_all(&mut t, &["bar", "baz", "42"]), [None, None, None]);
    assert!(t.query(b"bar", 0) && !t.query(b"foo", 0));
    assert_eq!(t.count(b"bar", 0), 1);
    assert_eq!(t.count(b"foo", 0), 0);
    add_all(&mut t, &["bar", "baz"]);
    let c: Vec<u64> = ["foo", "bar", "baz", "42"]
        .iter()
        .map(|i| t.count(i.as_bytes(), 0))
        .collect();
    assert_eq!(c, [0, 2, 2, 1]);

    let mut t = topk(3, 1000, 3, 1.0);
    assert_eq!(t.add(b"bar", 3), None);
    assert_eq!(t.add(b"baz", 6), None);
    assert_eq!(t.add(b"42", 2), None);
    assert_eq!(t.add(b"42", 8), None);
    assert_eq!(t.add(b"xyzzy", 4).as_deref(), Some(&b"bar"[..]));
    let c: Vec<u64> = ["bar", "baz", "42", "xyzzy", "4"]
        .iter()
        .map(|i| t.count(i.as_bytes(), 0))
        .collect();
    assert_eq!(c, [3, 6, 10, 4, 0]);

    let mut t = topk(2, 1000, 5, 0.9);
    add_all(&mut t, &["foo", "bar", "baz", "42", "foo", "bar", "baz"]);
    add_all(&mut t, &["foo", "baz", "42", "foo", "baz"]);
    add_all(&mut t, &["foo", "bar", "baz", "foo", "baz"]);
    assert_eq!(names(&t.list(0)), ["foo", "baz"]);
    let out = add_all(&mut t, &["bar", "bar", "bar", "bar", "bar"]);
    assert_eq!(out, [None, None, Some("foo".into()), None, None]);
    assert_eq!(names(&t.list(0)), ["bar", "baz"]);

    let mut t = topk(3, 1000, 7, 0.9);
    t.add(b"", 1);
    assert_eq!(t.list(0), [(&b""[..], 1)]);
    t.add(b"", 100);
    assert_eq!(t.count(b"", 0), 101);
    for items in [
        &["foo", "bar", "baz"][..],
        &["foo", "bar", "baz", ""],
        &["foo", "bar", ""],
        &["foo", ""],
    ] {
        add_all(&mut t, items);
    }
    let list: Vec<(String, u64)> = t
        .list(0)
        .iter()
        .map(|(i, c)| (String::from_utf8_lossy(i).into_owned(), *c))
        .collect();
    assert_eq!(
        list,
        [("".into(), 104), ("foo".into(), 4), ("bar".into(), 3)]
    );
}

/// A bucket held by another item decays: with decay 1 every unit takes one
/// from it, and the new item takes the bucket over with the units left.
#[test]
fn a_held_bucket_decays_and_is_taken_over() {
    let mut t = topk(1, 1, 1, 1.0);
    t.add(b"a", 5);
    assert_eq!(t.count(b"a", 0), 5);
    assert_eq!(t.add(b"b", 3), None, "b counts 0 there: not in the heap");
    assert_eq!(t.buckets()[0].count, 2);
    // Two units take the bucket to 0; b takes it over with the units left
    // counting the second (RedisBloom's), 4: still below a's 5 in the heap.
    assert_eq!(t.add(b"b", 5), None);
    let fp = RowHash::of(b"b").fingerprint();
    assert_eq!(t.buckets()[0], Bucket { fp, count: 4 });
    assert_eq!(t.add(b"b", 1).as_deref(), Some(&b"a"[..]));
    assert_eq!(t.list(0), [(&b"b"[..], 5)]);
    // A count past where decay^count is below 2^-53 no longer decays.
    let mut t = topk(1, 1, 1, 0.5);
    t.add(b"a", 60);
    t.add(b"b", 100_000);
    assert_eq!(t.buckets()[0].count, 60);
    assert_eq!(decay_chance(0.5, 3), 0.125);
    assert_eq!(decay_chance(0.9, 0), 1.0);
}

/// The same calls on two copies of a value give the same value (what
/// replication and AOF replay rely on); another seed decays otherwise.
#[test]
fn adds_are_deterministic() {
    let mut rng = Rng(3);
    let stream: Vec<usize> = zipf(&mut rng, 500, 1.0, 20_000);
    let mut a = TopK::new(params(10, 20, 3, 0.9), None, 99, BIG).unwrap();
    let mut b = a.clone();
    let mut c = TopK::new(params(10, 20, 3, 0.9), None, 100, BIG).unwrap();
    for i in &stream {
        let item = format!("k{i}");
        let (x, y) = (a.add(item.as_bytes(), 1), b.add(item.as_bytes(), 1));
        assert_eq!(x, y);
        c.add(item.as_bytes(), 1);
    }
    assert_eq!(a, b);
    assert_ne!(a.buckets(), c.buckets());
}

/// Property: whatever is added, the heap holds `k` slots and no item
/// twice, the list is sorted and never shows a count of 0, and the bytes
/// counted are the items'.
#[test]
fn the_heap_keeps_k_distinct_items() {
    let mut rng = Rng(11);
    for (k, width, depth, decay) in [
        (1, 1, 1, 0.9),
        (5, 3, 2, 0.5),
        (50, 8, 7, 0.9),
        (20, 100, 4, 1.0),
    ] {
        let mut t = topk(k, width, depth, decay);
        for _ in 0..5000 {
            let item = format!("i{}", rng.below(200));
            let by = if rng.below(10) == 0 {
                rng.below(50) as u32
            } else {
                1
            };
            t.add(item.as_bytes(), by);
            assert_eq!(t.slots().count(), k as usize);
        }
        let items: Vec<&[u8]> = t.slots().flat_map(|(_, i)| i).collect();
        let mut dedup = items.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), items.len());
        let list = t.list(0);
        assert!(list.windows(2).all(|w| w[0].1 >= w[1].1));
        assert!(list.iter().all(|(_, c)| *c > 0));
        let bytes: u64 = items.iter().map(|i| i.len() as u64).sum();
        assert_eq!(t.size(), bytes_for(t.params(), false).unwrap() + bytes);
    }
}

/// Recall on a Zipf stream: with RedisBloom's default-like sizes scaled to
/// k, the list holds nearly all of the true top k.
#[test]
fn recall_on_a_zipf_stream() {
    let mut rng = Rng(5);
    let (k, n) = (20usize, 10_000);
    let stream = zipf(&mut rng, n, 1.1, 200_000);
    let mut t = topk(k as u32, 200, 5, 0.9);
    let mut truth: HashMap<usize, u64> = HashMap::new();
    for i in &stream {
        t.add(format!("item:{i}").as_bytes(), 1);
        *truth.entry(*i).or_default() += 1;
    }
    let mut top: Vec<(usize, u64)> = truth.into_iter().collect();
    top.sort_by_key(|e| std::cmp::Reverse(e.1));
    let want: Vec<String> = top[..k].iter().map(|(i, _)| format!("item:{i}")).collect();
    let got = names(&t.list(0));
    let hits = want.iter().filter(|w| got.contains(w)).count();
    assert!(hits >= 18, "recall {hits}/{k}: {got:?}");
}

#[test]
fn a_window_lists_the_last_window_and_forgets_within_a_slot() {
    let window = 4_000;
    let slot = window / SUB_WINDOWS;
    let mut t = TopK::new(params(3, 100, 3, 0.9), Some(window), 5, BIG).unwrap();
    let t0 = 2_000_000_000_000u64;
    let add = |t: &mut TopK, at: u64, item: &str, by: u32| {
        let s = t.ring().unwrap().slot_of(at);
        t.rotate_to(s).unwrap();
        t.add(item.as_bytes(), by)
    };
    add(&mut t, t0, "old", 50);
    add(&mut t, t0 + slot, "a", 5);
    add(&mut t, t0 + 2 * slot, "a", 5);
    add(&mut t, t0 + 2 * slot, "b", 7);
    assert_eq!(names(&t.list(t0 + 2 * slot)), ["old", "a", "b"]);
    assert_eq!(t.count(b"a", t0 + 2 * slot), 10);
    // Reads never write: once the first slot is out, "old" is gone from the list.
    let first_out = t0 - t0 % slot + 5 * slot;
    assert_eq!(names(&t.list(first_out)), ["a", "b"]);
    assert!(!t.query(b"old", first_out) && t.query(b"a", first_out));
    assert_eq!(t.count(b"old", first_out), 0);
    // A write there moves the ring: "old" leaves the heap, its room is free.
    assert_eq!(add(&mut t, first_out, "c", 1), None);
    assert_eq!(t.slots().filter(|(_, i)| i.is_some()).count(), 3);
    assert!(t.slots().all(|(_, i)| i != Some(&b"old"[..])));
    assert_eq!(names(&t.list(first_out)), ["a", "b", "c"]);
    // A whole window later, nothing.
    let later = first_out + 6 * slot;
    assert!(t.list(later).is_empty());
    add(&mut t, later, "d", 2);
    assert_eq!(t.list(later), [(&b"d"[..], 2)]);
    assert!(topk(1, 1, 1, 0.9).rotate_to(0).is_err());
}

/// Recall over a window: the heavy items of the last window lead the list,
/// those of an earlier one are gone.
#[test]
fn a_window_follows_a_change_of_heavy_items() {
    let (window, k) = (60_000u64, 5usize);
    let mut t = TopK::new(params(k as u32, 100, 4, 0.9), Some(window), 9, BIG).unwrap();
    let mut rng = Rng(21);
    let t0 = 2_100_000_000_000u64;
    for (phase, prefix) in ["early", "late"].iter().enumerate() {
        let stream = zipf(&mut rng, 2000, 1.2, 50_000);
        for (j, i) in stream.iter().enumerate() {
            let at = t0 + phase as u64 * 2 * window + (j as u64 * window / 50_000);
            let s = t.ring().unwrap().slot_of(at);
            t.rotate_to(s).unwrap();
            t.add(format!("{prefix}:{i}").as_bytes(), 1);
        }
    }
    let now = t0 + 3 * window;
    let got = names(&t.list(now));
    assert!(got.iter().all(|g| g.starts_with("late:")), "{got:?}");
    let hits = (0..k)
        .filter(|i| got.contains(&format!("late:{i}")))
        .count();
    assert!(hits >= 4, "{got:?}");
}

#[test]
fn stored_values_are_checked() {
    let mut t = topk(4, 10, 2, 0.9);
    add_all(&mut t, &["a", "b", "b", "c"]);
    let slots: Vec<(u32, Option<Box<[u8]>>)> =
        t.slots().map(|(c, i)| (c, i.map(Box::from))).collect();
    assert_eq!(slots.iter().filter(|s| s.1.is_none()).count(), 1);
    let back = TopK::from_stored(
        t.params(),
        (None, t.rng()),
        t.buckets().to_vec(),
        slots.clone(),
    )
    .unwrap();
    assert_eq!(back, t);
    let p = t.params();
    let b = || t.buckets().to_vec();
    assert!(
        TopK::from_stored(p, (None, 0), b(), slots.clone()).is_err(),
        "rng 0"
    );
    assert!(TopK::from_stored(p, (None, 1), b()[1..].to_vec(), slots.clone()).is_err());
    let mut dup = slots.clone();
    let first = dup.iter().position(|s| s.1.is_some()).unwrap();
    let other = dup.iter().rposition(|s| s.1.is_some()).unwrap();
    dup[other].1 = dup[first].1.clone();
    assert!(
        TopK::from_stored(p, (None, 1), b(), dup).is_err(),
        "an item twice"
    );
    let mut counted_empty = slots.clone();
    let empty = counted_empty.iter().position(|s| s.1.is_none()).unwrap();
    counted_empty[empty].0 = 3;
    assert!(
        TopK::from_stored(p, (None, 1), b(), counted_empty).is_err(),
        "an empty slot's count"
    );
    let mut fewer = slots.clone();
    fewer.pop();
    assert!(
        TopK::from_stored(p, (None, 1), b(), fewer).is_err(),
        "not k slots"
    );
    let bad_decay = Params { decay: 2.0, ..p };
    assert!(TopK::from_stored(bad_decay, (None, 1), b(), slots.clone()).is_err());
    assert!(TopK::from_stored(p, (Some((1000, 3)), 1), b(), slots).is_err());
    let mut l = topk(2, 10, 2, 0.9);
    l.load_slot(0, 1, b"x").unwrap();
    assert!(l.load_slot(1, 2, b"x").is_err(), "x again");
    l.load_slot(1, 2, b"y").unwrap();
    assert!(l.load_slot(2, 3, b"z").is_err(), "past k");
    assert!(l.load_buckets(0, 19, &[Bucket::default(); 2]).is_err());
    assert!(l.load_buckets(1, 0, &[Bucket::default()]).is_err());
    l.load_buckets(0, 18, &[Bucket { fp: 1, count: 2 }; 2])
        .unwrap();
    assert_eq!(l.list(0), [(&b"y"[..], 2), (&b"x"[..], 1)]);
}
