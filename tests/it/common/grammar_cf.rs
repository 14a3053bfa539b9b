//! The cuckoo family's commands and values for the fuzzer (`grammar::COMMANDS`,
//! `grammar::VALUES`).

use super::grammar::{layer_words, Fill};

use Fill::Word;

pub const CF_KEYS: &[&str] = &["cf:0", "cf:1", "cf:2"];

/// Cuckoo capacities, bucket sizes, walk lengths and expansions (0: never grows).
pub const CF_CAPACITIES: &[&str] = &["4", "10", "50", "1000", "20000"];
pub const CF_BUCKET_SIZES: &[&str] = &["1", "2", "4", "8", "255"];
pub const CF_ITERATIONS: &[&str] = &["1", "5", "20", "500"];
pub const CF_EXPANSIONS: &[&str] = &["0", "1", "2", "3"];

pub const CF_COMMANDS: &[&str] = &[
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
];

pub const CF_VALUES: &[(&str, &str, Fill)] = &[
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
];
