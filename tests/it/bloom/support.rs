//! Bloom filter helpers shared by the BF test files: calls that must succeed, pipelined
//! MADDX / MEXISTSX over ranges of items, and BF.INFOX parsed.

use crate::common::*;
use std::time::Duration;

use std::ops::Range;

/// The error of an add to a full non-scaling filter.
pub const FULL: &str = "ERR non scaling filter is full";
/// The error of a filter that would exceed `bf-max-bytes`.
pub const TOO_LARGE: &str = "ERR filter would exceed bf-max-bytes";

/// A connection for filters of a million items: reads time out after 120 s.
pub fn bf_conn(server: &Server) -> Connection {
    timed(server.conn(), Duration::from_secs(120))
}

/// `BF.RESERVEX key rate capacity extra...`, which must answer OK.
pub fn reserve<K: redis::ToRedisArgs>(
    con: &mut Connection,
    key: K,
    rate: impl std::fmt::Display,
    capacity: u64,
    extra: &[&str],
) {
    let mut c = cmd("BF.RESERVEX");
    c.arg(key).arg(rate.to_string()).arg(capacity);
    for e in extra {
        c.arg(*e);
    }
    ok(con, &c);
}

pub fn addx<K: redis::ToRedisArgs>(con: &mut Connection, key: K, item: &str) -> i64 {
    cmd("BF.ADDX")
        .arg(key)
        .arg(item)
        .query(con)
        .expect("BF.ADDX")
}

pub fn existsx<K: redis::ToRedisArgs>(con: &mut Connection, key: K, item: &str) -> i64 {
    cmd("BF.EXISTSX")
        .arg(key)
        .arg(item)
        .query(con)
        .expect("BF.EXISTSX")
}

pub fn cardx<K: redis::ToRedisArgs>(con: &mut Connection, key: K) -> i64 {
    cmd("BF.CARDX").arg(key).query(con).expect("BF.CARDX")
}

/// An item the filter certainly does not hold.
pub fn absent_item<K: redis::ToRedisArgs + Copy>(
    con: &mut Connection,
    key: K,
    prefix: &str,
) -> String {
    (0..)
        .map(|i| item(prefix, i))
        .find(|it| existsx(con, key, it) == 0)
        .expect("an absent item")
}

/// The error text of a command that must fail.
pub fn expect_err(con: &mut Connection, c: &redis::Cmd) -> String {
    let v = raw(con, c);
    err_of(&v).unwrap_or_else(|| panic!("expected an error from {}, got {v:?}", show(c)))
}

/// `BF.INFOX key field`: the one value of its one-element array.
pub fn info_field_only(con: &mut Connection, key: &str, field: &str) -> Value {
    let v: Value = query!(con, "BF.INFOX", key, field);
    match v {
        Value::Array(mut a) => {
            assert_eq!(a.len(), 1, "BF.INFOX {key} {field}: {a:?}");
            a.pop().expect("one value")
        }
        other => panic!("BF.INFOX {key} {field} is not an array of one: {other:?}"),
    }
}

/// Items per MADDX / MEXISTSX command.
pub const BATCH: u64 = 1_000;
/// Commands per pipeline.
pub const PIPE: u64 = 20;

/// The item `prefix{i}`.
pub fn item(prefix: &str, i: u64) -> String {
    format!("{prefix}{i}")
}

/// Sends `command key prefix{i}...` for every i in `range`, in batches of
/// `BATCH` items pipelined `PIPE` at a time; checks that every reply has one
/// entry per item and returns how many entries are 1.
pub fn count_ones_over<K: redis::ToRedisArgs + Copy>(
    con: &mut Connection,
    command: &str,
    key: K,
    prefix: &str,
    range: std::ops::Range<u64>,
) -> u64 {
    let mut ones = 0;
    let mut start = range.start;
    while start < range.end {
        let mut p = redis::pipe();
        let mut sizes = Vec::new();
        let mut s = start;
        for _ in 0..PIPE {
            if s >= range.end {
                break;
            }
            let e = (s + BATCH).min(range.end);
            let mut c = cmd(command);
            c.arg(key);
            for i in s..e {
                c.arg(item(prefix, i));
            }
            p.add_command(c);
            sizes.push((e - s) as usize);
            s = e;
        }
        let replies: Vec<Vec<i64>> = p
            .query(con)
            .unwrap_or_else(|e| panic!("pipelined {command}: {e}"));
        for (r, want) in replies.iter().zip(&sizes) {
            assert_eq!(r.len(), *want, "{command} reply length");
        }
        ones += replies.iter().flatten().filter(|r| **r == 1).count() as u64;
        start = s;
    }
    ones
}

/// A key of the range helpers: any key argument that is Copy.
pub trait Key: redis::ToRedisArgs + Copy {}
impl<T: redis::ToRedisArgs + Copy> Key for T {}

/// Adds `prefix{i}` for every i in `range` with pipelined MADDX batches;
/// returns how many were new.
pub fn madd_range(con: &mut Connection, key: impl Key, prefix: &str, range: Range<u64>) -> u64 {
    count_ones_over(con, "BF.MADDX", key, prefix, range)
}

