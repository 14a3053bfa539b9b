//! Integration tests for the `BF.*X` Bloom filter commands: replies, sizing, measured
//! false-positive rates, full non-scaling filters, configurations, INFO counters and
//! bad input. Persistence and replication live in tests/bloom_persistence.rs.

mod common;
use common::bloom::*;
use common::*;

use std::time::Duration;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

const FULL: &str = "ERR non scaling filter is full";
const BAD_RATE: &str = "ERR error rate must be a number between 0 and 1";
const BAD_CAPACITY: &str = "ERR capacity must be a positive integer";
const CAPACITY_RANGE: &str = "ERR capacity is out of range";
const BAD_EXPANSION: &str = "ERR expansion must be an integer from 1 to 32768";
const TOO_LARGE: &str = "ERR filter would exceed bf-max-bytes";
const NONSCALING_EXPANSION: &str = "ERR expansion cannot be used with a non scaling filter";
const SYNTAX: &str = "ERR syntax error";
const NOT_FOUND: &str = "ERR not found";
const ITEM_EXISTS: &str = "ERR item exists";
const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

fn conn_t(server: &Server) -> Connection {
    let con = server.conn();
    con.set_read_timeout(Some(Duration::from_secs(120)))
        .expect("read timeout");
    con
}

fn arity(name: &str) -> String {
    format!("ERR wrong number of arguments for '{name}' command")
}

/// Builds a command from byte-string arguments.
fn bcmd(args: &[&[u8]]) -> redis::Cmd {
    let mut c = cmd(std::str::from_utf8(args[0]).expect("command name"));
    for a in &args[1..] {
        c.arg(*a);
    }
    c
}

/// Builds a command from text arguments.
fn tcmd(args: &[&str]) -> redis::Cmd {
    let mut c = cmd(args[0]);
    for a in &args[1..] {
        c.arg(*a);
    }
    c
}

/// The error text of a command that must fail.
fn expect_err(con: &mut Connection, c: &redis::Cmd) -> String {
    let v = raw(con, c);
    err_of(&v).unwrap_or_else(|| panic!("expected an error from {}, got {v:?}", show(c)))
}

fn reserve(con: &mut Connection, key: &str, rate: f64, capacity: u64, extra: &[&str]) {
    let mut c = cmd("BF.RESERVEX");
    c.arg(key).arg(rate.to_string()).arg(capacity);
    for e in extra {
        c.arg(*e);
    }
    let ok: String = c
        .query(con)
        .unwrap_or_else(|e| panic!("BF.RESERVEX {key}: {e}"));
    assert_eq!(ok, "OK");
}

fn addx(con: &mut Connection, key: &str, item: &str) -> i64 {
    cmd("BF.ADDX")
        .arg(key)
        .arg(item)
        .query(con)
        .expect("BF.ADDX")
}

fn existsx(con: &mut Connection, key: &str, item: &str) -> i64 {
    cmd("BF.EXISTSX")
        .arg(key)
        .arg(item)
        .query(con)
        .expect("BF.EXISTSX")
}

fn cardx(con: &mut Connection, key: &str) -> i64 {
    cmd("BF.CARDX").arg(key).query(con).expect("BF.CARDX")
}

fn info_field_only(con: &mut Connection, key: &str, field: &str) -> Value {
    let v: Value = cmd("BF.INFOX")
        .arg(key)
        .arg(field)
        .query(con)
        .expect("BF.INFOX field");
    match v {
        Value::Array(mut a) => {
            assert_eq!(a.len(), 1, "BF.INFOX {key} {field}: {a:?}");
            a.pop().expect("one value")
        }
        other => panic!("BF.INFOX {key} {field} is not an array of one: {other:?}"),
    }
}

/// Adds distinct items to a NONSCALING filter until it holds its capacity.
fn fill_to_capacity(con: &mut Connection, key: &str, capacity: i64) {
    let mut i = 0u64;
    while cardx(con, key) < capacity {
        let v = raw(con, cmd("BF.ADDX").arg(key).arg(item("fill", i)));
        assert!(matches!(v, Value::Int(_)), "ADDX while filling: {v:?}");
        i += 1;
        assert!(i < 10 * capacity as u64 + 100, "filter never filled");
    }
    assert_eq!(cardx(con, key), capacity);
}

// ---------------------------------------------------------------------------------------
// 1. Seed scenario and basic replies
// ---------------------------------------------------------------------------------------

#[test]
fn seed_scenario() {
    let s = Server::start();
    let mut con = s.conn();
    assert_eq!(existsx(&mut con, "bf-test", "test1"), 0);
    assert_eq!(addx(&mut con, "bf-test", "test1"), 1);
    assert_eq!(existsx(&mut con, "bf-test", "test1"), 1);
    assert_eq!(existsx(&mut con, "bf-test", "test2"), 0);
}

