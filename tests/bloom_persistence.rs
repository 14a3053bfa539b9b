//! Integration tests for `BF.*X` filters across DEBUG RELOAD, RDB and AOF restarts (with
//! and without the RDB preamble, one filter above 20 MB), DUMP/RESTORE, COPY,
//! replication (stream content, replicas with other defaults, promotion) and 1,000
//! corrupt or forged RESTORE payloads that reach the module's loader.

mod common;
use common::bloom::*;
use common::payload::{
    corrupt_bytes, crc64, enc_len, encode, parse_dump, Dump, Field, Rng, OP_STRING,
};
use common::*;

use std::time::Duration;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

const FULL: &str = "ERR non scaling filter is full";

fn conn_t(server: &Server) -> Connection {
    let con = server.conn();
    con.set_read_timeout(Some(Duration::from_secs(120)))
        .expect("read timeout");
    con
}

fn ok(con: &mut Connection, c: &redis::Cmd) {
    let v = raw(con, c);
    assert!(
        matches!(v, Value::Okay) || v == Value::SimpleString("OK".into()),
        "{}: {v:?}",
        show(c)
    );
}

fn reserve(con: &mut Connection, key: &[u8], rate: &str, capacity: u64, extra: &[&str]) {
    let mut c = cmd("BF.RESERVEX");
    c.arg(key).arg(rate).arg(capacity);
    for e in extra {
        c.arg(*e);
    }
    ok(con, &c);
}

fn addx(con: &mut Connection, key: &[u8], item: &str) -> i64 {
    cmd("BF.ADDX")
        .arg(key)
        .arg(item)
        .query(con)
        .expect("BF.ADDX")
}

fn existsx(con: &mut Connection, key: &[u8], item: &str) -> i64 {
    cmd("BF.EXISTSX")
        .arg(key)
        .arg(item)
        .query(con)
        .expect("BF.EXISTSX")
}

fn cardx(con: &mut Connection, key: &[u8]) -> i64 {
    cmd("BF.CARDX").arg(key).query(con).expect("BF.CARDX")
}

/// An item the filter certainly does not hold.
fn absent_item(con: &mut Connection, key: &[u8], prefix: &str) -> String {
    (0..)
        .map(|i| item(prefix, i))
        .find(|it| existsx(con, key, it) == 0)
        .expect("an absent item")
}

// ---------------------------------------------------------------------------------------
// A mixed set of filters and its snapshot
// ---------------------------------------------------------------------------------------

const BIN_KEY: &[u8] = b"bin\xff\x00key";

/// Creates filters of every shape; returns their keys.
fn populate(con: &mut Connection) -> Vec<Vec<u8>> {
    // Scaling, several layers.
    reserve(con, b"sc", "0.01", 100, &[]);
    madd_range(con, b"sc", "sc:", 0..1_500);
    assert!(bf_info(con, b"sc").filters >= 4);
    // Non-scaling, partly filled.
    reserve(con, b"ns", "0.001", 500, &["NONSCALING"]);
    madd_range(con, b"ns", "ns:", 0..300);
    // Non-scaling, full.
    reserve(con, b"full", "0.01", 20, &["NONSCALING"]);
    let mut i = 0;
    while cardx(con, b"full") < 20 {
        let _ = raw(con, cmd("BF.ADDX").arg("full").arg(item("full:", i)));
        i += 1;
    }
    // Created implicitly with the defaults.
    addx(con, b"imp", "x");
    // Empty.
    reserve(con, b"empty", "0.05", 10, &[]);
    // Expansion 1: many small layers.
    reserve(con, b"e1", "0.1", 5, &["EXPANSION", "1"]);
    madd_range(con, b"e1", "e1:", 0..100);
    assert!(bf_info(con, b"e1").filters >= 15);
    // Large expansion.
    reserve(con, b"e9", "0.0001", 3, &["EXPANSION", "9"]);
    madd_range(con, b"e9", "e9:", 0..200);
    // Binary key and items.
    let _: Vec<i64> = cmd("BF.MADDX")
        .arg(BIN_KEY)
        .arg(&b"\x00\xff"[..])
        .arg(&b"\xfe\xfd\xfc"[..])
        .arg("")
        .query(con)
        .expect("MADDX binary");
    // With a TTL.
    reserve(con, b"ttl", "0.01", 100, &[]);
    madd_range(con, b"ttl", "t:", 0..50);
    let _: i64 = cmd("PEXPIRE")
        .arg("ttl")
        .arg(1_000_000)
        .query(con)
        .expect("PEXPIRE");
    [
        &b"sc"[..],
        b"ns",
        b"full",
        b"imp",
        b"empty",
        b"e1",
        b"e9",
        BIN_KEY,
        b"ttl",
    ]
    .iter()
    .map(|k| k.to_vec())
    .collect()
}

#[derive(Debug, Clone, PartialEq)]
struct Snap {
    key: Vec<u8>,
    digest: String,
    info: BfInfo,
    card: i64,
    has_ttl: bool,
}

fn snapshot(con: &mut Connection, keys: &[Vec<u8>]) -> Vec<Snap> {
    keys.iter()
        .map(|k| Snap {
            key: k.clone(),
            digest: digest(con, k),
            info: bf_info(con, k),
            card: cardx(con, k),
            has_ttl: pttl(con, k) > 0,
        })
        .collect()
}

/// Everything `populate` made is there bit for bit and still behaves.
fn check_same(con: &mut Connection, keys: &[Vec<u8>], before: &[Snap], what: &str) {
    let after = snapshot(con, keys);
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(
            b,
            a,
            "{what}: filter {:?} changed",
            String::from_utf8_lossy(&b.key)
        );
    }
    let t: String = cmd("TYPE").arg("sc").query(con).expect("TYPE");
    assert_eq!(t, "warden-bf", "{what}");
    assert_eq!(
        mexists_range(con, b"sc", "sc:", 0..1_500),
        1_500,
        "{what}: false negatives"
    );
    assert_eq!(mexists_range(con, b"e1", "e1:", 0..100), 100, "{what}");
    assert_eq!(mexists_range(con, b"ns", "ns:", 0..300), 300, "{what}");
    let hits: Vec<i64> = cmd("BF.MEXISTSX")
        .arg(BIN_KEY)
        .arg(&b"\x00\xff"[..])
        .arg(&b"\xfe\xfd\xfc"[..])
        .arg("")
        .query(con)
        .expect("MEXISTSX binary");
    assert_eq!(hits, vec![1, 1, 1], "{what}");
    // The full filter is still full.
    let fresh = absent_item(con, b"full", "fresh:");
    let v = raw(con, cmd("BF.ADDX").arg("full").arg(&fresh));
    assert_eq!(err_of(&v).as_deref(), Some(FULL), "{what}: {v:?}");
    // Counters match the live filters.
    assert_eq!(
        warden_stat(con, "bf_filters"),
        keys.len() as i64,
        "{what}: bf_filters"
    );
    let bytes: i64 = after.iter().map(|s| s.info.size).sum();
    assert_eq!(warden_stat(con, "bf_bytes"), bytes, "{what}: bf_bytes");
}

fn wait_for_rewrite(s: &Server) {
    let mut con = s.conn();
    assert!(
        wait_until(Duration::from_secs(60), || {
            info_field(&mut con, "persistence", "aof_rewrite_in_progress").as_deref() == Some("0")
                && info_field(&mut con, "persistence", "aof_rewrite_scheduled").as_deref()
                    == Some("0")
        }),
        "AOF rewrite did not finish"
    );
    assert_eq!(
        info_field(&mut con, "persistence", "aof_last_bgrewrite_status").as_deref(),
        Some("ok"),
        "AOF rewrite failed; log:\n{}",
        s.log_tail(20)
    );
}

fn bgrewriteaof(s: &Server) {
    wait_for_rewrite(s);
    let mut con = s.conn();
    let _: String = cmd("BGREWRITEAOF").query(&mut con).expect("BGREWRITEAOF");
    wait_for_rewrite(s);
}

// ---------------------------------------------------------------------------------------
// DEBUG RELOAD, RDB, AOF
// ---------------------------------------------------------------------------------------

