//! `WINDOW ms` on a real server: counts over at least the last window and
//! gone within a slot (a quarter window) after it, on the server's clock,
//! with nothing running per key.

use std::time::Duration;

use crate::cms::support::{counts, incr, info};
use crate::common::*;

#[test]
fn counts_cover_the_window_and_then_leave() {
    let (_s, mut con) = Server::start_conn();
    ok(
        &mut con,
        &cmd_of!("CMS.INITBYDIMX", "w", 1000, 4, "WINDOW", 400),
    );
    let t0 = server_time_ms(&mut con);
    assert_eq!(incr(&mut con, "w", &[("a", 3)]), [3]);
    let size: i64 = query!(&mut con, "MEMORY", "USAGE", "w");
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(incr(&mut con, "w", &[("a", 2), ("b", 1)]), [5, 1]);
    // Within the window of the first write: both count.
    let elapsed = server_time_ms(&mut con) - t0;
    if elapsed < 400 {
        assert_eq!(counts(&mut con, "w", &["a", "b"]), [5, 1]);
        assert_eq!(info(&mut con, "w")[2], ("count".to_string(), 6));
    }
    // Past window + slot (500 ms) after the first write, only the second.
    while server_time_ms(&mut con) < t0 + 520 {
        std::thread::sleep(Duration::from_millis(20));
    }
    let at = server_time_ms(&mut con);
    if at < t0 + 150 + 400 {
        assert_eq!(counts(&mut con, "w", &["a", "b"]), [2, 1]);
    }
    // Past everything: nothing, and the memory is what it was.
    while server_time_ms(&mut con) < t0 + 150 + 520 {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(counts(&mut con, "w", &["a", "b"]), [0, 0]);
    assert_eq!(info(&mut con, "w")[2], ("count".to_string(), 0));
    let now: i64 = query!(&mut con, "MEMORY", "USAGE", "w");
    assert_eq!(now, size);
    assert_eq!(incr(&mut con, "w", &[("a", 1)]), [1]);
    assert!(warden_stat(&mut con, "cms_rotations") >= 3);
}
