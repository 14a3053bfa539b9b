//! Integration tests for the `BF.*X` Bloom filter commands: the replies of every command
//! (RESP2 and RESP3), full non-scaling filters, INFO counters, EXPIRE and MEMORY USAGE,
//! and the command table. Sizing and measured false-positive rates are in
//! `tests/it/bloom/sizing.rs`, bad input in `tests/it/bloom/errors.rs`, configuration in
//! `tests/it/bloom/config.rs`, persistence and replication in `tests/it/bloom/persistence.rs`,
//! `tests/it/bloom/replication.rs`, `tests/it/bloom/max_bytes.rs` and `tests/it/bloom/payloads.rs`.

use crate::bloom::support::*;
use crate::common::*;

use std::time::Duration;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

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
    let (_s, mut con) = Server::start_conn();
    assert_eq!(existsx(&mut con, "bf-test", "test1"), 0);
    assert_eq!(addx(&mut con, "bf-test", "test1"), 1);
    assert_eq!(existsx(&mut con, "bf-test", "test1"), 1);
    assert_eq!(existsx(&mut con, "bf-test", "test2"), 0);
}

#[test]
fn add_exists_card_and_type_replies() {
    let (mut s, mut con) = Server::start_conn();

    // Missing key: reads answer 0 and create nothing.
    assert_eq!(existsx(&mut con, "k", "a"), 0);
    let m: Vec<i64> = query!(&mut con, "BF.MEXISTSX", "k", "a", "b");
    assert_eq!(m, vec![0, 0]);
    assert_eq!(cardx(&mut con, "k"), 0);
    assert!(!exists(&mut con, "k"));

    // ADDX creates with the defaults.
    assert_eq!(addx(&mut con, "k", "a"), 1);
    assert_eq!(addx(&mut con, "k", "a"), 0);
    let t: String = query!(&mut con, "TYPE", "k");
    assert_eq!(t, "warden-bf");
    let info = bf_info(&mut con, "k");
    assert_eq!(info.capacity, 100);
    assert_eq!(info.filters, 1);
    assert_eq!(info.items, 1);
    assert_eq!(info.expansion, Some(2));
    assert_eq!(info.error_rate, 0.01);
    assert!(info.size > 0);

    // MADDX: one entry per item, duplicates inside one call answer 0.
    let r: Vec<i64> = query!(&mut con, "BF.MADDX", "k", "b", "c", "b", "a");
    assert_eq!(r, vec![1, 1, 0, 0]);
    assert_eq!(cardx(&mut con, "k"), 3);
    let m: Vec<i64> = query!(&mut con, "BF.MEXISTSX", "k", "a", "zzz-never", "c");
    assert_eq!(m, vec![1, 0, 1]);

    // Binary-safe items (not UTF-8, with NUL bytes).
    let bin: &[u8] = b"\xff\x00\xfe\x00";
    let r: i64 = query!(&mut con, "BF.ADDX", "k", bin);
    assert_eq!(r, 1);
    let r: i64 = query!(&mut con, "BF.EXISTSX", "k", bin);
    assert_eq!(r, 1);
    let r: i64 = query!(&mut con, "BF.EXISTSX", "k", &bin[..3]);
    assert_eq!(r, 0);
    // The empty string is an item like any other.
    assert_eq!(addx(&mut con, "k", ""), 1);
    assert_eq!(existsx(&mut con, "k", ""), 1);
    assert_eq!(cardx(&mut con, "k"), 5);

    // INSERTX creates with its options, ignores them for an existing filter.
    let r: Vec<i64> = query!(
        &mut con,
        "BF.INSERTX",
        "ins",
        "CAPACITY",
        50,
        "ERROR",
        "0.001",
        "EXPANSION",
        3,
        "ITEMS",
        "x",
        "y",
        "x"
    );
    assert_eq!(r, vec![1, 1, 0]);
    let info = bf_info(&mut con, "ins");
    assert_eq!(
        (info.capacity, info.expansion, info.error_rate, info.items),
        (50, Some(3), 0.001, 2)
    );
    let r: Vec<i64> = query!(
        &mut con,
        "BF.INSERTX",
        "ins",
        "capacity",
        9999,
        "error",
        "0.2",
        "nonscaling",
        "items",
        "z"
    );
    assert_eq!(r, vec![1]);
    let info = bf_info(&mut con, "ins");
    assert_eq!(
        (info.capacity, info.expansion, info.error_rate, info.items),
        (50, Some(3), 0.001, 3)
    );
    // NOCREATE on an existing filter adds.
    let r: Vec<i64> = query!(&mut con, "BF.INSERTX", "ins", "NOCREATE", "ITEMS", "w");
    assert_eq!(r, vec![1]);
    // NONSCALING through INSERTX.
    let _: Vec<i64> = query!(
        &mut con,
        "BF.INSERTX",
        "insns",
        "NONSCALING",
        "CAPACITY",
        10,
        "ITEMS",
        "a"
    );
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
    let (s, mut con) = Server::start_conn();
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

    // RESP2: the error rate in the fewest digits that read back as it, not
    // the server's `%.17g` ("0.10000000000000001"), with an exponent below
    // 10^-4 as `%g` writes them.
    for (key, rate) in [
        ("r1", "0.1"),
        ("r2", "0.05"),
        ("r3", "0.3"),
        ("r4", "1e-10"),
        ("r5", "1e-300"),
        ("r6", "0.001"),
        ("r7", "0.999999"),
        ("r8", "0.0001"),
        ("r9", "2.5e-5"),
    ] {
        let _: () = query!(&mut con, "BF.RESERVEX", key, rate, 100);
        let got = info_field_only(&mut con, key, "ERROR");
        assert_eq!(got, Value::BulkString(rate.as_bytes().to_vec()), "{rate}");
    }

    reserve(&mut con, "ns", 0.001, 10, &["NONSCALING"]);
    assert_eq!(info_field_only(&mut con, "ns", "EXPANSION"), Value::Nil);
    assert_eq!(bf_info(&mut con, "ns").expansion, None);

    // RESP3: a map, the error rate a double.
    let mut c3 = s.conn_resp3();
    let v: Value = query!(&mut c3, "BF.INFOX", "sc");
    let Value::Map(pairs) = v else {
        panic!("BF.INFOX in RESP3 is not a map: {v:?}");
    };
    assert!(
        matches!(pairs[5].1, Value::Double(_)),
        "error rate in RESP3: {:?}",
        pairs[5].1
    );
    assert_eq!(info_from_pairs(&pairs), info);
    let r: Vec<i64> = query!(&mut c3, "BF.MADDX", "sc", "i0", "fresh-item");
    assert_eq!(r, vec![0, 1]);
}

