//! Active defragmentation moves warden's values (Redis 7.2.6 built from the
//! peer source: the one server here that runs it). Every type is churned
//! (80 % of its keys deleted at random), then `activedefrag yes`: warden's
//! keys must compact at least as well as string keys under the same churn on
//! a second server, every value must be the same (DEBUG DIGEST, DEBUG RELOAD)
//! and every surviving key must still answer. The kinds must cover every type
//! the module makes (`module_types`).

use crate::bloom::fuzz_values::dump_header;
use crate::common::defrag::defragment;
use crate::common::module_types::assert_covers;
use crate::common::peer_redis::redis_7_2_or_skip;
use crate::common::*;

/// The kinds of key, how many of each, and whether they carry a TTL (the
/// string server's twin keys carry the same).
const KINDS: [(&str, usize, bool); 13] = [
    ("rl", 50_000, true), // RL.GCRA
    ("rt", 5_000, true),  // RL.TOKEN with two limits (a boxed slice)
    ("lk", 40_000, true), // DLOCK.ACQUIRE, every 4th owner on the heap
    ("ls", 5_000, true),  // DLOCK.ACQUIRE … SHARED, two holders
    ("ch", 30_000, true), // CACHE.SET
    ("bf", 3_000, false), // a small filter
    ("bfs", 300, false),  // a scaling filter of several layers
    ("bfa", 300, false),  // an aging filter
    ("bl", 300, false),   // a filter being loaded (BF.LOADCHUNKX's header)
    ("cf", 3_000, false), // a small cuckoo filter
    ("cfs", 300, false),  // a cuckoo filter of several sub-filters
    ("cm", 3_000, false), // count-min sketches (cms::kit::churned)
    ("tk", 3_000, false), // top-k (topk::kit::churned)
];

/// A 40-byte value (cache entries and the string twins).
fn value(i: usize) -> String {
    format!("{i:08}-0123456789abcdefghijklmnopqrstu")
}

fn long_owner(i: usize) -> String {
    format!("{i:08}-a-long-owner-name-held-on-the-heap-not-inline-xyz")
}

fn owner(i: usize) -> String {
    if i.is_multiple_of(4) {
        long_owner(i)
    } else {
        format!("w-{i}")
    }
}

/// The command that creates key `i` of `kind` on the warden server.
fn create(kind: &str, i: usize) -> Vec<redis::Cmd> {
    let k = format!("{kind}:{i}");
    match kind {
        "rl" => vec![cmd_of!("RL.GCRA", &k, 5, 1, 3600)],
        "rt" => vec![cmd_of!("RL.TOKEN", &k, "1/h", 5, "1/d", 5)],
        "lk" => vec![cmd_of!("DLOCK.ACQUIRE", &k, owner(i), 3_600_000)],
        "ls" => vec![
            cmd_of!("DLOCK.ACQUIRE", &k, "r1", 3_600_000, "SHARED"),
            cmd_of!("DLOCK.ACQUIRE", &k, long_owner(i), 3_600_000, "SHARED"),
        ],
        "ch" => vec![cmd_of!("CACHE.SET", &k, value(i), 3_600_000)],
        "bf" => vec![
            cmd_of!("BF.RESERVEX", &k, 0.01, 50),
            cmd_of!("BF.ADDX", &k, format!("item-{i}")),
        ],
        "bfs" => {
            let mut add = cmd_of!("BF.MADDX", &k);
            for n in 0..60 {
                add.arg(format!("item-{i}-{n}"));
            }
            vec![cmd_of!("BF.RESERVEX", &k, 0.01, 4, "EXPANSION", 2), add]
        }
        "bfa" => vec![
            cmd_of!("BF.RESERVEX", &k, 0.01, 100, "AGE", "1h"),
            cmd_of!("BF.ADDX", &k, format!("item-{i}")),
        ],
        "bl" => vec![cmd_of!("BF.LOADCHUNKX", &k, 1, dump_header(2, 3))],
        "cf" => vec![
            cmd_of!("CF.RESERVEX", &k, 50),
            cmd_of!("CF.ADDX", &k, format!("item-{i}")),
        ],
        "cfs" => {
            let mut add = cmd_of!("CF.INSERTX", &k, "NOCREATE", "ITEMS");
            for n in 0..60 {
                add.arg(format!("item-{i}-{n}"));
            }
            vec![cmd_of!("CF.RESERVEX", &k, 8, "EXPANSION", 2), add]
        }
        "cm" => crate::cms::kit::churned(&k, i),
        "tk" => crate::topk::kit::churned(&k, i),
        _ => unreachable!(),
    }
}