#[test]
fn debug_reload_keeps_filters_bit_for_bit() {
    let mut s = Server::start();
    let mut con = s.conn();
    let keys = populate(&mut con);
    let before = snapshot(&mut con, &keys);
    let db = db_digest(&mut con);
    ok(&mut con, cmd("DEBUG").arg("RELOAD"));
    assert_eq!(db_digest(&mut con), db);
    check_same(&mut con, &keys, &before, "DEBUG RELOAD");
    // Twice, after more writes.
    madd_range(&mut con, b"sc", "more:", 0..500);
    let before = snapshot(&mut con, &keys);
    ok(&mut con, cmd("DEBUG").arg("RELOAD"));
    check_same(&mut con, &keys, &before, "second DEBUG RELOAD");
    s.assert_alive();
}

#[test]
fn rdb_save_and_restart_keeps_filters() {
    let mut s = Server::start();
    let mut con = s.conn();
    let keys = populate(&mut con);
    let before = snapshot(&mut con, &keys);
    let db = db_digest(&mut con);
    s.restart("SAVE");
    let mut con = s.conn();
    assert_eq!(db_digest(&mut con), db);
    check_same(&mut con, &keys, &before, "RDB restart");
}

fn aof_rewrite_round_trip(preamble: &str) {
    let mut s = Server::start_with(
        &["--appendonly", "yes", "--aof-use-rdb-preamble", preamble],
        &[],
    );
    let mut con = s.conn();
    let mut keys = populate(&mut con);
    bgrewriteaof(&s);
    // Writes after the rewrite land in the incremental file as commands.
    madd_range(&mut con, b"sc", "after:", 0..300);
    addx(&mut con, b"late", "x");
    reserve(&mut con, b"late-ns", "0.02", 30, &["NONSCALING"]);
    madd_range(&mut con, b"late-ns", "l:", 0..25);
    keys.push(b"late".to_vec());
    keys.push(b"late-ns".to_vec());
    let before = snapshot(&mut con, &keys);
    let db = db_digest(&mut con);

    s.restart("NOSAVE");
    let mut con = s.conn();
    assert_eq!(db_digest(&mut con), db, "AOF (preamble {preamble}) restart");
    check_same(&mut con, &keys, &before, "AOF restart");
    assert_eq!(mexists_range(&mut con, b"sc", "after:", 0..300), 300);

    // Rewrite again from the loaded state and restart once more.
    bgrewriteaof(&s);
    s.restart("NOSAVE");
    let mut con = s.conn();
    assert_eq!(
        db_digest(&mut con),
        db,
        "second AOF (preamble {preamble}) restart"
    );
    check_same(&mut con, &keys, &before, "second AOF restart");
}

#[test]
fn aof_rewrite_with_rdb_preamble_and_restart() {
    aof_rewrite_round_trip("yes");
}

#[test]
fn aof_rewrite_without_rdb_preamble_and_restart() {
    aof_rewrite_round_trip("no");
}

#[test]
fn aof_replay_without_rewrite_keeps_filters() {
    let mut s = Server::start_with(&["--appendonly", "yes"], &[]);
    let mut con = s.conn();
    let keys = populate(&mut con);
    let before = snapshot(&mut con, &keys);
    let db = db_digest(&mut con);
    s.restart("NOSAVE");
    let mut con = s.conn();
    assert_eq!(db_digest(&mut con), db);
    check_same(&mut con, &keys, &before, "AOF replay");
}

#[test]
fn aof_rewrite_of_a_filter_above_20_mb_without_rdb_preamble() {
    big_filter_aof_round_trip("no");
}

#[test]
fn aof_rewrite_of_a_filter_above_20_mb_with_rdb_preamble() {
    big_filter_aof_round_trip("yes");
}

