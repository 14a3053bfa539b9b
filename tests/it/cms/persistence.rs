//! Count-min sketches survive every persistence path with the same digest
//! and counts (RDB, AOF rewrite and replay, DUMP/RESTORE, COPY), and
//! forged payloads are refused field by field without harm.

use crate::cms::support::{counts, info};
use crate::common::payload::{encode, parse_dump, Field};
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
/// format` and the server lives on.
#[test]
fn forged_payloads_are_refused() {
    let (mut s, mut con) = Server::start_conn();
    ok(&mut con, &cmd_of!("CMS.INITBYDIMX", "p", 10, 2));
    ok(
        &mut con,
        &cmd_of!("CMS.INITBYDIMX", "w", 10, 2, "WINDOW", 1000),
    );
    crate::cms::support::incr(&mut con, "w", &[("a", 1)]);
    let plain = parse_dump(&dump(&mut con, "p"));
    let win = parse_dump(&dump(&mut con, "w"));
    assert_eq!(plain.type_name(), "warden-cm");
    assert_eq!(plain.fields.len(), 5 + 2);
    assert_eq!(win.fields.len(), 5 + 2 * 5);
    let mut forgeries: Vec<(&str, crate::common::payload::Dump)> = Vec::new();
    let mut set = |what: &'static str, base: &crate::common::payload::Dump, i: usize, f: Field| {
        let mut d = base.clone();
        d.fields[i] = f;
        forgeries.push((what, d));
    };
    set("kind", &plain, 0, Field::U(2));
    set("width 0", &plain, 1, Field::U(0));
    set("width past 2^32", &plain, 1, Field::U(1 << 32));
    set("depth 0", &plain, 2, Field::U(0));
    let mut huge = plain.clone();
    huge.fields[1] = Field::U(u64::from(u32::MAX));
    set("size past the cap", &huge, 2, Field::U(u64::from(u32::MAX)));
    set(
        "size within the cap, counters missing",
        &huge,
        2,
        Field::U(2),
    );
    set("window too short", &win, 3, Field::U(50));
    set("window without a ring", &plain, 3, Field::U(1000));
    set(
        "head not a slot start",
        &win,
        4,
        Field::U(1_700_000_000_001),
    );
    set("head past i64", &win, 4, Field::U(1 << 63));
    set("total past i64", &plain, 5, Field::U(1 << 63));
    set("short counters", &plain, 6, Field::S(vec![0; 79]));
    set("long counters", &plain, 6, Field::S(vec![0; 84]));
    let mut truncated = win.clone();
    truncated.fields.truncate(8);
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
    // A payload rebuilt from its own fields loads (the controls are right).
    ok(&mut con, &cmd_of!("RESTORE", "again", 0, encode(&win)));
    assert_eq!(digest(&mut con, "again"), digest(&mut con, "w"));
    s.assert_alive();
}

/// Corrupt and forged payloads of every shape, by the thousand: the server
/// answers every call, and a payload the module takes is a sketch every
/// command works on.
#[test]
fn corrupt_payloads_never_harm_the_server() {
    let (mut s, mut con) = Server::start_conn();
    fill(&mut con);
    ok(
        &mut con,
        &cmd_of!("CMS.INITBYDIMX", "tiny", 3, 2, "WINDOW", 1000),
    );
    crate::cms::support::incr(&mut con, "tiny", &[("a", 5)]);
    let bases: Vec<Vec<u8>> = ["plain", "win", "tiny"]
        .iter()
        .map(|k| dump(&mut con, *k))
        .collect();
    let mut rng = crate::common::payload::Rng(0xc0ffee);
    let taken = crate::common::payload_forgeries::restore_forgeries(
        &mut con,
        &bases,
        (&mut rng, 1500),
        "forged",
        |con, key| {
            for c in [
                cmd_of!("CMS.QUERYX", key, "a", "item1"),
                cmd_of!("CMS.INFOX", key),
                cmd_of!("CMS.INCRBYX", key, "a", 1),
                cmd_of!("CMS.MERGEX", key, 2, key, key),
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
