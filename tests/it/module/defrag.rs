//! Active defragmentation moves warden's values (on a server that runs it:
//! `peer_redis::defrag_server`). Every kind of key of every
//! family's kit (`kit::Churn`) is churned (80 % of its keys deleted at random),
//! beside the large values the kits keep whole (`kit::Whole`), then
//! `activedefrag yes`: warden's keys must compact at least as well as string
//! keys under the same churn on a second server, every value must be the same
//! (DEBUG DIGEST, DEBUG RELOAD) and every surviving key must still answer. The
//! kinds must cover every type the module makes (`module_types`; both servers load
//! it with `aliases redisbloom`, `kit::MODULE_ARGS`, so the foreign types too).

use crate::common::defrag::{defragment, send};
use crate::common::kit::{Churn, FAMILY_KITS, MODULE_ARGS};
use crate::common::module_types::assert_covers;
use crate::common::peer_redis::defrag_server_or_skip;
use crate::common::*;

/// Every family's kinds of key, in `FAMILY_KITS`' order.
fn kinds() -> Vec<&'static Churn> {
    FAMILY_KITS.iter().flat_map(|k| k.churn).collect()
}

/// A 40-byte value (the string twins).
fn value(i: usize) -> String {
    format!("{i:08}-0123456789abcdefghijklmnopqrstu")
}

/// The keys deleted: 80 % of each kind, picked by a fixed pseudo-random
/// sequence (the same on both servers).
fn doomed(count: usize, seed: u64) -> Vec<bool> {
    let mut x = seed | 1;
    (0..count)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % 10 < 8
        })
        .collect()
}

#[test]
fn warden_values_compact_at_least_as_well_as_strings() {
    let Some(binary) = defrag_server_or_skip() else {
        return;
    };
    let warden = Server::start_binary(Some(&binary), &[], MODULE_ARGS);
    let strings = Server::start_binary(Some(&binary), &[], MODULE_ARGS);
    let (mut w, mut s) = (warden.conn(), strings.conn());

    let wholes: Vec<_> = FAMILY_KITS
        .iter()
        .filter_map(|k| k.whole.as_ref())
        .collect();
    assert!(!wholes.is_empty(), "no family keeps a large value whole");
    for whole in &wholes {
        (whole.make)(&mut w);
    }
    // The string server holds as many bytes in one large string, so both
    // start with the same unfragmented large allocations.
    let big: i64 = wholes
        .iter()
        .flat_map(|whole| whole.keys)
        .map(|k| -> i64 { query!(&mut w, "MEMORY", "USAGE", k) })
        .sum();
    let _: i64 = query!(&mut s, "SETRANGE", "big:pad", big - 1, "x");
    churn(&mut s, false);
    let (s_before, s_after, s_hits) = defragment(&mut s);
    let gone = churn(&mut w, true);
    let digest = db_digest(&mut w);
    let moved_before = warden_stat(&mut w, "defrag_moved");
    let (w_before, w_after, w_hits) = defragment(&mut w);
    assert_eq!(
        db_digest(&mut w),
        digest,
        "defragmentation changed a value (DEBUG DIGEST)"
    );
    let moved = warden_stat(&mut w, "defrag_moved") - moved_before;
    let paused = warden_stat(&mut w, "defrag_paused");
    let report = format!(
        "warden: allocator_frag_ratio {:.2} -> {:.2}, allocator_active {:.1} -> {:.1} MiB, \
         active_defrag_hits {w_hits}, warden blocks moved {moved}, paused {paused}; \
         strings: {:.2} -> {:.2}, {:.1} -> {:.1} MiB, hits {s_hits}",
        w_before.ratio,
        w_after.ratio,
        w_before.active / 1048576.0,
        w_after.active / 1048576.0,
        s_before.ratio,
        s_after.ratio,
        s_before.active / 1048576.0,
        s_after.active / 1048576.0,
    );
    eprintln!("{report}");
    assert!(
        w_hits > 0 && moved > 0,
        "nothing of warden's moved: {report}"
    );
    assert!(w_after.ratio < w_before.ratio, "no compaction: {report}");
    // At least as well as strings: the fraction of active memory given back
    // and the fall of the fragmentation ratio (a little slack for noise).
    // warden's keys start more fragmented (more blocks per key), so the
    // ratio left is not compared.
    let w_gain = 1.0 - w_after.active / w_before.active;
    let s_gain = 1.0 - s_after.active / s_before.active;
    assert!(
        w_gain >= s_gain - 0.03,
        "warden gave back {:.1} % of active memory, strings {:.1} %: {report}",
        w_gain * 100.0,
        s_gain * 100.0
    );
    assert!(
        w_before.ratio - w_after.ratio >= s_before.ratio - s_after.ratio - 0.05,
        "warden's fragmentation fell less than strings': {report}"
    );

    let digest = db_digest(&mut w);
    debug_reload(&mut w);
    assert_eq!(
        db_digest(&mut w),
        digest,
        "DEBUG RELOAD after defragmentation"
    );
    survivors_answer(&mut w, &gone);
    for whole in &wholes {
        (whole.check)(&mut w);
    }
}

/// Builds the dataset (warden's keys, or their string twins with the same
/// TTLs) and deletes 80 % of it: the keys deleted, per kind.
fn churn(con: &mut Connection, warden: bool) -> Vec<(usize, Vec<bool>)> {
    let kinds = kinds();
    for kind in &kinds {
        let cmds = (0..kind.count).flat_map(|i| {
            let k = format!("{}:{i}", kind.prefix);
            if warden {
                (kind.make)(&k, i)
            } else if kind.ttl {
                vec![cmd_of!("SET", k, value(i), "EX", 3600)]
            } else {
                vec![cmd_of!("SET", k, value(i))]
            }
        });
        send(con, cmds);
    }
    if warden {
        let types: Vec<String> = kinds
            .iter()
            .map(|kind| key_type(con, format!("{}:0", kind.prefix)))
            .collect();
        let types: Vec<&str> = types.iter().map(String::as_str).collect();
        assert_covers("the defrag churn", &types);
        let keys: usize = kinds.iter().map(|kind| kind.count).sum();
        println!("defrag churn: {} kinds, {keys} keys", kinds.len());
    }
    let mut gone = Vec::new();
    for (seed, kind) in kinds.iter().enumerate() {
        let dead = doomed(kind.count, 0x9e37_79b9 + seed as u64);
        let dels = (0..kind.count)
            .filter(|&i| dead[i])
            .map(|i| cmd_of!("DEL", format!("{}:{i}", kind.prefix)));
        send(con, dels);
        gone.push((kind.count, dead));
    }
    gone
}

/// Every surviving key (up to 500 of each kind) answers as it should.
fn survivors_answer(con: &mut Connection, gone: &[(usize, Vec<bool>)]) {
    for (kind, (n, dead)) in kinds().iter().zip(gone) {
        let alive: Vec<usize> = (0..*n).filter(|&i| !dead[i]).take(500).collect();
        assert!(!alive.is_empty(), "{}: no survivor", kind.prefix);
        for i in alive {
            (kind.survivor)(con, &format!("{}:{i}", kind.prefix), i);
        }
    }
}
