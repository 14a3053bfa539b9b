//! Filters imported from RedisBloom 2.8 (issue #28): real RedisBloom (`redisbloom.so`,
//! fetched by `tests/bench/redisbloom.sh`; these tests fail when it cannot be had)
//! loaded beside warden in one server. Its filters (default scaling with several layers,
//! NONSCALING, custom error rates and expansions) go through `BF.SCANDUMP` and
//! `BF.LOADCHUNKX` into warden keys, which then answer every `BF.EXISTSX` as RedisBloom's
//! `BF.EXISTS` does: every added item, 100,000 absent ones, and again after the same new
//! adds on both sides (growth included); through DEBUG RELOAD, DUMP/RESTORE, a replica
//! and an AOF rewrite; and `BF.SCANDUMPX` of an imported filter loads back as itself.

use crate::bloom::support::*;
use crate::common::peer_modules::redisbloom;
use crate::common::*;

/// A RedisBloom filter: `BF.RESERVE key <reserve…>` (none: created by BF.MADD with the
/// defaults, 0.01 / 100 / expansion 2) and `items` items `in:{key}:{i}`.
struct RbShape {
    key: &'static str,
    reserve: &'static [&'static str],
    items: u64,
}

const SHAPES: &[RbShape] = &[
    RbShape {
        key: "default",
        reserve: &[],
        items: 2_500,
    },
    RbShape {
        key: "nonscaling",
        reserve: &["0.001", "3000", "NONSCALING"],
        items: 2_500,
    },
    RbShape {
        key: "custom",
        reserve: &["0.05", "50", "EXPANSION", "3"],
        items: 3_000,
    },
    RbShape {
        key: "tight",
        reserve: &["0.0001", "200", "EXPANSION", "1"],
        items: 1_500,
    },
    RbShape {
        key: "loose",
        reserve: &["0.3", "1000"],
        items: 100,
    },
];

/// Absent items each comparison asks both modules about.
const ABSENT: u64 = 100_000;

fn items(prefix: &str, range: std::ops::Range<u64>) -> Vec<String> {
    range.map(|i| format!("{prefix}{i}")).collect()
}

/// Makes RedisBloom filter `s` under key `rb:{key}`.
fn make(con: &mut Connection, s: &RbShape) -> String {
    let key = format!("rb:{}", s.key);
    if !s.reserve.is_empty() {
        let mut c = cmd("BF.RESERVE");
        c.arg(&key);
        for a in s.reserve {
            c.arg(*a);
        }
        ok(con, &c);
    }
    let prefix = format!("in:{}:", s.key);
    for start in (0..s.items).step_by(1_000) {
        let batch = items(&prefix, start..(start + 1_000).min(s.items));
        let _: Value = query!(con, "BF.MADD", &key, batch);
    }
    if s.items == 0 {
        let _: Value = query!(con, "BF.ADD", &key, "x");
    }
    key
}

/// Moves RedisBloom's filter `src` to warden key `dst` with the loop of `src/bloom/README.md`
/// (BF.SCANDUMP from iterator 0 until it answers 0, each chunk to BF.LOADCHUNKX).
fn import(con: &mut Connection, src: &str, dst: &str) -> usize {
    let mut it = 0i64;
    let mut chunks = 0;
    loop {
        let (next, data): (i64, Vec<u8>) = query!(con, "BF.SCANDUMP", src, it);
        if next == 0 {
            return chunks;
        }
        ok(con, cmd("BF.LOADCHUNKX").arg(dst).arg(next).arg(&data[..]));
        chunks += 1;
        it = next;
    }
}

/// The answers of `command` (BF.MEXISTS or BF.MEXISTSX) on `key` for `prefix{i}`.
fn answers(con: &mut Connection, command: &str, key: &str, prefix: &str, n: u64) -> Vec<i64> {
    let mut out = Vec::with_capacity(n as usize);
    for start in (0..n).step_by(10_000) {
        let batch = items(prefix, start..(start + 10_000).min(n));
        let v: Vec<i64> = query!(con, command, key, batch);
        out.extend(v);
    }
    out
}

