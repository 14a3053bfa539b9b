//! Cuckoo filters written by the build of commit 2c4d440, the last whose
//! filters all hash with murmur3 (RDB encoding version 1, SCANDUMP header
//! version 1, `CF._LOADX … HEADER` of 11 arguments, creation logged as
//! `CF.RESERVEX`), still load, answer and grow as murmur3 filters, from each
//! form that build wrote: an RDB, the AOF of the commands as run, a
//! rewritten AOF and `CF.SCANDUMPX` chunks. tests/fixtures/2c4d440/record.sh
//! wrote them: `cf:b1` (BUCKETSIZE 1, 400 items), `cf:b2` (made by its first
//! add, grown to 3 sub-filters by 3,100 items, random walks replicated as
//! `CF._PLACEX`) and `cf:b4` (BUCKETSIZE 4, EXPANSION 2, 1,000 items of which
//! 300 deleted).

use std::path::{Path, PathBuf};

use crate::common::*;
use crate::cuckoo::support::scandump;

fn fixture() -> PathBuf {
    repo_root().join("tests/fixtures/2c4d440")
}

/// `DEBUG DIGEST-VALUE` of each fixture filter as the 2c4d440 build reports
/// it after loading the fixture's RDB: murmur3 filters digest as they did,
/// so an older master and an upgraded replica agree.
const RECORDED_DIGESTS: &[(&str, &str)] = &[
    ("cf:b1", "893bf5a9a8d1225a1f5e91c9a0295071c4a14eb5"),
    ("cf:b2", "16ba0c234ed6c8beae3bcd82486a44db6b60e464"),
    ("cf:b4", "c1004180fb5dd7846437f18a2633a0cf5e6f2db3"),
];

/// The items each fixture filter holds (added and not deleted).
fn held() -> Vec<(&'static str, Vec<String>)> {
    let items = |r: std::ops::Range<u32>| r.map(|i| format!("item-{i}")).collect::<Vec<_>>();
    let mut b2 = items(0..3000);
    b2.extend((0..100).map(|i| format!("many-{i}")));
    let mut b4: Vec<String> = (1..600).step_by(2).map(|i| format!("item-{i}")).collect();
    b4.extend(items(600..1000));
    vec![("cf:b1", items(0..400)), ("cf:b2", b2), ("cf:b4", b4)]
}

/// The fixture's `CF.SCANDUMPX` chunks of `cf:b2`: (iterator, data).
fn recorded_chunks() -> Vec<(i64, Vec<u8>)> {
    let text = std::fs::read_to_string(fixture().join("scandump.txt")).expect("scandump.txt");
    text.lines()
        .map(|line| {
            let (it, hex) = line.split_once(' ').expect("iterator and data");
            let data = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                .collect();
            (it.parse().expect("iterator"), data)
        })
        .collect()
}

/// Whether each item is in `key`, in one pipeline.
fn all_present(con: &mut Connection, key: &str, items: &[String]) -> bool {
    let mut p = redis::pipe();
    for item in items {
        p.cmd("CF.EXISTSX").arg(key).arg(item);
    }
    let found: Vec<i64> = p.query(con).expect("EXISTSX");
    found.iter().all(|&f| f == 1)
}

/// Every filter answers for every held item with its recorded counts and
/// digest, and `cf:b2`'s slots are the recorded ones bit for bit (only the
/// dump header differs: version 2, which names murmur3).
fn assert_recorded_filters(con: &mut Connection) {
    for (key, want) in RECORDED_DIGESTS {
        assert_eq!(digest(con, *key), *want, "{key}");
    }
    for (key, items) in held() {
        assert!(all_present(con, key, &items), "{key}: an item is missing");
        let info: Vec<redis::Value> = query!(con, "CF.INFOX", key);
        let field = |name: &str| -> i64 {
            let at = info
                .iter()
                .position(|v| redis::from_redis_value::<String>(v).ok().as_deref() == Some(name))
                .expect(name);
            redis::from_redis_value(&info[at + 1]).expect("number")
        };
        assert_eq!(
            field("Number of items inserted"),
            items.len() as i64,
            "{key}"
        );
    }
    let recorded = recorded_chunks();
    let now = scandump(con, "cf:b2");
    assert_eq!(now.len(), recorded.len());
    let (old, new) = (&recorded[0].1, &now[0].1);
    assert_eq!(&old[8..12], &1u32.to_le_bytes());
    assert_eq!(&new[8..12], &2u32.to_le_bytes());
    assert_eq!(
        &new[12..16],
        &0u32.to_le_bytes(),
        "the hash named is murmur3"
    );
    assert_eq!(&new[16..], &old[12..]);
    assert_eq!(&now[1..], &recorded[1..], "cf:b2's slots changed");
}