#[test]
fn add_exists_card_and_type_replies() {
    let mut s = Server::start();
    let mut con = s.conn();

    // Missing key: reads answer 0 and create nothing.
    assert_eq!(existsx(&mut con, "k", "a"), 0);
    let m: Vec<i64> = cmd("BF.MEXISTSX")
        .arg("k")
        .arg("a")
        .arg("b")
        .query(&mut con)
        .expect("MEXISTSX");
    assert_eq!(m, vec![0, 0]);
    assert_eq!(cardx(&mut con, "k"), 0);
    assert!(!exists(&mut con, "k"));

    // ADDX creates with the defaults.
    assert_eq!(addx(&mut con, "k", "a"), 1);
    assert_eq!(addx(&mut con, "k", "a"), 0);
    let t: String = cmd("TYPE").arg("k").query(&mut con).expect("TYPE");
    assert_eq!(t, "warden-bf");
    let info = bf_info(&mut con, "k");
    assert_eq!(info.capacity, 100);
    assert_eq!(info.filters, 1);
    assert_eq!(info.items, 1);
    assert_eq!(info.expansion, Some(2));
    assert_eq!(info.error_rate, 0.01);
    assert!(info.size > 0);

    // MADDX: one entry per item, duplicates inside one call answer 0.
    let r: Vec<i64> = cmd("BF.MADDX")
        .arg("k")
        .arg("b")
        .arg("c")
        .arg("b")
        .arg("a")
        .query(&mut con)
        .expect("MADDX");
    assert_eq!(r, vec![1, 1, 0, 0]);
    assert_eq!(cardx(&mut con, "k"), 3);
    let m: Vec<i64> = cmd("BF.MEXISTSX")
        .arg("k")
        .arg("a")
        .arg("zzz-never")
        .arg("c")
        .query(&mut con)
        .expect("MEXISTSX");
    assert_eq!(m, vec![1, 0, 1]);

    // Binary-safe items (not UTF-8, with NUL bytes).
    let bin: &[u8] = b"\xff\x00\xfe\x00";
    let r: i64 = cmd("BF.ADDX")
        .arg("k")
        .arg(bin)
        .query(&mut con)
        .expect("ADDX binary");
    assert_eq!(r, 1);
    let r: i64 = cmd("BF.EXISTSX")
        .arg("k")
        .arg(bin)
        .query(&mut con)
        .expect("EXISTSX binary");
    assert_eq!(r, 1);
    let r: i64 = cmd("BF.EXISTSX")
        .arg("k")
        .arg(&bin[..3])
        .query(&mut con)
        .expect("EXISTSX binary prefix");
    assert_eq!(r, 0);
    // The empty string is an item like any other.
    assert_eq!(addx(&mut con, "k", ""), 1);
    assert_eq!(existsx(&mut con, "k", ""), 1);
    assert_eq!(cardx(&mut con, "k"), 5);

    // INSERTX creates with its options, ignores them for an existing filter.
    let r: Vec<i64> = cmd("BF.INSERTX")
        .arg("ins")
        .arg("CAPACITY")
        .arg(50)
        .arg("ERROR")
        .arg("0.001")
        .arg("EXPANSION")
        .arg(3)
        .arg("ITEMS")
        .arg("x")
        .arg("y")
        .arg("x")
        .query(&mut con)
        .expect("INSERTX");
    assert_eq!(r, vec![1, 1, 0]);
    let info = bf_info(&mut con, "ins");
    assert_eq!(
        (info.capacity, info.expansion, info.error_rate, info.items),
        (50, Some(3), 0.001, 2)
    );
    let r: Vec<i64> = cmd("BF.INSERTX")
        .arg("ins")
        .arg("capacity")
        .arg(9999)
        .arg("error")
        .arg("0.2")
        .arg("nonscaling")
        .arg("items")
        .arg("z")
        .query(&mut con)
        .expect("INSERTX existing");
    assert_eq!(r, vec![1]);
    let info = bf_info(&mut con, "ins");
    assert_eq!(
        (info.capacity, info.expansion, info.error_rate, info.items),
        (50, Some(3), 0.001, 3)
    );
    // NOCREATE on an existing filter adds.
    let r: Vec<i64> = cmd("BF.INSERTX")
        .arg("ins")
        .arg("NOCREATE")
        .arg("ITEMS")
        .arg("w")
        .query(&mut con)
        .expect("INSERTX NOCREATE");
    assert_eq!(r, vec![1]);
    // NONSCALING through INSERTX.
    let _: Vec<i64> = cmd("BF.INSERTX")
        .arg("insns")
        .arg("NONSCALING")
        .arg("CAPACITY")
        .arg(10)
        .arg("ITEMS")
        .arg("a")
        .query(&mut con)
        .expect("INSERTX NONSCALING");
    let info = bf_info(&mut con, "insns");
    assert_eq!((info.capacity, info.expansion), (10, None));

    // RESERVEX replies OK and an empty filter.
    reserve(&mut con, "r", 0.05, 1000, &["EXPANSION", "4"]);
    let info = bf_info(&mut con, "r");
    assert_eq!(
        (info.capacity, info.filters, info.items, info.expansion),
        (1000, 1, 0, Some(4))
    );
    assert_eq!(info.error_rate, 0.05);
    reserve(&mut con, "rn", 0.05, 1000, &["nonscaling"]);
    assert_eq!(bf_info(&mut con, "rn").expansion, None);
    s.assert_alive();
}

#[test]
fn infox_fields_and_resp3() {
    let s = Server::start();
    let mut con = s.conn();
    reserve(&mut con, "sc", 0.01, 10, &["EXPANSION", "3"]);
    // Grow into more layers: 10 + 30 + 90.
    let new = madd_range(&mut con, "sc", "i", 0..100);
    let info = bf_info(&mut con, "sc");
    assert_eq!(info.filters, 3, "{info:?}");
    assert_eq!(info.capacity, 10 + 30 + 90);
    assert_eq!(info.items as u64, new);
    assert_eq!(cardx(&mut con, "sc") as u64, new);
    assert_eq!(info.expansion, Some(3));
    assert_eq!(info.error_rate, 0.01);

    assert_eq!(int(&info_field_only(&mut con, "sc", "CAPACITY")), 130);
    assert_eq!(int(&info_field_only(&mut con, "sc", "size")), info.size);
    assert_eq!(int(&info_field_only(&mut con, "sc", "FILTERS")), 3);
    assert_eq!(int(&info_field_only(&mut con, "sc", "Items")), info.items);
    assert_eq!(int(&info_field_only(&mut con, "sc", "EXPANSION")), 3);
    assert_eq!(float_of(&info_field_only(&mut con, "sc", "ERROR")), 0.01);

    reserve(&mut con, "ns", 0.001, 10, &["NONSCALING"]);
    assert_eq!(info_field_only(&mut con, "ns", "EXPANSION"), Value::Nil);
    assert_eq!(bf_info(&mut con, "ns").expansion, None);

    // RESP3: a map, the error rate a double.
    let mut c3 = s.conn_resp3();
    let v: Value = cmd("BF.INFOX")
        .arg("sc")
        .query(&mut c3)
        .expect("INFOX resp3");
    let Value::Map(pairs) = v else {
        panic!("BF.INFOX in RESP3 is not a map: {v:?}");
    };
    assert!(
        matches!(pairs[5].1, Value::Double(_)),
        "error rate in RESP3: {:?}",
        pairs[5].1
    );
    assert_eq!(info_from_pairs(&pairs), info);
    let r: Vec<i64> = cmd("BF.MADDX")
        .arg("sc")
        .arg("i0")
        .arg("fresh-item")
        .query(&mut c3)
        .expect("MADDX resp3");
    assert_eq!(r, vec![0, 1]);
}