// ---------------------------------------------------------------------------------------
// 5. Full NONSCALING filters
// ---------------------------------------------------------------------------------------

#[test]
fn full_nonscaling_filter_refuses_new_items_and_changes_nothing() {
    let (mut s, mut con) = Server::start_conn();
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
// INFO warden counters
// ---------------------------------------------------------------------------------------

fn total_size(con: &mut Connection, keys: &[&str]) -> i64 {
    keys.iter().map(|k| bf_info(con, k).size).sum()
}

#[test]
fn info_counters_follow_live_filters() {
    let (_s, mut con) = Server::start_conn();
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
    let _ = expect_err(&mut con, &command(&["BF.RESERVEX", "a", "0.01", "10"]));
    let _ = expect_err(&mut con, &command(&["BF.RESERVEX", "z", "0", "10"]));
    assert_eq!(warden_stat(&mut con, "bf_filters"), 3);

    // COPY, DEL, UNLINK, RESTORE, overwrite by SET.
    let _: i64 = query!(&mut con, "COPY", "a", "a2");
    assert_eq!(warden_stat(&mut con, "bf_filters"), 4);
    let _: i64 = query!(&mut con, "DEL", "c");
    assert_eq!(warden_stat(&mut con, "bf_filters"), 3);
    let dump: Vec<u8> = query!(&mut con, "DUMP", "a");
    let _: () = query!(&mut con, "RESTORE", "r", 0, &dump);
    assert_eq!(warden_stat(&mut con, "bf_filters"), 4);
    let _: () = query!(&mut con, "SET", "a2", "v");
    assert_eq!(warden_stat(&mut con, "bf_filters"), 3);
    let _: i64 = query!(&mut con, "UNLINK", "r");
    assert!(wait_until(Duration::from_secs(5), || warden_stat(
        &mut con,
        "bf_filters"
    ) == 2));
    assert_eq!(
        warden_stat(&mut con, "bf_bytes"),
        total_size(&mut con, &["a", "b"])
    );

    // DEBUG RELOAD keeps the counts.
    debug_reload(&mut con);
    assert_eq!(warden_stat(&mut con, "bf_filters"), 2);
    assert_eq!(
        warden_stat(&mut con, "bf_bytes"),
        total_size(&mut con, &["a", "b"])
    );

    // FLUSHALL SYNC: back to zero at once (Valkey frees in the background by default).
    let _: () = query!(&mut con, "FLUSHALL", "SYNC");
    assert_eq!(warden_stat(&mut con, "bf_filters"), 0);
    assert_eq!(warden_stat(&mut con, "bf_bytes"), 0);

    // FLUSHALL ASYNC too (freed in the background).
    reserve(&mut con, "a", 0.01, 100_000, &[]);
    addx(&mut con, "b", "x");
    assert_eq!(warden_stat(&mut con, "bf_filters"), 2);
    let _: () = query!(&mut con, "FLUSHALL", "ASYNC");
    assert!(wait_until(Duration::from_secs(5), || {
        warden_stat(&mut con, "bf_filters") == 0 && warden_stat(&mut con, "bf_bytes") == 0
    }));
}

#[test]
fn expire_and_memory_usage_work_on_filters() {
    let (_s, mut con) = Server::start_conn();
    reserve(&mut con, "e", 0.01, 10_000, &[]);
    let mem: i64 = query!(&mut con, "MEMORY", "USAGE", "e");
    let size = bf_info(&mut con, "e").size;
    assert!(mem >= size, "MEMORY USAGE {mem} < Size {size}");
    let _: i64 = query!(&mut con, "PEXPIRE", "e", 50);
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
    let (_s, mut con) = Server::start_conn();
    let reads = ["bf.existsx", "bf.mexistsx", "bf.infox", "bf.cardx"];
    let writes = ["bf.reservex", "bf.addx", "bf.maddx", "bf.insertx"];
    for name in reads.iter().chain(&writes) {
        let v: Value = query!(&mut con, "COMMAND", "INFO", *name);
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
