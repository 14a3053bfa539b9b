//! The values of `tests/it/module/fuzz.rs`'s command fuzzer. The shape of every call is the
//! command's `COMMAND DOCS` tree, read from the server under test (`docs.rs`), the one
//! declaration the parser and the docs also come from; `fuzz_calls::draw` walks it.
//! What goes in each argument is picked here, by command and argument name
//! (`VALUES`), from the value generators (`Gen`: a small keyspace per type, odd bytes
//! and numbers, rates, items, internal states), and `mutate` damages a call's
//! structure.

use super::grammar_cf::*;
use super::grammar_cms::{CMS_COMMANDS, CMS_VALUES};
use super::grammar_topk::{TOPK_COMMANDS, TOPK_VALUES};
use super::payload::Rng;

/// Every key in the final comparison lives at least this long.
pub const LONG_TTL_MS: i64 = 3_600_000;

pub const LOCK_KEYS: &[&str] = &["lk:0", "lk:1", "lk:2", "{lk}:3"];

pub const BF_KEYS: &[&str] = &["bf:0", "bf:1", "bf:2", "bf:ns", "bf:ld"];

pub const RL_TOKEN_KEYS: &[&str] = &["rl:t:0", "rl:t:1"];

pub const RL_LEAKY_KEYS: &[&str] = &["rl:l:0", "rl:l:1"];

pub const RL_WINDOW_KEYS: &[&str] = &["rl:w:0", "rl:w:1"];

pub const RL_GCRA_KEYS: &[&str] = &["rl:g:0", "rl:g:1"];

pub const CACHE_KEYS: &[&str] = &["ch:0", "ch:1", "ch:2", "{ch}:3"];

pub const OTHER_KEYS: &[&str] = &["str:0", "list:0", "hash:0", "new:0", "new:1", "{new}:2"];

pub const OWNERS: &[&[u8]] = &[
    b"o1",
    b"o2",
    b"o3",
    b"host:1234:thread-7",
    b"\xff\xfe\x00bin",
];

/// Extreme and malformed numbers.
pub const NUMS: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "99999999999999999999999999999999999999999",
    "1e308",
    "-1e308",
    "1e309",
    "NaN",
    "nan",
    "-nan",
    "inf",
    "-inf",
    "+inf",
    "Infinity",
    "0.0000001",
    "1e-300",
    "5e-324",
    "01",
    "+5",
    "-0",
    "0.0",
    "1.5",
    " 1",
    "1 ",
    "0x10",
    "1e3",
    "1_000",
    "",
];

/// Every option word of every command (plus look-alikes), written out here rather than
/// read from the docs: `fuzz_grammar.rs` checks it holds every documented token, and
/// that each command refuses those its docs do not name.
pub const WORDS: &[&str] = &[
    "WAIT",
    "REENTRANT",
    "KEEP",
    "SHARED",
    "LIMIT",
    "TOKEN",
    "EXPANSION",
    "NONSCALING",
    "AGE",
    "CAPACITY",
    "ERROR",
    "NOCREATE",
    "ITEMS",
    "SIZE",
    "FILTERS",
    "LAYER",
    "BITS",
    "COST",
    "MAXWAIT",
    "QUANTITY",
    "STALE",
    "VERSION",
    "LEASE",
    "MINVERSION",
    "HOT",
    "EXTEND",
    "WAITX",
    "ITEM",
    "COSTS",
    "BUCKETSIZE",
    "MAXITERATIONS",
    "HEADER",
    "WORDS",
    "WINDOW",
    "WEIGHTS",
    "CELLS",
    "WITHCOUNT",
    "BUCKETS",
    "SLOT",
];

/// Rates: the first `GOOD_RATES` are well-formed.
pub const GOOD_RATES: usize = 13;

