//! The top-k family's part of the command fuzzer (`common/grammar.rs`): its commands,
//! values and option words.

use crate::common::grammar::{slot_start, FamilyFuzz, Fill, WINDOWS};

use Fill::Word;

const TOPK_KEYS: &[&str] = &["tk:0", "tk:1", "tk:w"];

const KS: &[&str] = &["1", "3", "10", "50"];
const SIZES: &[&str] = &["1", "2", "8", "50"];
const DECAYS: &[&str] = &["0.9", "1", "0.5", "0.01"];

pub const FUZZ: FamilyFuzz = FamilyFuzz {
    commands: &[
        "TOPK.RESERVEX",
        "TOPK.ADDX",
        "TOPK.INCRBYX",
        "TOPK.QUERYX",
        "TOPK.COUNTX",
        "TOPK.LISTX",
        "TOPK.INFOX",
        "TOPK._ROTATEX",
        "TOPK._LOADX",
    ],
    // Not in `any_key`'s keyspace: only the family's own commands name its keys.
    keys: &[],
    values: &[
        ("TOPK.", "key", Word(|g, r, _| g.key(r, TOPK_KEYS))),
        ("TOPK.", "item", Word(|g, r, _| g.item(r))),
        ("TOPK.", "k", Word(|g, r, _| g.pick(r, KS))),
        ("TOPK.", "width", Word(|g, r, _| g.pick(r, SIZES))),
        ("TOPK.", "depth", Word(|g, r, _| g.pick(r, SIZES))),
        ("TOPK.", "decay", Word(|g, r, _| g.pick(r, DECAYS))),
        ("TOPK.", "increment", Word(|g, r, _| g.int(r, 20))),
        ("TOPK.", "window_ms", Word(|g, r, _| g.pick(r, WINDOWS))),
        ("TOPK._ROTATEX", "slot_ms", Word(slot_start)),
        ("TOPK._LOADX", "kind", Word(|g, r, _| g.int(r, 2))),
        ("TOPK._LOADX", "head_ms", Word(slot_start)),
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
    ],
    words: &["HEADER", "WINDOW", "WITHCOUNT", "BUCKETS", "SLOT"],
};
