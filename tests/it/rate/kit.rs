//! Rate limiters (`warden-rl`) in the checks that cross every family
//! (`tests/it/module/`): the family's `KIT`, with its type (payloads in
//! `payload.rs`), the kinds of key of the defrag churn, and its calls of the
//! leak workload.

use crate::common::kit::*;
use crate::rate::payload::*;

/// The family in the checks across families.
pub static KIT: FamilyKit = FamilyKit { types: &[LIMITER] };

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
