//! Integration tests for aging filters (`BF.RESERVEX … AGE window_ms`): items stay for
//! the window and go after window × 1.25, an item added again starts its window again,
//! every BF command works on them, their adds replicate as `BF._ADDATX` with the
//! master's time (so replicas, AOF replays and rewrites end digest-equal), and RDB,
//! DEBUG RELOAD, DUMP/RESTORE, COPY and SCANDUMPX keep the window. Field-by-field
//! checks of forged aging payloads are here too.

use crate::bloom::support::*;
use crate::common::payload::*;
use crate::common::*;

use std::thread::sleep;
use std::time::Duration;

/// The window most tests use: short, so its slack (100 ms) passes quickly.
const WINDOW: u64 = 400;

fn reserve_aging(con: &mut Connection, key: &str, capacity: u64, window: u64) {
    reserve(con, key, "0.01", capacity, &["AGE", &window.to_string()]);
}

/// Sleeps until the server clock is at least `at` (Unix ms).
fn sleep_until_server(con: &mut Connection, at: i64) {
    loop {
        let now = server_time_ms(con);
        if now >= at {
            return;
        }
        sleep(Duration::from_millis((at - now) as u64 + 1));
    }
}

/// Adds `count` items `prefix:i` spread over `span` ms, in batches of 10.
fn add_spread(con: &mut Connection, key: &str, prefix: &str, count: u64, span: Duration) {
    let batches = count.div_ceil(10);
    for b in 0..batches {
        let mut c = cmd("BF.MADDX");
        c.arg(key);
        for i in (b * 10)..((b + 1) * 10).min(count) {
            c.arg(item(prefix, i));
        }
        let v = raw(con, &c);
        assert!(err_of(&v).is_none(), "{v:?}");
        sleep(span / batches as u32);
    }
}

/// An aging filter "seen" (capacity 1000, window `WINDOW`): the server's time when
/// it was made.
fn seen_filter(con: &mut Connection) -> i64 {
    reserve_aging(con, "seen", 1000, WINDOW);
    server_time_ms(con)
}

#[test]
fn items_stay_for_the_window_and_go_after_its_slack() {
    let (_s, mut con) = Server::start_conn();
    let t0 = seen_filter(&mut con);
    assert_eq!(addx(&mut con, "seen", "page:1"), 1);
    assert_eq!(addx(&mut con, "seen", "page:1"), 0, "present again");
    let checked = server_time_ms(&mut con);
    assert!(
        checked - t0 < WINDOW as i64,
        "the server was too slow to check"
    );
    assert_eq!(existsx(&mut con, "seen", "page:1"), 1);
    assert_eq!(cardx(&mut con, "seen"), 1);
    // Gone (bar false positives) once window + slot has passed since the add.
    sleep_until_server(&mut con, t0 + (WINDOW + WINDOW / 4) as i64 + 20);
    assert_eq!(existsx(&mut con, "seen", "page:1"), 0);
    assert_eq!(cardx(&mut con, "seen"), 0);
    // A read changed nothing: the retired block is still stored until an add.
    let info = raw(&mut con, cmd("BF.INFOX").arg("seen").arg("FILTERS"));
    assert_eq!(ints(&info), Some(vec![0]));
    // The next add retires it and counts the item as new again.
    assert_eq!(addx(&mut con, "seen", "page:1"), 1);
    assert_eq!(cardx(&mut con, "seen"), 1);
}

#[test]
fn an_item_added_again_starts_its_window_again() {
    let (_s, mut con) = Server::start_conn();
    let t0 = seen_filter(&mut con);
    assert_eq!(addx(&mut con, "seen", "a"), 1);
    // After the first block's slot, adding it again puts it in a newer block.
    sleep_until_server(&mut con, t0 + (WINDOW / 2) as i64 + 50);
    let t1 = server_time_ms(&mut con);
    assert_eq!(addx(&mut con, "seen", "a"), 0, "it was present");
    // Past the first add's slack, inside the second add's window.
    sleep_until_server(&mut con, t0 + (WINDOW + WINDOW / 4) as i64 + 20);
    let checked = server_time_ms(&mut con);
    assert!(
        checked - t1 < WINDOW as i64,
        "the server was too slow to check"
    );
    assert_eq!(existsx(&mut con, "seen", "a"), 1);
    sleep_until_server(&mut con, t1 + (WINDOW + WINDOW / 4) as i64 + 20);
    assert_eq!(existsx(&mut con, "seen", "a"), 0);
}

