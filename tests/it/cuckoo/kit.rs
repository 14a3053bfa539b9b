//! Cuckoo filters (`warden-cf`, whole or being loaded by CF.LOADCHUNKX: one
//! type) in the checks that cross every family (`tests/it/module/`): the
//! family's `KIT`, with its type (payloads in `payload.rs`), INFO's gauges of
//! filters, the kinds of key of the defrag churn and the large filter kept whole
//! through it, and the family's calls of the leak workload.

use crate::common::defrag::send;
use crate::common::kit::*;
use crate::common::*;
use crate::cuckoo::payload::*;

/// The family in the checks across families.
pub static KIT: FamilyKit = FamilyKit {
    types: &[CUCKOO],
    churn: &[
        Churn {
            prefix: "cf",
            count: 3_000,
            ttl: false,
            make: |k, i| {
                vec![
                    cmd_of!("CF.RESERVEX", k, 50),
                    cmd_of!("CF.ADDX", k, format!("item-{i}")),
                ]
            },
            survivor: |con, k, i| {
                let e: i64 = query!(con, "CF.COUNTX", k, format!("item-{i}"));
                assert_eq!(e, 1, "{k}");
            },
        },
        Churn {
            prefix: "cfs",
            count: 300,
            ttl: false,
            make: |k, i| {
                let mut add = cmd_of!("CF.INSERTX", k, "NOCREATE", "ITEMS");
                for n in 0..60 {
                    add.arg(format!("item-{i}-{n}"));
                }
                vec![cmd_of!("CF.RESERVEX", k, 8, "EXPANSION", 2), add]
            },
            survivor: |con, k, i| {
                for n in 0..60 {
                    let e: i64 = query!(con, "CF.EXISTSX", k, format!("item-{i}-{n}"));
                    assert_eq!(e, 1, "{k} item {n}");
                }
                let subs: i64 = cf_info(con, k, "Number of filters");
                assert!(subs >= 3, "{k}: {subs} sub-filters");
            },
        },
    ],
    whole: Some(Whole {
        keys: &["big:cuckoo"],
        make: big_cuckoo,
        check: big_cuckoo_holds,
    }),
};

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

/// Field `label` of `CF.INFOX key`.
fn cf_info(con: &mut Connection, key: &str, label: &str) -> i64 {
    let v: Vec<Value> = query!(con, "CF.INFOX", key);
    let at = v
        .iter()
        .position(|x| text_of(x).as_deref() == Some(label))
        .unwrap_or_else(|| panic!("CF.INFOX {key}: no {label} in {v:?}"));
    int_of(&v[at + 1]).expect("an integer")
}

/// A filter of several sub-filters kept whole through the defrag churn:
/// 80,000 items in 20,000, 40,000, 80,000 …
fn big_cuckoo(con: &mut Connection) {
    let _: () = query!(con, "CF.RESERVEX", "big:cuckoo", 20_000, "EXPANSION", 2);
    for chunk in 0..40 {
        let mut c = cmd_of!("CF.INSERTX", "big:cuckoo", "NOCREATE", "ITEMS");
        for n in 0..2_000 {
            c.arg(format!("c-{chunk}-{n}"));
        }
        send(con, [c]);
    }
    let subs = cf_info(con, "big:cuckoo", "Number of filters");
    assert!(subs >= 3, "big:cuckoo: {subs} sub-filters");
}

/// `big_cuckoo`'s items are all still there.
fn big_cuckoo_holds(con: &mut Connection) {
    for chunk in [0, 17, 39] {
        for n in (0..2_000).step_by(97) {
            let e: i64 = query!(con, "CF.EXISTSX", "big:cuckoo", format!("c-{chunk}-{n}"));
            assert_eq!(e, 1, "big:cuckoo: c-{chunk}-{n}");
        }
    }
}
