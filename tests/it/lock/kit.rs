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
    churn: &[
        // Every 4th owner on the heap.
        Churn {
            prefix: "lk",
            count: 40_000,
            ttl: true,
            make: |k, i| vec![cmd_of!("DLOCK.ACQUIRE", k, owner(i), 3_600_000)],
            survivor: |con, k, i| {
                let info: Vec<Value> = query!(con, "DLOCK.INFO", k);
                assert_eq!(text_of(&info[1]), Some(owner(i)), "{k}: {info:?}");
            },
        },
        // Shared, two holders.
        Churn {
            prefix: "ls",
            count: 5_000,
            ttl: true,
            make: |k, i| {
                vec![
                    cmd_of!("DLOCK.ACQUIRE", k, "r1", 3_600_000, "SHARED"),
                    cmd_of!("DLOCK.ACQUIRE", k, long_owner(i), 3_600_000, "SHARED"),
                ]
            },
            survivor: |con, k, i| {
                let t1: i64 = query!(con, "DLOCK.ACQUIRE", k, "r1", 3_600_000, "SHARED");
                let t2: i64 = query!(con, "DLOCK.ACQUIRE", k, long_owner(i), 3_600_000, "SHARED");
                assert!(t1 > 0 && t2 > t1, "{k}: the holders keep their tokens");
            },
        },
    ],
    whole: None,
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

/// A churned lock's owner held on the heap.
fn long_owner(i: usize) -> String {
    format!("{i:08}-a-long-owner-name-held-on-the-heap-not-inline-xyz")
}

/// A churned lock's owner: every 4th one long.
fn owner(i: usize) -> String {
    if i.is_multiple_of(4) {
        long_owner(i)
    } else {
        format!("w-{i}")
    }
}