/// Each entry of a per-item reply: its integer, or "error" for an error entry.
fn outcomes(v: &Value) -> Vec<String> {
    match v {
        Value::Array(a) => a
            .iter()
            .map(|e| match (int_of(e), err_of(e)) {
                (Some(i), _) => i.to_string(),
                (None, Some(_)) => "error".to_string(),
                _ => panic!("unexpected entry {e:?}"),
            })
            .collect(),
        other => panic!("expected an array, got {other:?}"),
    }
}

/// Asserts that BF.MADDX's replies `ours` are RedisBloom's BF.MADD replies `theirs`.
/// On a full non-scaling filter RedisBloom's reply ends at the first item that did not
/// fit (an error), where warden's has an entry for every item (the rest errors, or 0
/// for an item that may be present): up to there they are the same.
fn same_outcomes(theirs: &Value, ours: &Value, what: &str) {
    let (theirs, ours) = (outcomes(theirs), outcomes(ours));
    let n = theirs.len();
    assert!(n == ours.len() || theirs.last().map(String::as_str) == Some("error"));
    if let Some(i) = (0..n).find(|&i| theirs[i] != ours[i]) {
        panic!(
            "{what}: item {i}: RedisBloom {}, warden {}",
            theirs[i], ours[i]
        );
    }
}

/// Asserts that warden key `w` answers as RedisBloom key `rb` for `ABSENT` absent items,
/// `absent:{i}`; returns how many were (false) positives.
fn same_answers(con: &mut Connection, rb: &str, w: &str, what: &str) -> usize {
    let theirs = answers(con, "BF.MEXISTS", rb, "absent:", ABSENT);
    let ours = answers(con, "BF.MEXISTSX", w, "absent:", ABSENT);
    let differ = (0..theirs.len()).filter(|&i| theirs[i] != ours[i]).count();
    assert_eq!(
        differ, 0,
        "{what}: {w} differs from {rb} on {differ} absent items"
    );
    theirs.iter().filter(|&&a| a == 1).count()
}

/// BF.INFO's Capacity, Number of filters, Number of items inserted.
fn shape_of(con: &mut Connection, command: &str, key: &str) -> (i64, i64, i64) {
    let field = |con: &mut Connection, f: &str| -> i64 {
        let v: Vec<Value> = query!(con, command, key, f);
        int(&v[0])
    };
    (
        field(con, "CAPACITY"),
        field(con, "FILTERS"),
        field(con, "ITEMS"),
    )
}

/// Imports every shape into `w:{key}`; returns (RedisBloom key, warden key) pairs.
fn import_all(con: &mut Connection) -> Vec<(String, String)> {
    SHAPES
        .iter()
        .map(|s| {
            let rb = make(con, s);
            let w = format!("w:{}", s.key);
            let chunks = import(con, &rb, &w);
            assert!(chunks >= 2, "{rb}: {chunks} chunks");
            assert_eq!(key_type(con, &w), "warden-bf");
            (rb, w)
        })
        .collect()
}

