//! `WINDOW ms` on a real server: the top k over at least the last window,
//! on the server's clock, with nothing running per key.

use std::time::Duration;

use crate::common::*;
use crate::topk::support::{incr, list};

#[test]
fn the_list_covers_the_window_and_then_forgets() {
    let (_s, mut con) = Server::start_conn();
    ok(
        &mut con,
        &cmd_of!("TOPK.RESERVEX", "w", 2, 100, 4, "0.9", "WINDOW", 400),
    );
    let t0 = server_time_ms(&mut con);
    incr(&mut con, "w", &[("early", 50), ("small", 1)]);
    let size: i64 = query!(&mut con, "MEMORY", "USAGE", "w");
    std::thread::sleep(Duration::from_millis(150));
    incr(&mut con, "w", &[("late", 10)]);
    if server_time_ms(&mut con) - t0 < 400 {
        assert_eq!(
            list(&mut con, "w"),
            [("early".to_string(), 50), ("late".to_string(), 10)]
        );
    }
    // Past window + slot after the first writes: "early" is gone, "late" stays.
    while server_time_ms(&mut con) < t0 + 520 {
        std::thread::sleep(Duration::from_millis(20));
    }
    if server_time_ms(&mut con) < t0 + 550 {
        assert_eq!(list(&mut con, "w"), [("late".to_string(), 10)]);
        let q: Vec<i64> = query!(&mut con, "TOPK.QUERYX", "w", "early", "late");
        assert_eq!(q, [0, 1]);
    }
    while server_time_ms(&mut con) < t0 + 150 + 520 {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(list(&mut con, "w").is_empty());
    // A write now moves the ring: the heap is emptied of what aged out.
    assert_eq!(incr(&mut con, "w", &[("new", 1)]), [None]);
    assert_eq!(list(&mut con, "w"), [("new".to_string(), 1)]);
    let now: i64 = query!(&mut con, "MEMORY", "USAGE", "w");
    assert!(now <= size, "{now} > {size}");
    assert!(warden_stat(&mut con, "topk_rotations") >= 3);
}