/// New adds to a recorded filter are found (hashed as its items were), and
/// all of it survives an RDB round trip (encoding version 2) and a full
/// resync to a replica.
fn assert_murmur3_filters_keep_working(server: &Server) {
    let mut con = server.conn();
    let fresh: Vec<String> = (0..300).map(|i| format!("fresh-{i}")).collect();
    for item in &fresh {
        let added: i64 = query!(&mut con, "CF.ADDX", "cf:b2", item);
        assert_eq!(added, 1);
    }
    assert!(all_present(&mut con, "cf:b2", &fresh));
    debug_reload(&mut con);
    assert!(all_present(&mut con, "cf:b2", &fresh));
    for (key, items) in held() {
        assert!(all_present(&mut con, key, &items), "{key} after a reload");
    }
    let replica = server.start_replica(&[], &[]);
    server.sync_replicas(1);
    let mut rcon = replica.conn();
    assert_eq!(db_digest(&mut rcon), db_digest(&mut con));
    assert!(all_present(&mut rcon, "cf:b2", &fresh));
    for (key, items) in held() {
        assert!(all_present(&mut rcon, key, &items), "{key} on the replica");
    }
}

/// Stops `server`, puts a fixture file in place and starts it again.
fn restart_with(server: &mut Server, place: impl FnOnce(&Path)) -> Connection {
    server.kill();
    place(&server.dir);
    server.crash_and_restart();
    server.loaded_conn()
}

/// `restart_with` the fixture's AOF directory `name` as the server's AOF.
fn restart_with_aof(server: &mut Server, name: &str) -> Connection {
    restart_with(server, |dir| {
        let aof = dir.join("appendonlydir");
        let _ = std::fs::remove_dir_all(&aof);
        copy_dir(&fixture().join(name), &aof);
    })
}

#[test]
fn an_rdb_from_2c4d440_loads_murmur3_filters_that_keep_working() {
    let mut server = Server::start();
    let mut con = restart_with(&mut server, |dir| {
        std::fs::copy(fixture().join("dump.rdb"), dir.join("dump.rdb")).expect("copy");
    });
    assert_recorded_filters(&mut con);
    assert_murmur3_filters_keep_working(&server);
    server.assert_alive();
}

#[test]
fn the_aof_of_commands_from_2c4d440_replays_into_murmur3_filters() {
    let mut server = Server::start_plain_aof();
    let mut con = restart_with_aof(&mut server, "log");
    assert_recorded_filters(&mut con);
    assert_murmur3_filters_keep_working(&server);
}

#[test]
fn a_rewritten_aof_from_2c4d440_replays_into_murmur3_filters() {
    let mut server = Server::start_plain_aof();
    let mut con = restart_with_aof(&mut server, "rewrite");
    assert_recorded_filters(&mut con);
    // Its own rewrite names the hash, and replays to the same filters.
    server.bgrewriteaof();
    server.restart("NOSAVE");
    let mut con = server.conn();
    assert_recorded_filters(&mut con);
}

#[test]
fn scandump_chunks_from_2c4d440_load_as_a_murmur3_filter() {
    let (mut server, mut con) = Server::start_conn();
    for (it, data) in recorded_chunks() {
        let _: () = query!(&mut con, "CF.LOADCHUNKX", "restored", it, data);
    }
    let (_, items) = &held()[1];
    assert!(all_present(&mut con, "restored", items));
    let added: i64 = query!(&mut con, "CF.ADDX", "restored", "fresh");
    assert_eq!(added, 1);
    debug_reload(&mut con);
    assert!(all_present(&mut con, "restored", &["fresh".to_string()]));
    assert!(all_present(&mut con, "restored", items));
    server.assert_alive();
}