#[test]
fn every_bf_command_works_on_an_aging_filter() {
    let (s, mut con) = Server::start_conn();
    let mut con3 = s.conn_resp3();
    reserve_aging(&mut con, "f", 100, 60_000);
    let v = raw(
        &mut con,
        cmd("BF.MADDX").arg("f").arg("a").arg("b").arg("a"),
    );
    assert_eq!(ints(&v), Some(vec![1, 1, 0]));
    let v = raw(
        &mut con,
        cmd("BF.INSERTX")
            .arg("f")
            .arg("NOCREATE")
            .arg("ITEMS")
            .arg("c")
            .arg("a"),
    );
    assert_eq!(ints(&v), Some(vec![1, 0]));
    let v = raw(
        &mut con,
        cmd("BF.MEXISTSX").arg("f").arg("a").arg("zz").arg("c"),
    );
    assert_eq!(ints(&v), Some(vec![1, 0, 1]));
    assert_eq!(cardx(&mut con, "f"), 3);
    let info = bf_info(&mut con, "f");
    assert_eq!(info.capacity, 100);
    assert_eq!(info.items, 3);
    assert_eq!(info.filters, 1);
    assert_eq!(info.expansion, None);
    let window = raw(&mut con, cmd("BF.INFOX").arg("f").arg("WINDOW"));
    assert_eq!(ints(&window), Some(vec![60_000]));
    let Value::Map(all) = raw(&mut con3, cmd("BF.INFOX").arg("f")) else {
        panic!("INFOX map");
    };
    assert_eq!(all.len(), 7);
    assert_eq!(label_of(&all[6].0), "Window");
    // A plain filter has no window.
    reserve(&mut con, "plain", "0.01", 100, &[]);
    let window = raw(&mut con, cmd("BF.INFOX").arg("plain").arg("WINDOW"));
    assert!(
        matches!(&window, Value::Array(a) if a == &vec![Value::Nil]),
        "{window:?}"
    );
    let Value::Map(all) = raw(&mut con3, cmd("BF.INFOX").arg("plain")) else {
        panic!("INFOX map");
    };
    assert_eq!(all.len(), 6);
    // A unit works for the window, as for every duration.
    reserve(&mut con, "week", "0.001", 1000, &["AGE", "7d"]);
    let window = raw(&mut con, cmd("BF.INFOX").arg("week").arg("WINDOW"));
    assert_eq!(ints(&window), Some(vec![7 * 86_400_000]));
}

#[test]
fn bad_aging_options_are_errors_that_change_nothing() {
    let (_s, mut con) = Server::start_conn();
    let cases = &refusals(
        r#"
        AGE 1000 NONSCALING  => ERR AGE cannot be used with EXPANSION or NONSCALING
        EXPANSION 2 AGE 1000 => ERR AGE cannot be used with EXPANSION or NONSCALING
        AGE 99               => ERR window must be from 100 ms to 10 years (3650 days)
        AGE 315360000001     => ERR window_ms is out of range
        AGE 3651d            => ERR window_ms is out of range
        AGE 0                => ERR window_ms must be a positive integer
        AGE -5               => ERR window_ms must be a positive integer
        AGE soon             => ERR window_ms must be a positive integer
        AGE                  => ERR syntax error
        AGE 1000 AGE 1000    => ERR syntax error
        "#,
    );
    for (extra, want) in cases {
        let mut c = cmd("BF.RESERVEX");
        c.arg("k").arg("0.01").arg(100).arg(extra);
        assert_eq!(expect_err(&mut con, &c), *want, "{extra:?}");
        assert!(!exists(&mut con, "k"), "{extra:?} created the key");
    }
    // AGE is an option of BF.RESERVEX only.
    let c = cmd_of!("BF.INSERTX", "k", "AGE", "1000", "ITEMS", "a");
    assert_eq!(expect_err(&mut con, &c), "ERR syntax error");
    // The internal add is not for clients.
    reserve_aging(&mut con, "f", 100, 1000);
    let c = cmd("BF._ADDATX").arg("f").arg(1).arg("a").clone();
    assert!(
        expect_err(&mut con, &c).starts_with("ERR"),
        "BF._ADDATX from a client"
    );
    assert_eq!(cardx(&mut con, "f"), 0);
}

