//! The cuckoo family's part of the command fuzzer (`common/grammar.rs`): its commands,
//! keys, values and option words.

use crate::common::grammar::{layer_words, FamilyFuzz, Fill};

use Fill::Word;

const CF_KEYS: &[&str] = &["cf:0", "cf:1", "cf:2"];

/// Cuckoo capacities, bucket sizes, walk lengths and expansions (0: never grows).
const CF_CAPACITIES: &[&str] = &["4", "10", "50", "1000", "20000"];
const CF_BUCKET_SIZES: &[&str] = &["1", "2", "4", "8", "255"];
const CF_ITERATIONS: &[&str] = &["1", "5", "20", "500"];
const CF_EXPANSIONS: &[&str] = &["0", "1", "2", "3"];

pub const FUZZ: FamilyFuzz = FamilyFuzz {
    commands: &[
        "CF.RESERVEX",
        "CF.ADDX",
        "CF.ADDNXX",
        "CF.INSERTX",
        "CF.INSERTNXX",
        "CF.EXISTSX",
        "CF.MEXISTSX",
        "CF.DELX",
        "CF.COUNTX",
        "CF.COMPACTX",
        "CF.INFOX",
        "CF.SCANDUMPX",
        "CF.LOADCHUNKX",
        "CF._PLACEX",
        "CF._LOADX",
    ],
    keys: &[CF_KEYS],
    values: &[
        ("CF.", "key", Word(|g, r, _| g.key(r, CF_KEYS))),
        ("CF.", "item", Word(|g, r, _| g.item(r))),
        ("CF.", "capacity", Word(|g, r, _| g.pick(r, CF_CAPACITIES))),
        (
            "CF.",
            "bucketsize",
            Word(|g, r, _| g.pick(r, CF_BUCKET_SIZES)),
        ),
        (
            "CF.",
            "maxiterations",
            Word(|g, r, _| g.pick(r, CF_ITERATIONS)),
        ),
        ("CF.", "expansion", Word(|g, r, _| g.pick(r, CF_EXPANSIONS))),
        ("CF.", "iterator", Word(|g, r, _| g.int(r, 3))),
        ("CF.LOADCHUNKX", "data", Word(|_, r, _| r.some_bytes(0, 80))),
        ("CF.", "filters", Word(|g, r, _| g.int(r, 3))),
        ("CF._PLACEX", "slots", Word(|_, r, _| r.some_bytes(0, 12))),
        (
            "CF._LOADX",
            "fingerprint_bits",
            Word(|g, r, _| g.int(r, 33)),
        ),
        ("CF._LOADX", "items", Word(|g, r, _| g.int(r, 100))),
        ("CF._LOADX", "deletes", Word(|g, r, _| g.int(r, 9))),
        ("CF._LOADX", "hash", Word(|g, r, _| g.int(r, 2))),
        ("CF._LOADX", "index", Word(|g, r, _| g.int(r, 3))),
        ("CF._LOADX", "word_offset", Word(|g, r, _| g.int(r, 64))),
        ("CF._LOADX", "bytes", Word(layer_words)),
    ],
    words: &[
        "CAPACITY",
        "EXPANSION",
        "NOCREATE",
        "ITEMS",
        "BUCKETSIZE",
        "MAXITERATIONS",
        "HEADER",
        "WORDS",
    ],
};
