//! Replication of top-k keys: adds decay with a generator kept in the value,
//! so the adds replicate as sent and a replica (or an AOF replay) repeats
//! them exactly; a windowed top-k's slot move is its own effect
//! (`TOPK._ROTATEX key slot_ms`, absolute) and a replay never reads its clock.

use std::time::Duration;

use crate::common::*;
use crate::topk::support::{add, incr, list};

fn topk_commands(stream: &[Vec<String>]) -> Vec<Vec<String>> {
    stream
        .iter()
        .filter(|c| c[0].to_ascii_uppercase().starts_with("TOPK."))
        .map(|c| c.iter().map(|w| w.to_ascii_uppercase()).collect())
        .collect()
}

#[test]
fn adds_with_decays_replicate_as_sent_and_replicas_match() {
    let (master, replica, mut con) = Server::start_replicated();
    let mut tap = master.replication_tap();
    ok(&mut con, &cmd_of!("TOPK.RESERVEX", "t", 5));
    let mut p = redis::pipe();
    for i in 0..5000u64 {
        p.cmd("TOPK.ADDX")
            .arg("t")
            .arg(format!("k{}", i * 7919 % (1 + i % 300)));
    }
    let _: Vec<Value> = p.query(&mut con).unwrap();
    incr(&mut con, "t", &[("heavy", 1000)]);
    let _: Vec<i64> = query!(&mut con, "TOPK.QUERYX", "t", "heavy");
    let stream = without_multi_exec(tap.until_marker(&mut con, "mark", "1"));
    let cmds = topk_commands(&stream);
    assert_eq!(
        cmds[0],
        words(&["TOPK.RESERVEX", "T", "5", "8", "7", "0.9"])
    );
    assert_eq!(cmds.len(), 1 + 5000 + 1, "reads replicate nothing");
    assert_eq!(cmds[5001], words(&["TOPK.INCRBYX", "T", "HEAVY", "1000"]));
    master.sync_replicas(1);
    let mut r = replica.conn();
    assert_eq!(digest(&mut r, "t"), digest(&mut con, "t"));
    assert_eq!(list(&mut r, "t"), list(&mut con, "t"));
    // Heavy took over a bucket after decaying it by its few units.
    let (first, n) = list(&mut con, "t")[0].clone();
    assert!(first == "heavy" && (990..=1000).contains(&n), "{first} {n}");
}

#[test]
fn a_slot_move_replicates_as_its_effect_before_the_write() {
    let (master, replica, mut con) = Server::start_replicated();
    let mut tap = master.replication_tap();
    ok(
        &mut con,
        &cmd_of!("TOPK.RESERVEX", "w", 3, 20, 3, "0.9", "WINDOW", 100),
    );
    add(&mut con, "w", &["a", "b"]);
    std::thread::sleep(Duration::from_millis(30));
    incr(&mut con, "w", &[("a", 4)]);
    let stream = without_multi_exec(tap.until_marker(&mut con, "mark", "1"));
    let cmds = topk_commands(&stream);
    let kinds: Vec<&str> = cmds.iter().map(|c| c[0].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "TOPK.RESERVEX",
            "TOPK._ROTATEX",
            "TOPK.ADDX",
            "TOPK._ROTATEX",
            "TOPK.INCRBYX"
        ]
    );
    assert_eq!(
        cmds[0],
        words(&["TOPK.RESERVEX", "W", "3", "20", "3", "0.9", "WINDOW", "100"])
    );
    let slots: Vec<i64> = [1, 3]
        .iter()
        .map(|i| cmds[*i][2].parse().unwrap())
        .collect();
    assert!(
        slots[0] < slots[1] && slots.iter().all(|s| s % 25 == 0),
        "{slots:?}"
    );
    master.sync_replicas(1);
    assert_eq!(digest(&mut replica.conn(), "w"), digest(&mut con, "w"));
}

/// An AOF replayed after its window ended rebuilds the top-k as it was.
#[test]
fn a_replay_applies_writes_to_the_slot_the_master_was_at() {
    let mut server = Server::start_plain_aof();
    let mut con = server.conn();
    ok(
        &mut con,
        &cmd_of!("TOPK.RESERVEX", "w", 3, 20, 3, "0.9", "WINDOW", 100),
    );
    add(&mut con, "w", &["a", "b", "a"]);
    std::thread::sleep(Duration::from_millis(30));
    incr(&mut con, "w", &[("c", 7)]);
    let before = digest(&mut con, "w");
    std::thread::sleep(Duration::from_millis(300));
    server.restart("NOSAVE");
    let mut con = server.loaded_conn();
    assert_eq!(digest(&mut con, "w"), before);
    assert!(list(&mut con, "w").is_empty(), "the window has passed");
}