// ---------------------------------------------------------------------------------------
// 2. No false negatives with 1,000,000 items, across DEBUG RELOAD
// ---------------------------------------------------------------------------------------

#[test]
fn million_items_have_no_false_negatives_across_reload() {
    let s = Server::start();
    let mut con = conn_t(&s);
    reserve(&mut con, "big", 0.01, 1_000_000, &[]);
    let n = 1_000_000;
    let new = madd_range(&mut con, "big", "item:", 0..n);
    assert!(new > n - 20_000, "{new} of {n} answered new");
    assert_eq!(cardx(&mut con, "big") as u64, new);
    let found = mexists_range(&mut con, "big", "item:", 0..n);
    assert_eq!(found, n, "false negatives before reload: {}", n - found);

    let before = digest(&mut con, "big");
    let info = bf_info(&mut con, "big");
    let _: () = cmd("DEBUG")
        .arg("RELOAD")
        .query(&mut con)
        .expect("DEBUG RELOAD");
    assert_eq!(digest(&mut con, "big"), before);
    assert_eq!(bf_info(&mut con, "big"), info);
    let found = mexists_range(&mut con, "big", "item:", 0..n);
    assert_eq!(found, n, "false negatives after reload: {}", n - found);
}

// ---------------------------------------------------------------------------------------
// 3. Measured false-positive rate
// ---------------------------------------------------------------------------------------

/// Fills `key` with `added` items and returns the false positives among 100,000
/// never-added items.
fn measured_false_positives(con: &mut Connection, key: &str, added: u64) -> u64 {
    madd_range(con, key, "member:", 0..added);
    let found = mexists_range(con, key, "member:", 0..added);
    assert_eq!(found, added, "false negatives");
    mexists_range(con, key, "never-added:", 0..100_000)
}

#[test]
fn measured_fpr_nonscaling_100k_at_1_percent() {
    let s = Server::start();
    let mut con = conn_t(&s);
    reserve(&mut con, "f", 0.01, 100_000, &["NONSCALING"]);
    let fp = measured_false_positives(&mut con, "f", 100_000);
    let rate = fp as f64 / 100_000.0;
    assert!(
        rate <= 0.01,
        "measured FPR {rate} ({fp} of 100000) above 0.01 for (100k, 0.01)"
    );
}

#[test]
fn measured_fpr_nonscaling_100k_at_point_1_percent() {
    let s = Server::start();
    let mut con = conn_t(&s);
    reserve(&mut con, "f", 0.001, 100_000, &["NONSCALING"]);
    let fp = measured_false_positives(&mut con, "f", 100_000);
    let rate = fp as f64 / 100_000.0;
    assert!(
        rate <= 0.001,
        "measured FPR {rate} ({fp} of 100000) above 0.001 for (100k, 0.001)"
    );
}

#[test]
fn measured_fpr_scaling_10k_grown_to_1m_at_1_percent() {
    let s = Server::start();
    let mut con = conn_t(&s);
    reserve(&mut con, "f", 0.01, 10_000, &[]);
    let fp = measured_false_positives(&mut con, "f", 1_000_000);
    let info = bf_info(&mut con, "f");
    assert!(info.filters > 1, "the filter did not grow: {info:?}");
    assert!(info.capacity >= 1_000_000, "{info:?}");
    let rate = fp as f64 / 100_000.0;
    assert!(
        rate <= 0.01,
        "measured FPR {rate} ({fp} of 100000) above 0.01 for a scaling filter \
         10k -> 1M ({info:?})"
    );
}

// ---------------------------------------------------------------------------------------
// 4. Memory
// ---------------------------------------------------------------------------------------

#[test]
fn nonscaling_million_at_1_percent_size_is_near_optimal() {
    let s = Server::start();
    let mut con = s.conn();
    reserve(&mut con, "m", 0.01, 1_000_000, &["NONSCALING"]);
    let info = bf_info(&mut con, "m");
    assert!(
        info.size as f64 <= 1.05 * 1_198_132.0,
        "Size {} above 1.05 x 1,198,132",
        info.size
    );
    // Not smaller than the information-theoretic size of the bit array either.
    assert!(info.size >= 1_198_132, "Size {} too small", info.size);
    assert_eq!(int(&info_field_only(&mut con, "m", "SIZE")), info.size);
}

#[test]
fn scaling_million_at_1_percent_with_million_items_size() {
    let s = Server::start();
    let mut con = conn_t(&s);
    reserve(&mut con, "m", 0.01, 1_000_000, &[]);
    madd_range(&mut con, "m", "item:", 0..1_000_000);
    let info = bf_info(&mut con, "m");
    assert_eq!(
        info.filters, 1,
        "1M items must fit the first layer: {info:?}"
    );
    assert!(
        info.size <= 1_378_568,
        "Size {} above 1,378,568 ({info:?})",
        info.size
    );
}

// ---------------------------------------------------------------------------------------
// 5. Full NONSCALING filters
// ---------------------------------------------------------------------------------------

/// An item the filter certainly does not hold.
fn absent_item(con: &mut Connection, key: &str, prefix: &str) -> String {
    (0..)
        .map(|i| item(prefix, i))
        .find(|it| existsx(con, key, it) == 0)
        .expect("an absent item")
}

