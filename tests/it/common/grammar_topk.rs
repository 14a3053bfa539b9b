//! The top-k family's commands and values for the fuzzer (`grammar::COMMANDS`,
//! `grammar::VALUES`).

use super::grammar::{Fill, WINDOWS};

use Fill::Word;

pub const TOPK_KEYS: &[&str] = &["tk:0", "tk:1", "tk:w"];

pub const TOPK_COMMANDS: &[&str] = &[
    "TOPK.RESERVEX",
    "TOPK.ADDX",
    "TOPK.INCRBYX",
    "TOPK.QUERYX",
    "TOPK.COUNTX",
    "TOPK.LISTX",
    "TOPK.INFOX",
    "TOPK._ROTATEX",
    "TOPK._LOADX",
];

const KS: &[&str] = &["1", "3", "10", "50"];
const SIZES: &[&str] = &["1", "2", "8", "50"];
const DECAYS: &[&str] = &["0.9", "1", "0.5", "0.01"];

pub const TOPK_VALUES: &[(&str, &str, Fill)] = &[
    ("TOPK.", "key", Word(|g, r, _| g.key(r, TOPK_KEYS))),
    ("TOPK.", "item", Word(|g, r, _| g.item(r))),
    ("TOPK.", "k", Word(|g, r, _| g.pick(r, KS))),
    ("TOPK.", "width", Word(|g, r, _| g.pick(r, SIZES))),
    ("TOPK.", "depth", Word(|g, r, _| g.pick(r, SIZES))),
    ("TOPK.", "decay", Word(|g, r, _| g.pick(r, DECAYS))),
    ("TOPK.", "increment", Word(|g, r, _| g.int(r, 20))),
    ("TOPK.", "window_ms", Word(|g, r, _| g.pick(r, WINDOWS))),
    (
        "TOPK._ROTATEX",
        "slot_ms",
        Word(super::grammar_cms::slot_start),
    ),
    ("TOPK._LOADX", "kind", Word(|g, r, _| g.int(r, 2))),
    (
        "TOPK._LOADX",
        "head_ms",
        Word(super::grammar_cms::slot_start),
    ),
    ("TOPK._LOADX", "rng", Word(|g, r, _| g.int(r, 1000))),
    ("TOPK._LOADX", "sub", Word(|g, r, _| g.int(r, 5))),
    ("TOPK._LOADX", "offset", Word(|g, r, _| g.int(r, 20))),
    ("TOPK._LOADX", "index", Word(|g, r, _| g.int(r, 50))),
    ("TOPK._LOADX", "count", Word(|g, r, _| g.int(r, 100))),
    (
        "TOPK._LOADX",
        "bytes",
        Word(|g, r, _| g.val(r, |r| r.some_bytes(0, 40))),
    ),
];
