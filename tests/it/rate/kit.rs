//! Rate limiters (`warden-rl`) in the checks that cross every family
//! (`tests/it/module/`): the family's `KIT`, with its type (payloads in
//! `payload.rs`), the kinds of key of the defrag churn, and its calls of the
//! leak workload.

use crate::common::kit::*;
use crate::common::payload::Rng;
use crate::common::*;
use crate::rate::payload::*;

/// The family in the checks across families.
pub static KIT: FamilyKit = FamilyKit {
    types: &[LIMITER],
    churn: &[
        Churn {
            prefix: "rl",
            count: 50_000,
            ttl: true,
            make: |k, _| vec![cmd_of!("RL.GCRA", k, 5, 1, 3600)],
            // One call spent before: one less remaining than a new key.
            survivor: |con, k, _| {
                let old: Vec<i64> = query!(con, "RL.GCRA", k, 5, 1, 3600);
                let new: Vec<i64> = query!(con, "RL.GCRA", format!("new:{k}"), 5, 1, 3600);
                assert_eq!((old[0], old[2] + 1), (0, new[2]), "{k}: {old:?} {new:?}");
            },
        },
        // Two limits (a boxed slice).
        Churn {
            prefix: "rt",
            count: 5_000,
            ttl: true,
            make: |k, _| vec![cmd_of!("RL.TOKEN", k, "1/h", 5, "1/d", 5)],
            survivor: |con, k, _| {
                let v: Value = query!(con, "RL.TOKEN", k, "1/h", 5, "1/d", 5);
                assert!(err_of(&v).is_none(), "{k}: {v:?}");
            },
        },
    ],
    whole: None,
    leak: Leak {
        share: 13,
        keys: &[
            ("rl:t", LEAK_KEYS),
            ("rl:l", LEAK_KEYS),
            ("rl:w", LEAK_KEYS),
            ("rl:g", LEAK_KEYS),
        ],
        errors: &[],
        setup: |_| Vec::new(),
        call: leak_call,
        round: None,
        idle: &[],
    },
};

/// Rate limiters of every kind.
pub const LIMITER: TypeKit = TypeKit {
    name: "warden-rl",
    encver: 3,
    bases: limiter_bases,
    layouts: current_layout,
    forge: forge_limiter,
    refusals: limiter_refusals,
    reads: limiter_reads,
    exercise: limiter_writes,
    gauges: None,
};

/// The leak workload's limiters of each kind: `rl:t:0` to `rl:t:499`, and
/// `rl:l`, `rl:w`, `rl:g`.
const LEAK_KEYS: usize = 500;

/// One call of the leak workload on a limiter of one kind (token bucket, leaky
/// bucket, window, GCRA), at a cost of 0 to 3.
fn leak_call(r: &mut Rng, _: &[Args], buf: &mut Vec<u8>) {
    let n = |r: &mut Rng, m: usize| r.below(m).to_string();
    let i = n(r, LEAK_KEYS);
    let cost = n(r, 4);
    match r.below(4) {
        0 => {
            let key = format!("rl:t:{i}");
            let rate = r.pick(&["100/s", "10/ms", "5/m", "inf", "0.5"]);
            pack(
                buf,
                &[
                    b"RL.TOKEN",
                    key.as_bytes(),
                    rate.as_bytes(),
                    b"20",
                    b"COST",
                    cost.as_bytes(),
                    b"MAXWAIT",
                    b"100",
                ],
            );
        }
        1 => {
            let key = format!("rl:l:{i}");
            pack(
                buf,
                &[
                    b"RL.LEAKY",
                    key.as_bytes(),
                    b"50/s",
                    b"30",
                    b"COST",
                    cost.as_bytes(),
                ],
            );
        }
        2 => {
            let key = format!("rl:w:{i}");
            pack(
                buf,
                &[
                    b"RL.WINDOW",
                    key.as_bytes(),
                    b"40",
                    b"1000",
                    b"COST",
                    cost.as_bytes(),
                ],
            );
        }
        _ => {
            let key = format!("rl:g:{i}");
            pack(
                buf,
                &[
                    b"RL.GCRA",
                    key.as_bytes(),
                    b"15",
                    b"30",
                    b"60",
                    b"QUANTITY",
                    cost.as_bytes(),
                ],
            );
        }
    }
}
