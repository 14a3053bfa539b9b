//! The cache family's part of the command fuzzer (`common/grammar.rs`): its commands,
//! keys, values and option words.

use crate::common::grammar::{state_words, FamilyFuzz, Fill, Gen, LONG_TTL_MS};
use crate::common::payload::Rng;

use Fill::Word;

const CACHE_KEYS: &[&str] = &["ch:0", "ch:1", "ch:2", "{ch}:3"];

pub const FUZZ: FamilyFuzz = FamilyFuzz {
    commands: &[
        "CACHE.SET",
        "CACHE.GET",
        "CACHE.INFO",
        "CACHE._SET",
        "CACHE._META",
    ],
    keys: &[CACHE_KEYS],
    values: &[
        ("CACHE.", "key", Word(|g, r, _| g.key(r, CACHE_KEYS))),
        ("CACHE.", "value", Word(|g, r, _| g.item(r))),
        ("CACHE.", "version", Word(|g, r, _| g.int(r, 5))),
        ("CACHE.SET", "stale_ms", Word(|g, r, _| g.int(r, 5_000))),
        ("CACHE.SET", "token", Word(lease_token)),
        ("CACHE.GET", "reads", Word(|g, r, _| g.int(r, 4))),
        (
            "CACHE.GET",
            "window_ms",
            Word(|g, r, _| g.positive(r, 1_000)),
        ),
        ("CACHE.GET", "lease_ms", Word(|g, r, _| g.positive(r, 300))),
        ("CACHE._SET", "state", Word(|g, r, _| meta(g, r, true))),
        ("CACHE._META", "state", Word(meta_state)),
    ],
    words: &[
        "STALE",
        "VERSION",
        "LEASE",
        "MINVERSION",
        "HOT",
        "EXTEND",
        "WAIT",
    ],
};

/// `version:fresh_until:stale_until:lease:lease_until`, as CACHE._SET
/// and CACHE._META take it.
fn meta(g: &Gen, rng: &mut Rng, with_value: bool) -> Vec<u8> {
    let now = g.now;
    let damage = g.p > 0;
    g.val(rng, |r| {
        let fresh = now + 50 + r.below(2_000) as i64 + if r.chance(1, 2) { LONG_TTL_MS } else { 0 };
        let stale = fresh + r.below(60_000) as i64;
        let version = if with_value { r.below(5) } else { 0 };
        let (token, until) = if !with_value || r.chance(1, 3) {
            (
                now * 1000 + r.below(1_000_000) as i64,
                now + 50 + r.below(60_000) as i64,
            )
        } else {
            (0, 0)
        };
        let parts = vec![
            version.to_string(),
            fresh.to_string(),
            stale.to_string(),
            token.to_string(),
            until.to_string(),
        ];
        state_words(r, damage, parts, 5)
    })
}

/// CACHE._META's state: of an entry with a value half the time, else of a lease alone.
fn meta_state(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let with_value = rng.chance(1, 2);
    meta(g, rng, with_value)
}

/// CACHE.SET's `LEASE` token: near the tokens issued now.
fn lease_token(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    g.val(rng, |r| {
        (g.now * 1000 + r.below(1_000_000) as i64)
            .to_string()
            .into_bytes()
    })
}
