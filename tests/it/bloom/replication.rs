//! Integration tests for `BF.*X` filters under replication: the stream carries effects
//! only (absolute parameters, no re-execution), and replicas started with other defaults
//! end with the master's digest, also after promotion.

use crate::bloom::support::*;
use crate::common::*;

// ---------------------------------------------------------------------------------------
// Replication
// ---------------------------------------------------------------------------------------

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
    let (mut s, mut con) = Server::start_conn();
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
    let r: Vec<i64> = query!(&mut con, "BF.MADDX", "s1", "a", "b", "c");
    assert_eq!(r, vec![0, 1, 1]);
    let r: Vec<i64> = query!(&mut con, "BF.MADDX", "s1", "a", "b", "c");
    assert_eq!(r, vec![0, 0, 0]);
    // INSERTX creates with its options.
    let _: Vec<i64> = query!(
        &mut con,
        "BF.INSERTX",
        "s2",
        "CAPACITY",
        50,
        "ERROR",
        "0.001",
        "NONSCALING",
        "ITEMS",
        "x",
        "y"
    );
    let _: Vec<i64> = query!(&mut con, "BF.INSERTX", "s3", "EXPANSION", 5, "ITEMS", "z");
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
    let r: Vec<i64> = query!(&mut con, "BF.MADDX", "s7", "p", "p", "q");
    assert_eq!(r, vec![1, 0, 1]);
    // Defaults changed at run time are replicated as explicit parameters.
    let _: () = query!(&mut con, "CONFIG", "SET", "warden.bf-error-rate", "0.003");
    let _: () = query!(
        &mut con,
        "CONFIG",
        "SET",
        "warden.bf-initial-capacity",
        "77"
    );
    addx(&mut con, b"s8", "k");
    let _: () = query!(&mut con, "SET", "sentinel", "1");

    let got = without_multi_exec(tap.until_set("sentinel", "1"));
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

/// Waits until `n` replicas acknowledged every write made on `con`.
fn wait_replicas(con: &mut Connection, n: i64) {
    let acked: i64 = query!(con, "WAIT", n, 10_000);
    assert_eq!(acked, n, "replicas did not acknowledge in time");
}

/// The same workload, run against any master.
fn mixed_workload(con: &mut Connection) {
    addx(con, b"a1", "x");
    madd_range(con, b"a2", "a2:", 0..1_000);
    let _: Vec<i64> = query!(con, "BF.INSERTX", "a3", "ITEMS", "p", "q");
    let _: Vec<i64> = query!(
        con,
        "BF.INSERTX",
        "a4",
        "CAPACITY",
        10,
        "ERROR",
        "0.05",
        "EXPANSION",
        3,
        "ITEMS",
        (0..50).map(|i| item("a4:", i)).collect::<Vec<_>>()
    );
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
    let _: i64 = query!(con, "DEL", "a1");
    addx(con, b"a1", "again");
    let _: i64 = query!(con, "COPY", "a2", "a8");
    madd_range(con, b"a8", "a8:", 0..300);
    let _: i64 = query!(con, "PEXPIRE", "a2", 1_000_000);
    let payload = dump(con, b"a7");
    ok(con, cmd("RESTORE").arg("a9").arg(0).arg(&payload));
    madd_range(con, b"a9", "a9:", 0..100);
    let _: () = query!(con, "CONFIG", "SET", "warden.bf-error-rate", "0.05");
    let _: () = query!(con, "CONFIG", "SET", "warden.bf-expansion", "3");
    madd_range(con, b"a10", "a10:", 0..500);
    let _: () = query!(con, "MULTI");
    let _: () = query!(con, "BF.ADDX", "a11", "m1");
    let _: () = query!(con, "BF.MADDX", "a11", "m1", "m2");
    let _: Value = query!(con, "EXEC");
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
    let mut con = bf_conn(&m);
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
