//! Bloom filter helpers shared by the BF test files.

use redis::{cmd, Connection};

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

/// Adds `prefix{i}` for every i in `range` with pipelined MADDX batches;
/// returns how many were new.
pub fn madd_range<K: redis::ToRedisArgs + Copy>(
    con: &mut Connection,
    key: K,
    prefix: &str,
    range: std::ops::Range<u64>,
) -> u64 {
    count_ones_over(con, "BF.MADDX", key, prefix, range)
}

/// How many of `prefix{i}` for i in `range` the filter answers 1 for.
pub fn mexists_range<K: redis::ToRedisArgs + Copy>(
    con: &mut Connection,
    key: K,
    prefix: &str,
    range: std::ops::Range<u64>,
) -> u64 {
    count_ones_over(con, "BF.MEXISTSX", key, prefix, range)
}
