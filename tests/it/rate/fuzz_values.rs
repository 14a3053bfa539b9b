//! The rate family's part of the command fuzzer (`common/grammar.rs`): its commands,
//! keys, values and option words.

use crate::common::grammar::{state_words, FamilyFuzz, Fill, Gen, LONG_TTL_MS};
use crate::common::payload::Rng;

use Fill::Word;

pub const RL_TOKEN_KEYS: &[&str] = &["rl:t:0", "rl:t:1"];

const RL_LEAKY_KEYS: &[&str] = &["rl:l:0", "rl:l:1"];

const RL_WINDOW_KEYS: &[&str] = &["rl:w:0", "rl:w:1"];

const RL_GCRA_KEYS: &[&str] = &["rl:g:0", "rl:g:1"];

/// Limiter keys of each kind: 1 token, 2 leaky, 3 GCRA, 4 window (RL._SET's states).
const LIMITER_KEYS: [&[&str]; 4] = [RL_TOKEN_KEYS, RL_LEAKY_KEYS, RL_GCRA_KEYS, RL_WINDOW_KEYS];

/// Rates: the first `GOOD_RATES` are well-formed.
const GOOD_RATES: usize = 13;

const RATES: &[&str] = &[
    "100",
    "0.5",
    "inf",
    "10/s",
    "5/ms",
    "300/15m",
    "1/h",
    "2/d",
    "1/1d",
    "7/250ms",
    "1000000/s",
    "0",
    "0/s",
    "-1",
    "1/0s",
    "1/-1s",
    "1/",
    "/s",
    "10/x",
    "10/5",
    "9223372036854775807/1ms",
    "1/9223372036854775807d",
    "18446744073709551616/s",
    "1e308",
    "nan",
    "-inf",
    "0.0000001",
    "1e-300",
];

pub const FUZZ: FamilyFuzz = FamilyFuzz {
    commands: &["RL.TOKEN", "RL.LEAKY", "RL.WINDOW", "RL.GCRA", "RL._SET"],
    keys: &[RL_TOKEN_KEYS, RL_LEAKY_KEYS, RL_WINDOW_KEYS, RL_GCRA_KEYS],
    values: &[
        ("RL.TOKEN", "key", Word(|g, r, _| g.key(r, RL_TOKEN_KEYS))),
        ("RL.LEAKY", "key", Word(|g, r, _| g.key(r, RL_LEAKY_KEYS))),
        ("RL.WINDOW", "key", Word(|g, r, _| g.key(r, RL_WINDOW_KEYS))),
        ("RL.GCRA", "key", Word(|g, r, _| g.key(r, RL_GCRA_KEYS))),
        ("RL._SET", "key", Word(limiter_key)),
        ("RL.", "rate", Word(rate)),
        ("RL.", "cost", Word(|g, r, _| g.int(r, 5))),
        ("RL.TOKEN", "burst", Word(|g, r, _| g.int(r, 20))),
        ("RL.TOKEN", "max_wait_ms", Word(|g, r, _| g.int(r, 5_000))),
        ("RL.LEAKY", "capacity", Word(|g, r, _| g.positive(r, 20))),
        ("RL.WINDOW", "limit", Word(|g, r, _| g.positive(r, 20))),
        (
            "RL.WINDOW",
            "window_ms",
            Word(|g, r, _| g.positive(r, 5_000)),
        ),
        ("RL.GCRA", "max_burst", Word(|g, r, _| g.int(r, 20))),
        ("RL.GCRA", "count", Word(|g, r, _| g.positive(r, 100))),
        ("RL.GCRA", "period_s", Word(|g, r, _| g.positive(r, 60))),
        ("RL.GCRA", "quantity", Word(|g, r, _| g.int(r, 5))),
        ("RL._SET", "state", Word(limiter_state)),
    ],
    words: &["COST", "MAXWAIT", "QUANTITY", "COSTS"],
};

/// A rate: well-formed ones only in valid calls.
fn rate(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let from = if g.p > 0 { RATES } else { &RATES[..GOOD_RATES] };
    g.pick(rng, from)
}

/// RL._SET's key: a limiter of any kind.
fn limiter_key(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let keys = rng.pick(&LIMITER_KEYS);
    g.key(rng, keys)
}

/// RL._SET's state, of the kind of the key drawn before it (any kind for another key).
fn limiter_state(g: &Gen, rng: &mut Rng, drawn: &[Vec<u8>]) -> Vec<u8> {
    let key = String::from_utf8_lossy(&drawn[0]);
    let kind = match LIMITER_KEYS.iter().position(|keys| keys.contains(&&*key)) {
        Some(i) => i + 1,
        None => 1 + rng.below(4),
    };
    state_of_kind(g, rng, kind)
}

/// `kind:n:limits…:pxat_ms` (or the one-limit form of encoding version 1,
/// `kind:f1:f2:f3:f4:pxat_ms`), as RL._SET takes it.
fn state_of_kind(g: &Gen, rng: &mut Rng, kind: usize) -> Vec<u8> {
    let now = g.now;
    let damage = g.p > 0;
    g.val(rng, |r| {
        let v1 = r.chance(1, 3);
        let n = if v1 || kind == 2 || kind == 3 {
            1
        } else {
            1 + r.below(3)
        };
        let mut parts: Vec<String> = Vec::new();
        for _ in 0..n {
            if kind == 4 {
                parts.extend([
                    (now - r.below(10_000) as i64).to_string(),
                    (1 + r.below(60_000)).to_string(),
                    r.below(100).to_string(),
                    r.below(100).to_string(),
                ]);
                continue;
            }
            let deficit: u128 = if r.chance(1, 5) {
                u128::from(r.next()) << r.below(60)
            } else {
                u128::from(r.next() % 1_000_000_000_000)
            };
            parts.extend([
                (now - r.below(10_000) as i64).to_string(),
                deficit.to_string(),
                (1 + r.next() % 1_000_000_000_000).to_string(),
                (1 + r.next() % 1_000_000_000).to_string(),
            ]);
            if !v1 {
                parts.push(if kind == 1 {
                    r.below(20).to_string()
                } else {
                    "0".to_string()
                });
            }
        }
        if !v1 {
            parts.insert(0, n.to_string());
        }
        parts.insert(0, kind.to_string());
        parts.push(match r.below(4) {
            0 => "-1".to_string(),
            1 => (now + 50 + r.below(2_000) as i64).to_string(),
            _ => (now + LONG_TTL_MS + r.below(60_000) as i64).to_string(),
        });
        state_words(r, damage, parts, 6)
    })
}
