//! Cuckoo filters (`warden-cf`, whole or being loaded by CF.LOADCHUNKX: one
//! type) in the checks that cross every family (`tests/it/module/`): the
//! family's `KIT`, with its type (payloads in `payload.rs`), INFO's gauges of
//! filters, the kinds of key of the defrag churn and the large filter kept whole
//! through it, and the family's calls of the leak workload.

use crate::common::kit::*;
use crate::cuckoo::payload::*;

/// The family in the checks across families.
pub static KIT: FamilyKit = FamilyKit { types: &[CUCKOO] };

/// Cuckoo filters, whole or being loaded.
pub const CUCKOO: TypeKit = TypeKit {
    name: "warden-cf",
    encver: 2,
    bases: cuckoo_bases,
    layouts: no_layouts,
    forge: forge_cuckoo,
    refusals: cuckoo_refusals,
    reads: cuckoo_checked_reads,
    exercise: cuckoo_writes,
    gauges: Some(Gauges {
        fields: ["cf_filters", "cf_bytes"],
        size: None,
    }),
};