#[test]
fn full_nonscaling_filter_refuses_new_items_and_changes_nothing() {
    let mut s = Server::start();
    let mut con = s.conn();
    reserve(&mut con, "full", 0.01, 100, &["NONSCALING"]);
    fill_to_capacity(&mut con, "full", 100);
    let before = digest(&mut con, "full");
    let info_before = bf_info(&mut con, "full");

    // ADDX of a new item: the error, nothing changed.
    let new1 = absent_item(&mut con, "full", "new-a:");
    let e = expect_err(&mut con, cmd("BF.ADDX").arg("full").arg(&new1));
    assert_eq!(e, FULL);
    assert_eq!(digest(&mut con, "full"), before);
    assert_eq!(bf_info(&mut con, "full"), info_before);
    assert_eq!(existsx(&mut con, "full", &new1), 0);

    // ADDX of a present item is not an error.
    assert_eq!(addx(&mut con, "full", "fill0"), 0);

    // MADDX: one entry per item, the error for each item that did not fit.
    let new2 = absent_item(&mut con, "full", "new-b:");
    let v = raw(
        &mut con,
        cmd("BF.MADDX")
            .arg("full")
            .arg("fill0")
            .arg(&new1)
            .arg(&new2)
            .arg("fill1")
            .arg(&new1),
    );
    let Value::Array(a) = v else {
        panic!("MADDX on a full filter must reply an array: {v:?}");
    };
    assert_eq!(a.len(), 5, "{a:?}");
    assert_eq!(a[0], Value::Int(0));
    assert_eq!(err_of(&a[1]).as_deref(), Some(FULL), "{a:?}");
    assert_eq!(err_of(&a[2]).as_deref(), Some(FULL), "{a:?}");
    assert_eq!(a[3], Value::Int(0));
    assert_eq!(err_of(&a[4]).as_deref(), Some(FULL), "{a:?}");
    assert_eq!(digest(&mut con, "full"), before);

    // INSERTX: the same, options ignored for the existing filter.
    let v = raw(
        &mut con,
        cmd("BF.INSERTX")
            .arg("full")
            .arg("CAPACITY")
            .arg(100000)
            .arg("ITEMS")
            .arg(&new2)
            .arg("fill2"),
    );
    let Value::Array(a) = v else {
        panic!("INSERTX on a full filter must reply an array: {v:?}");
    };
    assert_eq!(a.len(), 2, "{a:?}");
    assert_eq!(err_of(&a[0]).as_deref(), Some(FULL), "{a:?}");
    assert_eq!(a[1], Value::Int(0));
    assert_eq!(digest(&mut con, "full"), before);
    assert_eq!(bf_info(&mut con, "full"), info_before);
    assert_eq!(cardx(&mut con, "full"), 100);

    // A filter that fills up in the middle of one MADDX: new items first, then errors.
    reserve(&mut con, "part", 0.01, 3, &["NONSCALING"]);
    let items: Vec<String> = (0..8).map(|i| item("p", i)).collect();
    let v = raw(&mut con, cmd("BF.MADDX").arg("part").arg(&items));
    let Value::Array(a) = v else {
        panic!("MADDX reply: {v:?}");
    };
    assert_eq!(a.len(), 8, "{a:?}");
    let ones = a.iter().filter(|v| **v == Value::Int(1)).count();
    assert_eq!(ones, 3, "{a:?}");
    assert_eq!(cardx(&mut con, "part"), 3);
    let third = a
        .iter()
        .enumerate()
        .filter(|(_, v)| **v == Value::Int(1))
        .nth(2)
        .expect("third 1")
        .0;
    for (i, v) in a.iter().enumerate().skip(third + 1) {
        assert!(
            *v == Value::Int(0) || err_of(v).as_deref() == Some(FULL),
            "entry {i}: {v:?}"
        );
    }
    assert!(
        a.iter().any(|v| err_of(v).is_some()),
        "no error entry: {a:?}"
    );
    s.assert_alive();
}

// ---------------------------------------------------------------------------------------
// 8. Bad input
// ---------------------------------------------------------------------------------------

