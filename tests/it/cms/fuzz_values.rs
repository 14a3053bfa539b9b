//! The count-min family's part of the command fuzzer (`common/grammar.rs`): its
//! commands, values and option words.

use crate::common::grammar::{b, slot_start, FamilyFuzz, Fill, Gen, WINDOWS};
use crate::common::payload::Rng;

use Fill::{Rest, Word};

const CMS_KEYS: &[&str] = &["cms:0", "cms:1", "cms:w"];

/// Widths and depths: small ones, so sketches of one size meet in merges.
const WIDTHS: &[&str] = &["1", "2", "10", "100", "1000"];
const DEPTHS: &[&str] = &["1", "2", "5"];
const FRACTIONS: &[&str] = &["0.01", "0.1", "0.5", "0.001", "0.9"];

pub const FUZZ: FamilyFuzz = FamilyFuzz {
    commands: &[
        "CMS.INITBYDIMX",
        "CMS.INITBYPROBX",
        "CMS.INCRBYX",
        "CMS.QUERYX",
        "CMS.MERGEX",
        "CMS.INFOX",
        "CMS._ROTATEX",
        "CMS._LOADX",
    ],
    // Not in `any_key`'s keyspace: only the family's own commands name its keys.
    keys: &[],
    values: &[
        ("CMS.", "key", Word(|g, r, _| g.key(r, CMS_KEYS))),
        ("CMS.", "item", Word(|g, r, _| g.item(r))),
        ("CMS.", "increment", Word(|g, r, _| g.int(r, 5))),
        ("CMS.", "width", Word(|g, r, _| g.pick(r, WIDTHS))),
        ("CMS.", "depth", Word(|g, r, _| g.pick(r, DEPTHS))),
        ("CMS.", "error", Word(|g, r, _| g.pick(r, FRACTIONS))),
        ("CMS.", "probability", Word(|g, r, _| g.pick(r, FRACTIONS))),
        ("CMS.", "window_ms", Word(|g, r, _| g.pick(r, WINDOWS))),
        ("CMS.MERGEX", "numkeys", Rest(merge_sources)),
        ("CMS._ROTATEX", "slot_ms", Word(slot_start)),
        ("CMS._LOADX", "kind", Word(|g, r, _| g.int(r, 2))),
        (
            "CMS._LOADX",
            "window_ms",
            Word(|g, r, _| g.pick(r, &["0", "100", "60000"])),
        ),
        ("CMS._LOADX", "head_ms", Word(slot_start)),
        ("CMS._LOADX", "sub", Word(|g, r, _| g.int(r, 5))),
        ("CMS._LOADX", "count", Word(|g, r, _| g.int(r, 100))),
        ("CMS._LOADX", "offset", Word(|g, r, _| g.int(r, 20))),
        (
            "CMS._LOADX",
            "bytes",
            Word(|g, r, _| g.val(r, |r| r.some_bytes(0, 40))),
        ),
    ],
    words: &["HEADER", "WINDOW", "WEIGHTS", "CELLS"],
};

/// `numkeys src … [WEIGHTS w …]`: 1 to 3 sources, weights (some negative)
/// now and then; a fuzzed call's count or weights may not match.
fn merge_sources(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let n = 1 + rng.below(3);
    let mut words = vec![g.val(rng, |_| n.to_string().into_bytes())];
    for _ in 0..n {
        words.push(g.key(rng, CMS_KEYS));
    }
    if rng.chance(1, 2) {
        words.push(g.word(rng, "WEIGHTS"));
        for _ in 0..n {
            let w = rng.pick(&["1", "2", "-1", "0"]);
            words.push(g.val(rng, |_| b(w)));
        }
    }
    words
}