#[test]
fn more_than_capacity_in_a_window_is_refused_per_item() {
    let (s, mut con) = Server::start_conn();
    let mut tap = s.replication_tap();
    reserve_aging(&mut con, "f", 8, 60_000);
    // 13 blocks of 2 items fit; the 27th new item does not.
    let mut c = cmd("BF.MADDX");
    c.arg("f");
    for i in 0..30 {
        c.arg(item("x", i));
    }
    let v = raw(&mut con, &c);
    let Value::Array(replies) = v else {
        panic!("{v:?}")
    };
    let errors: Vec<String> = replies.iter().filter_map(err_of).collect();
    let added = replies
        .iter()
        .filter(|r| ints(&Value::Array(vec![(*r).clone()])) == Some(vec![1]))
        .count();
    assert_eq!(added, 26, "{replies:?}");
    assert_eq!(errors.len(), 4, "{replies:?}");
    assert!(
        errors
            .iter()
            .all(|e| e.starts_with("ERR aging filter is full")),
        "{errors:?}"
    );
    let err = expect_err(&mut con, cmd("BF.ADDX").arg("f").arg("one more"));
    assert!(err.starts_with("ERR aging filter is full"), "{err}");
    // The replication stream: the reserve, then the 26 items that went in, at one time.
    let cmds = without_multi_exec(tap.drain(Duration::from_millis(300)));
    let adds: Vec<&Vec<String>> = cmds
        .iter()
        .filter(|c| c[0].eq_ignore_ascii_case("BF._ADDATX"))
        .collect();
    assert_eq!(adds.len(), 1, "{cmds:?}");
    assert_eq!(adds[0].len(), 3 + 26, "{:?}", adds[0]);
}

/// A workload over several generations on a master with a replica and AOF: every add
/// reaches the replica as `BF._ADDATX` with an absolute time, reads and unchanged adds
/// replicate nothing, and replica, AOF replay and rewritten AOF end digest-equal.
#[test]
fn replica_and_aof_replay_reach_the_masters_state() {
    let mut s = Server::start_plain_aof();
    let r = s.start_replica(&[], &[]);
    let mut con = s.conn();
    let mut tap = s.replication_tap();
    reserve_aging(&mut con, "crawl", 200, WINDOW);
    let before = server_time_ms(&mut con);
    add_spread(
        &mut con,
        "crawl",
        "url",
        150,
        Duration::from_millis(3 * WINDOW),
    );
    // Unchanged adds and reads replicate nothing: the second "z" is in the newest
    // block already.
    let v = raw(&mut con, cmd("BF.MADDX").arg("crawl").arg("z").arg("z"));
    assert_eq!(ints(&v), Some(vec![1, 0]));
    let _ = existsx(&mut con, "crawl", "url:0");
    let _ = cardx(&mut con, "crawl");
    let after = server_time_ms(&mut con);
    let cmds = without_multi_exec(tap.drain(Duration::from_millis(300)));
    let adds: Vec<&Vec<String>> = cmds
        .iter()
        .filter(|c| !c[0].eq_ignore_ascii_case("BF.RESERVEX"))
        .collect();
    assert_eq!(adds.len(), 16, "one per batch: {cmds:?}");
    // An add that opened or retired a block carries the master's time; one that
    // only set bits in the newest block is the call as sent (replayed clock-free).
    let (mut at_time, mut as_sent) = (0, 0);
    for a in &adds {
        if a[0].eq_ignore_ascii_case("BF._ADDATX") {
            let at: i64 = a[2].parse().expect("absolute ms");
            assert!(
                (before..=after).contains(&at),
                "{a:?} not at the master's time"
            );
            at_time += 1;
        } else {
            assert!(a[0].eq_ignore_ascii_case("BF.MADDX"), "{a:?}");
            as_sent += 1;
        }
    }
    assert!(at_time >= 3, "blocks opened over three windows: {cmds:?}");
    assert!(as_sent >= 1, "adds within a block: {cmds:?}");
    let last = adds[15];
    let z_items = if last[0].eq_ignore_ascii_case("BF._ADDATX") {
        &last[3..]
    } else {
        &last[2..]
    };
    let expected: &[&str] = if last[0].eq_ignore_ascii_case("BF._ADDATX") {
        &["z"]
    } else {
        &["z", "z"]
    };
    assert_eq!(z_items, expected, "{last:?}");
    // Several generations went by: old blocks were retired.
    let info = bf_info(&mut con, "crawl");
    assert!(info.filters <= 6, "{info:?}");
    s.sync_replicas(1);
    let master = digest(&mut con, "crawl");
    let mut rcon = r.conn();
    assert_eq!(digest(&mut rcon, "crawl"), master, "replica");
    // A replay later than the adds reaches the same state: the times are in the AOF.
    sleep(Duration::from_millis(2 * WINDOW));
    s.restart("NOSAVE");
    let mut con = s.conn();
    assert_eq!(digest(&mut con, "crawl"), master, "AOF replay");
    s.bgrewriteaof();
    s.wait_aof_rewrite_idle();
    s.restart("NOSAVE");
    let mut con = s.conn();
    assert_eq!(digest(&mut con, "crawl"), master, "rewritten AOF");
    let window = raw(&mut con, cmd("BF.INFOX").arg("crawl").arg("WINDOW"));
    assert_eq!(ints(&window), Some(vec![WINDOW as i64]));
}

