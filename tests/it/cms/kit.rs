//! Count-min sketches in the checks that cross every family
//! (`tests/it/module/`): the family's `KIT`, with its two types, warden's
//! sketches and RedisBloom's (`CMSk-TYPE`, under `aliases redisbloom`), the
//! keys of the defrag churn and what they answer after it, the calls of the
//! leak workload, and the family's INFO gauges (which count both types).
//! Their payloads are in `payload.rs` and `redisbloom_payload.rs`.

use crate::cms::payload;
use crate::cms::redisbloom_payload as rb;
use crate::cms::support::counts;
use crate::common::kit::*;
use crate::common::payload::Rng;
use crate::common::payload_checks::{run_all, run_reads};
use crate::common::*;

/// The family in the checks across families.
pub static KIT: FamilyKit = FamilyKit {
    types: &[SKETCH, RB_SKETCH],
    churn: &[
        Churn {
            prefix: "cm",
            count: 3_000,
            ttl: false,
            make: churned,
            survivor: churn_survivor,
        },
        Churn {
            prefix: "rcm",
            count: 3_000,
            ttl: false,
            make: rb_churned,
            survivor: rb_churn_survivor,
        },
    ],
    whole: None,
    leak: Leak {
        share: 7,
        keys: &[LEAK_KEYS, RB_LEAK_KEYS],
        errors: &LEAK_ERRORS_BOTH,
        setup: |_| Vec::new(),
        call: |r, _, buf| match r.below(7) {
            0..=4 => keyed_call(r, LEAK_KEYS, leak_call, buf),
            _ => keyed_call(r, RB_LEAK_KEYS, rb_leak_call, buf),
        },
        round: None,
        idle: &[],
    },
};

/// Count-min sketches, plain or over a window.
pub const SKETCH: TypeKit = TypeKit {
    name: "warden-cm",
    encver: 1,
    bases: payload::bases,
    layouts: no_layouts,
    forge: payload::forge,
    refusals: payload::refusals,
    reads: |con, key, found, ctx| run_reads(con, &payload::reads(key), found, ctx),
    exercise: |con, key, i, found, ctx| {
        run_all(con, &payload::writes(key, i), found, ctx);
        payload::never_under(con, key, i, found, ctx);
    },
    gauges: Some(Gauges {
        fields: GAUGES,
        size: None,
    }),
};

/// RedisBloom's count-min sketches (`aliases redisbloom`), made by its names.
pub const RB_SKETCH: TypeKit = TypeKit {
    name: "CMSk-TYPE",
    encver: 0,
    bases: rb::bases,
    layouts: no_layouts,
    forge: rb::forge,
    refusals: rb::refusals,
    reads: rb::reads,
    exercise: rb::writes,
    gauges: Some(Gauges {
        fields: GAUGES,
        size: Some(rb::size),
    }),
};

/// INFO warden's gauges of the family: the sketches and their bytes.
pub const GAUGES: [&str; 2] = ["cms_sketches", "cms_bytes"];

/// Key `i` of a defrag churn, named `key`: a plain sketch, one over a window
/// or one sized by probability, `a` counted `i` times.
pub fn churned(key: &str, i: usize) -> Vec<redis::Cmd> {
    let create = match i % 3 {
        0 => cmd_of!("CMS.INITBYDIMX", key, 64, 3),
        1 => cmd_of!("CMS.INITBYDIMX", key, 40, 2, "WINDOW", "1h"),
        _ => cmd_of!("CMS.INITBYPROBX", key, 0.05, 0.1),
    };
    vec![create, cmd_of!("CMS.INCRBYX", key, "a", i, "b", 1)]
}

/// A key `churned` made that survived the churn still counts `a` `i` times.
pub fn churn_survivor(con: &mut Connection, key: &str, i: usize) {
    assert_eq!(counts(con, key, &["a"]), [i as i64], "{key}");
}

/// The leak workload's keys: `cm:0` to `cm:299`.
pub const LEAK_KEYS: (&str, usize) = ("cm", 300);

/// Errors the leak workload provokes on purpose: a sketch made again, one
/// missing, merges of sketches of other sizes or windows, or past a
/// counter's range, counters that saturate.
pub const LEAK_ERRORS: [&str; 6] = [
    "ERR CMS: key already exists",
    "ERR CMS: key does not exist",
    "ERR CMS: width/depth is not equal",
    "ERR CMS: window is not equal",
    "ERR CMS: MERGE overflow",
    "ERR CMS: INCRBY overflow",
];