fn big_filter_aof_round_trip(preamble: &str) {
    let mut s = Server::start_with(
        &["--appendonly", "yes", "--aof-use-rdb-preamble", preamble],
        &[],
    );
    let mut con = conn_t(&s);
    reserve(&mut con, b"big", "0.0001", 9_000_000, &["NONSCALING"]);
    let info = bf_info(&mut con, b"big");
    assert!(info.size >= 20 << 20, "filter too small: {info:?}");
    madd_range(&mut con, b"big", "big:", 0..200_000);
    // A scaling neighbour, so the rewrite holds more than one filter.
    reserve(&mut con, b"small", "0.01", 100, &[]);
    madd_range(&mut con, b"small", "s:", 0..1_000);
    let d_big = digest(&mut con, b"big");
    let d_small = digest(&mut con, b"small");
    let info = bf_info(&mut con, b"big");

    bgrewriteaof(&s);
    let base: u64 = std::fs::read_dir(s.dir.join("appendonlydir"))
        .expect("appendonlydir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".base."))
        .map(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
        .max()
        .unwrap_or(0);
    if preamble == "no" {
        // BF._LOADX commands carry the bit arrays as they are (the RDB preamble
        // compresses the sparse bits, so its size says nothing).
        assert!(base >= 20 << 20, "rewritten base AOF is only {base} bytes");
    }
    // One more add after the rewrite, replayed from the incremental file.
    let fresh = absent_item(&mut con, b"big", "after-rewrite:");
    assert_eq!(addx(&mut con, b"big", &fresh), 1);
    let d_big_after = digest(&mut con, b"big");
    assert_ne!(d_big_after, d_big);

    s.restart("NOSAVE");
    let mut con = conn_t(&s);
    assert_eq!(digest(&mut con, b"big"), d_big_after);
    assert_eq!(digest(&mut con, b"small"), d_small);
    assert_eq!(existsx(&mut con, b"big", &fresh), 1);
    assert_eq!(mexists_range(&mut con, b"big", "big:", 0..200_000), 200_000);
    let after = bf_info(&mut con, b"big");
    assert_eq!(after.items, info.items + 1);
    assert_eq!(after.size, info.size);
    s.assert_alive();
}

// ---------------------------------------------------------------------------------------
// DUMP / RESTORE and COPY
// ---------------------------------------------------------------------------------------

fn dump(con: &mut Connection, key: &[u8]) -> Vec<u8> {
    cmd("DUMP").arg(key).query(con).expect("DUMP")
}

#[test]
fn dump_restore_keeps_filters_bit_for_bit() {
    let mut s = Server::start();
    let mut con = s.conn();
    let keys = populate(&mut con);
    let before = snapshot(&mut con, &keys);
    let other = Server::start_with(&[], &["bf-error-rate", "0.2", "bf-initial-capacity", "7"]);
    let mut oc = other.conn();
    for snap in &before {
        let payload = dump(&mut con, &snap.key);
        let mut copy = b"restored:".to_vec();
        copy.extend_from_slice(&snap.key);
        // The TTL is part of DEBUG DIGEST-VALUE (as a marker): restore it too.
        let ttl = if snap.has_ttl {
            pttl(&mut con, &snap.key)
        } else {
            0
        };
        ok(&mut con, cmd("RESTORE").arg(&copy).arg(ttl).arg(&payload));
        assert_eq!(
            digest(&mut con, &copy),
            snap.digest,
            "{}",
            String::from_utf8_lossy(&snap.key)
        );
        assert_eq!(bf_info(&mut con, &copy), snap.info);
        assert_eq!(cardx(&mut con, &copy), snap.card);
        // On another server with other defaults as well.
        ok(
            &mut oc,
            cmd("RESTORE").arg(&snap.key).arg(ttl).arg(&payload),
        );
        assert_eq!(digest(&mut oc, &snap.key), snap.digest);
        // Busy key without REPLACE.
        let v = raw(&mut con, cmd("RESTORE").arg(&copy).arg(0).arg(&payload));
        let e = err_of(&v).unwrap_or_default();
        assert!(e.starts_with("BUSYKEY"), "{v:?}");
    }
    // The copy is independent of the original.
    let fresh = absent_item(&mut con, b"restored:sc", "indep:");
    assert_eq!(addx(&mut con, b"restored:sc", &fresh), 1);
    assert_eq!(existsx(&mut con, b"sc", &fresh), 0);
    assert_eq!(digest(&mut con, b"sc"), before[0].digest);
    // REPLACE over a key of another type, with a TTL.
    let _: () = cmd("SET").arg("str").arg("v").query(&mut con).expect("SET");
    let payload = dump(&mut con, b"e1");
    ok(
        &mut con,
        cmd("RESTORE")
            .arg("str")
            .arg(50_000)
            .arg(&payload)
            .arg("REPLACE"),
    );
    let t = pttl(&mut con, b"str");
    assert!(t > 0 && t <= 50_000, "{t}");
    let _: i64 = cmd("PERSIST").arg("str").query(&mut con).expect("PERSIST");
    assert_eq!(digest(&mut con, b"str"), digest(&mut con, b"e1"));
    // Restored filters are saved and loaded like any other.
    let d = digest(&mut con, b"restored:e9");
    ok(&mut con, cmd("DEBUG").arg("RELOAD"));
    assert_eq!(digest(&mut con, b"restored:e9"), d);
    assert_eq!(
        warden_stat(&mut con, "bf_filters"),
        2 * keys.len() as i64 + 1
    );
    s.assert_alive();
}

#[test]
fn copy_is_a_deep_copy() {
    let mut s = Server::start();
    let mut con = s.conn();
    let keys = populate(&mut con);
    let before = snapshot(&mut con, &keys);
    for snap in &before {
        let mut dst = b"cp:".to_vec();
        dst.extend_from_slice(&snap.key);
        let n: i64 = cmd("COPY")
            .arg(&snap.key)
            .arg(&dst)
            .query(&mut con)
            .expect("COPY");
        assert_eq!(n, 1);
        assert_eq!(digest(&mut con, &dst), snap.digest);
        assert_eq!(bf_info(&mut con, &dst), snap.info);
    }
    assert_eq!(warden_stat(&mut con, "bf_filters"), 2 * keys.len() as i64);
    // Writing to the copy leaves the original alone (and the other way round).
    madd_range(&mut con, b"cp:sc", "copy-only:", 0..2_000);
    assert!(bf_info(&mut con, b"cp:sc").filters > before[0].info.filters);
    madd_range(&mut con, b"e1", "orig-only:", 0..50);
    assert_eq!(digest(&mut con, b"sc"), before[0].digest);
    assert_ne!(digest(&mut con, b"cp:e1"), digest(&mut con, b"e1"));
    assert_eq!(digest(&mut con, b"cp:e1"), before[5].digest);
    // COPY without REPLACE onto an existing key does nothing; with REPLACE it copies.
    let n: i64 = cmd("COPY")
        .arg("ns")
        .arg("cp:sc")
        .query(&mut con)
        .expect("COPY");
    assert_eq!(n, 0);
    let n: i64 = cmd("COPY")
        .arg("ns")
        .arg("cp:sc")
        .arg("REPLACE")
        .query(&mut con)
        .expect("COPY REPLACE");
    assert_eq!(n, 1);
    assert_eq!(digest(&mut con, b"cp:sc"), before[1].digest);
    // COPY to another database.
    let n: i64 = cmd("COPY")
        .arg("sc")
        .arg("sc")
        .arg("DB")
        .arg(1)
        .query(&mut con)
        .expect("COPY DB");
    assert_eq!(n, 1);
    ok(&mut con, cmd("SELECT").arg(1));
    assert_eq!(digest(&mut con, b"sc"), before[0].digest);
    ok(&mut con, cmd("SELECT").arg(0));
    let sizes: i64 = {
        let mut total = 0;
        for db in [0, 1] {
            ok(&mut con, cmd("SELECT").arg(db));
            let ks: Vec<Vec<u8>> = cmd("KEYS").arg("*").query(&mut con).expect("KEYS");
            for k in ks {
                total += bf_info(&mut con, &k).size;
            }
        }
        ok(&mut con, cmd("SELECT").arg(0));
        total
    };
    assert_eq!(warden_stat(&mut con, "bf_bytes"), sizes);
    s.assert_alive();
}

// ---------------------------------------------------------------------------------------
// Replication
// ---------------------------------------------------------------------------------------

/// Commands the master propagated until `SET <sentinel>`, without MULTI/EXEC.
fn stream_until_sentinel(tap: &mut ReplicationTap, sentinel: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    loop {
        let c = tap
            .next_command(Duration::from_secs(10))
            .unwrap_or_else(|| panic!("sentinel never arrived; got so far: {out:?}"));
        let name = c[0].to_ascii_uppercase();
        if name == "SET" && c.get(1).map(String::as_str) == Some(sentinel) {
            return out;
        }
        if name == "MULTI" || name == "EXEC" {
            continue;
        }
        out.push(c);
    }
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

/// Checks a propagated BF.RESERVEX: key, rate (as a number), capacity and the rest.
fn assert_reserve(c: &[String], key: &str, rate: f64, capacity: &str, tail: &[&str]) {
    assert!(
        c.len() >= 4 && c[0].eq_ignore_ascii_case("BF.RESERVEX") && c[1] == key,
        "expected BF.RESERVEX {key}, got {c:?}"
    );
    assert_eq!(c[2].parse::<f64>().ok(), Some(rate), "{c:?}");
    assert_eq!(c[3], capacity, "{c:?}");
    let rest: Vec<String> = c[4..].iter().map(|s| s.to_ascii_uppercase()).collect();
    assert_eq!(rest, words(tail), "{c:?}");
}

fn assert_madd(c: &[String], key: &str, items: &[&str]) {
    assert!(
        c[0].eq_ignore_ascii_case("BF.MADDX") || (items.len() == 1 && c[0] == "BF.ADDX"),
        "expected BF.MADDX {key} {items:?}, got {c:?}"
    );
    assert_eq!(c[1], key, "{c:?}");
    assert_eq!(&c[2..], words(items).as_slice(), "{c:?}");
}

#[test]
fn replication_stream_carries_effects_only() {
    let mut s = Server::start();
    let mut con = s.conn();
    let mut tap = s.replication_tap();

    // Implicit creation: an explicit reserve with the parameters used, then the items.
    assert_eq!(addx(&mut con, b"s1", "a"), 1);
    // Present items, reads and errors replicate nothing.
    assert_eq!(addx(&mut con, b"s1", "a"), 0);
    let _ = raw(&mut con, cmd("BF.EXISTSX").arg("s1").arg("a"));
    let _ = raw(&mut con, cmd("BF.MEXISTSX").arg("s1").arg("a").arg("b"));
    let _ = raw(&mut con, cmd("BF.INFOX").arg("s1"));
    let _ = raw(&mut con, cmd("BF.INFOX").arg("s1").arg("SIZE"));
    let _ = raw(&mut con, cmd("BF.CARDX").arg("s1"));
    let _ = raw(&mut con, cmd("BF.EXISTSX").arg("missing").arg("x"));
    let _ = raw(&mut con, cmd("BF.RESERVEX").arg("s6").arg("0").arg(100));
    let _ = raw(&mut con, cmd("BF.RESERVEX").arg("s1").arg("0.01").arg(100));
    let _ = raw(
        &mut con,
        cmd("BF.INSERTX")
            .arg("s6")
            .arg("NOCREATE")
            .arg("ITEMS")
            .arg("a"),
    );
    let _ = raw(&mut con, cmd("BF.ADDX").arg("s1"));
    // Only the new items of a MADDX.
    let r: Vec<i64> = cmd("BF.MADDX")
        .arg("s1")
        .arg("a")
        .arg("b")
        .arg("c")
        .query(&mut con)
        .expect("MADDX");
    assert_eq!(r, vec![0, 1, 1]);
    let r: Vec<i64> = cmd("BF.MADDX")
        .arg("s1")
        .arg("a")
        .arg("b")
        .arg("c")
        .query(&mut con)
        .expect("MADDX again");
    assert_eq!(r, vec![0, 0, 0]);
    // INSERTX creates with its options.
    let _: Vec<i64> = cmd("BF.INSERTX")
        .arg("s2")
        .arg("CAPACITY")
        .arg(50)
        .arg("ERROR")
        .arg("0.001")
        .arg("NONSCALING")
        .arg("ITEMS")
        .arg("x")
        .arg("y")
        .query(&mut con)
        .expect("INSERTX");
    let _: Vec<i64> = cmd("BF.INSERTX")
        .arg("s3")
        .arg("EXPANSION")
        .arg(5)
        .arg("ITEMS")
        .arg("z")
        .query(&mut con)
        .expect("INSERTX expansion");
    // Explicit reserves.
    reserve(&mut con, b"s4", "0.05", 1000, &["EXPANSION", "4"]);
    reserve(&mut con, b"s5", "0.02", 10, &["NONSCALING"]);
    // A MADDX that fills a non-scaling filter: only what it added.
    let items: Vec<String> = (0..15).map(|i| item("i", i)).collect();
    let v = raw(&mut con, cmd("BF.MADDX").arg("s5").arg(&items));
    let Value::Array(a) = v else {
        panic!("MADDX: {v:?}");
    };
    let added: Vec<&str> = items
        .iter()
        .zip(&a)
        .filter(|(_, r)| **r == Value::Int(1))
        .map(|(i, _)| i.as_str())
        .collect();
    assert_eq!(added.len(), 10, "{a:?}");
    let _ = raw(&mut con, cmd("BF.ADDX").arg("s5").arg("overflow-item"));
    // Implicit creation through MADDX with a duplicate.
    let r: Vec<i64> = cmd("BF.MADDX")
        .arg("s7")
        .arg("p")
        .arg("p")
        .arg("q")
        .query(&mut con)
        .expect("MADDX create");
    assert_eq!(r, vec![1, 0, 1]);
    // Defaults changed at run time are replicated as explicit parameters.
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("warden.bf-error-rate")
        .arg("0.003")
        .query(&mut con)
        .expect("CONFIG SET");
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("warden.bf-initial-capacity")
        .arg("77")
        .query(&mut con)
        .expect("CONFIG SET");
    addx(&mut con, b"s8", "k");
    let _: () = cmd("SET")
        .arg("sentinel")
        .arg("1")
        .query(&mut con)
        .expect("SET");

    let got = stream_until_sentinel(&mut tap, "sentinel");
    assert_eq!(got.len(), 14, "stream: {got:#?}");
    assert_reserve(&got[0], "s1", 0.01, "100", &["EXPANSION", "2"]);
    assert_madd(&got[1], "s1", &["a"]);
    assert_madd(&got[2], "s1", &["b", "c"]);
    assert_reserve(&got[3], "s2", 0.001, "50", &["NONSCALING"]);
    assert_madd(&got[4], "s2", &["x", "y"]);
    assert_reserve(&got[5], "s3", 0.01, "100", &["EXPANSION", "5"]);
    assert_madd(&got[6], "s3", &["z"]);
    assert_reserve(&got[7], "s4", 0.05, "1000", &["EXPANSION", "4"]);
    assert_reserve(&got[8], "s5", 0.02, "10", &["NONSCALING"]);
    assert_madd(&got[9], "s5", &added);
    assert_reserve(&got[10], "s7", 0.01, "100", &["EXPANSION", "2"]);
    assert_madd(&got[11], "s7", &["p", "q"]);
    assert_reserve(&got[12], "s8", 0.003, "77", &["EXPANSION", "2"]);
    assert_madd(&got[13], "s8", &["k"]);
    s.assert_alive();
}

/// Lines of a server's log that explain a refused or failed command.
fn critical_lines(s: &Server) -> String {
    std::fs::read_to_string(s.dir.join("redis.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("CRITICAL") || l.contains("Guru") || l.contains("panicked"))
        .take(10)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Waits until `n` replicas acknowledged every write made on `con`.
fn wait_replicas(con: &mut Connection, n: i64) {
    let acked: i64 = cmd("WAIT").arg(n).arg(10_000).query(con).expect("WAIT");
    assert_eq!(acked, n, "replicas did not acknowledge in time");
}

/// The same workload, run against any master.
fn mixed_workload(con: &mut Connection) {
    addx(con, b"a1", "x");
    madd_range(con, b"a2", "a2:", 0..1_000);
    let _: Vec<i64> = cmd("BF.INSERTX")
        .arg("a3")
        .arg("ITEMS")
        .arg("p")
        .arg("q")
        .query(con)
        .expect("INSERTX");
    let _: Vec<i64> = cmd("BF.INSERTX")
        .arg("a4")
        .arg("CAPACITY")
        .arg(10)
        .arg("ERROR")
        .arg("0.05")
        .arg("EXPANSION")
        .arg(3)
        .arg("ITEMS")
        .arg((0..50).map(|i| item("a4:", i)).collect::<Vec<_>>())
        .query(con)
        .expect("INSERTX growth");
    let _ = raw(
        con,
        cmd("BF.INSERTX")
            .arg("a5")
            .arg("NONSCALING")
            .arg("CAPACITY")
            .arg(5)
            .arg("ITEMS")
            .arg((0..10).map(|i| item("a5:", i)).collect::<Vec<_>>()),
    );
    reserve(con, b"a6", "0.001", 1000, &["NONSCALING"]);
    madd_range(con, b"a6", "a6:", 0..700);
    reserve(con, b"a7", "0.02", 20, &["EXPANSION", "1"]);
    madd_range(con, b"a7", "a7:", 0..200);
    let _: i64 = cmd("DEL").arg("a1").query(con).expect("DEL");
    addx(con, b"a1", "again");
    let _: i64 = cmd("COPY").arg("a2").arg("a8").query(con).expect("COPY");
    madd_range(con, b"a8", "a8:", 0..300);
    let _: i64 = cmd("PEXPIRE")
        .arg("a2")
        .arg(1_000_000)
        .query(con)
        .expect("PEXPIRE");
    let payload = dump(con, b"a7");
    ok(con, cmd("RESTORE").arg("a9").arg(0).arg(&payload));
    madd_range(con, b"a9", "a9:", 0..100);
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("warden.bf-error-rate")
        .arg("0.05")
        .query(con)
        .expect("CONFIG SET");
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("warden.bf-expansion")
        .arg("3")
        .query(con)
        .expect("CONFIG SET");
    madd_range(con, b"a10", "a10:", 0..500);
    let _: () = cmd("MULTI").query(con).expect("MULTI");
    let _: () = cmd("BF.ADDX")
        .arg("a11")
        .arg("m1")
        .query(con)
        .expect("queued");
    let _: () = cmd("BF.MADDX")
        .arg("a11")
        .arg("m1")
        .arg("m2")
        .query(con)
        .expect("queued");
    let _: Value = cmd("EXEC").query(con).expect("EXEC");
    // From a script: effects are replicated, not the script.
    let _: Value = cmd("EVAL")
        .arg(
            "local r = {} for i = 1, 300 do r[#r + 1] = \
             redis.call('BF.ADDX', KEYS[1], 'lua' .. i) end return #r",
        )
        .arg(1)
        .arg("a12")
        .query(con)
        .expect("EVAL");
}

const WORKLOAD_KEYS: [&str; 12] = [
    "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10", "a11", "a12",
];

#[test]
fn replicas_with_other_defaults_end_with_the_same_digest() {
    let mut m = Server::start();
    let other_defaults = ["bf-error-rate", "0.2", "bf-initial-capacity", "7"];
    let mut r1 = m.start_replica(&[], &other_defaults);
    let mut con = conn_t(&m);
    mixed_workload(&mut con);
    // A second replica with yet other defaults joins after the workload (full sync).
    let mut r2 = m.start_replica(&[], &["bf-expansion", "5", "bf-error-rate", "0.3"]);
    madd_range(&mut con, b"a2", "late:", 0..100);
    // WAIT on the connection that wrote: a new connection has no writes to wait for.
    wait_replicas(&mut con, 2);
    m.sync_replicas(2);

    let md = db_digest(&mut con);
    let mut c1 = r1.conn();
    let mut c2 = r2.conn();
    for k in WORKLOAD_KEYS {
        let d = digest(&mut con, k.as_bytes());
        assert_eq!(digest(&mut c1, k.as_bytes()), d, "replica 1 key {k}");
        assert_eq!(digest(&mut c2, k.as_bytes()), d, "replica 2 key {k}");
        assert_eq!(
            bf_info(&mut c1, k.as_bytes()),
            bf_info(&mut con, k.as_bytes())
        );
    }
    assert_eq!(db_digest(&mut c1), md, "replica 1 digest");
    assert_eq!(db_digest(&mut c2), md, "replica 2 digest");
    // The implicitly created filter has the master's defaults on the replicas.
    let info = bf_info(&mut c1, b"a3");
    assert_eq!(
        (info.capacity, info.error_rate, info.expansion),
        (100, 0.01, Some(2))
    );
    let info = bf_info(&mut c1, b"a10");
    assert_eq!((info.error_rate, info.expansion), (0.05, Some(3)));
    assert!(pttl(&mut c1, b"a2") > 0);
    assert_eq!(
        warden_stat(&mut c1, "bf_filters"),
        warden_stat(&mut con, "bf_filters")
    );
    assert_eq!(
        warden_stat(&mut c1, "bf_bytes"),
        warden_stat(&mut con, "bf_bytes")
    );

    // Replicas answer reads and refuse writes.
    assert_eq!(existsx(&mut c1, b"a3", "p"), 1);
    let v = raw(&mut c1, cmd("BF.ADDX").arg("a3").arg("on-replica"));
    assert!(
        err_of(&v).is_some_and(|e| e.starts_with("READONLY")),
        "{v:?}"
    );

    // Promotion: the promoted replica keeps every filter and goes on like the master.
    ok(&mut c1, cmd("REPLICAOF").arg("NO").arg("ONE"));
    for c in [&mut con, &mut c1] {
        madd_range(c, b"a2", "post:", 0..500);
        madd_range(c, b"a6", "post:", 0..200);
        let _ = raw(c, cmd("BF.MADDX").arg("a5").arg("post-x").arg("post-y"));
    }
    for k in ["a2", "a5", "a6"] {
        assert_eq!(
            digest(&mut c1, k.as_bytes()),
            digest(&mut con, k.as_bytes()),
            "promoted replica key {k}"
        );
    }
    m.assert_alive();
    r1.assert_alive();
    r2.assert_alive();
}

// ---------------------------------------------------------------------------------------
// DUMP payloads: forging filter payloads (parsing, CRC64 and encoding are in
// tests/common/payload.rs)
// ---------------------------------------------------------------------------------------

/// Index of field `f` of layer `layer` (0 capacity, 1 rate, 2 hashes, 3 items, 4 bits).
fn layer_field(layer: usize, f: usize) -> usize {
    3 + layer * 5 + f
}

fn layer_count(d: &Dump) -> usize {
    (d.fields.len() - 3) / 5
}

// The odd-value generators below are narrower than those in `common::payload` (other
// value lists and choices), so the seeded forgeries of this file stay as they were.

fn odd_uint(rng: &mut Rng, orig: u64) -> u64 {
    let r = rng.next();
    rng.pick(&[
        0,
        1,
        2,
        7,
        63,
        64,
        65,
        1023,
        32_768,
        32_769,
        u64::from(u32::MAX),
        u64::from(u32::MAX) + 1,
        1 << 40,
        1 << 62,
        i64::MAX as u64,
        u64::MAX,
        u64::MAX - 1,
        orig.wrapping_add(1),
        orig.wrapping_sub(1),
        orig.wrapping_mul(2),
        orig / 2,
        r,
    ])
}

fn odd_double(rng: &mut Rng, orig: f64) -> f64 {
    let r = rng.next();
    rng.pick(&[
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        0.999_999,
        1e-300,
        5e-324,
        f64::MIN_POSITIVE,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MAX,
        orig * 2.0,
        orig / 2.0,
        f64::from_bits(orig.to_bits().wrapping_add(1)),
        f64::from_bits(r),
    ])
}

fn odd_string(rng: &mut Rng, orig: &[u8]) -> Vec<u8> {
    let mut s = orig.to_vec();
    match rng.below(8) {
        0 => s.clear(),
        1 => {
            s.pop();
        }
        2 => s.truncate(s.len().saturating_sub(8)),
        3 => s.extend_from_slice(&[0; 8]),
        4 => s.push(0xff),
        5 => s.iter_mut().for_each(|b| *b = 0xff),
        6 => s = [orig, orig].concat(),
        _ => s = vec![0xab; 8 * (1 + rng.below(64))],
    }
    s
}

/// A field of another kind than `f`.
fn other_kind(rng: &mut Rng, f: &Field) -> Field {
    let choices = match f {
        Field::U(v) => vec![Field::D(*v as f64), Field::S(v.to_le_bytes().to_vec())],
        Field::D(x) => vec![Field::U(x.to_bits()), Field::S(x.to_string().into_bytes())],
        Field::S(s) => vec![Field::U(s.len() as u64), Field::D(0.01)],
        // A filter payload has no SINT or FLOAT fields (see `base_payloads`).
        Field::I(_) | Field::F(_) | Field::Raw(_) => vec![Field::U(1)],
    };
    rng.pick(&choices)
}

/// Raw bytes of a string field whose declared length does not match its data.
fn forged_string_header(rng: &mut Rng, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    enc_len(&mut out, OP_STRING);
    match rng.below(4) {
        0 => {
            // Declared length far beyond the payload.
            let l = rng.pick(&[1u64 << 20, 1 << 33, 1 << 40, 1 << 62, u64::MAX]);
            enc_len(&mut out, l);
            out.extend_from_slice(data);
        }
        1 => {
            // LZF with a forged uncompressed length (data as literal runs).
            out.push(0xc3);
            let mut comp = Vec::new();
            for chunk in data.chunks(32) {
                comp.push((chunk.len() - 1) as u8);
                comp.extend_from_slice(chunk);
            }
            enc_len(&mut out, comp.len() as u64);
            let ulen = rng.pick(&[
                data.len() as u64 + 1,
                (data.len() as u64).saturating_sub(1),
                0,
                1 << 40,
                u64::MAX,
            ]);
            enc_len(&mut out, ulen);
            out.extend_from_slice(&comp);
        }
        2 => {
            // LZF with a back reference before the start of the output.
            out.push(0xc3);
            let comp = [0x00, 0x41, 0xe0, 0x10, 0xff];
            enc_len(&mut out, comp.len() as u64);
            enc_len(&mut out, 300);
            out.extend_from_slice(&comp);
        }
        _ => {
            // Unknown special encoding / bad length prefix.
            out.push(rng.pick(&[0xc4u8, 0xff, 0x82, 0xbf]));
            out.extend_from_slice(data);
        }
    }
    out
}

/// One structural forgery of a parsed filter payload.
fn forge(rng: &mut Rng, d: &Dump, kind: usize) -> Dump {
    let mut d = d.clone();
    let n = d.fields.len();
    let layers = layer_count(&d);
    match kind {
        // Same kind, odd value.
        3 => {
            let i = rng.below(n);
            d.fields[i] = match &d.fields[i] {
                Field::U(v) => Field::U(odd_uint(rng, *v)),
                Field::D(x) => Field::D(odd_double(rng, *x)),
                Field::S(s) => Field::S(odd_string(rng, s)),
                other => other.clone(),
            };
        }
        // Another kind (opcode mismatch).
        4 => {
            let i = rng.below(n);
            d.fields[i] = other_kind(rng, &d.fields[i]);
        }
        // Missing, repeated or extra fields, missing EOF, trailing bytes.
        5 => match rng.below(5) {
            0 => {
                d.fields.remove(rng.below(n));
            }
            1 => {
                let i = rng.below(n);
                let f = d.fields[i].clone();
                d.fields.insert(i, f);
            }
            2 => {
                let f = rng.pick(&[Field::U(7), Field::D(0.5), Field::S(vec![0; 8])]);
                d.fields.insert(rng.below(n + 1), f);
            }
            3 => d.eof = false,
            _ => {
                let junk: Vec<u8> = (0..1 + rng.below(16)).map(|_| rng.next() as u8).collect();
                d.fields.push(Field::Raw(junk));
            }
        },
        // Layer count.
        6 => {
            let c = rng.pick(&[
                0,
                layers as u64 + 1,
                layers as u64 - 1,
                64,
                65,
                1000,
                1 << 32,
                1 << 62,
                u64::MAX,
            ]);
            d.fields[2] = Field::U(c);
        }
        // Capacities (and items to match).
        7 => {
            let l = rng.below(layers);
            let c = rng.pick(&[0, 1 << 32, 1 << 40, 1 << 62, i64::MAX as u64, u64::MAX]);
            d.fields[layer_field(l, 0)] = Field::U(c);
            if rng.below(2) == 0 {
                d.fields[layer_field(l, 3)] = Field::U(c);
            }
        }
        // Hashes or items.
        8 => {
            let l = rng.below(layers);
            let f = rng.pick(&[2usize, 3]);
            let Field::U(v) = d.fields[layer_field(l, f)] else {
                unreachable!()
            };
            d.fields[layer_field(l, f)] = Field::U(odd_uint(rng, v));
        }
        // Error rates, of the filter or of a layer.
        9 => {
            let i = if rng.below(2) == 0 {
                0
            } else {
                layer_field(rng.below(layers), 1)
            };
            let Field::D(x) = d.fields[i] else {
                unreachable!()
            };
            d.fields[i] = Field::D(odd_double(rng, x));
        }
        // Module id / encoding version / type byte / RDB version.
        10 => match rng.below(4) {
            0 => d.module_id = (d.module_id & !1023) | rng.pick(&[0u64, 2, 3, 1023]),
            1 => d.module_id ^= 1 << (10 + rng.below(54)),
            2 => d.type_byte = rng.pick(&[0u8, 2, 5, 6, 8, 14, 18, 21, 255]),
            _ => {
                let v = u16::from_le_bytes(d.ver);
                let nv = rng.pick(&[0u16, 1, v.wrapping_sub(1), v + 1, 0xffff]);
                d.ver = nv.to_le_bytes();
            }
        },
        // String framing.
        11 => {
            let l = rng.below(layers);
            let i = layer_field(l, 4);
            let Field::S(s) = &d.fields[i] else {
                unreachable!()
            };
            let raw_bytes = forged_string_header(rng, s);
            d.fields[i] = Field::Raw(raw_bytes);
        }
        // Plausible multi-layer filters: copies of real layers, odd expansions,
        // full newest layers (so adds must grow or refuse).
        12 => {
            let want = rng.pick(&[2usize, 3, 10, 63, 64]);
            let mut fields = d.fields[..3].to_vec();
            for k in 0..want {
                let src = k % layers;
                let mut layer = d.fields[layer_field(src, 0)..layer_field(src, 0) + 5].to_vec();
                if rng.below(2) == 0 {
                    layer[3] = layer[0].clone();
                }
                fields.extend(layer);
            }
            fields[2] = Field::U(want as u64);
            fields[1] = Field::U(rng.pick(&[0u64, 1, 2, 32_768, 32_769, u64::from(u32::MAX)]));
            d.fields = fields;
        }
        _ => unreachable!("kind {kind}"),
    }
    d
}

/// A filter small enough to be fuzzed a thousand times: the base payloads.
fn base_payloads(con: &mut Connection) -> Vec<(Vec<u8>, Dump)> {
    // One layer.
    reserve(con, b"base:small", "0.01", 10, &[]);
    madd_range(con, b"base:small", "b", 0..5);
    // Two layers.
    reserve(con, b"base:two", "0.01", 20, &["EXPANSION", "2"]);
    madd_range(con, b"base:two", "t", 0..30);
    assert_eq!(bf_info(con, b"base:two").filters, 2);
    // Sparse and larger: its bit array is LZF-compressed in the payload.
    reserve(con, b"base:sparse", "0.01", 1000, &["NONSCALING"]);
    madd_range(con, b"base:sparse", "s", 0..3);
    ["base:small", "base:two", "base:sparse"]
        .iter()
        .map(|k| {
            let p = dump(con, k.as_bytes());
            let d = parse_dump(&p);
            // A filter is saved with UINT, DOUBLE and STRING fields only.
            for f in &d.fields {
                assert!(
                    matches!(f, Field::U(_) | Field::D(_) | Field::S(_)),
                    "unexpected module field in a filter payload: {f:?}"
                );
            }
            (p, d)
        })
        .collect()
}

#[test]
fn crc64_matches_redis() {
    // The check value from Redis's crc64.c.
    assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
}

/// Controls for the fuzzer: re-encoded payloads are accepted, and forgeries the loader
/// must catch are refused (so forged payloads really reach the module's rdb_load).
#[test]
fn forged_payloads_reach_the_module_loader() {
    let mut s = Server::start();
    let mut con = s.conn();
    let bases = base_payloads(&mut con);
    let (small_payload, small) = &bases[0];
    let (_, two) = &bases[1];
    let (_, sparse) = &bases[2];
    assert_eq!(small.fields.len(), 3 + 5);
    assert_eq!(two.fields.len(), 3 + 10);

    // Re-encoded (raw strings, our own CRC): accepted, identical filter.
    for (i, (orig, d)) in bases.iter().enumerate() {
        let key = format!("reenc{i}");
        ok(
            &mut con,
            cmd("RESTORE")
                .arg(&key)
                .arg(0)
                .arg(encode(d))
                .arg("REPLACE"),
        );
        let src: String = ["base:small", "base:two", "base:sparse"][i].to_string();
        assert_eq!(
            digest(&mut con, key.as_bytes()),
            digest(&mut con, src.as_bytes())
        );
        assert!(orig.len() > 10);
    }
    // A bad CRC is refused by Redis itself.
    let mut bad_crc = small_payload.clone();
    let last = bad_crc.len() - 1;
    bad_crc[last] ^= 1;
    let v = raw(&mut con, cmd("RESTORE").arg("x").arg(0).arg(&bad_crc));
    assert!(err_of(&v).is_some(), "{v:?}");

    let mut must_fail: Vec<(&str, Dump)> = Vec::new();
    let mut with = |name: &'static str, base: &Dump, f: &dyn Fn(&mut Dump)| {
        let mut d = base.clone();
        f(&mut d);
        must_fail.push((name, d));
    };
    // (A different but valid hash count is a consistent filter, with another
    // false-positive rate: stored layers are not tied to the sizing formula.)
    with("hashes 0", small, &|d| {
        d.fields[layer_field(0, 2)] = Field::U(0)
    });
    with("hashes 2^32", small, &|d| {
        d.fields[layer_field(0, 2)] = Field::U(1 << 32)
    });
    with("items > capacity", small, &|d| {
        d.fields[layer_field(0, 3)] = Field::U(11)
    });
    with("items u64::MAX", two, &|d| {
        d.fields[layer_field(1, 3)] = Field::U(u64::MAX)
    });
    with("bits short by a word", small, &|d| {
        if let Field::S(s) = &mut d.fields[layer_field(0, 4)] {
            s.truncate(s.len() - 8);
        }
    });
    with("bits not whole words", two, &|d| {
        if let Field::S(s) = &mut d.fields[layer_field(1, 4)] {
            s.push(0);
        }
    });
    with("bits empty", small, &|d| {
        d.fields[layer_field(0, 4)] = Field::S(Vec::new())
    });
    with("layer count 0", small, &|d| d.fields[2] = Field::U(0));
    with("layer count 65", small, &|d| d.fields[2] = Field::U(65));
    with("layer count u64::MAX", two, &|d| {
        d.fields[2] = Field::U(u64::MAX)
    });
    with("layer count + 1", two, &|d| d.fields[2] = Field::U(3));
    with("layer count - 1", two, &|d| d.fields[2] = Field::U(1));
    with("capacity u64::MAX", small, &|d| {
        d.fields[layer_field(0, 0)] = Field::U(u64::MAX)
    });
    with("capacity 2^40", sparse, &|d| {
        d.fields[layer_field(0, 0)] = Field::U(1 << 40)
    });
    with("capacity 0", small, &|d| {
        d.fields[layer_field(0, 0)] = Field::U(0)
    });
    with("error rate NaN", small, &|d| {
        d.fields[0] = Field::D(f64::NAN)
    });
    with("error rate 0", small, &|d| d.fields[0] = Field::D(0.0));
    with("error rate 1", small, &|d| d.fields[0] = Field::D(1.0));
    with("error rate -inf", two, &|d| {
        d.fields[0] = Field::D(f64::NEG_INFINITY)
    });
    with("layer rate 0", small, &|d| {
        d.fields[layer_field(0, 1)] = Field::D(0.0)
    });
    with("layer rate NaN", two, &|d| {
        d.fields[layer_field(1, 1)] = Field::D(f64::NAN)
    });
    with("expansion 0 with 2 layers", two, &|d| {
        d.fields[1] = Field::U(0)
    });
    with("expansion 2^32", two, &|d| d.fields[1] = Field::U(1 << 32));
    with("expansion 32769", small, &|d| {
        d.fields[1] = Field::U(32_769)
    });
    with("encoding version 2", small, &|d| {
        d.module_id = (d.module_id & !1023) | 2
    });
    with("encoding version 0", small, &|d| d.module_id &= !1023);
    with("uint where a double belongs", small, &|d| {
        d.fields[0] = Field::U(1)
    });
    with("string where a uint belongs", small, &|d| {
        d.fields[2] = Field::S(b"1".to_vec())
    });
    with("no EOF marker", small, &|d| d.eof = false);
    with("extra field", small, &|d| d.fields.push(Field::U(1)));
    with("truncated inside the bits", sparse, &|d| {
        let Field::S(s) = d.fields[layer_field(0, 4)].clone() else {
            unreachable!()
        };
        let mut r = Vec::new();
        enc_len(&mut r, OP_STRING);
        enc_len(&mut r, s.len() as u64);
        r.extend_from_slice(&s[..s.len() / 2]);
        d.fields[layer_field(0, 4)] = Field::Raw(r);
        d.eof = false;
    });
    with("string length 2^62", small, &|d| {
        let mut r = Vec::new();
        enc_len(&mut r, OP_STRING);
        enc_len(&mut r, 1 << 62);
        r.extend_from_slice(&[0; 16]);
        d.fields[layer_field(0, 4)] = Field::Raw(r);
    });

    let filters_before = warden_stat(&mut con, "bf_filters");
    let bytes_before = warden_stat(&mut con, "bf_bytes");
    for (name, d) in &must_fail {
        let v = raw(
            &mut con,
            cmd("RESTORE")
                .arg("forged")
                .arg(0)
                .arg(encode(d))
                .arg("REPLACE"),
        );
        assert!(
            err_of(&v).is_some(),
            "forgery '{name}' was accepted: {v:?}; INFOX: {:?}",
            raw(&mut con, cmd("BF.INFOX").arg("forged"))
        );
        assert!(!exists(&mut con, b"forged"), "{name}");
        assert_eq!(
            warden_stat(&mut con, "bf_filters"),
            filters_before,
            "'{name}' leaked a filter count"
        );
        assert_eq!(
            warden_stat(&mut con, "bf_bytes"),
            bytes_before,
            "'{name}' leaked bytes"
        );
    }
    s.assert_alive();

    // A consistent 64-layer filter whose newest layer is full: loads, and an add of a
    // new item is refused (no 65th layer) without changing it.
    let mut d = small.clone();
    let layer: Vec<Field> = d.fields[3..8].to_vec();
    d.fields.truncate(3);
    d.fields[1] = Field::U(1);
    d.fields[2] = Field::U(64);
    for _ in 0..64 {
        let mut l = layer.clone();
        l[3] = l[0].clone();
        d.fields.extend(l);
    }
    ok(&mut con, cmd("RESTORE").arg("l64").arg(0).arg(encode(&d)));
    let info = bf_info(&mut con, b"l64");
    assert_eq!(info.filters, 64);
    let before = digest(&mut con, b"l64");
    let fresh = absent_item(&mut con, b"l64", "l64:");
    let v = raw(&mut con, cmd("BF.ADDX").arg("l64").arg(&fresh));
    assert!(err_of(&v).is_some(), "a 65th layer was added: {v:?}");
    assert_eq!(digest(&mut con, b"l64"), before);
    s.assert_alive();
}

/// Runs every command on a key that RESTORE accepted; any reply is fine, a dead
/// connection is not. The key's own DUMP must restore to the same digest.
fn exercise(con: &mut Connection, key: &str, i: usize) {
    let cmds: Vec<redis::Cmd> = vec![
        cmd("TYPE").arg(key).clone(),
        cmd("BF.EXISTSX").arg(key).arg("b0").clone(),
        cmd("BF.MEXISTSX")
            .arg(key)
            .arg("b1")
            .arg("t3")
            .arg("zz")
            .clone(),
        cmd("BF.INFOX").arg(key).clone(),
        cmd("BF.INFOX").arg(key).arg("SIZE").clone(),
        cmd("BF.INFOX").arg(key).arg("CAPACITY").clone(),
        cmd("BF.CARDX").arg(key).clone(),
        cmd("MEMORY").arg("USAGE").arg(key).clone(),
        cmd("BF.ADDX").arg(key).arg(format!("new{i}")).clone(),
        cmd("BF.MADDX")
            .arg(key)
            .arg(format!("m{i}a"))
            .arg(format!("m{i}b"))
            .arg("b0")
            .clone(),
        cmd("BF.INSERTX")
            .arg(key)
            .arg("NOCREATE")
            .arg("ITEMS")
            .arg(format!("n{i}"))
            .clone(),
        cmd("BF.EXISTSX").arg(key).arg(format!("new{i}")).clone(),
        cmd("DEBUG").arg("DIGEST-VALUE").arg(key).clone(),
    ];
    for c in &cmds {
        let _ = raw(con, c);
    }
    // Whatever was accepted can be dumped and restored again, bit for bit.
    if let Value::BulkString(p) = raw(con, cmd("DUMP").arg(key)) {
        let again = format!("{key}:again");
        let v = raw(
            con,
            cmd("RESTORE").arg(&again).arg(0).arg(&p).arg("REPLACE"),
        );
        assert!(
            err_of(&v).is_none(),
            "case {i}: DUMP of an accepted payload does not RESTORE: {v:?}"
        );
        let d1 = raw(con, cmd("DEBUG").arg("DIGEST-VALUE").arg(key));
        let d2 = raw(con, cmd("DEBUG").arg("DIGEST-VALUE").arg(&again));
        assert_eq!(d1, d2, "case {i}: round trip changed the value");
        let _ = raw(con, cmd("DEL").arg(&again));
    }
}

#[test]
fn thousand_corrupt_restore_payloads_never_crash_the_server() {
    let mut s = Server::start();
    let mut con = s.conn();
    let bases = base_payloads(&mut con);
    let base_keys = ["base:small", "base:two", "base:sparse"];
    let base_digests: Vec<String> = base_keys
        .iter()
        .map(|k| digest(&mut con, k.as_bytes()))
        .collect();
    let filters_before = warden_stat(&mut con, "bf_filters");
    let bytes_before = warden_stat(&mut con, "bf_bytes");

    const KINDS: usize = 14;
    let mut rng = Rng(0x5eed_b10f_0000_0001);
    let (mut accepted, mut refused) = (0usize, 0usize);
    let mut per_kind = [[0usize; 2]; KINDS];
    for i in 0..1_000 {
        let kind = i % KINDS;
        let (payload, parsed) = &bases[(i / KINDS) % bases.len()];
        let forged = match kind {
            0..=2 => corrupt_bytes(&mut rng, payload, kind),
            3..=12 => encode(&forge(&mut rng, parsed, kind)),
            _ => {
                // Two or three forgeries on top of each other.
                let mut d = parsed.clone();
                for _ in 0..2 + rng.below(2) {
                    if layer_count(&d) == 0 || (d.fields.len() - 3) % 5 != 0 {
                        break;
                    }
                    let k = rng.pick(&[3usize, 6, 7, 8, 9, 12]);
                    d = forge(&mut rng, &d, k);
                }
                encode(&d)
            }
        };
        let key = format!("c{i}");
        let v = raw(
            &mut con,
            cmd("RESTORE").arg(&key).arg(0).arg(&forged).arg("REPLACE"),
        );
        if err_of(&v).is_some() {
            refused += 1;
            per_kind[kind][1] += 1;
            assert!(
                !exists(&mut con, key.as_bytes()),
                "case {i}: refused RESTORE left a key"
            );
        } else {
            accepted += 1;
            per_kind[kind][0] += 1;
            exercise(&mut con, &key, i);
            let _ = raw(&mut con, cmd("DEL").arg(&key));
        }
        if i % 50 == 49 {
            s.assert_alive();
            con = s.conn();
        }
    }
    println!("accepted {accepted}, refused {refused}; per kind [accepted, refused]: {per_kind:?}");
    assert!(refused > 500, "most corrupt payloads must be refused");
    s.assert_alive();

    // Nothing leaked or changed: the base filters are intact, the counters match.
    for (k, d) in base_keys.iter().zip(&base_digests) {
        assert_eq!(&digest(&mut con, k.as_bytes()), d);
    }
    assert_eq!(warden_stat(&mut con, "bf_filters"), filters_before);
    assert_eq!(warden_stat(&mut con, "bf_bytes"), bytes_before);
    let dbsize: i64 = cmd("DBSIZE").query(&mut con).expect("DBSIZE");
    assert_eq!(dbsize, 3);
    ok(&mut con, cmd("DEBUG").arg("RELOAD"));
    s.assert_alive();
}

// ---------------------------------------------------------------------------------------
// bf-max-bytes is a limit on new filters, not on state that already exists
// ---------------------------------------------------------------------------------------

#[test]
fn replica_with_a_smaller_bf_max_bytes_keeps_the_masters_filters() {
    let mut m = Server::start();
    let mut r = m.start_replica(&[], &["bf-max-bytes", "1048576"]);
    let mut con = conn_t(&m);
    // 1.2 MB at once, and a filter that grows past 1 MiB.
    reserve(&mut con, b"big", "0.01", 1_000_000, &["NONSCALING"]);
    madd_range(&mut con, b"big", "b:", 0..1_000);
    reserve(&mut con, b"grows", "0.01", 200_000, &["EXPANSION", "4"]);
    madd_range(&mut con, b"grows", "g:", 0..250_000);
    assert!(bf_info(&mut con, b"grows").size > 1 << 20);
    let acked: i64 = cmd("WAIT").arg(1).arg(5_000).query(&mut con).expect("WAIT");
    assert!(
        acked == 1 && r.is_alive(),
        "the replica did not apply the stream (alive: {}); replica log:\n{}",
        r.is_alive(),
        critical_lines(&r)
    );
    let mut rc = r.conn();
    for k in ["big", "grows"] {
        assert!(
            exists(&mut rc, k.as_bytes()),
            "replica lacks {k}; log:\n{}",
            r.log_tail(10)
        );
        assert_eq!(
            digest(&mut rc, k.as_bytes()),
            digest(&mut con, k.as_bytes()),
            "replica key {k}"
        );
    }
    assert_eq!(db_digest(&mut rc), db_digest(&mut con));
    m.assert_alive();
}

fn restart_with_smaller_cap(preamble: &str) {
    let mut s = Server::start_with(
        &["--appendonly", "yes", "--aof-use-rdb-preamble", preamble],
        &["bf-max-bytes", "1048576"],
    );
    let mut con = conn_t(&s);
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("warden.bf-max-bytes")
        .arg("8388608")
        .query(&mut con)
        .expect("CONFIG SET");
    reserve(&mut con, b"big", "0.01", 1_000_000, &["NONSCALING"]);
    madd_range(&mut con, b"big", "b:", 0..1_000);
    reserve(&mut con, b"grows", "0.01", 200_000, &["EXPANSION", "4"]);
    madd_range(&mut con, b"grows", "g:", 0..250_000);
    assert!(bf_info(&mut con, b"grows").size > 1 << 20);
    bgrewriteaof(&s);
    let d_big = digest(&mut con, b"big");
    let d_grows = digest(&mut con, b"grows");
    // Back to the module argument's 1 MiB cap at start.
    s.restart("NOSAVE");
    let mut con = conn_t(&s);
    assert_eq!(
        digest(&mut con, b"big"),
        d_big,
        "preamble {preamble}: 'big' after restart; log:\n{}",
        critical_lines(&s)
    );
    assert_eq!(
        digest(&mut con, b"grows"),
        d_grows,
        "preamble {preamble}: 'grows' after restart"
    );
    assert_eq!(mexists_range(&mut con, b"grows", "g:", 0..250_000), 250_000);
}

#[test]
fn aof_restart_with_a_smaller_bf_max_bytes_keeps_filters_rdb_preamble() {
    restart_with_smaller_cap("yes");
}

#[test]
fn aof_restart_with_a_smaller_bf_max_bytes_keeps_filters_no_preamble() {
    restart_with_smaller_cap("no");
}

#[test]
fn aof_replay_of_implicit_creation_uses_the_parameters_used() {
    // Defaults changed at run time are gone after a restart; the AOF must carry the
    // parameters the filters were created with.
    let mut s = Server::start_with(&["--appendonly", "yes"], &[]);
    let mut con = s.conn();
    for (name, value) in [
        ("warden.bf-error-rate", "0.07"),
        ("warden.bf-initial-capacity", "13"),
        ("warden.bf-expansion", "5"),
    ] {
        ok(&mut con, cmd("CONFIG").arg("SET").arg(name).arg(value));
    }
    addx(&mut con, b"i1", "x");
    madd_range(&mut con, b"i2", "i2:", 0..200);
    let _: Vec<i64> = cmd("BF.INSERTX")
        .arg("i3")
        .arg("NONSCALING")
        .arg("ITEMS")
        .arg("a")
        .arg("b")
        .query(&mut con)
        .expect("INSERTX");
    let keys: Vec<Vec<u8>> = vec![b"i1".to_vec(), b"i2".to_vec(), b"i3".to_vec()];
    let digests: Vec<String> = keys.iter().map(|k| digest(&mut con, k)).collect();
    let info = bf_info(&mut con, b"i1");
    assert_eq!(
        (info.capacity, info.error_rate, info.expansion),
        (13, 0.07, Some(5))
    );
    s.restart("NOSAVE");
    let mut con = s.conn();
    let after: Vec<String> = keys.iter().map(|k| digest(&mut con, k)).collect();
    assert_eq!(after, digests);
    assert_eq!(bf_info(&mut con, b"i1"), info);
}

#[test]
fn internal_load_command_never_crashes() {
    // BF._LOADX is what a rewritten AOF holds; clients can send it too.
    let mut s = Server::start();
    let mut con = s.conn();
    reserve(&mut con, b"f", "0.01", 100, &[]);
    madd_range(&mut con, b"f", "f:", 0..300);
    let _: () = cmd("SET").arg("str").arg("v").query(&mut con).expect("SET");
    let mut rng = Rng(0x10ad_0000_0000_0001);
    let nums = [
        "0",
        "1",
        "2",
        "-1",
        "7",
        "64",
        "100",
        "32768",
        "32769",
        "4294967296",
        "9223372036854775807",
        "18446744073709551615",
        "abc",
        "",
        "1e3",
    ];
    let rates = [
        "0.01", "0.005", "0", "1", "-0.5", "nan", "inf", "1e-300", "5e-324", "abc", "",
    ];
    for i in 0..400 {
        let key = rng.pick(&["f", "new", "str", "missing"]);
        let mut c = cmd("BF._LOADX");
        c.arg(key);
        match rng.below(4) {
            0 | 1 => {
                c.arg(rng.pick(&["LAYER", "layer", "BITS", "FOO"]));
                c.arg(rng.pick(&rates));
                c.arg(rng.pick(&nums));
                c.arg(rng.pick(&nums));
                c.arg(rng.pick(&nums));
                c.arg(rng.pick(&rates));
                c.arg(rng.pick(&nums));
                c.arg(rng.pick(&nums));
            }
            2 => {
                c.arg(rng.pick(&["BITS", "bits", "LAYER"]));
                c.arg(rng.pick(&nums));
                c.arg(rng.pick(&nums));
                let len = rng.pick(&[0usize, 1, 7, 8, 16, 64, 1000, 4096]);
                let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                c.arg(bytes);
            }
            _ => {
                for _ in 0..rng.below(12) {
                    c.arg(rng.pick(&nums));
                }
            }
        }
        let _ = raw(&mut con, &c);
        if i % 50 == 49 {
            s.assert_alive();
            for k in ["f", "new"] {
                if exists(&mut con, k.as_bytes()) {
                    let _ = raw(&mut con, cmd("BF.INFOX").arg(k));
                    let _ = raw(&mut con, cmd("BF.MADDX").arg(k).arg("p").arg("q"));
                    let _ = raw(&mut con, cmd("DEBUG").arg("DIGEST-VALUE").arg(k));
                }
            }
        }
    }
    ok(&mut con, cmd("DEBUG").arg("RELOAD"));
    s.assert_alive();
}