/// RDB restart, DEBUG RELOAD, DUMP/RESTORE, COPY and SCANDUMPX/LOADCHUNKX keep the
/// window, the blocks and their openings (digest-equal), and the copies keep aging.
#[test]
fn persistence_and_copies_keep_the_window() {
    let (mut s, mut con) = Server::start_conn();
    reserve_aging(&mut con, "f", 1000, 60_000);
    reserve_aging(&mut con, "empty", 1000, 60_000);
    madd_range(&mut con, "f", "i:", 0..300);
    let want = digest(&mut con, "f");
    let want_empty = digest(&mut con, "empty");
    debug_reload(&mut con);
    assert_eq!(digest(&mut con, "f"), want, "DEBUG RELOAD");
    s.restart("SAVE");
    let mut con = s.conn();
    assert_eq!(digest(&mut con, "f"), want, "RDB");
    assert_eq!(digest(&mut con, "empty"), want_empty, "RDB, no blocks yet");
    let payload = dump(&mut con, "f");
    ok(&mut con, cmd("RESTORE").arg("restored").arg(0).arg(payload));
    assert_eq!(digest(&mut con, "restored"), want, "RESTORE");
    let _: i64 = query!(&mut con, "COPY", "f", "copied");
    assert_eq!(digest(&mut con, "copied"), want, "COPY");
    copy_by_chunks(&mut con, "f", "chunked");
    assert_eq!(digest(&mut con, "chunked"), want, "SCANDUMPX");
    // Without blocks the header is the whole dump, and loading it is the filter.
    let scan = |con: &mut Connection, it: i64| -> (i64, Vec<u8>) {
        cmd("BF.SCANDUMPX")
            .arg("empty")
            .arg(it)
            .query(con)
            .expect("SCANDUMPX")
    };
    let (it, header) = scan(&mut con, 0);
    assert_eq!(it, 1);
    assert_eq!(
        scan(&mut con, 1),
        (0, Vec::new()),
        "no bits after the header"
    );
    ok(
        &mut con,
        cmd("BF.LOADCHUNKX")
            .arg("chunked-empty")
            .arg(1)
            .arg(&header),
    );
    assert_eq!(
        digest(&mut con, "chunked-empty"),
        want_empty,
        "SCANDUMPX, no blocks"
    );
    for key in ["restored", "copied", "chunked", "chunked-empty"] {
        let window = raw(&mut con, cmd("BF.INFOX").arg(key).arg("WINDOW"));
        assert_eq!(ints(&window), Some(vec![60_000]), "{key}");
    }
    assert_eq!(existsx(&mut con, "chunked", "i:7"), 1);
    assert_eq!(addx(&mut con, "chunked-empty", "x"), 1);
}

