use super::*;

fn drain(w: &mut LapseWatch, now: i64) -> Vec<(i32, Vec<u8>)> {
    std::iter::from_fn(|| w.pop_due(now))
        .map(|(db, k)| (db, k.to_vec()))
        .collect()
}

#[test]
fn keys_come_due_in_time_order_and_only_when_due() {
    let mut w = LapseWatch::default();
    w.watch(0, b"b", 300);
    w.watch(0, b"a", 100);
    w.watch(1, b"a", 200);
    assert_eq!(w.len(), 3);
    assert_eq!(w.next_due(), Some(100));
    assert_eq!(drain(&mut w, 99), vec![]);
    assert_eq!(
        drain(&mut w, 200),
        vec![(0, b"a".to_vec()), (1, b"a".to_vec())]
    );
    assert_eq!(w.next_due(), Some(300));
    assert_eq!(drain(&mut w, i64::MAX), vec![(0, b"b".to_vec())]);
    assert!(w.is_empty());
    assert_eq!(w.next_due(), None);
}

#[test]
fn a_key_has_one_entry_at_its_latest_time() {
    let mut w = LapseWatch::default();
    w.watch(0, b"k", 500);
    w.watch(0, b"k", 500);
    w.watch(0, b"k", 200);
    assert_eq!(w.len(), 1);
    assert_eq!(w.next_due(), Some(200));
    w.watch(0, b"k", 900);
    assert_eq!(w.len(), 1);
    assert_eq!(drain(&mut w, 800), vec![]);
    assert_eq!(drain(&mut w, 900), vec![(0, b"k".to_vec())]);
}

#[test]
fn forgotten_keys_and_databases_never_come_due() {
    let mut w = LapseWatch::default();
    w.watch(0, b"a", 10);
    w.watch(0, b"b", 20);
    w.watch(2, b"a", 30);
    w.watch(3, b"c", 40);
    w.forget(0, b"a");
    w.forget(0, b"missing");
    w.forget(9, b"a");
    w.forget_db(Some(2));
    assert_eq!(w.len(), 2);
    assert_eq!(
        drain(&mut w, 100),
        vec![(0, b"b".to_vec()), (3, b"c".to_vec())]
    );
    w.watch(1, b"x", 5);
    w.forget_db(None);
    assert!(w.is_empty());
    assert!(w.due_of.is_empty());
}

#[test]
fn swapped_databases_trade_their_watched_keys() {
    let mut w = LapseWatch::default();
    w.watch(0, b"a", 10);
    w.watch(1, b"a", 20);
    w.watch(2, b"c", 30);
    w.swap_dbs(0, 1);
    w.forget(1, b"a");
    assert_eq!(
        drain(&mut w, 100),
        vec![(0, b"a".to_vec()), (2, b"c".to_vec())]
    );
    w.watch(0, b"x", 5);
    w.swap_dbs(0, 3);
    w.swap_dbs(4, 4);
    assert_eq!(drain(&mut w, 100), vec![(3, b"x".to_vec())]);
    assert!(w.due_of.is_empty());
}

/// Random watches, forgets and pops against a plain map of key → time.
#[test]
fn the_schedule_matches_a_model_under_random_operations() {
    use crate::common::test_rng::Rng;
    let mut rng = Rng(7);
    let mut w = LapseWatch::default();
    let mut model: std::collections::BTreeMap<(i32, Vec<u8>), i64> = Default::default();
    let mut now = 0;
    for _ in 0..20_000 {
        let db = rng.below(3) as i32;
        let key = vec![b'k', rng.below(20) as u8];
        match rng.below(5) {
            0 | 1 => {
                let at = now + rng.below(100) as i64;
                w.watch(db, &key, at);
                model.insert((db, key), at);
            }
            2 => {
                w.forget(db, &key);
                model.remove(&(db, key));
            }
            3 => {
                let other = rng.below(3) as i32;
                w.swap_dbs(db, other);
                let swap = |d: i32| match d {
                    d if d == db => other,
                    d if d == other => db,
                    d => d,
                };
                model = model
                    .into_iter()
                    .map(|((d, k), at)| ((swap(d), k), at))
                    .collect();
            }
            _ => {
                now += rng.below(30) as i64;
                let mut due: Vec<_> = model
                    .iter()
                    .filter(|(_, at)| **at <= now)
                    .map(|((d, k), at)| (*at, *d, k.clone()))
                    .collect();
                due.sort();
                let popped = drain(&mut w, now);
                let expected: Vec<_> = due.into_iter().map(|(_, d, k)| (d, k)).collect();
                assert_eq!(popped, expected);
                model.retain(|_, at| *at > now);
            }
        }
        assert_eq!(w.len(), model.len());
        assert_eq!(w.next_due(), model.values().min().copied());
    }
}