#[test]
fn imported_filters_answer_as_redisbloom_before_and_after_new_adds() {
    let s = Server::start_with(&["--loadmodule", redisbloom().as_str()], &[]);
    let mut con = bf_conn(&s);
    let pairs = import_all(&mut con);
    for (shape, (rb, w)) in SHAPES.iter().zip(&pairs) {
        // Every added item is there.
        let added = format!("in:{}:", shape.key);
        let found = answers(&mut con, "BF.MEXISTSX", w, &added, shape.items);
        assert!(
            found.iter().all(|&a| a == 1),
            "{w}: an added item is missing"
        );
        // The same answers on absent items, and the same shape.
        let fp = same_answers(&mut con, rb, w, "imported");
        assert_eq!(
            shape_of(&mut con, "BF.INFO", rb),
            shape_of(&mut con, "BF.INFOX", w),
            "{w}: capacity, layers, items"
        );
        let card: i64 = query!(&mut con, "BF.CARDX", w);
        assert_eq!(card, shape_of(&mut con, "BF.INFO", rb).2, "{w}");
        // The same new adds on both sides: the same replies (new, present, or a full
        // non-scaling filter's error), the same growth, the same answers.
        for round in 0..3 {
            let new = items(&format!("new:{}:{round}:", shape.key), 0..2_000);
            let theirs = raw(&mut con, cmd("BF.MADD").arg(rb).arg(&new));
            let ours = raw(&mut con, cmd("BF.MADDX").arg(w).arg(&new));
            same_outcomes(&theirs, &ours, &format!("{w}: round {round}"));
        }
        // One BF.ADD: the same reply (an error for a full non-scaling filter).
        let theirs = raw(&mut con, cmd("BF.ADD").arg(rb).arg("one more"));
        let ours = raw(&mut con, cmd("BF.ADDX").arg(w).arg("one more"));
        assert_eq!(int_of(&theirs), int_of(&ours), "{w}: {theirs:?} {ours:?}");
        assert_eq!(err_of(&theirs).is_some(), err_of(&ours).is_some(), "{w}");
        let fp_after = same_answers(&mut con, rb, w, "after new adds");
        assert_eq!(
            shape_of(&mut con, "BF.INFO", rb),
            shape_of(&mut con, "BF.INFOX", w),
            "{w} after new adds"
        );
        assert!(fp_after >= fp, "{w}: {fp} then {fp_after} false positives");
        // BF.SCANDUMPX of the imported filter loads back as itself (format version 3).
        let copy = format!("{w}:copy");
        let chunks = copy_by_chunks(&mut con, w.as_str(), copy.as_str());
        assert_eq!(
            u32::from_le_bytes(chunks[0].1[8..12].try_into().unwrap()),
            3
        );
        assert_eq!(digest(&mut con, &copy), digest(&mut con, w));
        same_answers(&mut con, rb, &copy, "a BF.SCANDUMPX round trip");
        println!("{w}: {fp} then {fp_after} false positives of {ABSENT}, as RedisBloom's");
    }
}

#[test]
fn imported_filters_survive_reload_restore_replicas_and_aof_rewrites() {
    let rb_module = redisbloom();
    let module = ["--loadmodule", rb_module.as_str()];
    let mut m = Server::start_with(
        &[
            module[0],
            module[1],
            "--appendonly",
            "yes",
            "--aof-use-rdb-preamble",
            "no",
        ],
        &[],
    );
    let replica = m.start_replica(&module, &[]);
    let mut con = bf_conn(&m);
    let pairs = import_all(&mut con);
    // Adds after the import reach the replica as adds.
    for (shape, (rb, w)) in SHAPES.iter().zip(&pairs) {
        let new = items(&format!("later:{}:", shape.key), 0..500);
        let theirs = raw(&mut con, cmd("BF.MADD").arg(rb).arg(&new));
        let ours = raw(&mut con, cmd("BF.MADDX").arg(w).arg(&new));
        same_outcomes(&theirs, &ours, w);
    }
    let digests: Vec<String> = pairs.iter().map(|(_, w)| digest(&mut con, w)).collect();
    let check = |con: &mut Connection, what: &str| {
        for ((rb, w), d) in pairs.iter().zip(&digests) {
            assert_eq!(&digest(con, w), d, "{w}: {what}");
            same_answers(con, rb, w, what);
        }
    };
    check(&mut con, "imported");
    // The replica: the same digests, the same answers (RedisBloom's keys replicate too).
    m.sync_replicas(1);
    let mut rcon = bf_conn(&replica);
    check(&mut rcon, "on the replica");
    drop(replica);
    // DUMP / RESTORE.
    for (rb, w) in &pairs {
        let restored = format!("{w}:restored");
        let payload = dump(&mut con, w.as_str());
        ok(&mut con, cmd("RESTORE").arg(&restored).arg(0).arg(&payload));
        assert_eq!(digest(&mut con, &restored), digest(&mut con, w));
        same_answers(&mut con, rb, &restored, "DUMP / RESTORE");
        let _: i64 = query!(&mut con, "DEL", &restored);
    }
    // An import half done (a key being loaded, with RedisBloom's hashing) goes on after
    // RDB and AOF too.
    let (rb0, _) = &pairs[0];
    let mut chunks = Vec::new();
    let mut it = 0i64;
    loop {
        let (next, data): (i64, Vec<u8>) = query!(&mut con, "BF.SCANDUMP", rb0.as_str(), it);
        if next == 0 {
            break;
        }
        chunks.push((next, data));
        it = next;
    }
    assert!(chunks.len() >= 3, "{} chunks", chunks.len());
    loadchunks(&mut con, "w:partial", &chunks[..2]);
    assert_eq!(key_type(&mut con, "w:partial"), "warden-bl");
    // RDB (DEBUG RELOAD).
    debug_reload(&mut con);
    check(&mut con, "after DEBUG RELOAD");
    // An AOF rewrite without the RDB preamble (BF._LOADX RBLAYER), then a restart.
    m.bgrewriteaof();
    m.restart("NOSAVE");
    let mut con = bf_conn(&m);
    check(&mut con, "after an AOF rewrite and a restart");
    loadchunks(&mut con, "w:partial", &chunks[2..]);
    same_answers(
        &mut con,
        rb0,
        "w:partial",
        "an import finished after a restart",
    );
    // And the filters still grow as RedisBloom's after all that.
    for (shape, (rb, w)) in SHAPES.iter().zip(&pairs) {
        let new = items(&format!("last:{}:", shape.key), 0..3_000);
        let theirs = raw(&mut con, cmd("BF.MADD").arg(rb).arg(&new));
        let ours = raw(&mut con, cmd("BF.MADDX").arg(w).arg(&new));
        same_outcomes(&theirs, &ours, w);
        same_answers(&mut con, rb, w, "adds after the restart");
    }
}