/// bf-max-bytes holds for the most blocks an aging filter may have (13 under bursts).
#[test]
fn bf_max_bytes_covers_the_largest_aging_filter() {
    let s = Server::start_with(&[], &["bf-max-bytes", "1000000"]);
    let mut con = s.conn();
    // 200k items at 1 %: 240 KB without aging, about 1.2 MB at its largest.
    reserve(&mut con, "plain", "0.01", 200_000, &["NONSCALING"]);
    let err = expect_err(
        &mut con,
        cmd("BF.RESERVEX")
            .arg("aging")
            .arg("0.01")
            .arg(200_000)
            .arg("AGE")
            .arg(60_000),
    );
    assert_eq!(err, "ERR filter would exceed bf-max-bytes");
    reserve(&mut con, "aging", "0.01", 100_000, &["AGE", "60000"]);
}

/// Memory at steady arrivals against a non-scaling filter of the same capacity and
/// rate, as `MEMORY USAGE` reports it: within the documented 1.9×.
#[test]
fn memory_at_steady_arrivals_is_within_the_documented_multiple() {
    let (_s, mut con) = Server::start_conn();
    let capacity = 20_000u64;
    reserve(&mut con, "plain", "0.01", capacity, &["NONSCALING"]);
    reserve_aging(&mut con, "aging", capacity, 2_000);
    // A slot's share (capacity / 4) per slot (500 ms), for over a window.
    for slot in 0..6u64 {
        let from = slot * capacity / 4;
        madd_range(&mut con, "aging", "s:", from..from + capacity / 4);
        madd_range(
            &mut con,
            "plain",
            "p:",
            from..(from + capacity / 4).min(capacity),
        );
        sleep(Duration::from_millis(510));
    }
    let usage = |con: &mut Connection, k: &str| -> i64 {
        cmd("MEMORY")
            .arg("USAGE")
            .arg(k)
            .query(con)
            .expect("MEMORY USAGE")
    };
    let ratio = usage(&mut con, "aging") as f64 / usage(&mut con, "plain") as f64;
    eprintln!("aging / non-scaling memory at steady arrivals: {ratio:.2}");
    assert!(ratio <= 1.9, "{ratio}");
    assert!(ratio >= 1.0, "{ratio}: fewer blocks than a window needs");
}

/// Forged aging payloads are refused field by field, and leak nothing.
#[test]
fn forged_aging_payloads_are_refused() {
    let (mut s, mut con) = Server::start_conn();
    reserve_aging(&mut con, "two", 8, 60_000);
    madd_range(&mut con, "two", "t:", 0..3);
    let base = parse_dump(&dump(&mut con, "two"));
    // error rate, expansion, layer count, window, hashing, capacity, opened × 2, layers.
    let layers = 2usize;
    assert!(
        matches!(base.fields[2], Field::U(2)),
        "{:?}",
        base.fields[..4].to_vec()
    );
    let opened = 6;
    type Forgery = Box<dyn Fn(&mut Dump)>;
    let forgeries: Vec<(&str, Forgery)> = vec![
        (
            "window 99",
            Box::new(|d: &mut Dump| d.fields[3] = Field::U(99)),
        ),
        (
            "window past 10 years",
            Box::new(|d: &mut Dump| d.fields[3] = Field::U(315_360_000_001)),
        ),
        (
            "capacity 0",
            Box::new(|d: &mut Dump| d.fields[5] = Field::U(0)),
        ),
        (
            "capacity 2^60",
            Box::new(|d: &mut Dump| d.fields[5] = Field::U(1 << 60)),
        ),
        (
            "expansion 2",
            Box::new(|d: &mut Dump| d.fields[1] = Field::U(2)),
        ),
        (
            "openings out of order",
            Box::new(move |d: &mut Dump| {
                d.fields[opened] = Field::U(u64::MAX);
            }),
        ),
        (
            "newest opening past i64::MAX",
            Box::new(move |d: &mut Dump| {
                d.fields[opened + 1] = Field::U((1 << 63) + 5);
            }),
        ),
        (
            "layer count 14",
            Box::new(|d: &mut Dump| d.fields[2] = Field::U(14)),
        ),
        (
            "layer count 3",
            Box::new(|d: &mut Dump| d.fields[2] = Field::U(3)),
        ),
        (
            "one opening missing",
            Box::new(move |d: &mut Dump| {
                d.fields.remove(opened + 1);
            }),
        ),
        (
            "window 0 with openings",
            Box::new(|d: &mut Dump| d.fields[3] = Field::U(0)),
        ),
    ];
    let filters = warden_stat(&mut con, "bf_filters");
    for (name, forge) in &forgeries {
        let mut d = base.clone();
        forge(&mut d);
        let v = raw(
            &mut con,
            cmd("RESTORE")
                .arg("forged")
                .arg(0)
                .arg(encode(&d))
                .arg("REPLACE"),
        );
        assert!(err_of(&v).is_some(), "'{name}' was accepted");
        assert!(!exists(&mut con, "forged"), "{name}");
    }
    assert_eq!(
        warden_stat(&mut con, "bf_filters"),
        filters,
        "a forgery leaked a filter"
    );
    assert_eq!(layers, 2);
    // Re-encoded as it is: accepted.
    ok(
        &mut con,
        cmd("RESTORE").arg("same").arg(0).arg(encode(&base)),
    );
    assert_eq!(digest(&mut con, "same"), digest(&mut con, "two"));
    s.assert_alive();
}

