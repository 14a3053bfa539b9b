//! Integration tests for the size and accuracy of `BF.*X` filters: no false negatives
//! with 1,000,000 items (also across DEBUG RELOAD), measured false-positive rates of
//! scaling and non-scaling filters, and memory near the optimum.

use crate::bloom::support::*;
use crate::common::*;

// ---------------------------------------------------------------------------------------
// 2. No false negatives with 1,000,000 items, across DEBUG RELOAD
// ---------------------------------------------------------------------------------------

#[test]
fn million_items_have_no_false_negatives_across_reload() {
    let s = Server::start();
    let mut con = bf_conn(&s);
    reserve(&mut con, "big", 0.01, 1_000_000, &[]);
    let n = 1_000_000;
    let new = madd_range(&mut con, "big", "item:", 0..n);
    assert!(new > n - 20_000, "{new} of {n} answered new");
    assert_eq!(cardx(&mut con, "big") as u64, new);
    let found = mexists_range(&mut con, "big", "item:", 0..n);
    assert_eq!(found, n, "false negatives before reload: {}", n - found);

    let before = digest(&mut con, "big");
    let info = bf_info(&mut con, "big");
    let _: () = query!(&mut con, "DEBUG", "RELOAD");
    assert_eq!(digest(&mut con, "big"), before);
    assert_eq!(bf_info(&mut con, "big"), info);
    let found = mexists_range(&mut con, "big", "item:", 0..n);
    assert_eq!(found, n, "false negatives after reload: {}", n - found);
}

// ---------------------------------------------------------------------------------------
// 3. Measured false-positive rate
// ---------------------------------------------------------------------------------------

/// Fills `key` with `added` items and returns the false positives among 100,000
/// never-added items.
fn measured_false_positives(con: &mut Connection, key: &str, added: u64) -> u64 {
    madd_range(con, key, "member:", 0..added);
    let found = mexists_range(con, key, "member:", 0..added);
    assert_eq!(found, added, "false negatives");
    mexists_range(con, key, "never-added:", 0..100_000)
}

/// A non-scaling filter of 100,000 at `rate`, filled: the measured false-positive
/// rate is at most `rate`.
fn measured_fpr_nonscaling_100k_at(rate: f64) {
    let s = Server::start();
    let mut con = bf_conn(&s);
    reserve(&mut con, "f", rate, 100_000, &["NONSCALING"]);
    let fp = measured_false_positives(&mut con, "f", 100_000);
    let measured = fp as f64 / 100_000.0;
    assert!(
        measured <= rate,
        "measured FPR {measured} ({fp} of 100000) above {rate} for (100k, {rate})"
    );
}

#[test]
fn measured_fpr_nonscaling_100k_at_1_percent() {
    measured_fpr_nonscaling_100k_at(0.01);
}

#[test]
fn measured_fpr_nonscaling_100k_at_point_1_percent() {
    measured_fpr_nonscaling_100k_at(0.001);
}

#[test]
fn measured_fpr_scaling_10k_grown_to_1m_at_1_percent() {
    let s = Server::start();
    let mut con = bf_conn(&s);
    reserve(&mut con, "f", 0.01, 10_000, &[]);
    let fp = measured_false_positives(&mut con, "f", 1_000_000);
    let info = bf_info(&mut con, "f");
    assert!(info.filters > 1, "the filter did not grow: {info:?}");
    assert!(info.capacity >= 1_000_000, "{info:?}");
    let rate = fp as f64 / 100_000.0;
    assert!(
        rate <= 0.01,
        "measured FPR {rate} ({fp} of 100000) above 0.01 for a scaling filter \
         10k -> 1M ({info:?})"
    );
}

// ---------------------------------------------------------------------------------------
// 4. Memory
// ---------------------------------------------------------------------------------------

#[test]
fn nonscaling_million_at_1_percent_size_is_near_optimal() {
    let (_s, mut con) = Server::start_conn();
    reserve(&mut con, "m", 0.01, 1_000_000, &["NONSCALING"]);
    let info = bf_info(&mut con, "m");
    assert!(
        info.size as f64 <= 1.05 * 1_198_132.0,
        "Size {} above 1.05 x 1,198,132",
        info.size
    );
    // Not smaller than the information-theoretic size of the bit array either.
    assert!(info.size >= 1_198_132, "Size {} too small", info.size);
    assert_eq!(int(&info_field_only(&mut con, "m", "SIZE")), info.size);
}

#[test]
fn scaling_million_at_1_percent_with_million_items_size() {
    let s = Server::start();
    let mut con = bf_conn(&s);
    reserve(&mut con, "m", 0.01, 1_000_000, &[]);
    madd_range(&mut con, "m", "item:", 0..1_000_000);
    let info = bf_info(&mut con, "m");
    assert_eq!(
        info.filters, 1,
        "1M items must fit the first layer: {info:?}"
    );
    assert!(
        info.size <= 1_378_568,
        "Size {} above 1,378,568 ({info:?})",
        info.size
    );
}
