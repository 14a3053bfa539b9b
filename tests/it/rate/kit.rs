//! Rate limiters (`warden-rl`) in the checks that cross every family
//! (`tests/it/module/`): the family's `KIT`, with its type (payloads in
//! `payload.rs`), the kinds of key of the defrag churn, and its calls of the
//! leak workload.

use crate::common::kit::*;
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