#[test]
fn bad_input_is_refused_with_clear_errors_and_changes_nothing() {
    let mut s = Server::start();
    let mut con = s.conn();

    let bf_rx = |args: &[&str]| {
        let mut v = vec!["BF.RESERVEX", "nokey"];
        v.extend_from_slice(args);
        v.iter().map(|s| s.to_string()).collect::<Vec<String>>()
    };
    let mut cases: Vec<(Vec<String>, String)> = Vec::new();
    let mut add = |args: Vec<String>, want: &str| cases.push((args, want.to_string()));
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<String>>();

    // Arity.
    add(words(&["BF.RESERVEX"]), &arity("bf.reservex"));
    add(words(&["BF.RESERVEX", "nokey"]), &arity("bf.reservex"));
    add(
        words(&["BF.RESERVEX", "nokey", "0.01"]),
        &arity("bf.reservex"),
    );
    add(words(&["BF.ADDX"]), &arity("bf.addx"));
    add(words(&["BF.ADDX", "nokey"]), &arity("bf.addx"));
    add(words(&["BF.ADDX", "nokey", "a", "b"]), &arity("bf.addx"));
    add(words(&["BF.MADDX"]), &arity("bf.maddx"));
    add(words(&["BF.MADDX", "nokey"]), &arity("bf.maddx"));
    add(words(&["BF.EXISTSX", "nokey"]), &arity("bf.existsx"));
    add(
        words(&["BF.EXISTSX", "nokey", "a", "b"]),
        &arity("bf.existsx"),
    );
    add(words(&["BF.MEXISTSX", "nokey"]), &arity("bf.mexistsx"));
    add(words(&["BF.CARDX"]), &arity("bf.cardx"));
    add(words(&["BF.CARDX", "nokey", "x"]), &arity("bf.cardx"));
    add(words(&["BF.INFOX"]), &arity("bf.infox"));
    add(
        words(&["BF.INFOX", "nokey", "SIZE", "x"]),
        &arity("bf.infox"),
    );
    add(words(&["BF.INSERTX", "nokey"]), &arity("bf.insertx"));
    add(
        words(&["BF.INSERTX", "nokey", "ITEMS"]),
        &arity("bf.insertx"),
    );
    add(
        words(&["BF.INSERTX", "nokey", "CAPACITY", "10"]),
        &arity("bf.insertx"),
    );
    add(
        words(&["BF.INSERTX", "nokey", "CAPACITY", "10", "ITEMS"]),
        &arity("bf.insertx"),
    );
    add(
        words(&["BF.INSERTX", "nokey", "NONSCALING", "ITEMS"]),
        &arity("bf.insertx"),
    );

    // Error rates.
    for r in [
        "0", "0.0", "-0.01", "1", "1.0", "1.5", "nan", "NaN", "inf", "-inf", "abc", "", "1e400",
        "0.01abc", "-1e400",
    ] {
        add(bf_rx(&[r, "100"]), BAD_RATE);
        add(
            words(&["BF.INSERTX", "nokey", "ERROR", r, "ITEMS", "a"]),
            BAD_RATE,
        );
    }
    // Capacities.
    for c in ["0", "-1", "-100", "abc", "", "1.5", "1e3"] {
        add(bf_rx(&["0.01", c]), BAD_CAPACITY);
        add(
            words(&["BF.INSERTX", "nokey", "CAPACITY", c, "ITEMS", "a"]),
            BAD_CAPACITY,
        );
    }
    for c in [
        "1000000000001",
        "9223372036854775807",
        "99999999999999999999",
    ] {
        add(bf_rx(&["0.01", c]), CAPACITY_RANGE);
        add(
            words(&["BF.INSERTX", "nokey", "CAPACITY", c, "ITEMS", "a"]),
            CAPACITY_RANGE,
        );
    }
    add(bf_rx(&["0.01", "100000000000"]), TOO_LARGE);
    add(
        words(&[
            "BF.INSERTX",
            "nokey",
            "CAPACITY",
            "100000000000",
            "ITEMS",
            "a",
        ]),
        TOO_LARGE,
    );
    // Expansion.
    for e in ["0", "32769", "-1", "abc", "1.5", "", "99999999999999999999"] {
        add(bf_rx(&["0.01", "100", "EXPANSION", e]), BAD_EXPANSION);
        add(
            words(&["BF.INSERTX", "nokey", "EXPANSION", e, "ITEMS", "a"]),
            BAD_EXPANSION,
        );
    }
    add(
        bf_rx(&["0.01", "100", "EXPANSION", "2", "NONSCALING"]),
        NONSCALING_EXPANSION,
    );
    add(
        bf_rx(&["0.01", "100", "NONSCALING", "EXPANSION", "2"]),
        NONSCALING_EXPANSION,
    );
    add(
        words(&[
            "BF.INSERTX",
            "nokey",
            "EXPANSION",
            "2",
            "NONSCALING",
            "ITEMS",
            "a",
        ]),
        NONSCALING_EXPANSION,
    );
    // Unknown words and missing option values.
    add(bf_rx(&["0.01", "100", "FOO"]), SYNTAX);
    add(bf_rx(&["0.01", "100", "NONSCALING", "FOO"]), SYNTAX);
    add(bf_rx(&["0.01", "100", "EXPANSION"]), SYNTAX);
    add(bf_rx(&["0.01", "100", "ITEMS", "a"]), SYNTAX);
    add(bf_rx(&["0.01", "100", "CAPACITY", "10"]), SYNTAX);
    add(words(&["BF.INSERTX", "nokey", "FOO", "ITEMS", "a"]), SYNTAX);
    add(words(&["BF.INFOX", "nokey", "FOO"]), SYNTAX);
    // Missing keys.
    add(
        words(&["BF.INSERTX", "nokey", "NOCREATE", "ITEMS", "a"]),
        NOT_FOUND,
    );
    add(words(&["BF.INFOX", "nokey"]), NOT_FOUND);
    add(words(&["BF.INFOX", "nokey", "SIZE"]), NOT_FOUND);

    for (args, want) in &cases {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let got = expect_err(&mut con, &tcmd(&refs));
        assert_eq!(&got, want, "{args:?}");
        assert!(!exists(&mut con, "nokey"), "{args:?} created the key");
    }

    // Non-UTF-8 bytes where numbers and words belong.
    let bin_cases: Vec<(Vec<&[u8]>, &str)> = vec![
        (
            vec![b"BF.RESERVEX", b"nokey", b"\xff\xfe", b"100"],
            BAD_RATE,
        ),
        (
            vec![b"BF.RESERVEX", b"nokey", b"0.01", b"\xff"],
            BAD_CAPACITY,
        ),
        (
            vec![b"BF.RESERVEX", b"nokey", b"0.01", b"100", b"\xffEXPANSION"],
            SYNTAX,
        ),
        (
            vec![
                b"BF.RESERVEX",
                b"nokey",
                b"0.01",
                b"100",
                b"EXPANSION",
                b"\x00",
            ],
            BAD_EXPANSION,
        ),
        (
            vec![b"BF.INSERTX", b"nokey", b"\xc3\x28", b"ITEMS", b"a"],
            SYNTAX,
        ),
    ];
    for (args, want) in &bin_cases {
        let got = expect_err(&mut con, &bcmd(args));
        assert_eq!(got, *want, "{args:?}");
        assert!(!exists(&mut con, "nokey"));
    }

    // The same bad commands against an existing filter: an error, the filter unchanged.
    reserve(&mut con, "f", 0.01, 100, &[]);
    madd_range(&mut con, "f", "x", 0..150);
    let before = digest(&mut con, "f");
    let info = bf_info(&mut con, "f");
    for (args, _) in &cases {
        if args.len() < 2 || args[0] != "BF.RESERVEX" {
            continue;
        }
        let mut refs: Vec<&str> = args.iter().map(String::as_str).collect();
        refs[1] = "f";
        expect_err(&mut con, &tcmd(&refs));
        assert_eq!(digest(&mut con, "f"), before, "{refs:?} changed the filter");
    }
    for args in [
        vec!["BF.RESERVEX", "f", "0.01", "100"],
        vec!["BF.RESERVEX", "f", "0.5", "7", "NONSCALING"],
        vec!["BF.RESERVEX", "f", "0.01", "100", "EXPANSION", "4"],
    ] {
        assert_eq!(expect_err(&mut con, &tcmd(&args)), ITEM_EXISTS, "{args:?}");
    }
    for args in [
        vec!["BF.ADDX", "f"],
        vec!["BF.ADDX", "f", "a", "b"],
        vec!["BF.MADDX", "f"],
        vec!["BF.INSERTX", "f", "ITEMS"],
        vec!["BF.INSERTX", "f", "FOO", "ITEMS", "new-item"],
        vec!["BF.INFOX", "f", "FOO"],
    ] {
        expect_err(&mut con, &tcmd(&args));
        assert_eq!(digest(&mut con, "f"), before, "{args:?} changed the filter");
    }
    assert_eq!(bf_info(&mut con, "f"), info);

    // Keys of other types: WRONGTYPE, nothing changed.
    let _: () = cmd("SET").arg("s").arg("v").query(&mut con).expect("SET");
    let _: () = cmd("RPUSH")
        .arg("l")
        .arg("v")
        .query(&mut con)
        .expect("RPUSH");
    let token: Option<i64> = cmd("DLOCK.ACQUIRE")
        .arg("lk")
        .arg("me")
        .arg(100_000)
        .query(&mut con)
        .expect("DLOCK.ACQUIRE");
    assert!(token.is_some());
    for key in ["s", "l", "lk"] {
        let before = digest(&mut con, key);
        for args in [
            vec!["BF.RESERVEX", key, "0.01", "100"],
            vec!["BF.ADDX", key, "a"],
            vec!["BF.MADDX", key, "a", "b"],
            vec!["BF.EXISTSX", key, "a"],
            vec!["BF.MEXISTSX", key, "a", "b"],
            vec!["BF.INSERTX", key, "ITEMS", "a"],
            vec!["BF.INSERTX", key, "NOCREATE", "ITEMS", "a"],
            vec!["BF.INFOX", key],
            vec!["BF.INFOX", key, "SIZE"],
            vec!["BF.CARDX", key],
        ] {
            assert_eq!(expect_err(&mut con, &tcmd(&args)), WRONGTYPE, "{args:?}");
        }
        assert_eq!(digest(&mut con, key), before, "{key} changed");
    }
    // A filter key under the lock commands is WRONGTYPE too.
    let e = expect_err(&mut con, cmd("DLOCK.ACQUIRE").arg("f").arg("me").arg(1000));
    assert!(e.starts_with("WRONGTYPE"), "{e}");
    assert_eq!(digest(&mut con, "f"), before);
    s.assert_alive();
}

