//! Top-k in the checks that cross every family (`tests/it/module/`): the
//! family's `KIT`, with its two types, warden's top-k and RedisBloom's
//! (`TopK-TYPE`, under `aliases redisbloom`), the keys of the defrag churn and
//! what they answer after it, the calls of the leak workload, and the family's
//! INFO gauges (which count both types). Their payloads are in `payload.rs`
//! and `redisbloom_payload.rs`.

use crate::common::kit::*;
use crate::common::payload::Rng;
use crate::common::payload_checks::{run_all, run_reads};
use crate::common::*;
use crate::topk::payload;
use crate::topk::redisbloom_payload as rb;
use crate::topk::support::{list, list_by};

/// The family in the checks across families.
pub static KIT: FamilyKit = FamilyKit {
    types: &[TOPK, RB_TOPK],
    churn: &[
        Churn {
            prefix: "tk",
            count: 3_000,
            ttl: false,
            make: churned,
            survivor: churn_survivor,
        },
        Churn {
            prefix: "rtk",
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

/// Top-k, plain or over a window.
pub const TOPK: TypeKit = TypeKit {
    name: "warden-tk",
    encver: 1,
    bases: payload::bases,
    layouts: no_layouts,
    forge: payload::forge,
    refusals: payload::refusals,
    reads: |con, key, found, ctx| run_reads(con, &payload::reads(key), found, ctx),
    exercise: |con, key, i, found, ctx| {
        run_all(con, &payload::writes(key, i), found, ctx);
        payload::lists_its_own(con, key, found, ctx);
    },
    gauges: Some(Gauges {
        fields: GAUGES,
        size: None,
    }),
};

/// RedisBloom's top-k (`aliases redisbloom`), made by its names.
pub const RB_TOPK: TypeKit = TypeKit {
    name: "TopK-TYPE",
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

/// INFO warden's gauges of the family: the top-k keys and their bytes.
pub const GAUGES: [&str; 2] = ["topk_keys", "topk_bytes"];

/// An item long enough to live on the heap, then `i`.
fn long_item(i: usize) -> String {
    format!(
        "{}{i}",
        "an-item-long-enough-to-live-on-the-heap-".repeat(2)
    )
}

/// Key `i` of a defrag churn, named `key`: a top-k, over a window every other
/// one, holding a long item counted 7 and `b` counted 3.
pub fn churned(key: &str, i: usize) -> Vec<redis::Cmd> {
    let create = match i % 2 {
        0 => cmd_of!("TOPK.RESERVEX", key, 5, 100, 3, 0.9),
        _ => cmd_of!("TOPK.RESERVEX", key, 4, 100, 3, 0.9, "WINDOW", "1h"),
    };
    vec![
        create,
        cmd_of!("TOPK.INCRBYX", key, long_item(i), 7, "b", 3),
    ]
}

/// A key `churned` made that survived the churn still lists its two items.
pub fn churn_survivor(con: &mut Connection, key: &str, i: usize) {
    let want = [(long_item(i), 7), ("b".to_string(), 3)];
    assert_eq!(list(con, key), want, "{key}");
}

/// The leak workload's keys: `tk:0` to `tk:299`.
pub const LEAK_KEYS: (&str, usize) = ("tk", 300);

/// Errors the leak workload provokes on purpose: a top-k made again, or missing.
pub const LEAK_ERRORS: [&str; 2] = [
    "ERR TopK: key already exists",
    "ERR TopK: key does not exist",
];

/// One call of the leak workload on top-k `n`, named `key` (its removal and
/// copies are the workload's): key `n` is made of the shape `n % 3` (plain,
/// over a window of 200 ms, of the default sizes); adds of items of many
/// lengths (held on the heap, pushed out), increments, reads.
pub fn leak_call(r: &mut Rng, n: usize, key: &str) -> redis::Cmd {
    let item = |r: &mut Rng| format!("it:{}:{}", r.below(2_000), "x".repeat(r.below(60)));
    match r.below(16) {
        0..=1 => match n % 3 {
            0 => cmd_of!("TOPK.RESERVEX", key, 10, 50, 4, 0.9),
            1 => cmd_of!("TOPK.RESERVEX", key, 5, 20, 3, 0.8, "WINDOW", 200),
            _ => cmd_of!("TOPK.RESERVEX", key, 20),
        },
        2..=9 => {
            let mut c = cmd_of!("TOPK.ADDX", key);
            for _ in 0..1 + r.below(5) {
                c.arg(item(r));
            }
            c
        }
        10..=11 => cmd_of!("TOPK.INCRBYX", key, item(r), r.below(100_001)),
        12 => cmd_of!("TOPK.QUERYX", key, item(r), item(r)),
        13 => cmd_of!("TOPK.COUNTX", key, item(r)),
        14 => cmd_of!("TOPK.LISTX", key, "WITHCOUNT"),
        _ => cmd_of!("TOPK.INFOX", key),
    }
}

/// Key `i` of a defrag churn made with RedisBloom's names, named `key`: a
/// top-k of 5 × 100 × 3 or of RedisBloom's default sizes, holding a long
/// item counted 7 and `b` counted 3.
pub fn rb_churned(key: &str, i: usize) -> Vec<redis::Cmd> {
    let create = match i % 2 {
        0 => cmd_of!("TOPK.RESERVE", key, 5, 100, 3, 0.9),
        _ => cmd_of!("TOPK.RESERVE", key, 4),
    };
    vec![create, cmd_of!("TOPK.INCRBY", key, long_item(i), 7, "b", 3)]
}

/// A key `rb_churned` made that survived the churn still lists its two
/// items.
pub fn rb_churn_survivor(con: &mut Connection, key: &str, i: usize) {
    let want = [(long_item(i), 7), ("b".to_string(), 3)];
    assert_eq!(list_by(con, "TOPK.LIST", key), want, "{key}");
}

/// The leak workload's RedisBloom top-k keys: `rtk:0` to `rtk:199`.
pub const RB_LEAK_KEYS: (&str, usize) = ("rtk", 200);

/// RedisBloom's refusal of an increment out of range (its text starts so).
const RB_BAD_INCREMENT: &str = "TopK: increment must be an integer greater or equal to 0";

/// Errors the leak workload provokes on purpose, warden's names' and
/// RedisBloom's (whose texts carry no `ERR`): a top-k made again, or
/// missing; an increment out of range.
pub const LEAK_ERRORS_BOTH: [&str; 5] = [
    LEAK_ERRORS[0],
    LEAK_ERRORS[1],
    "TopK: key already exists",
    "TopK: key does not exist",
    RB_BAD_INCREMENT,
];

/// One call of the leak workload on RedisBloom top-k `n`, named `key` (its
/// removal and copies are the workload's): key `n` is made of the shape `n %
/// 3` (10 × 50 × 4, 5 × 20 × 3 decaying by 0.8, RedisBloom's default sizes);
/// adds of items of many lengths (held on the heap, pushed out), increments
/// up to the largest and now and then past it, reads.
pub fn rb_leak_call(r: &mut Rng, n: usize, key: &str) -> redis::Cmd {
    let item = |r: &mut Rng| format!("it:{}:{}", r.below(2_000), "x".repeat(r.below(60)));
    match r.below(16) {
        0..=1 => match n % 3 {
            0 => cmd_of!("TOPK.RESERVE", key, 10, 50, 4, 0.9),
            1 => cmd_of!("TOPK.RESERVE", key, 5, 20, 3, 0.8),
            _ => cmd_of!("TOPK.RESERVE", key, 20),
        },
        2..=9 => {
            let mut c = cmd_of!("TOPK.ADD", key);
            for _ in 0..1 + r.below(5) {
                c.arg(item(r));
            }
            c
        }
        10..=11 => {
            let by = match r.chance(1, 20) {
                true => r.pick(&[-1, 100_001]),
                false => r.below(100_001) as i64,
            };
            cmd_of!("TOPK.INCRBY", key, item(r), by)
        }
        12 => cmd_of!("TOPK.QUERY", key, item(r), item(r)),
        13 => cmd_of!("TOPK.COUNT", key, item(r)),
        14 => cmd_of!("TOPK.LIST", key, "WITHCOUNT"),
        _ => cmd_of!("TOPK.INFO", key),
    }
}