/// What RedisBloom 2.x headers warden refuses, and that a refused header creates nothing.
#[test]
fn unsupported_redisbloom_options_are_refused_by_name() {
    let s = Server::start_with(&["--loadmodule", redisbloom().as_str()], &[]);
    let mut con = bf_conn(&s);
    ok(&mut con, cmd("BF.RESERVE").arg("rb").arg(0.01).arg(1000));
    let _: i64 = query!(&mut con, "BF.ADD", "rb", "x");
    let (_, header): (i64, Vec<u8>) = query!(&mut con, "BF.SCANDUMP", "rb", 0);
    assert_eq!(header.len(), 73);
    assert_eq!(u32::from_le_bytes(header[12..16].try_into().unwrap()), 5);
    let with_options = |options: u32| {
        let mut h = header.clone();
        h[12..16].copy_from_slice(&options.to_le_bytes());
        h
    };
    let mut n2 = header.clone();
    n2[72] = 7;
    let cases: [(Vec<u8>, &str); 5] = [
        (
            with_options(1),
            "ERR unsupported RedisBloom filter: 32-bit legacy hashing (no FORCE64 option)",
        ),
        (
            with_options(4),
            "ERR unsupported RedisBloom filter: power-of-two sizing (no NOROUND option, or n2 set)",
        ),
        (
            n2,
            "ERR unsupported RedisBloom filter: power-of-two sizing (no NOROUND option, or n2 set)",
        ),
        (
            with_options(5 | 64),
            "ERR unsupported RedisBloom filter options 0x40",
        ),
        (with_options(13), "OK"),
    ];
    for (h, want) in cases {
        let v = raw(&mut con, cmd("BF.LOADCHUNKX").arg("w").arg(1).arg(&h[..]));
        match want {
            "OK" => assert!(is_ok(&v), "{v:?}"),
            _ => {
                assert_eq!(err_of(&v).as_deref(), Some(want));
                assert!(!exists(&mut con, "w"));
            }
        }
    }
    // A forged layer of 2^36 items (about 95 GB, sized as RedisBloom sizes it): refused
    // for bf-max-bytes before anything is allocated.
    let capacity = 1u64 << 36;
    let bits_per_item = (0.005f64.ln() / 0.480453013918201).abs();
    let bits = ((capacity as f64 * bits_per_item) as u64).div_ceil(64) * 64;
    let mut huge = header.clone();
    huge[20..28].copy_from_slice(&(bits / 8).to_le_bytes());
    huge[28..36].copy_from_slice(&bits.to_le_bytes());
    huge[64..72].copy_from_slice(&capacity.to_le_bytes());
    let v = raw(
        &mut con,
        cmd("BF.LOADCHUNKX").arg("big").arg(1).arg(&huge[..]),
    );
    assert_eq!(err_of(&v).as_deref(), Some(TOO_LARGE));
    assert!(!exists(&mut con, "big"));
}
