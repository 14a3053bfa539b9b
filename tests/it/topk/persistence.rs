//! Top-k keys survive every persistence path with the same digest, list and
//! counts (RDB, AOF rewrite and replay, DUMP/RESTORE, COPY), and forged
//! payloads are refused field by field without harm.

use crate::common::payload_forgeries::{assert_refused, restore_forgeries};
use crate::common::*;
use crate::topk::kit;
use crate::topk::support::{add, counts, list};

/// Fills a plain top-k (decays at work: narrow rows), a windowed one and a
/// large one (several AOF chunks).
fn fill(con: &mut Connection) {
    ok(con, &cmd_of!("TOPK.RESERVEX", "plain", 10, 20, 4, "0.9"));
    ok(
        con,
        &cmd_of!("TOPK.RESERVEX", "win", 10, 50, 3, "0.9", "WINDOW", "1h"),
    );
    ok(
        con,
        &cmd_of!("TOPK.RESERVEX", "big", 50, 600_000, 2, "0.95"),
    );
    let mut p = redis::pipe();
    for i in 0..3000u64 {
        let item = format!("item{}", (i * i) % 701 % (1 + i % 97));
        for k in ["plain", "win", "big"] {
            p.cmd("TOPK.ADDX").arg(k).arg(&item);
        }
    }
    let _: Vec<Value> = p.query(con).unwrap();
}

type State = Vec<(String, Vec<(String, i64)>, Vec<i64>)>;

fn state(con: &mut Connection) -> State {
    ["plain", "win", "big"]
        .iter()
        .map(|k| {
            (
                digest(con, *k),
                list(con, k),
                counts(con, k, &["item0", "item1", "nope"]),
            )
        })
        .collect()
}

#[test]
fn rdb_dump_restore_and_copy_keep_top_k() {
    let (_s, mut con) = Server::start_conn();
    fill(&mut con);
    let before = state(&mut con);
    assert!(
        before
            .iter()
            .all(|(_, l, _)| l.len() == 10 || l.len() == 50),
        "{before:?}"
    );
    debug_reload(&mut con);
    assert_eq!(state(&mut con), before);
    for k in ["plain", "win", "big"] {
        let copy = format!("{k}:copy");
        let payload = dump(&mut con, k);
        ok(&mut con, &cmd_of!("RESTORE", &copy, 0, payload));
        assert_eq!(digest(&mut con, &copy), digest(&mut con, k));
        let copied: i64 = query!(&mut con, "COPY", k, format!("{k}:c2"));
        assert_eq!(copied, 1);
        assert_eq!(digest(&mut con, format!("{k}:c2")), digest(&mut con, k));
        // The same adds on a copy keep it equal (the generator is in the value).
        for key in [k.to_string(), copy] {
            add(&mut con, &key, &["x", "y", "item3", "x"]);
        }
        assert_eq!(digest(&mut con, format!("{k}:copy")), digest(&mut con, k));
    }
    let usage: i64 = query!(&mut con, "MEMORY", "USAGE", "big");
    assert!((9_600_000..9_610_000).contains(&usage), "{usage}");
}

#[test]
fn aof_rewrite_and_replay_keep_top_k() {
    let mut server = Server::start_plain_aof();
    let mut con = server.conn();
    fill(&mut con);
    let before = state(&mut con);
    server.restart("NOSAVE");
    let mut con = server.loaded_conn();
    assert_eq!(state(&mut con), before, "the commands as run");
    server.bgrewriteaof();
    server.restart("NOSAVE");
    let mut con = server.loaded_conn();
    assert_eq!(state(&mut con), before, "the rewritten form");
}

/// Every field of a payload is checked: each forgery answers `Bad data
/// format` and the server lives on (the forgeries: `payload::refusals`).
#[test]
fn forged_payloads_are_refused() {
    assert_refused(&kit::TOPK);
}

/// Corrupt and forged payloads of every shape, by the thousand: the server
/// answers every call, and a payload the module takes is a top-k every
/// command works on, read in range, and DUMPed and RESTOREd the same.
#[test]
fn corrupt_payloads_never_harm_the_server() {
    let (mut s, mut con) = Server::start_conn();
    ok(&mut con, &cmd_of!("TOPK.RESERVEX", "p", 3, 8, 3, "0.9"));
    add(&mut con, "p", &["a", "b", "a", "c", "d"]);
    ok(
        &mut con,
        &cmd_of!("TOPK.RESERVEX", "w", 2, 4, 2, "0.5", "WINDOW", 1000),
    );
    add(&mut con, "w", &["a", "b", "b"]);
    restore_forgeries(&mut con, &kit::TOPK, &["p", "w"], 0xbadd);
    s.assert_alive();
}
