//! Integration tests for `BF.*X` filters across DEBUG RELOAD, RDB and AOF restarts (with
//! and without the RDB preamble, one filter above 20 MB), DUMP/RESTORE and COPY; an
//! AOF replays an implicit creation with the parameters it used.
//! Replication is in `tests/it/bloom/replication.rs`, `bf-max-bytes` on existing state in
//! `tests/it/bloom/max_bytes.rs`, forged payloads in `tests/it/bloom/payloads.rs`.

use crate::bloom::support::*;
use crate::common::*;

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
    let _: Vec<i64> = query!(
        con,
        "BF.MADDX",
        BIN_KEY,
        &b"\x00\xff"[..],
        &b"\xfe\xfd\xfc"[..],
        ""
    );
    // With a TTL.
    reserve(con, b"ttl", "0.01", 100, &[]);
    madd_range(con, b"ttl", "t:", 0..50);
    let _: i64 = query!(con, "PEXPIRE", "ttl", 1_000_000);
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
    let t: String = query!(con, "TYPE", "sc");
    assert_eq!(t, "warden-bf", "{what}");
    assert_eq!(
        mexists_range(con, b"sc", "sc:", 0..1_500),
        1_500,
        "{what}: false negatives"
    );
    assert_eq!(mexists_range(con, b"e1", "e1:", 0..100), 100, "{what}");
    assert_eq!(mexists_range(con, b"ns", "ns:", 0..300), 300, "{what}");
    let hits: Vec<i64> = query!(
        con,
        "BF.MEXISTSX",
        BIN_KEY,
        &b"\x00\xff"[..],
        &b"\xfe\xfd\xfc"[..],
        ""
    );
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

// ---------------------------------------------------------------------------------------
// DEBUG RELOAD, RDB, AOF
// ---------------------------------------------------------------------------------------

#[test]
fn debug_reload_keeps_filters_bit_for_bit() {
    let (mut s, mut con) = Server::start_conn();
    let keys = populate(&mut con);
    let before = snapshot(&mut con, &keys);
    let db = db_digest(&mut con);
    debug_reload(&mut con);
    assert_eq!(db_digest(&mut con), db);
    check_same(&mut con, &keys, &before, "DEBUG RELOAD");
    // Twice, after more writes.
    madd_range(&mut con, b"sc", "more:", 0..500);
    let before = snapshot(&mut con, &keys);
    debug_reload(&mut con);
    check_same(&mut con, &keys, &before, "second DEBUG RELOAD");
    s.assert_alive();
}

#[test]
fn rdb_save_and_restart_keeps_filters() {
    let (mut s, mut con) = Server::start_conn();
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
    s.bgrewriteaof();
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
    s.bgrewriteaof();
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
    let mut con = bf_conn(&s);
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

    s.bgrewriteaof();
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
    let mut con = bf_conn(&s);
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

#[test]
fn dump_restore_keeps_filters_bit_for_bit() {
    let (mut s, mut con) = Server::start_conn();
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
    let _: () = query!(&mut con, "SET", "str", "v");
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
    let _: i64 = query!(&mut con, "PERSIST", "str");
    assert_eq!(digest(&mut con, b"str"), digest(&mut con, b"e1"));
    // Restored filters are saved and loaded like any other.
    let d = digest(&mut con, b"restored:e9");
    debug_reload(&mut con);
    assert_eq!(digest(&mut con, b"restored:e9"), d);
    assert_eq!(
        warden_stat(&mut con, "bf_filters"),
        2 * keys.len() as i64 + 1
    );
    s.assert_alive();
}

#[test]
fn copy_is_a_deep_copy() {
    let (mut s, mut con) = Server::start_conn();
    let keys = populate(&mut con);
    let before = snapshot(&mut con, &keys);
    for snap in &before {
        let mut dst = b"cp:".to_vec();
        dst.extend_from_slice(&snap.key);
        let n: i64 = query!(&mut con, "COPY", &snap.key, &dst);
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
    let n: i64 = query!(&mut con, "COPY", "ns", "cp:sc");
    assert_eq!(n, 0);
    let n: i64 = query!(&mut con, "COPY", "ns", "cp:sc", "REPLACE");
    assert_eq!(n, 1);
    assert_eq!(digest(&mut con, b"cp:sc"), before[1].digest);
    // COPY to another database.
    let n: i64 = query!(&mut con, "COPY", "sc", "sc", "DB", 1);
    assert_eq!(n, 1);
    ok(&mut con, cmd("SELECT").arg(1));
    assert_eq!(digest(&mut con, b"sc"), before[0].digest);
    ok(&mut con, cmd("SELECT").arg(0));
    let sizes: i64 = {
        let mut total = 0;
        for db in [0, 1] {
            ok(&mut con, cmd("SELECT").arg(db));
            let ks: Vec<Vec<u8>> = query!(&mut con, "KEYS", "*");
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
    let _: Vec<i64> = query!(
        &mut con,
        "BF.INSERTX",
        "i3",
        "NONSCALING",
        "ITEMS",
        "a",
        "b"
    );
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
