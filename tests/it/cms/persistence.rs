//! Count-min sketches survive every persistence path with the same digest
//! and counts (RDB, AOF rewrite and replay, DUMP/RESTORE, COPY), and
//! forged payloads are refused field by field without harm.

use crate::cms::kit;
use crate::cms::support::{counts, info};
use crate::common::payload_forgeries::{assert_refused, restore_forgeries};
use crate::common::*;

/// Fills a plain sketch, a windowed one and a large one (several AOF chunks).
fn fill(con: &mut Connection) {
    ok(con, &cmd_of!("CMS.INITBYDIMX", "plain", 500, 4));
    ok(
        con,
        &cmd_of!("CMS.INITBYDIMX", "win", 300, 3, "WINDOW", "1h"),
    );
    ok(con, &cmd_of!("CMS.INITBYDIMX", "big", 600_000, 4));
    let mut p = redis::pipe();
    for i in 0..2000 {
        for k in ["plain", "win", "big"] {
            p.cmd("CMS.INCRBYX")
                .arg(k)
                .arg(format!("item{}", i % 700))
                .arg(1 + i % 5);
        }
    }
    let _: Vec<Vec<i64>> = p.query(con).unwrap();
}

/// Each sketch's digest and a few counts.
fn state(con: &mut Connection) -> Vec<(String, Vec<i64>)> {
    ["plain", "win", "big"]
        .iter()
        .map(|k| {
            (
                digest(con, *k),
                counts(con, k, &["item0", "item1", "item699", "nope"]),
            )
        })
        .collect()
}

#[test]
fn rdb_dump_restore_and_copy_keep_sketches() {
    let (_s, mut con) = Server::start_conn();
    fill(&mut con);
    let before = state(&mut con);
    assert!(before.iter().all(|(_, c)| c[0] > 0), "{before:?}");
    debug_reload(&mut con);
    assert_eq!(state(&mut con), before);
    for k in ["plain", "win", "big"] {
        let payload = dump(&mut con, k);
        let copy = format!("{k}:copy");
        ok(&mut con, &cmd_of!("RESTORE", &copy, 0, payload));
        assert_eq!(digest(&mut con, &copy), digest(&mut con, k));
        let copied: i64 = query!(&mut con, "COPY", k, format!("{k}:c2"));
        assert_eq!(copied, 1);
        assert_eq!(digest(&mut con, format!("{k}:c2")), digest(&mut con, k));
    }
    // A copy is its own sketch.
    crate::cms::support::incr(&mut con, "plain:c2", &[("item0", 1000)]);
    assert_eq!(counts(&mut con, "plain", &["item0"]), [before[0].1[0]]);
    assert_eq!(info(&mut con, "win")[3], ("window".to_string(), 3_600_000));
    // MEMORY USAGE: the counters and a small header.
    let usage: i64 = query!(&mut con, "MEMORY", "USAGE", "big");
    assert!((9_600_000..9_600_200).contains(&usage), "{usage}");
}

#[test]
fn aof_rewrite_and_replay_keep_sketches() {
    let mut server = Server::start_plain_aof();
    let mut con = server.conn();
    fill(&mut con);
    let before = state(&mut con);
    // The commands as run, replayed.
    server.restart("NOSAVE");
    let mut con = server.loaded_conn();
    assert_eq!(state(&mut con), before);
    // The rewritten form (`CMS._LOADX`), replayed.
    server.bgrewriteaof();
    server.restart("NOSAVE");
    let mut con = server.loaded_conn();
    assert_eq!(state(&mut con), before);
}

/// Every field of a payload is checked: each forgery answers `Bad data
/// format` and the server lives on (the forgeries: `payload::refusals`).
#[test]
fn forged_payloads_are_refused() {
    assert_refused(&kit::SKETCH);
}

/// Corrupt and forged payloads of every shape, by the thousand: the server
/// answers every call, and a payload the module takes is a sketch every
/// command works on, read in range, and DUMPed and RESTOREd the same.
#[test]
fn corrupt_payloads_never_harm_the_server() {
    let (mut s, mut con) = Server::start_conn();
    fill(&mut con);
    ok(
        &mut con,
        &cmd_of!("CMS.INITBYDIMX", "tiny", 3, 2, "WINDOW", 1000),
    );
    crate::cms::support::incr(&mut con, "tiny", &[("a", 5)]);
    restore_forgeries(&mut con, &kit::SKETCH, &["plain", "win", "tiny"], 0xc0ffee);
    s.assert_alive();
}