// ---------------------------------------------------------------------------------------
// Configurations
// ---------------------------------------------------------------------------------------

fn config_get(con: &mut Connection, name: &str) -> String {
    let v: Vec<String> = cmd("CONFIG")
        .arg("GET")
        .arg(name)
        .query(con)
        .expect("CONFIG GET");
    assert_eq!(v.len(), 2, "CONFIG GET {name}: {v:?}");
    v[1].clone()
}

fn config_set(con: &mut Connection, name: &str, value: &str) -> redis::RedisResult<()> {
    cmd("CONFIG").arg("SET").arg(name).arg(value).query(con)
}

#[test]
fn module_arguments_set_the_defaults() {
    let mut s = Server::start_with(
        &[],
        &[
            "bf-error-rate",
            "0.001",
            "bf-initial-capacity",
            "1000",
            "bf-expansion",
            "4",
            "bf-max-bytes",
            "1048576",
        ],
    );
    let mut con = s.conn();
    assert_eq!(
        config_get(&mut con, "warden.bf-error-rate").parse::<f64>(),
        Ok(0.001)
    );
    assert_eq!(config_get(&mut con, "warden.bf-initial-capacity"), "1000");
    assert_eq!(config_get(&mut con, "warden.bf-expansion"), "4");
    assert_eq!(config_get(&mut con, "warden.bf-max-bytes"), "1048576");

    for (key, c) in [("a", "BF.ADDX"), ("m", "BF.MADDX"), ("i", "BF.INSERTX")] {
        let mut command = cmd(c);
        command.arg(key);
        if c == "BF.INSERTX" {
            command.arg("ITEMS");
        }
        command.arg("x");
        let _: Value = command.query(&mut con).expect(c);
        let info = bf_info(&mut con, key);
        assert_eq!(
            (info.capacity, info.expansion, info.error_rate),
            (1000, Some(4), 0.001),
            "{c}"
        );
    }
    // Explicit options win over the defaults.
    let _: Vec<i64> = cmd("BF.INSERTX")
        .arg("i2")
        .arg("ERROR")
        .arg("0.02")
        .arg("ITEMS")
        .arg("x")
        .query(&mut con)
        .expect("INSERTX");
    let info = bf_info(&mut con, "i2");
    assert_eq!(
        (info.capacity, info.expansion, info.error_rate),
        (1000, Some(4), 0.02)
    );

    // bf-max-bytes caps reserves: 1M at 1% needs ~1.2 MB.
    let e = expect_err(&mut con, &tcmd(&["BF.RESERVEX", "big", "0.01", "1000000"]));
    assert_eq!(e, TOO_LARGE);
    assert!(!exists(&mut con, "big"));
    let e = expect_err(
        &mut con,
        &tcmd(&["BF.RESERVEX", "big", "0.01", "1000000", "NONSCALING"]),
    );
    assert_eq!(e, TOO_LARGE);
    reserve(&mut con, "fits", 0.01, 500_000, &["NONSCALING"]);
    assert!(bf_info(&mut con, "fits").size <= 1_048_576);
    s.assert_alive();
}