/// One call of the leak workload on sketch `n`, named `key` (its removal and
/// copies are the workload's): key `n` is made of the shape `n % 4` (plain,
/// over windows of 200 ms and 1 s, sized by probability); counts, some
/// saturating, queries, merges (of sketches of its shape, mostly).
pub fn leak_call(r: &mut Rng, n: usize, key: &str) -> redis::Cmd {
    let (prefix, keys) = LEAK_KEYS;
    let item = |r: &mut Rng| format!("it:{}", r.below(5_000));
    match r.below(16) {
        0..=1 => match n % 4 {
            0 => cmd_of!("CMS.INITBYDIMX", key, 100, 3),
            1 => cmd_of!("CMS.INITBYDIMX", key, 100, 3, "WINDOW", 200),
            2 => cmd_of!("CMS.INITBYDIMX", key, 500, 4, "WINDOW", "1s"),
            _ => cmd_of!("CMS.INITBYPROBX", key, 0.01, 0.01),
        },
        2..=9 => {
            let mut c = cmd_of!("CMS.INCRBYX", key);
            for _ in 0..1 + r.below(3) {
                c.arg(item(r)).arg(r.pick(&[1u64, 1, 5, 100, 1 << 31]));
            }
            c
        }
        10..=11 => cmd_of!("CMS.QUERYX", key, item(r), item(r)),
        12..=14 => {
            // Sources of the key's shape but now and then.
            let near = |r: &mut Rng| {
                let m = r.below(keys);
                let m = if r.chance(9, 10) {
                    m - m % 4 + n % 4
                } else {
                    m
                };
                format!("{prefix}:{}", m.min(keys - 1))
            };
            let (a, b) = (near(r), near(r));
            match r.below(3) {
                0 => cmd_of!("CMS.MERGEX", key, 1, a),
                1 => cmd_of!("CMS.MERGEX", key, 2, a, b, "WEIGHTS", 2, -1),
                _ => cmd_of!("CMS.MERGEX", key, 2, key, a),
            }
        }
        _ => cmd_of!("CMS.INFOX", key),
    }
}

/// Key `i` of a defrag churn made with RedisBloom's names, named `key`: a
/// sketch of 64 × 3, 200 × 7 or sized by probability, `a` counted `i` times.
pub fn rb_churned(key: &str, i: usize) -> Vec<redis::Cmd> {
    let create = match i % 3 {
        0 => cmd_of!("CMS.INITBYDIM", key, 64, 3),
        1 => cmd_of!("CMS.INITBYDIM", key, 200, 7),
        _ => cmd_of!("CMS.INITBYPROB", key, 0.05, 0.1),
    };
    vec![create, cmd_of!("CMS.INCRBY", key, "a", i, "b", 1)]
}

/// A key `rb_churned` made that survived the churn still counts `a` `i` times.
pub fn rb_churn_survivor(con: &mut Connection, key: &str, i: usize) {
    let n: Vec<i64> = query!(con, "CMS.QUERY", key, "a");
    assert_eq!(n, [i as i64], "{key}");
}

/// The leak workload's RedisBloom sketches: `rcm:0` to `rcm:199`.
pub const RB_LEAK_KEYS: (&str, usize) = ("rcm", 200);

/// Errors the leak workload provokes on purpose, warden's names' and
/// RedisBloom's (whose texts carry no `ERR`): a sketch made again, one
/// missing, merges of sketches of other sizes, or past a counter's range,
/// counters that saturate.
pub const LEAK_ERRORS_BOTH: [&str; 11] = [
    LEAK_ERRORS[0],
    LEAK_ERRORS[1],
    LEAK_ERRORS[2],
    LEAK_ERRORS[3],
    LEAK_ERRORS[4],
    LEAK_ERRORS[5],
    "CMS: key already exists",
    "CMS: key does not exist",
    "CMS: width/depth is not equal",
    "CMS: MERGE overflow",
    "CMS: INCRBY overflow",
];

/// One call of the leak workload on RedisBloom sketch `n`, named `key` (its
/// removal and copies are the workload's): key `n` is made of the shape `n %
/// 3` (100 × 3, 500 × 4, sized by probability); counts, some saturating,
/// queries, merges (of sketches of its shape, mostly, with weights that may
/// overflow), INFO.
pub fn rb_leak_call(r: &mut Rng, n: usize, key: &str) -> redis::Cmd {
    let (prefix, keys) = RB_LEAK_KEYS;
    let item = |r: &mut Rng| format!("it:{}", r.below(5_000));
    match r.below(16) {
        0..=1 => match n % 3 {
            0 => cmd_of!("CMS.INITBYDIM", key, 100, 3),
            1 => cmd_of!("CMS.INITBYDIM", key, 500, 4),
            _ => cmd_of!("CMS.INITBYPROB", key, 0.01, 0.01),
        },
        2..=9 => {
            let mut c = cmd_of!("CMS.INCRBY", key);
            for _ in 0..1 + r.below(3) {
                c.arg(item(r))
                    .arg(r.pick(&[1u64, 1, 5, 100, 1 << 31, 1 << 32]));
            }
            c
        }
        10..=11 => cmd_of!("CMS.QUERY", key, item(r), item(r)),
        12..=14 => {
            let near = |r: &mut Rng| {
                let m = r.below(keys);
                let m = if r.chance(9, 10) {
                    m - m % 3 + n % 3
                } else {
                    m
                };
                format!("{prefix}:{}", m.min(keys - 1))
            };
            let (a, b) = (near(r), near(r));
            match r.below(3) {
                0 => cmd_of!("CMS.MERGE", key, 1, a),
                1 => cmd_of!("CMS.MERGE", key, 2, a, b, "WEIGHTS", 2, -1),
                _ => cmd_of!("CMS.MERGE", key, 2, key, a),
            }
        }
        _ => cmd_of!("CMS.INFO", key),
    }
}