pub const RATES: &[&str] = &[
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

pub const ERROR_RATES: &[&str] = &["0.01", "0.001", "0.1", "0.5", "0.9999", "1e-5", "0.25"];

pub const CAPACITIES: &[&str] = &["1", "2", "10", "100", "1000", "20000"];

pub const EXPANSIONS: &[&str] = &["1", "2", "4", "32768"];

/// Windows of aging filters (`AGE`), in range and at its edges.
pub const WINDOWS: &[&str] = &["100", "250", "1000", "60000", "7d", "315360000000"];

/// One layer of a `DUMP_SHAPES` filter: capacity, error rate, hashes.
pub type DumpLayer = (u64, f64, u32);

/// Filters a `BF.SCANDUMPX` header may describe: error rate, expansion, and per layer
/// capacity, error rate and hashes (each layer sized as the module sizes it).
pub const DUMP_SHAPES: &[(f64, u32, &[DumpLayer])] = &[
    (0.01, 2, &[(100, 0.005, 8)]),
    (0.1, 0, &[(10, 0.1, 3)]),
    (0.01, 2, &[(10, 0.005, 8), (20, 0.0025, 9)]),
];

/// Bytes of a layer's bit array: −ln p / ln²2 bits per item in whole 64-bit words.
pub fn dump_layer_bytes(capacity: u64, rate: f64) -> u64 {
    let ln2 = std::f64::consts::LN_2;
    let bits = (capacity as f64 * -rate.ln() / (ln2 * ln2)).ceil() as u64;
    bits.max(64).div_ceil(64) * 8
}

/// A `BF.SCANDUMPX` header for shape `s` with `items` items in each layer.
pub fn dump_header(s: usize, items: u64) -> Vec<u8> {
    let (rate, expansion, layers) = DUMP_SHAPES[s];
    let mut h = b"wardenbf".to_vec();
    h.extend_from_slice(&1u32.to_le_bytes());
    h.extend_from_slice(&rate.to_le_bytes());
    h.extend_from_slice(&expansion.to_le_bytes());
    h.extend_from_slice(&(layers.len() as u32).to_le_bytes());
    for &(capacity, layer_rate, hashes) in layers {
        h.extend_from_slice(&capacity.to_le_bytes());
        h.extend_from_slice(&layer_rate.to_le_bytes());
        h.extend_from_slice(&hashes.to_le_bytes());
        h.extend_from_slice(&items.min(capacity).to_le_bytes());
        h.extend_from_slice(&(dump_layer_bytes(capacity, layer_rate) * 8).to_le_bytes());
    }
    h
}

/// The iterator of chunk `j` (after the header) of shape `s`, and its length.
pub fn dump_chunk(s: usize, j: usize) -> (u64, u64) {
    let layers = DUMP_SHAPES[s].2;
    let sizes: Vec<u64> = layers.iter().map(|l| dump_layer_bytes(l.0, l.1)).collect();
    let j = j % sizes.len();
    (1 + sizes[..=j].iter().sum::<u64>(), sizes[j])
}

pub fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

/// `w` in a random mix of upper and lower case.
pub fn rand_case(rng: &mut Rng, w: &str) -> Vec<u8> {
    match rng.below(4) {
        0 => w.to_ascii_lowercase().into_bytes(),
        1 => w
            .bytes()
            .map(|c| {
                if rng.chance(1, 2) {
                    c.to_ascii_lowercase()
                } else {
                    c
                }
            })
            .collect(),
        _ => b(w),
    }
}

/// Any key of the keyspace (other types included), now and then an odd one.
pub fn any_key(rng: &mut Rng) -> Vec<u8> {
    if rng.chance(1, 20) {
        return match rng.below(4) {
            0 => Vec::new(),
            1 => rng.some_bytes(1, 12),
            2 => vec![b'k'; 1 + rng.below(2048)],
            _ => b"\x00\xff\xc3\x28".to_vec(),
        };
    }
    let groups: [&[&str]; 10] = [
        LOCK_KEYS,
        BF_KEYS,
        CF_KEYS,
        RL_TOKEN_KEYS,
        RL_LEAKY_KEYS,
        RL_WINDOW_KEYS,
        RL_GCRA_KEYS,
        CACHE_KEYS,
        OTHER_KEYS,
        OTHER_KEYS,
    ];
    let g = rng.pick(&groups);
    b(rng.pick(g))
}

/// A malformed value: an extreme number, odd bytes, an option word or a key.
pub fn nasty(rng: &mut Rng) -> Vec<u8> {
    match rng.below(12) {
        0..=3 => b(rng.pick(NUMS)),
        4 => Vec::new(),
        5 => rng.some_bytes(1, 16),
        6 => rng.pick(&[
            b"\xff\xfe\xfd".to_vec(),
            b"\xc3\x28".to_vec(),
            b"\x80".to_vec(),
            b"\x00".to_vec(),
            b"a\x00b".to_vec(),
            b"\r\n".to_vec(),
            b"*1\r\n$4\r\nPING\r\n".to_vec(),
            b"%s%n".to_vec(),
        ]),
        7 => {
            let w = rng.pick(WORDS);
            rand_case(rng, w)
        }
        8 => any_key(rng),
        9 => {
            // Colon-separated numbers, as in the internal state commands.
            let n = rng.below(8);
            (0..n)
                .map(|_| rng.pick(NUMS).to_string())
                .collect::<Vec<_>>()
                .join(":")
                .into_bytes()
        }
        10 => vec![b'9'; 1 + rng.below(400)],
        _ => {
            if rng.chance(1, 10) {
                vec![b'x'; 1 + rng.below(64 * 1024)]
            } else {
                rng.some_bytes(0, 300)
            }
        }
    }
}

/// Generates command arguments; `p` is the percentage of values drawn malformed.
pub struct Gen {
    pub p: usize,
    pub now: i64,
}

impl Gen {
    pub fn val(&self, rng: &mut Rng, good: impl FnOnce(&mut Rng) -> Vec<u8>) -> Vec<u8> {
        if rng.below(100) < self.p {
            nasty(rng)
        } else {
            good(rng)
        }
    }

    pub fn key(&self, rng: &mut Rng, own: &[&str]) -> Vec<u8> {
        if self.p > 0 && rng.chance(1, 3) {
            any_key(rng)
        } else {
            b(rng.pick(own))
        }
    }

    pub fn owner(&self, rng: &mut Rng) -> Vec<u8> {
        self.val(rng, |r| r.pick(OWNERS).to_vec())
    }

    pub fn ttl(&self, rng: &mut Rng) -> Vec<u8> {
        self.val(rng, |r| {
            let t = match r.below(10) {
                0..=3 => 1 + r.below(200),
                4 => 1,
                _ => 1_000 + r.below(60_000),
            };
            t.to_string().into_bytes()
        })
    }

    pub fn int(&self, rng: &mut Rng, max: usize) -> Vec<u8> {
        self.val(rng, |r| r.below(max + 1).to_string().into_bytes())
    }

    /// A number from 1 to `max`.
    pub fn positive(&self, rng: &mut Rng, max: usize) -> Vec<u8> {
        self.val(rng, |r| (1 + r.below(max)).to_string().into_bytes())
    }

    pub fn word(&self, rng: &mut Rng, w: &str) -> Vec<u8> {
        self.val(rng, |r| rand_case(r, w))
    }

    pub fn pick(&self, rng: &mut Rng, from: &[&str]) -> Vec<u8> {
        self.val(rng, |r| b(r.pick(from)))
    }

    /// A rate: well-formed ones only in valid calls.
    pub fn rate(&self, rng: &mut Rng) -> Vec<u8> {
        let from = if self.p > 0 {
            RATES
        } else {
            &RATES[..GOOD_RATES]
        };
        self.pick(rng, from)
    }

    pub fn item(&self, rng: &mut Rng) -> Vec<u8> {
        self.val(rng, |r| {
            if r.chance(1, 8) {
                r.some_bytes(0, 40)
            } else {
                format!("i{}", r.below(300)).into_bytes()
            }
        })
    }

    /// `token:holds:deadline_ms`, as DLOCK._SET takes it.
    pub fn lock_state(&self, rng: &mut Rng) -> Vec<u8> {
        let now = self.now;
        let damage = self.p > 0;
        self.val(rng, |r| {
            let token = now * 1000 + r.below(1_000_000) as i64;
            let holds = 1 + r.below(4);
            let deadline = now + 100 + r.below(60_000) as i64;
            let mut parts = vec![token.to_string(), holds.to_string(), deadline.to_string()];
            if damage && r.chance(1, 3) {
                let i = r.below(3);
                parts[i] = r.pick(NUMS).to_string();
            }
            if damage && r.chance(1, 10) {
                parts.truncate(r.below(4));
            }
            parts.join(":").into_bytes()
        })
    }

    /// `kind:n:limits…:pxat_ms` (or the one-limit form of encoding version 1,
    /// `kind:f1:f2:f3:f4:pxat_ms`), as RL._SET takes it.
    pub fn limiter_state(&self, rng: &mut Rng, kind: usize) -> Vec<u8> {
        let now = self.now;
        let damage = self.p > 0;
        self.val(rng, |r| {
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
            if damage && r.chance(1, 3) {
                let i = r.below(parts.len());
                parts[i] = r.pick(NUMS).to_string();
            }
            if damage && r.chance(1, 10) {
                parts.truncate(r.below(6));
            }
            parts.join(":").into_bytes()
        })
    }

    /// `version:fresh_until:stale_until:lease:lease_until`, as CACHE._SET
    /// and CACHE._META take it.
    pub fn cache_meta(&self, rng: &mut Rng, with_value: bool) -> Vec<u8> {
        let now = self.now;
        let damage = self.p > 0;
        self.val(rng, |r| {
            let fresh =
                now + 50 + r.below(2_000) as i64 + if r.chance(1, 2) { LONG_TTL_MS } else { 0 };
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
            let mut parts = vec![
                version.to_string(),
                fresh.to_string(),
                stale.to_string(),
                token.to_string(),
                until.to_string(),
            ];
            if damage && r.chance(1, 3) {
                let i = r.below(parts.len());
                parts[i] = r.pick(NUMS).to_string();
            }
            if damage && r.chance(1, 10) {
                parts.truncate(r.below(5));
            }
            parts.join(":").into_bytes()
        })
    }
}

/// Every warden command the fuzzer knows: the ones here, then each family
/// file's.
pub static COMMANDS: std::sync::LazyLock<Vec<&str>> =
    std::sync::LazyLock::new(|| [BASE_COMMANDS, CF_COMMANDS, CMS_COMMANDS, TOPK_COMMANDS].concat());

/// The commands of the families without a file of their own.
const BASE_COMMANDS: &[&str] = &[
    "DLOCK.ACQUIRE",
    "DLOCK.RELEASE",
    "DLOCK.EXTEND",
    "DLOCK.INFO",
    "DLOCK.GUARD",
    "DLOCK._SET",
    "DLOCK._SETS",
    "DLOCK._FENCE",
    "BF.RESERVEX",
    "BF.ADDX",
    "BF.MADDX",
    "BF.EXISTSX",
    "BF.MEXISTSX",
    "BF.INSERTX",
    "BF.INFOX",
    "BF.CARDX",
    "BF._LOADX",
    "BF._ADDATX",
    "BF.SCANDUMPX",
    "BF.LOADCHUNKX",
    "RL.TOKEN",
    "RL.LEAKY",
    "RL.WINDOW",
    "RL.GCRA",
    "RL._SET",
    "CACHE.SET",
    "CACHE.GET",
    "CACHE.INFO",
    "CACHE._SET",
    "CACHE._META",
];

/// A value generator: one word for an argument, given the words of the call drawn
/// before it (`drawn`, the key first), which some values agree with.
pub type WordGen = fn(&Gen, &mut Rng, &[Vec<u8>]) -> Vec<u8>;

/// A generator of the words that end a call, given those drawn before them.
pub type RestGen = fn(&Gen, &mut Rng, &[Vec<u8>]) -> Vec<Vec<u8>>;

/// What the fuzzer puts in an argument `COMMAND DOCS` names.
#[derive(Clone, Copy)]
pub enum Fill {
    /// One word.
    Word(WordGen),
    /// Every word from this argument to the end of the call, where the tree does not
    /// say what comes (DLOCK.GUARD's wrapped command and its arguments).
    Rest(RestGen),
}

use Fill::{Rest, Word};

/// The fuzzer's values, by command and argument (named as `COMMAND DOCS` names it):
/// the row of the command itself wins over its family's (`BF.`), which wins over
/// every command's (`*`). Only values: which arguments a call has comes from the docs.
/// The rows here, then each family file's.
pub static VALUES: std::sync::LazyLock<Vec<(&str, &str, Fill)>> =
    std::sync::LazyLock::new(|| [BASE_VALUES, CF_VALUES, CMS_VALUES, TOPK_VALUES].concat());

/// The values of the families without a file of their own.
const BASE_VALUES: &[(&str, &str, Fill)] = &[
    ("*", "ttl_ms", Word(|g, r, _| g.ttl(r))),
    ("*", "timeout_ms", Word(|g, r, _| g.positive(r, 50))),
    ("DLOCK.", "key", Word(|g, r, _| g.key(r, LOCK_KEYS))),
    ("DLOCK.", "owner", Word(|g, r, _| g.owner(r))),
    ("DLOCK.", "t", Word(fencing_token)),
    ("DLOCK.ACQUIRE", "n", Word(|g, r, _| g.positive(r, 3))),
    ("DLOCK.GUARD", "token", Word(fencing_token)),
    ("DLOCK.GUARD", "command", Rest(guarded)),
    ("DLOCK._SET", "state", Word(|g, r, _| g.lock_state(r))),
    ("DLOCK._SETS", "limit:floor:expiry", Word(set_limit)),
    ("DLOCK._SETS", "holders", Word(set_holders)),
    ("DLOCK._FENCE", "floor", Word(fence_floor)),
    ("BF.", "key", Word(|g, r, _| g.key(r, BF_KEYS))),
    ("BF.", "item", Word(|g, r, _| g.item(r))),
    ("BF.", "error_rate", Word(|g, r, _| g.pick(r, ERROR_RATES))),
    ("BF.", "capacity", Word(|g, r, _| g.pick(r, CAPACITIES))),
    ("BF.", "expansion", Word(|g, r, _| g.pick(r, EXPANSIONS))),
    ("BF.", "window_ms", Word(|g, r, _| g.pick(r, WINDOWS))),
    ("BF.INFOX", "field", Word(info_field)),
    ("BF._ADDATX", "unix_ms", Word(added_at)),
    ("BF._LOADX", "index", Word(|g, r, _| g.int(r, 3))),
    (
        "BF._LOADX",
        "layer_error",
        Word(|g, r, _| g.pick(r, LAYER_RATES)),
    ),
    ("BF._LOADX", "hashes", Word(|g, r, _| g.int(r, 20))),
    ("BF._LOADX", "items", Word(|g, r, _| g.int(r, 100))),
    ("BF._LOADX", "bits", Word(layer_bits)),
    ("BF._LOADX", "opened", Word(block_opened)),
    ("BF._LOADX", "word_offset", Word(|g, r, _| g.int(r, 64))),
    ("BF._LOADX", "bytes", Word(layer_words)),
    ("BF.SCANDUMPX", "iterator", Word(scan_iterator)),
    ("BF.LOADCHUNKX", "iterator", Word(chunk_iterator)),
    ("BF.LOADCHUNKX", "data", Word(chunk_data)),
    ("RL.TOKEN", "key", Word(|g, r, _| g.key(r, RL_TOKEN_KEYS))),
    ("RL.LEAKY", "key", Word(|g, r, _| g.key(r, RL_LEAKY_KEYS))),
    ("RL.WINDOW", "key", Word(|g, r, _| g.key(r, RL_WINDOW_KEYS))),
    ("RL.GCRA", "key", Word(|g, r, _| g.key(r, RL_GCRA_KEYS))),
    ("RL._SET", "key", Word(limiter_key)),
    ("RL.", "rate", Word(|g, r, _| g.rate(r))),
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
    ("CACHE._SET", "state", Word(|g, r, _| g.cache_meta(r, true))),
    ("CACHE._META", "state", Word(meta_state)),
];

/// Error rates of a filter's layers: tighter than the filter's, as the module sizes them.
const LAYER_RATES: &[&str] = &["0.005", "0.01", "0.0025", "0.05"];

/// The `VALUES` row for argument `arg` of command `name`, if any.
pub fn value_row(name: &str, arg: &str) -> Option<usize> {
    let rank = |scope: &str| {
        if scope == name {
            Some(0)
        } else if scope.ends_with('.') && name.starts_with(scope) {
            Some(1)
        } else {
            (scope == "*").then_some(2)
        }
    };
    (0..VALUES.len())
        .filter(|&i| VALUES[i].1 == arg)
        .filter_map(|i| Some((rank(VALUES[i].0)?, i)))
        .min()
        .map(|(_, i)| i)
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
/// warden command, a blocking one, MULTI, or a guard of the same lock inside.
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

/// A field of BF.INFOX.
fn info_field(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let w = rng.pick(&[
        "CAPACITY",
        "SIZE",
        "FILTERS",
        "ITEMS",
        "EXPANSION",
        "ERROR",
        "WINDOW",
    ]);
    g.word(rng, w)
}

/// BF._ADDATX's time: within two seconds of now.
fn added_at(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let at = g.now + rng.below(4_000) as i64 - 2_000;
    g.val(rng, |_| at.to_string().into_bytes())
}

/// A number of `word`, if it is one.
fn number<T: std::str::FromStr>(word: &[u8]) -> Option<T> {
    std::str::from_utf8(word).ok()?.parse().ok()
}

/// A layer's bits (`LAYER … capacity layer_error hashes items bits`): mostly the size
/// the module gives the capacity and error drawn before them, else a multiple of 64.
fn layer_bits(g: &Gen, rng: &mut Rng, drawn: &[Vec<u8>]) -> Vec<u8> {
    let n = drawn.len();
    let sized = (n >= 4)
        .then(|| Some((number::<u64>(&drawn[n - 4])?, number::<f64>(&drawn[n - 3])?)))
        .flatten()
        .and_then(|(capacity, rate)| dump_layer_bytes(capacity, rate).checked_mul(8));
    g.val(rng, |r| {
        let bits = match sized {
            Some(bits) if r.chance(3, 4) => bits,
            _ => 64 * (1 + r.below(64) as u64),
        };
        bits.to_string().into_bytes()
    })
}

/// When an aging filter's block opened: in the last ten seconds.
fn block_opened(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let opened = g.now - rng.below(10_000) as i64;
    g.val(rng, |_| opened.to_string().into_bytes())
}

/// Little-endian 64-bit words of a layer (`BITS … bytes`).
pub fn layer_words(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    g.val(rng, |r| {
        let words = r.pick(&[0usize, 1, 2, 8, 64, 512]);
        r.bytes(8 * words)
    })
}

/// A BF.SCANDUMPX iterator: the start, a chunk's, or past the end.
fn scan_iterator(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    g.val(rng, |r| {
        let (it, _) = dump_chunk(r.below(DUMP_SHAPES.len()), r.below(2));
        let it = r.pick(&[0, 0, 1, it, it + 8, 1 << 40]);
        it.to_string().into_bytes()
    })
}

/// A BF.LOADCHUNKX iterator: the header's (1), or a chunk's of a `DUMP_SHAPES` filter.
fn chunk_iterator(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let s = rng.below(DUMP_SHAPES.len());
    let it = if rng.chance(1, 2) {
        1
    } else {
        dump_chunk(s, rng.below(2)).0
    };
    g.val(rng, |_| it.to_string().into_bytes())
}

/// BF.LOADCHUNKX's data for the iterator drawn before it: a header after 1, bytes of
/// the chunk's length after a chunk's iterator, else any bytes.
fn chunk_data(g: &Gen, rng: &mut Rng, drawn: &[Vec<u8>]) -> Vec<u8> {
    let it = drawn.last().and_then(|w| number::<u64>(w));
    let s = rng.below(DUMP_SHAPES.len());
    let chunk = (0..DUMP_SHAPES.len())
        .flat_map(|s| (0..2).map(move |j| dump_chunk(s, j)))
        .find(|&(at, _)| Some(at) == it);
    g.val(rng, |r| match (it, chunk) {
        (Some(1), _) => dump_header(s, r.below(30) as u64),
        (_, Some((_, len))) => r.bytes(len as usize),
        _ => {
            let words = r.below(64);
            r.bytes(8 * words)
        }
    })
}

/// Limiter keys of each kind: 1 token, 2 leaky, 3 GCRA, 4 window (RL._SET's states).
const LIMITER_KEYS: [&[&str]; 4] = [RL_TOKEN_KEYS, RL_LEAKY_KEYS, RL_GCRA_KEYS, RL_WINDOW_KEYS];

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
    g.limiter_state(rng, kind)
}

/// CACHE._META's state: of an entry with a value half the time, else of a lease alone.
fn meta_state(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let with_value = rng.chance(1, 2);
    g.cache_meta(rng, with_value)
}

/// CACHE.SET's `LEASE` token: near the tokens issued now.
fn lease_token(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    g.val(rng, |r| {
        (g.now * 1000 + r.below(1_000_000) as i64)
            .to_string()
            .into_bytes()
    })
}

/// Structural damage: arities, duplicates, insertions, swaps.
pub fn mutate(rng: &mut Rng, a: &mut Vec<Vec<u8>>) {
    for _ in 0..1 + rng.below(3) {
        match rng.below(8) {
            0 => a.truncate(rng.below(a.len() + 1)),
            1 if !a.is_empty() => {
                a.remove(rng.below(a.len()));
            }
            2 if !a.is_empty() => {
                let i = rng.below(a.len());
                let v = a[i].clone();
                a.insert(i, v);
            }
            3 => {
                let v = nasty(rng);
                a.insert(rng.below(a.len() + 1), v);
            }
            4 if !a.is_empty() => {
                let i = rng.below(a.len());
                a[i] = nasty(rng);
            }
            5 => {
                for _ in 0..1 + rng.below(6) {
                    a.push(nasty(rng));
                }
            }
            6 if a.len() > 1 => {
                let (i, j) = (rng.below(a.len()), rng.below(a.len()));
                a.swap(i, j);
            }
            _ => {
                let w = rng.pick(WORDS);
                let w = rand_case(rng, w);
                a.insert(rng.below(a.len() + 1), w);
            }
        }
    }
}