#[test]
fn config_set_changes_defaults_and_refuses_bad_values() {
    let mut s = Server::start();
    let mut con = s.conn();
    assert_eq!(
        config_get(&mut con, "warden.bf-error-rate").parse::<f64>(),
        Ok(0.01)
    );
    assert_eq!(config_get(&mut con, "warden.bf-initial-capacity"), "100");
    assert_eq!(config_get(&mut con, "warden.bf-expansion"), "2");
    assert_eq!(
        config_get(&mut con, "warden.bf-max-bytes"),
        (128u64 << 20).to_string()
    );

    addx(&mut con, "old", "x");
    let old = digest(&mut con, "old");

    config_set(&mut con, "warden.bf-error-rate", "0.05").expect("set rate");
    config_set(&mut con, "warden.bf-initial-capacity", "50").expect("set capacity");
    config_set(&mut con, "warden.bf-expansion", "3").expect("set expansion");
    assert_eq!(
        config_get(&mut con, "warden.bf-error-rate").parse::<f64>(),
        Ok(0.05)
    );
    addx(&mut con, "new", "x");
    let info = bf_info(&mut con, "new");
    assert_eq!(
        (info.capacity, info.expansion, info.error_rate),
        (50, Some(3), 0.05)
    );
    // Existing filters keep their parameters.
    assert_eq!(digest(&mut con, "old"), old);
    let info = bf_info(&mut con, "old");
    assert_eq!(
        (info.capacity, info.expansion, info.error_rate),
        (100, Some(2), 0.01)
    );

    // Bad values are refused and change nothing.
    for bad in ["abc", "0", "1", "-0.5", "1.5", "nan", "inf", ""] {
        assert!(
            config_set(&mut con, "warden.bf-error-rate", bad).is_err(),
            "bf-error-rate {bad:?} accepted"
        );
    }
    for bad in ["0", "-1", "abc"] {
        assert!(config_set(&mut con, "warden.bf-initial-capacity", bad).is_err());
    }
    for bad in ["0", "32769", "-1", "abc"] {
        assert!(config_set(&mut con, "warden.bf-expansion", bad).is_err());
    }
    assert!(config_set(&mut con, "warden.bf-max-bytes", "abc").is_err());
    assert_eq!(
        config_get(&mut con, "warden.bf-error-rate").parse::<f64>(),
        Ok(0.05)
    );
    assert_eq!(config_get(&mut con, "warden.bf-initial-capacity"), "50");
    assert_eq!(config_get(&mut con, "warden.bf-expansion"), "3");
    addx(&mut con, "new2", "x");
    let info = bf_info(&mut con, "new2");
    assert_eq!(
        (info.capacity, info.expansion, info.error_rate),
        (50, Some(3), 0.05)
    );

    // Defaults that make a filter too large: implicit creation fails and creates nothing.
    config_set(&mut con, "warden.bf-initial-capacity", "1000000000").expect("set capacity");
    for args in [
        vec!["BF.ADDX", "huge", "x"],
        vec!["BF.MADDX", "huge", "x", "y"],
        vec!["BF.INSERTX", "huge", "ITEMS", "x"],
    ] {
        assert_eq!(expect_err(&mut con, &tcmd(&args)), TOO_LARGE, "{args:?}");
        assert!(!exists(&mut con, "huge"));
    }
    config_set(&mut con, "warden.bf-initial-capacity", "50").expect("set capacity");

    // bf-max-bytes at run time: growth past the cap is refused per item, nothing changed.
    config_set(&mut con, "warden.bf-max-bytes", "4096").expect("set max bytes");
    assert_eq!(config_get(&mut con, "warden.bf-max-bytes"), "4096");
    reserve(&mut con, "g", 0.01, 1000, &["EXPANSION", "2"]);
    assert_eq!(
        expect_err(&mut con, &tcmd(&["BF.RESERVEX", "g2", "0.01", "5000"])),
        TOO_LARGE
    );
    let mut i = 0u64;
    while cardx(&mut con, "g") < 1000 {
        addx(&mut con, "g", &item("g", i));
        i += 1;
    }
    let before = digest(&mut con, "g");
    let fresh = absent_item(&mut con, "g", "fresh:");
    assert_eq!(
        expect_err(&mut con, cmd("BF.ADDX").arg("g").arg(&fresh)),
        TOO_LARGE
    );
    let v = raw(
        &mut con,
        cmd("BF.MADDX").arg("g").arg("g0").arg(&fresh).arg("g1"),
    );
    let Value::Array(a) = v else {
        panic!("MADDX past bf-max-bytes: {v:?}");
    };
    assert_eq!(a[0], Value::Int(0));
    assert_eq!(err_of(&a[1]).as_deref(), Some(TOO_LARGE));
    assert_eq!(a[2], Value::Int(0));
    assert_eq!(digest(&mut con, "g"), before);
    assert_eq!(bf_info(&mut con, "g").filters, 1);
    s.assert_alive();
}

// ---------------------------------------------------------------------------------------
// INFO warden counters
// ---------------------------------------------------------------------------------------

fn total_size(con: &mut Connection, keys: &[&str]) -> i64 {
    keys.iter().map(|k| bf_info(con, k).size).sum()
}

