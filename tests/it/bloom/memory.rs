//! A new filter's bit array comes from Redis's calloc: it is counted in
//! `used_memory` (so `maxmemory` sees it) but no page of it is resident until
//! a bit is set. The same holds for a filter created by a `BF.LOADCHUNKX`
//! header, and keys being loaded give back every byte when deleted.

use crate::bloom::support::{loadchunks, madd_range, reserve, scandump};
use crate::common::*;

fn rss_bytes(con: &mut Connection) -> u64 {
    let pid = info_field(con, "server", "process_id").expect("process_id");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS");
    kib * 1024
}

/// After `step` (RSS and used_memory were `before`): used_memory counts a filter of
/// `size` bytes, but less than 1% of it is resident. Returns (RSS, used_memory).
fn counted_not_resident(
    con: &mut Connection,
    (rss0, used0): (u64, u64),
    size: u64,
    step: &str,
) -> (u64, u64) {
    let (rss1, used1) = (rss_bytes(con), used_memory(con) as u64);
    assert!(
        used1 >= used0 + size * 99 / 100,
        "{step}: used_memory must count the filter: {used0} -> {used1} for {size}"
    );
    assert!(
        rss1 < rss0 + size / 100,
        "{step} made {} of {size} bytes resident",
        rss1.saturating_sub(rss0)
    );
    (rss1, used1)
}

#[test]
fn reserving_a_large_filter_adds_no_resident_memory_until_written() {
    let (_s, mut con) = Server::start_conn();
    let (rss0, used0) = (rss_bytes(&mut con), used_memory(&mut con) as u64);
    let _: () = query!(
        &mut con,
        "BF.RESERVEX",
        "big",
        0.01,
        100_000_000,
        "NONSCALING"
    );
    let size: u64 = query!(&mut con, "MEMORY", "USAGE", "big");
    assert!(
        size > 110 << 20,
        "a 1e8 filter at 1% holds ~115 MiB of bits: {size}"
    );
    let (rss1, used1) = counted_not_resident(&mut con, (rss0, used0), size, "reserve");
    // Lookups of an untouched filter read the shared zero page.
    for i in 0..2000 {
        let found: i64 = query!(&mut con, "BF.EXISTSX", "big", i);
        assert_eq!(found, 0);
    }
    assert!(
        rss_bytes(&mut con) < rss0 + size / 100,
        "reads made the filter resident"
    );
    // Writes make only the pages they touch resident.
    for i in 0..2000 {
        let _: i64 = query!(&mut con, "BF.ADDX", "big", i);
    }
    let rss2 = rss_bytes(&mut con);
    assert!(rss2 > rss1, "2000 adds touched no page: {rss1} -> {rss2}");
    assert!(
        rss2 < rss0 + size / 2,
        "2000 adds made half the filter resident"
    );
    let _: i64 = query!(&mut con, "DEL", "big");
    wait_lazyfree(&mut con, "the deleted filter");
    assert!(
        (used_memory(&mut con) as u64) < used1 - size * 99 / 100,
        "DEL freed the filter"
    );
}

#[test]
fn a_header_allocates_zeroed_and_loads_give_everything_back() {
    let s = Server::start();
    let mut con = timed(s.conn(), std::time::Duration::from_secs(120));
    reserve(&mut con, "big", "0.01", 100_000_000, &["NONSCALING"]);
    let (_, header): (i64, Vec<u8>) = query!(&mut con, "BF.SCANDUMPX", "big", 0);
    let size: u64 = query!(&mut con, "MEMORY", "USAGE", "big");
    let (rss0, used0) = (rss_bytes(&mut con), used_memory(&mut con) as u64);
    let _: () = query!(&mut con, "BF.LOADCHUNKX", "part", 1, &header[..]);
    let (_, used1) = counted_not_resident(&mut con, (rss0, used0), size, "the header");
    let _: i64 = query!(&mut con, "DEL", "part");
    wait_lazyfree(&mut con, "the deleted filter being loaded");
    assert!(
        (used_memory(&mut con) as u64) < used1 - size * 99 / 100,
        "DEL freed the filter being loaded"
    );
    let _: i64 = query!(&mut con, "DEL", "big");
    wait_lazyfree(&mut con, "the reserved filter");

    // Loads finished, abandoned half-way, copied and renamed, then FLUSHALL: a second
    // round ends where the first one did.
    let round = |con: &mut Connection| {
        reserve(con, "src", "0.01", 100, &[]);
        madd_range(con, "src", "s:", 0..3_000);
        let chunks = scandump(con, "src");
        for i in 0..100 {
            let key = format!("l:{i}");
            match i % 4 {
                0 => loadchunks(con, key.as_str(), &chunks),
                1 => loadchunks(con, key.as_str(), &chunks[..1]),
                2 => {
                    loadchunks(con, key.as_str(), &chunks[..3]);
                    let _: i64 = query!(con, "COPY", &key, format!("{key}:c"));
                }
                _ => {
                    loadchunks(con, key.as_str(), &chunks[..2]);
                    let _: () = query!(con, "RENAME", &key, format!("{key}:r"));
                }
            }
        }
        let _: () = query!(con, "FLUSHALL", "SYNC");
        used_memory(con)
    };
    let first = round(&mut con);
    let second = round(&mut con);
    assert!(
        (second - first).abs() < 256 << 10,
        "used_memory after FLUSHALL: {first} after the first round, {second} after the second"
    );
    assert_eq!(warden_stat(&mut con, "bf_filters"), 0);
    assert_eq!(warden_stat(&mut con, "bf_bytes"), 0);
}