/// Field `label` of `CF.INFOX key`.
fn cf_info(con: &mut Connection, key: &str, label: &str) -> i64 {
    let v: Vec<Value> = query!(con, "CF.INFOX", key);
    let at = v
        .iter()
        .position(|x| text_of(x).as_deref() == Some(label))
        .unwrap_or_else(|| panic!("CF.INFOX {key}: no {label} in {v:?}"));
    int_of(&v[at + 1]).expect("an integer")
}

/// Sends `cmds` in pipelines of 5,000, failing on any error reply.
fn send(con: &mut Connection, cmds: impl IntoIterator<Item = redis::Cmd>) {
    let mut p = redis::pipe();
    let mut n = 0;
    for c in cmds {
        p.add_command(c);
        n += 1;
        if n == 5_000 {
            let _: Vec<Value> = p.query(con).expect("pipeline");
            p = redis::pipe();
            n = 0;
        }
    }
    if n > 0 {
        let _: Vec<Value> = p.query(con).expect("pipeline");
    }
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

/// Large filters, kept whole: one scaling filter of many layers, one
/// non-scaling filter of several MB, and a cuckoo filter of several
/// sub-filters (80,000 items in 20,000, 40,000, 80,000 …).
fn big_filters(con: &mut Connection) {
    let _: () = query!(
        con,
        "BF.RESERVEX",
        "big:scaling",
        0.01,
        1000,
        "EXPANSION",
        2
    );
    let _: () = query!(
        con,
        "BF.RESERVEX",
        "big:flat",
        0.0001,
        2_000_000,
        "NONSCALING"
    );
    let _: () = query!(con, "CF.RESERVEX", "big:cuckoo", 20_000, "EXPANSION", 2);
    for chunk in 0..40 {
        let mut s = cmd_of!("BF.MADDX", "big:scaling");
        let mut f = cmd_of!("BF.MADDX", "big:flat");
        let mut c = cmd_of!("CF.INSERTX", "big:cuckoo", "NOCREATE", "ITEMS");
        for n in 0..2_000 {
            s.arg(format!("s-{chunk}-{n}"));
            f.arg(format!("f-{chunk}-{n}"));
            c.arg(format!("c-{chunk}-{n}"));
        }
        send(con, [s, f, c]);
    }
    let subs = cf_info(con, "big:cuckoo", "Number of filters");
    assert!(subs >= 3, "big:cuckoo: {subs} sub-filters");
}

#[test]
fn warden_values_compact_at_least_as_well_as_strings() {
    let Some(binary) = redis_7_2_or_skip() else {
        return;
    };
    let warden = Server::start_binary(Some(&binary), &[], &[]);
    let strings = Server::start_binary(Some(&binary), &[], &[]);
    let (mut w, mut s) = (warden.conn(), strings.conn());

    big_filters(&mut w);
    // The string server holds as many bytes in one large string, so both
    // start with the same unfragmented large allocations.
    let big: i64 = ["big:scaling", "big:flat", "big:cuckoo"]
        .iter()
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
}

/// Builds the dataset (warden's keys, or their string twins with the same
/// TTLs) and deletes 80 % of it: the keys deleted, per kind.
fn churn(con: &mut Connection, warden: bool) -> Vec<(usize, Vec<bool>)> {
    for (kind, n, ttl) in KINDS {
        let cmds = (0..n).flat_map(|i| {
            if warden {
                create(kind, i)
            } else if ttl {
                vec![cmd_of!("SET", format!("{kind}:{i}"), value(i), "EX", 3600)]
            } else {
                vec![cmd_of!("SET", format!("{kind}:{i}"), value(i))]
            }
        });
        send(con, cmds);
    }
    if warden {
        let types = KINDS.map(|(kind, _, _)| key_type(con, format!("{kind}:0")));
        assert_covers("the defrag churn", &types.each_ref().map(String::as_str));
    }
    let mut gone = Vec::new();
    for (seed, (kind, n, _)) in KINDS.iter().enumerate() {
        let dead = doomed(*n, 0x9e37_79b9 + seed as u64);
        let dels = (0..*n)
            .filter(|&i| dead[i])
            .map(|i| cmd_of!("DEL", format!("{kind}:{i}")));
        send(con, dels);
        gone.push((*n, dead));
    }
    gone
}

/// Every surviving key (up to 500 of each kind) answers as it should.
fn survivors_answer(con: &mut Connection, gone: &[(usize, Vec<bool>)]) {
    for ((kind, _, _), (n, dead)) in KINDS.iter().zip(gone) {
        let alive: Vec<usize> = (0..*n).filter(|&i| !dead[i]).take(500).collect();
        assert!(!alive.is_empty(), "{kind}: no survivor");
        for i in alive {
            let k = format!("{kind}:{i}");
            match *kind {
                "rl" => {
                    // One call spent before: one less remaining than a new key.
                    let old: Vec<i64> = query!(con, "RL.GCRA", &k, 5, 1, 3600);
                    let new: Vec<i64> = query!(con, "RL.GCRA", format!("new:{k}"), 5, 1, 3600);
                    assert_eq!((old[0], old[2] + 1), (0, new[2]), "{k}: {old:?} {new:?}");
                }
                "rt" => {
                    let v: Value = query!(con, "RL.TOKEN", &k, "1/h", 5, "1/d", 5);
                    assert!(err_of(&v).is_none(), "{k}: {v:?}");
                }
                "lk" => {
                    let info: Vec<Value> = query!(con, "DLOCK.INFO", &k);
                    assert_eq!(text_of(&info[1]), Some(owner(i)), "{k}: {info:?}");
                }
                "ls" => {
                    let t1: i64 = query!(con, "DLOCK.ACQUIRE", &k, "r1", 3_600_000, "SHARED");
                    let t2: i64 =
                        query!(con, "DLOCK.ACQUIRE", &k, long_owner(i), 3_600_000, "SHARED");
                    assert!(t1 > 0 && t2 > t1, "{k}: the holders keep their tokens");
                }
                "ch" => {
                    let v: Option<String> = query!(con, "CACHE.GET", &k);
                    assert_eq!(v, Some(value(i)), "{k}");
                }
                "bl" => {
                    let v = raw(con, cmd("BF.INFOX").arg(&k));
                    assert_eq!(
                        err_of(&v).as_deref(),
                        Some(crate::bloom::support::LOADING),
                        "{k}"
                    );
                }
                "cf" => {
                    let e: i64 = query!(con, "CF.COUNTX", &k, format!("item-{i}"));
                    assert_eq!(e, 1, "{k}");
                }
                "cfs" => {
                    for n in 0..60 {
                        let e: i64 = query!(con, "CF.EXISTSX", &k, format!("item-{i}-{n}"));
                        assert_eq!(e, 1, "{k} item {n}");
                    }
                    let subs: i64 = cf_info(con, &k, "Number of filters");
                    assert!(subs >= 3, "{k}: {subs} sub-filters");
                }
                "bf" | "bfa" => {
                    let e: i64 = query!(con, "BF.EXISTSX", &k, format!("item-{i}"));
                    assert_eq!(e, 1, "{k}");
                }
                "bfs" => {
                    for n in 0..60 {
                        let e: i64 = query!(con, "BF.EXISTSX", &k, format!("item-{i}-{n}"));
                        assert_eq!(e, 1, "{k} item {n}");
                    }
                }
                "cm" => crate::cms::kit::churn_survivor(con, &k, i),
                "tk" => crate::topk::kit::churn_survivor(con, &k, i),
                _ => unreachable!(),
            }
        }
    }
    for (key, prefix) in [("big:scaling", "s"), ("big:flat", "f"), ("big:cuckoo", "c")] {
        let exists = if prefix == "c" {
            "CF.EXISTSX"
        } else {
            "BF.EXISTSX"
        };
        for chunk in [0, 17, 39] {
            for n in (0..2_000).step_by(97) {
                let e: i64 = query!(con, exists, key, format!("{prefix}-{chunk}-{n}"));
                assert_eq!(e, 1, "{key}: {prefix}-{chunk}-{n}");
            }
        }
    }
}