#[test]
fn info_counters_follow_live_filters() {
    let s = Server::start();
    let mut con = s.conn();
    assert_eq!(warden_stat(&mut con, "bf_filters"), 0);
    assert_eq!(warden_stat(&mut con, "bf_bytes"), 0);

    reserve(&mut con, "a", 0.01, 1000, &[]);
    addx(&mut con, "b", "x");
    reserve(&mut con, "c", 0.001, 50, &["NONSCALING"]);
    assert_eq!(warden_stat(&mut con, "bf_filters"), 3);
    assert_eq!(
        warden_stat(&mut con, "bf_bytes"),
        total_size(&mut con, &["a", "b", "c"])
    );

    // Growth adds bytes.
    madd_range(&mut con, "b", "i", 0..1000);
    assert!(bf_info(&mut con, "b").filters > 1);
    assert_eq!(
        warden_stat(&mut con, "bf_bytes"),
        total_size(&mut con, &["a", "b", "c"])
    );
    // Errors add nothing.
    let _ = expect_err(&mut con, &tcmd(&["BF.RESERVEX", "a", "0.01", "10"]));
    let _ = expect_err(&mut con, &tcmd(&["BF.RESERVEX", "z", "0", "10"]));
    assert_eq!(warden_stat(&mut con, "bf_filters"), 3);

    // COPY, DEL, UNLINK, RESTORE, overwrite by SET.
    let _: i64 = cmd("COPY")
        .arg("a")
        .arg("a2")
        .query(&mut con)
        .expect("COPY");
    assert_eq!(warden_stat(&mut con, "bf_filters"), 4);
    let _: i64 = cmd("DEL").arg("c").query(&mut con).expect("DEL");
    assert_eq!(warden_stat(&mut con, "bf_filters"), 3);
    let dump: Vec<u8> = cmd("DUMP").arg("a").query(&mut con).expect("DUMP");
    let _: () = cmd("RESTORE")
        .arg("r")
        .arg(0)
        .arg(&dump)
        .query(&mut con)
        .expect("RESTORE");
    assert_eq!(warden_stat(&mut con, "bf_filters"), 4);
    let _: () = cmd("SET").arg("a2").arg("v").query(&mut con).expect("SET");
    assert_eq!(warden_stat(&mut con, "bf_filters"), 3);
    let _: i64 = cmd("UNLINK").arg("r").query(&mut con).expect("UNLINK");
    assert!(wait_until(Duration::from_secs(5), || warden_stat(
        &mut con,
        "bf_filters"
    ) == 2));
    assert_eq!(
        warden_stat(&mut con, "bf_bytes"),
        total_size(&mut con, &["a", "b"])
    );

    // DEBUG RELOAD keeps the counts.
    let _: () = cmd("DEBUG").arg("RELOAD").query(&mut con).expect("RELOAD");
    assert_eq!(warden_stat(&mut con, "bf_filters"), 2);
    assert_eq!(
        warden_stat(&mut con, "bf_bytes"),
        total_size(&mut con, &["a", "b"])
    );

    // FLUSHALL SYNC: back to zero at once (Valkey frees in the background by default).
    let _: () = cmd("FLUSHALL")
        .arg("SYNC")
        .query(&mut con)
        .expect("FLUSHALL");
    assert_eq!(warden_stat(&mut con, "bf_filters"), 0);
    assert_eq!(warden_stat(&mut con, "bf_bytes"), 0);

    // FLUSHALL ASYNC too (freed in the background).
    reserve(&mut con, "a", 0.01, 100_000, &[]);
    addx(&mut con, "b", "x");
    assert_eq!(warden_stat(&mut con, "bf_filters"), 2);
    let _: () = cmd("FLUSHALL")
        .arg("ASYNC")
        .query(&mut con)
        .expect("FLUSHALL ASYNC");
    assert!(wait_until(Duration::from_secs(5), || {
        warden_stat(&mut con, "bf_filters") == 0 && warden_stat(&mut con, "bf_bytes") == 0
    }));
}

#[test]
fn expire_and_memory_usage_work_on_filters() {
    let s = Server::start();
    let mut con = s.conn();
    reserve(&mut con, "e", 0.01, 10_000, &[]);
    let mem: i64 = cmd("MEMORY")
        .arg("USAGE")
        .arg("e")
        .query(&mut con)
        .expect("MEMORY USAGE");
    let size = bf_info(&mut con, "e").size;
    assert!(mem >= size, "MEMORY USAGE {mem} < Size {size}");
    let _: i64 = cmd("PEXPIRE")
        .arg("e")
        .arg(50)
        .query(&mut con)
        .expect("PEXPIRE");
    assert!(wait_until(Duration::from_secs(5), || !exists(
        &mut con, "e"
    )));
    assert_eq!(existsx(&mut con, "e", "x"), 0);
    assert!(wait_until(Duration::from_secs(5), || warden_stat(
        &mut con,
        "bf_filters"
    ) == 0));
}

// ---------------------------------------------------------------------------------------
// Command table: one key at argument 1, read / write flags
// ---------------------------------------------------------------------------------------

#[test]
fn commands_declare_their_key_and_flags() {
    let s = Server::start();
    let mut con = s.conn();
    let reads = ["bf.existsx", "bf.mexistsx", "bf.infox", "bf.cardx"];
    let writes = ["bf.reservex", "bf.addx", "bf.maddx", "bf.insertx"];
    for name in reads.iter().chain(&writes) {
        let v: Value = cmd("COMMAND")
            .arg("INFO")
            .arg(*name)
            .query(&mut con)
            .expect("COMMAND INFO");
        let Value::Array(outer) = v else {
            panic!("COMMAND INFO {name}: {v:?}");
        };
        let Some(Value::Array(info)) = outer.first() else {
            panic!("{name} is not registered: {outer:?}");
        };
        let flags: Vec<String> = match &info[2] {
            Value::Array(f) | Value::Set(f) => f.iter().map(label_of).collect(),
            other => panic!("flags of {name}: {other:?}"),
        };
        assert_eq!(
            (int(&info[3]), int(&info[4]), int(&info[5])),
            (1, 1, 1),
            "{name} key positions"
        );
        if reads.contains(name) {
            assert!(
                flags.iter().any(|f| f == "readonly") && flags.iter().any(|f| f == "fast"),
                "{name} flags {flags:?}"
            );
            assert!(!flags.iter().any(|f| f == "write"), "{name} {flags:?}");
        } else {
            assert!(
                flags.iter().any(|f| f == "write") && flags.iter().any(|f| f == "denyoom"),
                "{name} flags {flags:?}"
            );
        }
    }
    for args in [
        vec!["BF.RESERVEX", "k1", "0.01", "100", "NONSCALING"],
        vec!["BF.ADDX", "k1", "a"],
        vec!["BF.MADDX", "k1", "a", "b"],
        vec!["BF.INSERTX", "k1", "CAPACITY", "5", "ITEMS", "a", "b"],
        vec!["BF.EXISTSX", "k1", "a"],
        vec!["BF.MEXISTSX", "k1", "a", "b"],
        vec!["BF.INFOX", "k1"],
        vec!["BF.CARDX", "k1"],
    ] {
        let mut c = cmd("COMMAND");
        c.arg("GETKEYS");
        for a in &args {
            c.arg(*a);
        }
        let keys: Vec<String> = c.query(&mut con).expect("COMMAND GETKEYS");
        assert_eq!(keys, vec!["k1".to_string()], "{args:?}");
    }
}
