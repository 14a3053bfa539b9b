//! Locks (`warden-lk`) and lock sets (`warden-ls`) in the checks that cross
//! every family (`tests/it/module/`): the family's `KIT`, with its two types
//! (payloads in `payload.rs`), the kinds of key of the defrag churn, and its part
//! of the leak workload (acquires, releases, extends, shared and counted sets,
//! and rounds of waiters served by hand-off).

use crate::common::kit::*;
use crate::common::payload_checks::run_reads;
use crate::common::*;
use crate::lock::payload::*;

/// The family in the checks across families.
pub static KIT: FamilyKit = FamilyKit {
    types: &[LOCK, LOCK_SET],
};

/// Locks.
pub const LOCK: TypeKit = TypeKit {
    name: "warden-lk",
    encver: 2,
    bases: lock_bases,
    layouts: no_layouts,
    forge: forge_lock,
    refusals: lock_refusals,
    reads: |con, key, found, ctx| {
        run_reads(
            con,
            &[(cmd_of!("DLOCK.INFO", key), lock_info_ok)],
            found,
            ctx,
        )
    },
    exercise: lock_writes,
    gauges: None,
};

/// Lock sets: shared or counted.
pub const LOCK_SET: TypeKit = TypeKit {
    name: "warden-ls",
    encver: 2,
    bases: lock_set_bases,
    layouts: no_layouts,
    forge: forge_lock_set,
    refusals: lock_set_refusals,
    reads: |con, key, found, ctx| {
        let reads = [(cmd_of!("DLOCK.INFO", key), lock_set_info_ok as _)];
        run_reads(con, &reads, found, ctx)
    },
    exercise: lock_set_writes,
    gauges: None,
};
