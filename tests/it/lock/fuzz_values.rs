//! The lock family's part of the command fuzzer (`common/grammar.rs`): its commands,
//! keys, values and option words.

use crate::common::grammar::{b, state_words, FamilyFuzz, Fill, Gen, OTHER_KEYS};
use crate::common::payload::Rng;
use crate::rate::fuzz_values::RL_TOKEN_KEYS;

use Fill::{Rest, Word};

pub const LOCK_KEYS: &[&str] = &["lk:0", "lk:1", "lk:2", "{lk}:3"];

const OWNERS: &[&[u8]] = &[
    b"o1",
    b"o2",
    b"o3",
    b"host:1234:thread-7",
    b"\xff\xfe\x00bin",
];

pub const FUZZ: FamilyFuzz = FamilyFuzz {
    commands: &[
        "DLOCK.ACQUIRE",
        "DLOCK.RELEASE",
        "DLOCK.EXTEND",
        "DLOCK.INFO",
        "DLOCK.GUARD",
        "DLOCK._SET",
        "DLOCK._SETS",
        "DLOCK._FENCE",
    ],
    keys: &[LOCK_KEYS],
    values: &[
        ("DLOCK.", "key", Word(|g, r, _| g.key(r, LOCK_KEYS))),
        ("DLOCK.", "owner", Word(owner)),
        ("DLOCK.", "t", Word(fencing_token)),
        ("DLOCK.ACQUIRE", "n", Word(|g, r, _| g.positive(r, 3))),
        ("DLOCK.GUARD", "token", Word(fencing_token)),
        ("DLOCK.GUARD", "command", Rest(guarded)),
        ("DLOCK._SET", "state", Word(lock_state)),
        ("DLOCK._SETS", "limit:floor:expiry", Word(set_limit)),
        ("DLOCK._SETS", "holders", Word(set_holders)),
        ("DLOCK._FENCE", "floor", Word(fence_floor)),
    ],
    words: &[
        "WAIT",
        "REENTRANT",
        "KEEP",
        "SHARED",
        "LIMIT",
        "TOKEN",
        "WAITX",
    ],
};

/// A lock's owner.
fn owner(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    g.val(rng, |r| r.pick(OWNERS).to_vec())
}

/// `token:holds:deadline_ms`, as DLOCK._SET takes it.
fn lock_state(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let now = g.now;
    let damage = g.p > 0;
    g.val(rng, |r| {
        let token = now * 1000 + r.below(1_000_000) as i64;
        let holds = 1 + r.below(4);
        let deadline = now + 100 + r.below(60_000) as i64;
        let parts = vec![token.to_string(), holds.to_string(), deadline.to_string()];
        state_words(r, damage, parts, 4)
    })
}

/// A fencing token: near the clock-based tokens the server issues now (so some match a
/// grant), or any small integer.
fn fencing_token(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let near = g.now.saturating_mul(1000) - rng.below(5_000_000) as i64;
    g.val(rng, |r| {
        if r.chance(1, 2) {
            near.to_string().into_bytes()
        } else {
            r.below(100).to_string().into_bytes()
        }
    })
}

/// DLOCK.GUARD's wrapped command, after `key owner token`: a native write or read, a
/// warden command (the rate family's RL.TOKEN among them), a blocking one, MULTI, or a
/// guard of the same lock inside.
fn guarded(g: &Gen, rng: &mut Rng, drawn: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let (lock, owner) = (drawn[0].clone(), drawn[1].clone());
    let other = g.key(rng, OTHER_KEYS);
    match rng.below(9) {
        0 | 1 => vec![b("INCR"), other],
        2 => vec![b("SET"), other, g.item(rng)],
        3 => vec![b("GET"), other],
        4 => vec![b("DLOCK.EXTEND"), lock, owner, g.ttl(rng)],
        5 => vec![b("RL.TOKEN"), g.key(rng, RL_TOKEN_KEYS), b("1/h"), b("5")],
        6 => vec![b("BLPOP"), other, b("0")],
        7 => vec![b("MULTI")],
        _ => vec![b("DLOCK.GUARD"), lock, owner, b("1"), b("INCR"), other],
    }
}

/// DLOCK._SETS's `limit:floor:expiry`.
fn set_limit(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let floor = g.now * 1000 + 5;
    let expiry = g.now + 60_000;
    g.val(rng, |r| {
        format!("{}:{floor}:{expiry}", r.below(3)).into_bytes()
    })
}

/// DLOCK._SETS's holders: one shared holder.
fn set_holders(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let holders = format!("1:a{}:1:{};", g.now * 1000, g.now + 60_000);
    g.val(rng, |_| holders.into_bytes())
}

/// DLOCK._FENCE's floor: near the tokens issued now.
fn fence_floor(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let floor = g.now * 1000;
    g.val(rng, |r| {
        (floor + r.below(1000) as i64).to_string().into_bytes()
    })
}
