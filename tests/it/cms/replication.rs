//! Replication of count-min sketches: what reaches the replica is what
//! changed, a windowed sketch's slot move is its own effect
//! (`CMS._ROTATEX key slot_ms`, absolute), and a replica or an AOF replay
//! never reads its clock to apply a write.

use std::time::Duration;

use crate::cms::support::{counts, incr};
use crate::common::*;

fn upper(c: &[String]) -> Vec<String> {
    c.iter().map(|w| w.to_ascii_uppercase()).collect()
}

#[test]
fn writes_replicate_as_sent_and_reads_not_at_all() {
    let (master, replica, mut con) = Server::start_replicated();
    let mut tap = master.replication_tap();
    ok(&mut con, &cmd_of!("CMS.INITBYPROBX", "p", "0.01", "0.05"));
    ok(&mut con, &cmd_of!("CMS.INITBYDIMX", "d", 200, 5));
    incr(&mut con, "p", &[("a", 3), ("b", 1)]);
    incr(&mut con, "p", &[("a", 0)]);
    counts(&mut con, "p", &["a"]);
    ok(
        &mut con,
        &cmd_of!("CMS.MERGEX", "d", 2, "p", "p", "WEIGHTS", 2, 1),
    );
    let stream = without_multi_exec(tap.until_marker(&mut con, "mark", "1"));
    let names: Vec<Vec<String>> = stream
        .iter()
        .filter(|c| c[0].to_ascii_uppercase().starts_with("CMS."))
        .map(|c| upper(c))
        .collect();
    assert_eq!(
        names,
        [
            words(&["CMS.INITBYDIMX", "P", "200", "5"]),
            words(&["CMS.INITBYDIMX", "D", "200", "5"]),
            words(&["CMS.INCRBYX", "P", "A", "3", "B", "1"]),
            words(&["CMS.MERGEX", "D", "2", "P", "P", "WEIGHTS", "2", "1"]),
        ]
    );
    master.sync_replicas(1);
    let mut r = replica.conn();
    for k in ["p", "d"] {
        assert_eq!(digest(&mut r, k), digest(&mut con, k));
    }
    assert_eq!(counts(&mut r, "d", &["a"]), [9]);
}

#[test]
fn a_slot_move_replicates_as_its_effect_before_the_write() {
    let (master, replica, mut con) = Server::start_replicated();
    let mut tap = master.replication_tap();
    ok(
        &mut con,
        &cmd_of!("CMS.INITBYDIMX", "w", 100, 3, "WINDOW", 100),
    );
    incr(&mut con, "w", &[("a", 1)]);
    std::thread::sleep(Duration::from_millis(30));
    incr(&mut con, "w", &[("a", 2)]);
    ok(
        &mut con,
        &cmd_of!("CMS.INITBYDIMX", "m", 100, 3, "WINDOW", 100),
    );
    std::thread::sleep(Duration::from_millis(30));
    ok(&mut con, &cmd_of!("CMS.MERGEX", "m", 1, "w"));
    let stream = without_multi_exec(tap.until_marker(&mut con, "mark", "1"));
    let cms: Vec<Vec<String>> = stream
        .iter()
        .filter(|c| c[0].to_ascii_uppercase().starts_with("CMS."))
        .map(|c| upper(c))
        .collect();
    let kinds: Vec<&str> = cms.iter().map(|c| c[0].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "CMS.INITBYDIMX",
            "CMS._ROTATEX",
            "CMS.INCRBYX",
            "CMS._ROTATEX",
            "CMS.INCRBYX",
            "CMS.INITBYDIMX",
            "CMS._ROTATEX",
            "CMS.MERGEX"
        ],
        "{cms:?}"
    );
    // Slots of 25 ms, absolute, increasing.
    let slots: Vec<i64> = cms
        .iter()
        .filter(|c| c[0] == "CMS._ROTATEX")
        .map(|c| c[2].parse().unwrap())
        .collect();
    assert!(slots.iter().all(|s| s % 25 == 0), "{slots:?}");
    assert!(slots[0] < slots[1], "{slots:?}");
    let now = server_time_ms(&mut con);
    assert!((now - 1000..=now).contains(&slots[2]), "{slots:?} {now}");
    master.sync_replicas(1);
    let mut r = replica.conn();
    for k in ["w", "m"] {
        assert_eq!(digest(&mut r, k), digest(&mut con, k), "{k}");
    }
}

/// An AOF replayed well after its window ended rebuilds the sketch as it
/// was (a replay that read its own clock would move it on and drop counts).
#[test]
fn a_replay_applies_writes_to_the_slot_the_master_was_at() {
    let mut server = Server::start_plain_aof();
    let mut con = server.conn();
    ok(
        &mut con,
        &cmd_of!("CMS.INITBYDIMX", "w", 100, 3, "WINDOW", 100),
    );
    incr(&mut con, "w", &[("a", 1)]);
    std::thread::sleep(Duration::from_millis(30));
    incr(&mut con, "w", &[("a", 2), ("b", 5)]);
    let before = digest(&mut con, "w");
    std::thread::sleep(Duration::from_millis(300));
    server.restart("NOSAVE");
    let mut con = server.loaded_conn();
    assert_eq!(digest(&mut con, "w"), before);
    // Reads at the server's time: the window has passed.
    assert_eq!(counts(&mut con, "w", &["a", "b"]), [0, 0]);
}

/// An increment that saturates an item's counters answers `CMS: INCRBY
/// overflow` for it and is replicated as sent: a replica and an AOF replay
/// apply it without answering that error to the master or the AOF (Redis
/// counts such a reply as `unexpected_error_replies`, and a replica with
/// `propagation-error-behavior panic`, as the harness starts them, dies).
#[test]
fn a_saturating_increment_applies_without_an_error_on_a_replica_or_a_replay() {
    let (master, mut replica, mut con) = Server::start_replicated();
    ok(&mut con, &cmd_of!("CMS.INITBYDIMX", "s", 10, 2));
    ok(
        &mut con,
        &cmd_of!("CMS.INITBYDIMX", "w", 10, 2, "WINDOW", "1h"),
    );
    for k in ["s", "w"] {
        let pairs = [("a", i64::from(u32::MAX) - 1), ("a", 5), ("b", 1)];
        assert_eq!(incr(&mut con, k, &pairs), [4294967294, -1, 1], "{k}");
    }
    master.sync_replicas(1);
    replica.assert_alive();
    let mut r = replica.conn();
    for k in ["s", "w"] {
        assert_eq!(digest(&mut r, k), digest(&mut con, k), "{k}");
    }
    let unexpected = |c: &mut Connection| info_field(c, "stats", "unexpected_error_replies");
    assert_eq!(unexpected(&mut r).as_deref(), Some("0"), "replica");

    let mut server = Server::start_plain_aof();
    let mut con = server.conn();
    ok(&mut con, &cmd_of!("CMS.INITBYDIMX", "s", 10, 2));
    assert_eq!(incr(&mut con, "s", &[("a", i64::from(u32::MAX))]), [-1]);
    let before = digest(&mut con, "s");
    server.restart("NOSAVE");
    let mut con = server.loaded_conn();
    assert_eq!(digest(&mut con, "s"), before);
    assert_eq!(unexpected(&mut con).as_deref(), Some("0"), "AOF replay");
}
