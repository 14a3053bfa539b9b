//! `BF.SCANDUMPX` / `BF.LOADCHUNKX` (issue #13): every filter shape survives the round
//! trip (`BF.EXISTSX` on every added item, `DEBUG DIGEST-VALUE` equal to the source's),
//! the replies follow RedisBloom's `BF.SCANDUMP` protocol, wrong, out-of-order and forged
//! chunks change nothing, and a key being loaded is never readable as a filter while
//! DEL, RENAME, EXPIRE, COPY, DUMP/RESTORE and DEBUG RELOAD act on it like on any key.
//! With RedisBloom loaded beside warden, the same client loop drives both modules
//! (filters imported from RedisBloom: `tests/it/bloom/redisbloom_import.rs`).
//!
//! Replication, AOF and a ~100 MB filter in 16 MiB chunks are in
//! `tests/it/bloom/scandump_persistence.rs`; forged RDB payloads of keys being loaded in
//! the payload fuzzer (`tests/it/module/payload_fuzz.rs`).

use crate::bloom::support::*;
use crate::common::peer_modules::redisbloom;
use crate::common::*;

// ---------------------------------------------------------------------------------------
// Filters of every shape
// ---------------------------------------------------------------------------------------

/// A filter: how it is reserved (none: created by BF.MADDX with the defaults) and how
/// many items `key:0`, `key:1`, … it gets.
struct Shape {
    key: &'static str,
    reserve: Option<(&'static str, u64, &'static [&'static str])>,
    items: u64,
}

const SHAPES: &[Shape] = &[
    Shape {
        key: "small",
        reserve: Some(("0.01", 100, &[])),
        items: 50,
    },
    Shape {
        key: "empty",
        reserve: Some(("0.05", 10, &[])),
        items: 0,
    },
    Shape {
        key: "nonscaling",
        reserve: Some(("0.001", 1_000, &["NONSCALING"])),
        items: 1_000,
    },
    Shape {
        key: "scaled",
        reserve: Some(("0.01", 100, &[])),
        items: 3_000,
    },
    Shape {
        key: "expansion1",
        reserve: Some(("0.1", 5, &["EXPANSION", "1"])),
        items: 200,
    },
    Shape {
        key: "expansion3",
        reserve: Some(("0.01", 50, &["EXPANSION", "3"])),
        items: 2_000,
    },
    Shape {
        key: "expansion32768",
        reserve: Some(("0.05", 10, &["EXPANSION", "32768"])),
        items: 30,
    },
    Shape {
        key: "tiny-rate",
        reserve: Some(("1e-300", 20, &["NONSCALING"])),
        items: 20,
    },
    Shape {
        key: "tiniest-rate",
        reserve: Some(("5e-324", 5, &["NONSCALING"])),
        items: 5,
    },
    Shape {
        key: "implicit",
        reserve: None,
        items: 300,
    },
];

/// Makes the filter of `s`; returns the prefix of its items.
fn make(con: &mut Connection, s: &Shape) -> String {
    if let Some((rate, capacity, extra)) = s.reserve {
        reserve(con, s.key, rate, capacity, extra);
    }
    let prefix = format!("{}:", s.key);
    madd_range(con, s.key, &prefix, 0..s.items);
    prefix
}

/// `dst` is `src` exactly: same digest, BF.INFOX and BF.CARDX, the same chunks.
fn assert_same_filter(con: &mut Connection, src: &str, dst: &str, chunks: &[(i64, Vec<u8>)]) {
    assert_eq!(key_type(con, dst), "warden-bf", "{dst}");
    assert_eq!(digest(con, src), digest(con, dst), "{src} -> {dst}: digest");
    assert_eq!(
        bf_info(con, src),
        bf_info(con, dst),
        "{src} -> {dst}: BF.INFOX"
    );
    assert_eq!(cardx(con, src), cardx(con, dst), "{src} -> {dst}: BF.CARDX");
    assert!(scandump(con, dst) == chunks, "{dst}: its own dump differs");
}

#[test]
fn every_shape_round_trips() {
    let s = Server::start();
    let mut con = bf_conn(&s);
    for shape in SHAPES {
        let prefix = make(&mut con, shape);
        let copy = format!("copy:{}", shape.key);
        let chunks = copy_by_chunks(&mut con, shape.key, copy.as_str());
        assert_same_filter(&mut con, shape.key, &copy, &chunks);
        assert_eq!(
            mexists_range(&mut con, copy.as_str(), &prefix, 0..shape.items),
            shape.items,
            "{copy}: an added item is missing"
        );
        // The copy goes on like the original: the same adds, the same growth.
        if [
            "small",
            "empty",
            "scaled",
            "expansion3",
            "expansion32768",
            "implicit",
        ]
        .contains(&shape.key)
        {
            let more = format!("{}:more:", shape.key);
            let a = madd_range(&mut con, shape.key, &more, 0..500);
            let b = madd_range(&mut con, copy.as_str(), &more, 0..500);
            assert_eq!(a, b, "{copy}: adds after the load");
            assert_eq!(
                digest(&mut con, shape.key),
                digest(&mut con, &copy),
                "{copy}"
            );
        }
    }
    let layers = |con: &mut Connection, k: &str| bf_info(con, k).filters;
    assert!(layers(&mut con, "copy:scaled") >= 5);
    assert!(layers(&mut con, "copy:expansion1") >= 30);
    // Binary key and items.
    let key: &[u8] = b"bin\x00\xffkey";
    let items: [&[u8]; 3] = [b"\x00\xff", b"", b"\r\n\xfe"];
    ok(&mut con, cmd("BF.RESERVEX").arg(key).arg(0.01).arg(2));
    let _: Vec<i64> = query!(&mut con, "BF.MADDX", key, &items[..]);
    let dst: &[u8] = b"bin\x00\xffcopy";
    let chunks = copy_by_chunks(&mut con, key, dst);
    assert_eq!(chunks.len(), 3, "header and two layers");
    assert_eq!(digest(&mut con, key), digest(&mut con, dst));
    let found: Vec<i64> = query!(&mut con, "BF.MEXISTSX", dst, &items[..]);
    assert_eq!(found, [1, 1, 1]);
    // INFO warden counts the copies as filters.
    assert_eq!(filter_stats(&mut con), filter_census(&mut con, &[0]));
}

#[test]
fn the_replies_follow_redisbloom_protocol() {
    let (s, mut con) = Server::start_conn();
    reserve(&mut con, "f", "0.01", 100, &[]);
    madd_range(&mut con, "f", "f:", 0..250);
    let chunks = scandump(&mut con, "f");
    let layers = bf_info(&mut con, "f").filters as usize;
    assert_eq!(chunks.len(), 1 + layers, "one chunk per small layer");
    assert!(
        chunks[0].1.starts_with(b"wardenbf"),
        "header {:?}",
        &chunks[0].1
    );
    assert_eq!(chunks[0].1.len(), 28 + 36 * layers, "header size");
    let size = bf_info(&mut con, "f").size;
    let bits: usize = chunks[1..].iter().map(|(_, c)| c.len()).sum();
    assert!(
        bits as i64 <= size && bits > 0,
        "{bits} bytes of bits, Size {size}"
    );
    let end = chunks.last().expect("chunks").0;
    assert_eq!(end, 1 + bits as i64);
    let at = |con: &mut Connection, it: &str| -> Value {
        raw(con, cmd("BF.SCANDUMPX").arg("f").arg(it))
    };
    let done = Value::Array(vec![Value::Int(0), Value::BulkString(vec![])]);
    assert_eq!(at(&mut con, &end.to_string()), done, "the end");
    assert_eq!(at(&mut con, "9223372036854775807"), done, "past the end");
    let inside_last = (end - 1).to_string();
    let errors = [
        ("2", "ERR iterator does not start a chunk"),
        (inside_last.as_str(), "ERR iterator does not start a chunk"),
        ("-1", "ERR iterator must be a non-negative integer"),
        ("x", "ERR iterator must be a non-negative integer"),
        ("1.0", "ERR iterator must be a non-negative integer"),
        ("99999999999999999999", "ERR iterator is out of range"),
    ];
    for (it, want) in errors {
        assert_eq!(err_of(&at(&mut con, it)).as_deref(), Some(want), "{it}");
    }
    let missing = raw(&mut con, cmd("BF.SCANDUMPX").arg("nothing").arg(0));
    assert_eq!(err_of(&missing).as_deref(), Some("ERR not found"));
    ok(&mut con, cmd("SET").arg("str").arg("v"));
    let wrong = raw(&mut con, cmd("BF.SCANDUMPX").arg("str").arg(0));
    assert!(
        err_of(&wrong).is_some_and(|e| e.starts_with("WRONGTYPE")),
        "{wrong:?}"
    );
    for c in [
        cmd("BF.SCANDUMPX").arg("f").clone(),
        cmd("BF.LOADCHUNKX").arg("f").arg(1).clone(),
    ] {
        let e = expect_err(&mut con, &c);
        assert!(e.starts_with("ERR wrong number of arguments"), "{e}");
    }
    // RESP3 answers the same two entries.
    let mut con3 = s.conn_resp3();
    let v = raw(&mut con3, cmd("BF.SCANDUMPX").arg("f").arg(0));
    assert!(
        matches!(&v, Value::Array(a) if a.len() == 2 && a[0] == Value::Int(1)),
        "{v:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Wrong, out-of-order and forged chunks
// ---------------------------------------------------------------------------------------

/// Bytes of the header before the layers, and of each layer in it.
const FIXED: usize = 28;
const LAYER: usize = 36;

/// `h` with `v` written at byte `at`.
fn patch(h: &[u8], at: usize, v: &[u8]) -> Vec<u8> {
    let mut out = h.to_vec();
    out[at..at + v.len()].copy_from_slice(v);
    out
}

/// Sends a chunk that must be refused with `want`; `key` is then unchanged.
fn refused(con: &mut Connection, key: &str, it: &str, data: &[u8], want: &str) {
    let before = raw(con, cmd("DEBUG").arg("DIGEST-VALUE").arg(key));
    let v = raw(con, cmd("BF.LOADCHUNKX").arg(key).arg(it).arg(data));
    assert_eq!(
        err_of(&v).as_deref(),
        Some(want),
        "{key} iterator {it}, {} bytes: {v:?}",
        data.len()
    );
    let after = raw(con, cmd("DEBUG").arg("DIGEST-VALUE").arg(key));
    assert_eq!(before, after, "{key}: a refused chunk changed it");
}

#[test]
fn wrong_chunks_change_nothing() {
    let (_s, mut con) = Server::start_conn();
    reserve(&mut con, "src", "0.01", 100, &[]);
    madd_range(&mut con, "src", "s:", 0..800);
    let chunks = scandump(&mut con, "src");
    assert!(chunks.len() >= 5, "{} chunks", chunks.len());
    let (h, c1, c2) = (&chunks[0], &chunks[1], &chunks[2]);
    let order = |next: i64| format!("ERR chunk out of order (expected iterator {next})");
    let length = |n: usize| format!("ERR chunk must be {n} bytes at this iterator");
    // A chunk of bits before the header: no such key.
    refused(&mut con, "t", &c1.0.to_string(), &c1.1, "ERR not found");
    assert!(!exists(&mut con, "t"));
    loadchunks(&mut con, "t", std::slice::from_ref(h));
    assert_eq!(key_type(&mut con, "t"), "warden-bl");
    // Skipped, repeated and misplaced chunks; wrong lengths.
    refused(&mut con, "t", &c2.0.to_string(), &c2.1, &order(c1.0));
    refused(&mut con, "t", "1", &h.1, &order(c1.0));
    refused(&mut con, "t", &(c1.0 + 8).to_string(), &c1.1, &order(c1.0));
    refused(
        &mut con,
        "t",
        &c1.0.to_string(),
        &c1.1[8..],
        &length(c1.1.len()),
    );
    refused(
        &mut con,
        "t",
        &c1.0.to_string(),
        &[&c1.1[..], &[0; 8]].concat(),
        &length(c1.1.len()),
    );
    refused(&mut con, "t", &c1.0.to_string(), b"", &length(c1.1.len()));
    for (it, want) in [
        ("0", "ERR iterator must be a positive integer"),
        ("-8", "ERR iterator must be a positive integer"),
        ("abc", "ERR iterator must be a positive integer"),
        ("99999999999999999999", "ERR iterator is out of range"),
    ] {
        refused(&mut con, "t", it, &c1.1, want);
    }
    loadchunks(&mut con, "t", &chunks[1..2]);
    refused(&mut con, "t", &c1.0.to_string(), &c1.1, &order(c2.0));
    loadchunks(&mut con, "t", &chunks[2..]);
    assert_eq!(digest(&mut con, "t"), digest(&mut con, "src"));
    // Chunks for a complete filter (including a retried last chunk).
    let complete = "ERR key already holds a complete filter";
    let last = chunks.last().expect("last");
    refused(&mut con, "t", &last.0.to_string(), &last.1, complete);
    refused(&mut con, "t", "1", &h.1, complete);
    refused(&mut con, "src", "1", &h.1, complete);
    // Another type.
    ok(&mut con, cmd("SET").arg("str").arg("v"));
    let v = raw(
        &mut con,
        cmd("BF.LOADCHUNKX").arg("str").arg(1).arg(&h.1[..]),
    );
    assert!(
        err_of(&v).is_some_and(|e| e.starts_with("WRONGTYPE")),
        "{v:?}"
    );
}

#[test]
fn forged_headers_are_refused_and_create_nothing() {
    let (mut s, mut con) = Server::start_conn();
    reserve(&mut con, "src", "0.01", 100, &[]);
    madd_range(&mut con, "src", "s:", 0..250);
    let h = scandump(&mut con, "src").remove(0).1;
    let n = (h.len() - FIXED) / LAYER;
    let layer = |i: usize, field: usize| FIXED + LAYER * i + [0, 8, 16, 20, 28][field];
    let u32s = |v: u32| v.to_le_bytes().to_vec();
    let u64s = |v: u64| v.to_le_bytes().to_vec();
    let f64s = |v: f64| v.to_le_bytes().to_vec();
    let foreign = "ERR not a BF.SCANDUMPX header nor a RedisBloom 2.x BF.SCANDUMP header";
    let hash32 = "ERR unsupported RedisBloom filter: 32-bit legacy hashing (no FORCE64 option)";
    let bad = "ERR invalid filter data";
    let too_large = "ERR filter would exceed bf-max-bytes";
    // A RedisBloom header of a one-link filter (20 + 53 bytes) with options 3
    // (NOROUND | ENTS_IS_BITS, no FORCE64): RedisBloom before 2.0's hashing.
    let redisbloom: Vec<u8> = [
        &u64s(0)[..],
        &u32s(1),
        &u32s(3),
        &u32s(2),
        &u64s(1200),
        &u64s(9600),
        &u64s(0),
        &f64s(0.005),
        &f64s(11.03),
        &u32s(8),
        &u64s(1000),
        &[0],
    ]
    .concat();
    let forged: Vec<(Vec<u8>, &str)> = vec![
        (vec![], foreign),
        (b"hello".to_vec(), foreign),
        (redisbloom, hash32),
        (h[..FIXED - 1].to_vec(), bad),
        (h[..h.len() - 1].to_vec(), bad),
        ([&h[..], &[0]].concat(), bad),
        (patch(&h, 8, &u32s(2)), bad),
        (patch(&h, 12, &f64s(1.0)), bad),
        (patch(&h, 12, &f64s(f64::NAN)), bad),
        (patch(&h, 20, &u32s(32_769)), bad),
        (patch(&h, 20, &u32s(0)), bad),
        (patch(&h, 24, &u32s(n as u32 + 1)), bad),
        (patch(&h, 24, &u32s(0)), bad),
        (patch(&h, 24, &u32s(u32::MAX)), bad),
        (patch(&h, layer(0, 0), &u64s(0)), bad),
        (patch(&h, layer(n - 1, 1), &f64s(0.0)), bad),
        (patch(&h, layer(0, 2), &u32s(0)), bad),
        (patch(&h, layer(0, 2), &u32s(1101)), bad),
        (patch(&h, layer(0, 3), &u64s(101)), bad),
        (patch(&h, layer(n - 1, 4), &u64s(100)), bad),
        (patch(&h, layer(n - 1, 4), &u64s(64)), bad),
        (patch(&h, layer(0, 4), &u64s(1 << 40)), too_large),
        (
            patch(&h, layer(n - 1, 4), &u64s(u64::MAX / 64 * 64)),
            too_large,
        ),
    ];
    for (i, (header, want)) in forged.iter().enumerate() {
        let key = format!("forged:{i}");
        refused(&mut con, &key, "1", header, want);
        assert!(
            !exists(&mut con, &key),
            "{key}: created by a refused header"
        );
    }
    // A filter larger than the machine, with bf-max-bytes at its largest (1 TiB):
    // refused before anything is allocated.
    ok(
        &mut con,
        cmd("CONFIG")
            .arg("SET")
            .arg("warden.bf-max-bytes")
            .arg(1u64 << 40),
    );
    let capacity = (physical_memory() * 2 * 8 / 12).min(1_000_000_000_000);
    let bits = (capacity * 12).div_ceil(64) * 64;
    let one = [
        &h[..FIXED],
        &u64s(capacity),
        &f64s(0.005),
        &u32s(8),
        &u64s(0),
        &u64s(bits),
    ]
    .concat();
    let one = patch(&patch(&one, 24, &u32s(1)), 20, &u32s(2));
    refused(&mut con, "huge", "1", &one, too_large);
    assert!(!exists(&mut con, "huge"));
    // The same header with a capacity this machine holds is accepted: the refusal
    // above is the size, nothing else.
    let small = patch(&patch(&one, FIXED, &u64s(1_000)), FIXED + 28, &u64s(12_032));
    ok(
        &mut con,
        cmd("BF.LOADCHUNKX").arg("fits").arg(1).arg(&small[..]),
    );
    assert_eq!(key_type(&mut con, "fits"), "warden-bl");
    s.assert_alive();
}

// ---------------------------------------------------------------------------------------
// A key being loaded
// ---------------------------------------------------------------------------------------

#[test]
fn a_key_being_loaded_is_never_a_filter() {
    let (_s, mut con) = Server::start_conn();
    reserve(&mut con, "src", "0.01", 100, &[]);
    madd_range(&mut con, "src", "s:", 0..250);
    let chunks = scandump(&mut con, "src");
    let filters = warden_stat(&mut con, "bf_filters");
    loadchunks(&mut con, "p", &chunks[..2]);
    assert_eq!(key_type(&mut con, "p"), "warden-bl");
    assert_eq!(
        warden_stat(&mut con, "bf_filters"),
        filters,
        "not a filter yet"
    );
    let usage: i64 = query!(&mut con, "MEMORY", "USAGE", "p");
    assert!(
        usage >= bf_info(&mut con, "src").size,
        "MEMORY USAGE {usage}"
    );
    let before = digest(&mut con, "p");
    let calls = [
        cmd("BF.EXISTSX").arg("p").arg("s:1").clone(),
        cmd("BF.MEXISTSX").arg("p").arg("s:1").arg("s:2").clone(),
        cmd("BF.ADDX").arg("p").arg("x").clone(),
        cmd("BF.MADDX").arg("p").arg("x").arg("y").clone(),
        cmd("BF.INSERTX").arg("p").arg("ITEMS").arg("x").clone(),
        cmd_of!("BF.INSERTX", "p", "NOCREATE", "ITEMS", "x"),
        cmd("BF.RESERVEX").arg("p").arg(0.01).arg(100).clone(),
        cmd("BF.INFOX").arg("p").clone(),
        cmd("BF.INFOX").arg("p").arg("SIZE").clone(),
        cmd("BF.CARDX").arg("p").clone(),
        cmd("BF.SCANDUMPX").arg("p").arg(0).clone(),
        cmd("BF.SCANDUMPX").arg("p").arg(1).clone(),
    ];
    for c in &calls {
        assert_eq!(expect_err(&mut con, c), LOADING, "{}", show(c));
    }
    for c in [
        cmd("DLOCK.ACQUIRE").arg("p").arg("o").arg(1000).clone(),
        cmd("RL.TOKEN").arg("p").arg("1/s").arg(1).clone(),
        cmd("GET").arg("p").clone(),
    ] {
        assert!(
            expect_err(&mut con, &c).starts_with("WRONGTYPE"),
            "{}",
            show(&c)
        );
    }
    assert_eq!(digest(&mut con, "p"), before, "refused calls changed it");
    // DEBUG RELOAD keeps it, and loading goes on; an EXPIRE set meanwhile stays.
    debug_reload(&mut con);
    assert_eq!(digest(&mut con, "p"), before);
    let _: i64 = query!(&mut con, "PEXPIRE", "p", 600_000);
    loadchunks(&mut con, "p", &chunks[2..]);
    assert!(
        pttl(&mut con, "p") > 500_000,
        "the TTL set while loading is kept"
    );
    // (A TTL is part of a key's digest.)
    let _: i64 = query!(&mut con, "PERSIST", "p");
    assert_eq!(digest(&mut con, "p"), digest(&mut con, "src"));
    assert_eq!(warden_stat(&mut con, "bf_filters"), filters + 1);
    assert_eq!(filter_stats(&mut con), filter_census(&mut con, &[0]));
}

#[test]
fn keyspace_commands_act_on_a_key_being_loaded() {
    let (_s, mut con) = Server::start_conn();
    reserve(&mut con, "src", "0.01", 100, &[]);
    madd_range(&mut con, "src", "s:", 0..800);
    let chunks = scandump(&mut con, "src");
    let want = digest(&mut con, "src");
    // RENAME: loading goes on under the new name.
    loadchunks(&mut con, "a", &chunks[..2]);
    ok(&mut con, cmd("RENAME").arg("a").arg("b"));
    refused(
        &mut con,
        "a",
        &chunks[2].0.to_string(),
        &chunks[2].1,
        "ERR not found",
    );
    loadchunks(&mut con, "b", &chunks[2..]);
    assert_eq!(digest(&mut con, "b"), want);
    // COPY: two independent loads.
    loadchunks(&mut con, "c", &chunks[..2]);
    let _: i64 = query!(&mut con, "COPY", "c", "c2");
    loadchunks(&mut con, "c", &chunks[2..]);
    assert_eq!(key_type(&mut con, "c2"), "warden-bl");
    loadchunks(&mut con, "c2", &chunks[2..]);
    assert_eq!(digest(&mut con, "c2"), want);
    // DUMP / RESTORE: the restored key goes on loading.
    loadchunks(&mut con, "d", &chunks[..3]);
    let payload = dump(&mut con, "d");
    ok(&mut con, cmd("RESTORE").arg("e").arg(0).arg(&payload[..]));
    assert_eq!(digest(&mut con, "e"), digest(&mut con, "d"));
    loadchunks(&mut con, "e", &chunks[3..]);
    assert_eq!(digest(&mut con, "e"), want);
    // DEL, and an expiry: the key is gone, so is the load.
    let _: i64 = query!(&mut con, "DEL", "d");
    refused(
        &mut con,
        "d",
        &chunks[3].0.to_string(),
        &chunks[3].1,
        "ERR not found",
    );
    loadchunks(&mut con, "x", &chunks[..2]);
    let _: i64 = query!(&mut con, "PEXPIRE", "x", 1);
    assert!(wait_until(std::time::Duration::from_secs(5), || !exists(
        &mut con, "x"
    )));
    refused(
        &mut con,
        "x",
        &chunks[2].0.to_string(),
        &chunks[2].1,
        "ERR not found",
    );
    // A new header after DEL starts over.
    loadchunks(&mut con, "d", &chunks);
    assert_eq!(digest(&mut con, "d"), want);
}

// ---------------------------------------------------------------------------------------
// RedisBloom beside warden
// ---------------------------------------------------------------------------------------

/// The iterators of RedisBloom's dump loop on `key` with command `scandump`.
fn iterators(con: &mut Connection, scandump: &str, key: &str) -> Vec<(i64, usize)> {
    let mut out = Vec::new();
    let mut it = 0i64;
    loop {
        let (next, data): (i64, Vec<u8>) = query!(con, scandump, key, it);
        if next == 0 {
            return out;
        }
        out.push((next, if it == 0 { 0 } else { data.len() }));
        it = next;
    }
}

/// With both modules in one server, the same loop dumps both with the same iterators
/// for filters of the same geometry (one layer in two chunks; two layers); warden takes
/// RedisBloom's header (an import) and RedisBloom refuses warden's.
#[test]
fn redisbloom_and_warden_give_the_same_iterators() {
    let rb = redisbloom();
    let s = Server::start_with(&["--loadmodule", rb.as_str()], &[]);
    let mut con = bf_conn(&s);
    for (capacity, items) in [(20_000_000u64, 10u64), (100, 150)] {
        ok(
            &mut con,
            cmd("BF.RESERVE").arg("rb").arg(0.01).arg(capacity),
        );
        ok(
            &mut con,
            cmd("BF.RESERVEX").arg("w").arg(0.01).arg(capacity),
        );
        let mut madd = |c: &str, k: &str| {
            let _: Value = query!(
                &mut con,
                c,
                k,
                (0..items).map(|i| format!("i{i}")).collect::<Vec<_>>()
            );
        };
        madd("BF.MADD", "rb");
        madd("BF.MADDX", "w");
        let a = iterators(&mut con, "BF.SCANDUMP", "rb");
        let b = iterators(&mut con, "BF.SCANDUMPX", "w");
        assert_eq!(
            a, b,
            "capacity {capacity}: RedisBloom's iterators, then warden's"
        );
        assert!(a.len() >= 3, "{a:?}");
        let rb_header: (i64, Vec<u8>) = query!(&mut con, "BF.SCANDUMP", "rb", 0);
        let w_header: (i64, Vec<u8>) = query!(&mut con, "BF.SCANDUMPX", "w", 0);
        ok(
            &mut con,
            cmd("BF.LOADCHUNKX").arg("w2").arg(1).arg(&rb_header.1[..]),
        );
        let e = expect_err(
            &mut con,
            cmd("BF.LOADCHUNK").arg("rb2").arg(1).arg(&w_header.1[..]),
        );
        assert_eq!(e, "ERR received bad data");
        assert!(exists(&mut con, "w2") && !exists(&mut con, "rb2"));
        let _: i64 = query!(&mut con, "DEL", "rb", "w", "w2");
    }
}

/// The headers and chunks the command fuzzer sends (`fuzz_values.rs`) are ones
/// the module accepts, so its valid calls load filters to the end.
#[test]
fn the_fuzzers_chunks_load() {
    use super::fuzz_values::{dump_chunk, dump_header, DUMP_SHAPES};
    let (_s, mut con) = Server::start_conn();
    for (i, (_, _, layers)) in DUMP_SHAPES.iter().enumerate() {
        let key = format!("fz:{i}");
        ok(
            &mut con,
            cmd("BF.LOADCHUNKX").arg(&key).arg(1).arg(dump_header(i, 3)),
        );
        for j in 0..layers.len() {
            let (it, len) = dump_chunk(i, j);
            let data = vec![0xa5u8; len as usize];
            ok(&mut con, cmd("BF.LOADCHUNKX").arg(&key).arg(it).arg(data));
        }
        assert_eq!(key_type(&mut con, &key), "warden-bf", "{key}");
        assert_eq!(
            bf_info(&mut con, &key).filters,
            layers.len() as i64,
            "{key}"
        );
        assert_eq!(cardx(&mut con, &key), 3 * layers.len() as i64, "{key}");
    }
}