/// Forged `BF.LOADCHUNKX` headers of aging filters are refused before a key exists:
/// a capacity past 10¹², an opening past a signed 64-bit ms (the AOF could not write
/// it back), no blocks but a bad window. (A capacity past the range once left a
/// half-built key that no RDB load would take back.)
#[test]
fn forged_aging_headers_are_refused() {
    let (mut s, mut con) = Server::start_conn();
    reserve_aging(&mut con, "empty", 100, 1_000);
    reserve_aging(&mut con, "one", 100, 60_000);
    assert_eq!(addx(&mut con, "one", "a"), 1);
    let header = |con: &mut Connection, key: &str| -> Vec<u8> {
        let (it, data): (i64, Vec<u8>) = query!(con, "BF.SCANDUMPX", key, 0);
        assert_eq!(it, 1);
        data
    };
    let empty = header(&mut con, "empty");
    let one = header(&mut con, "one");
    // magic 8, version 4, rate 8, expansion 4, count 4, window 8, capacity 8.
    assert_eq!(empty.len(), 44);
    assert_eq!(one.len(), 44 + 44);
    let with = |h: &[u8], at: usize, v: u64| {
        let mut h = h.to_vec();
        h[at..at + 8].copy_from_slice(&v.to_le_bytes());
        h
    };
    let opening = one.len() - 8;
    let forged = [
        ("capacity 10^12 + 1", with(&empty, 36, 1_000_000_000_001)),
        (
            "capacity 10^12 + 1, one block",
            with(&one, 36, 1_000_000_000_001),
        ),
        ("capacity 0", with(&empty, 36, 0)),
        ("window 99", with(&empty, 28, 99)),
        ("opening 2^63 + 5", with(&one, opening, (1 << 63) + 5)),
        ("opening u64::MAX", with(&one, opening, u64::MAX)),
    ];
    for (name, h) in &forged {
        let v = raw(&mut con, cmd("BF.LOADCHUNKX").arg("forged").arg(1).arg(h));
        assert_eq!(
            err_of(&v).as_deref(),
            Some("ERR invalid filter data"),
            "{name}: {v:?}"
        );
        assert!(!exists(&mut con, "forged"), "{name} left a key");
    }
    // The untouched headers load, and the server restarts with what it holds.
    ok(
        &mut con,
        cmd("BF.LOADCHUNKX").arg("empty-copy").arg(1).arg(&empty),
    );
    s.restart("SAVE");
    let mut con = s.conn();
    assert_eq!(digest(&mut con, "empty-copy"), digest(&mut con, "empty"));
}