/// How many of `prefix{i}` for i in `range` the filter answers 1 for.
pub fn mexists_range(con: &mut Connection, key: impl Key, pre: &str, range: Range<u64>) -> u64 {
    count_ones_over(con, "BF.MEXISTSX", key, pre, range)
}

/// An integer reply.
pub fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        other => panic!("expected an integer, got {other:?}"),
    }
}

/// A double reply (a bulk or simple string in RESP2, a double in RESP3).
pub fn float_of(v: &Value) -> f64 {
    match v {
        Value::BulkString(b) => std::str::from_utf8(b)
            .expect("utf8")
            .parse()
            .expect("float"),
        Value::SimpleString(s) => s.parse().expect("float"),
        Value::Double(d) => *d,
        other => panic!("expected a double, got {other:?}"),
    }
}

/// A label (a map key or an array entry) as text.
pub fn label_of(v: &Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        other => panic!("expected a label, got {other:?}"),
    }
}

/// What BF.INFOX reports, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct BfInfo {
    pub capacity: i64,
    pub size: i64,
    pub filters: i64,
    pub items: i64,
    pub expansion: Option<i64>,
    pub error_rate: f64,
}

/// BF.INFOX's labels, in reply order.
pub const INFO_LABELS: [&str; 6] = [
    "Capacity",
    "Size",
    "Number of filters",
    "Number of items inserted",
    "Expansion rate",
    "Error rate",
];

/// Parses BF.INFOX's (label, value) pairs, checking the labels and their order.
pub fn info_from_pairs(pairs: &[(Value, Value)]) -> BfInfo {
    let labels: Vec<String> = pairs.iter().map(|(k, _)| label_of(k)).collect();
    // An aging filter adds its window last.
    let window = labels.len() == INFO_LABELS.len() + 1 && labels[INFO_LABELS.len()] == "Window";
    let shown = if window {
        INFO_LABELS.len()
    } else {
        labels.len()
    };
    assert_eq!(labels[..shown], INFO_LABELS, "BF.INFOX labels");
    BfInfo {
        capacity: int(&pairs[0].1),
        size: int(&pairs[1].1),
        filters: int(&pairs[2].1),
        items: int(&pairs[3].1),
        expansion: match &pairs[4].1 {
            Value::Nil => None,
            v => Some(int(v)),
        },
        error_rate: float_of(&pairs[5].1),
    }
}

/// BF.INFOX over RESP2: a flat array of label, value pairs.
pub fn bf_info<K: redis::ToRedisArgs>(con: &mut Connection, key: K) -> BfInfo {
    let v: Value = query!(con, "BF.INFOX", key);
    let Value::Array(a) = v else {
        panic!("BF.INFOX is not a flat array in RESP2: {v:?}");
    };
    assert!(a.len() == 12 || a.len() == 14, "BF.INFOX reply: {a:?}");
    let pairs: Vec<(Value, Value)> = a.chunks(2).map(|p| (p[0].clone(), p[1].clone())).collect();
    info_from_pairs(&pairs)
}

/// The error of any filter command on a key that BF.LOADCHUNKX has not finished.
pub const LOADING: &str = "ERR filter is still being loaded";

/// Every chunk of `BF.SCANDUMPX key`, header first, as `(iterator, data)`: the loop
/// RedisBloom's users run (start at 0, pass each returned iterator back, stop at
/// `[0, ""]`). Checks the protocol on the way: the header comes with iterator 1 and
/// each chunk's iterator is the previous one plus the chunk's length.
pub fn scandump<K: redis::ToRedisArgs + Copy>(con: &mut Connection, key: K) -> Vec<(i64, Vec<u8>)> {
    let mut chunks: Vec<(i64, Vec<u8>)> = Vec::new();
    let mut it = 0i64;
    loop {
        let (next, data): (i64, Vec<u8>) = query!(con, "BF.SCANDUMPX", key, it);
        if next == 0 {
            assert!(
                data.is_empty(),
                "the end comes with data: {} bytes",
                data.len()
            );
            assert!(chunks.len() >= 2, "a header and at least one chunk");
            return chunks;
        }
        match chunks.last() {
            None => assert_eq!(next, 1, "the header's iterator"),
            Some(_) => assert_eq!(next, it + data.len() as i64, "iterator after {it}"),
        }
        assert!(data.len() <= 16 << 20, "a chunk of {} bytes", data.len());
        chunks.push((next, data));
        it = next;
    }
}

/// `BF.LOADCHUNKX key iterator data` for each chunk, in order; each must answer OK.
pub fn loadchunks<K: redis::ToRedisArgs + Copy>(
    con: &mut Connection,
    key: K,
    chunks: &[(i64, Vec<u8>)],
) {
    for (it, data) in chunks {
        ok(con, cmd("BF.LOADCHUNKX").arg(key).arg(*it).arg(&data[..]));
    }
}

/// Copies filter `src` to `dst` through BF.SCANDUMPX and BF.LOADCHUNKX; returns the chunks.
pub fn copy_by_chunks<K: redis::ToRedisArgs + Copy>(
    con: &mut Connection,
    src: K,
    dst: K,
) -> Vec<(i64, Vec<u8>)> {
    let chunks = scandump(con, src);
    loadchunks(con, dst, &chunks);
    chunks
}
