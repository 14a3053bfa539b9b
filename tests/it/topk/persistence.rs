//! Top-k keys survive every persistence path with the same digest, list and
//! counts (RDB, AOF rewrite and replay, DUMP/RESTORE, COPY), and forged
//! payloads are refused field by field without harm.

use crate::common::payload::{encode, parse_dump, Field};
use crate::common::*;
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

#[test]
fn forged_payloads_are_refused() {
    let (mut s, mut con) = Server::start_conn();
    ok(&mut con, &cmd_of!("TOPK.RESERVEX", "p", 2, 10, 2, "0.9"));
    add(&mut con, "p", &["a"]);
    ok(
        &mut con,
        &cmd_of!("TOPK.RESERVEX", "w", 2, 10, 2, "0.9", "WINDOW", 1000),
    );
    add(&mut con, "w", &["a", "b"]);
    let plain = parse_dump(&dump(&mut con, "p"));
    let win = parse_dump(&dump(&mut con, "w"));
    assert_eq!(plain.type_name(), "warden-tk");
    // Header (8), one sketch, then slot 0 empty (1 field) and slot 1 "a" (3).
    assert_eq!(plain.fields.len(), 8 + 1 + 1 + 3, "{:?}", plain.fields);
    assert_eq!(win.fields.len(), 8 + 5 + 3 + 3);
    let mut forgeries: Vec<(&str, crate::common::payload::Dump)> = Vec::new();
    let mut set = |what: &'static str, base: &crate::common::payload::Dump, i: usize, f: Field| {
        let mut d = base.clone();
        d.fields[i] = f;
        forgeries.push((what, d));
    };
    set("kind", &plain, 0, Field::U(2));
    set("k 0", &plain, 1, Field::U(0));
    set("k past 2^32", &plain, 1, Field::U(1 << 32));
    set("k 3: a slot missing", &plain, 1, Field::U(3));
    set("width 0", &plain, 2, Field::U(0));
    set(
        "depth past the cap",
        &plain,
        3,
        Field::U(u64::from(u32::MAX)),
    );
    set("decay 0", &plain, 4, Field::D(0.0));
    set("decay 2", &plain, 4, Field::D(2.0));
    set("decay NaN", &plain, 4, Field::D(f64::NAN));
    set("window too short", &win, 5, Field::U(50));
    set("window without its sketches", &plain, 5, Field::U(1000));
    set(
        "head not a slot start",
        &win,
        6,
        Field::U(1_700_000_000_001),
    );
    set("generator 0", &plain, 7, Field::U(0));
    set("short buckets", &plain, 8, Field::S(vec![0; 159]));
    set("long buckets", &plain, 8, Field::S(vec![0; 168]));
    set("slot marker 2", &plain, 9, Field::U(2));
    set("count past 2^32", &plain, 11, Field::U(1 << 32));
    let mut twice = win.clone();
    twice.fields[15] = twice.fields[18].clone();
    forgeries.push(("an item twice", twice));
    let mut truncated = win.clone();
    truncated.fields.truncate(14);
    forgeries.push(("truncated", truncated));
    let mut newer = plain.clone();
    newer.module_id += 1;
    forgeries.push(("encoding version 2", newer));
    for (what, d) in forgeries {
        let e = raw(
            &mut con,
            &cmd_of!("RESTORE", "forged", 0, encode(&d), "REPLACE"),
        );
        let text = err_of(&e).unwrap_or_else(|| panic!("{what}: accepted ({e:?})"));
        assert!(text.contains("Bad data format"), "{what}: {text}");
    }
    assert!(!exists(&mut con, "forged"));
    ok(&mut con, &cmd_of!("RESTORE", "again", 0, encode(&win)));
    assert_eq!(digest(&mut con, "again"), digest(&mut con, "w"));
    s.assert_alive();
}

/// Corrupt and forged payloads of every shape, by the thousand: the server
/// answers every call, and a payload the module takes is a top-k every
/// command works on.
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
    let bases: Vec<Vec<u8>> = ["p", "w"].iter().map(|k| dump(&mut con, *k)).collect();
    let mut rng = crate::common::payload::Rng(0xbadd);
    let taken = crate::common::payload_forgeries::restore_forgeries(
        &mut con,
        &bases,
        (&mut rng, 1500),
        "forged",
        |con, key| {
            for c in [
                cmd_of!("TOPK.LISTX", key, "WITHCOUNT"),
                cmd_of!("TOPK.QUERYX", key, "a", "b"),
                cmd_of!("TOPK.COUNTX", key, "a"),
                cmd_of!("TOPK.INFOX", key),
                cmd_of!("TOPK.INCRBYX", key, "a", 50, "z", 3),
                cmd_of!("TOPK.ADDX", key, "b", "y"),
                cmd_of!("DEBUG", "DIGEST-VALUE", key),
            ] {
                let _ = raw(con, &c);
            }
            let again = dump(con, key);
            ok(con, &cmd_of!("RESTORE", "forged:2", 0, again, "REPLACE"));
        },
    );
    assert!(
        taken > 0,
        "no forgery was taken: the controls are too strict"
    );
    s.assert_alive();
}
