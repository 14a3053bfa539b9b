//! A deterministic, grammar-driven command fuzzer for every warden command, run against
//! a master with a replica (`--propagation-error-behavior panic`, so an effect the
//! replica rejects kills it and the test notices).
//!
//! Fuzzed commands (random arities, non-UTF-8 and empty bytes, extreme numbers, option
//! words in random order, case and number, keys of the wrong type) are interleaved with
//! valid traffic (locks acquired, waited for and released, filters added to, limiters
//! called), MULTI blocks, scripts and native key operations (DEL, COPY, RENAME, DUMP /
//! RESTORE, MOVE, SWAPDB, expiries) on a small keyspace. Every reply must parse; the
//! servers must stay up; at the end the replica's `DEBUG DIGEST` equals the master's,
//! and `DEBUG RELOAD` leaves it unchanged.
//!
//! `WARDEN_FUZZ_SEED` (default fixed) and `WARDEN_FUZZ_COMMANDS` (default 20000) control
//! a run. `DLOCK.ACQUIRE … WAIT` is only ever sent with a timeout of at most 50 ms
//! outside MULTI and scripts, so nothing can block for long.

mod common;
use common::payload::Rng;
use common::*;

use redis::ConnectionLike;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const DEFAULT_SEED: u64 = 0x00f0_22ed_2026_0001;
const DEFAULT_COMMANDS: u64 = 20_000;
/// Filters on the fuzzed master are capped (the replica applies what it is sent).
const BF_MAX_BYTES: &str = "4194304";
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Every key in the final comparison lives at least this long.
const LONG_TTL_MS: i64 = 3_600_000;
/// A blocked acquire (WAIT of at most 50 ms, a holder lease of at most 220 ms) has
/// answered long before this.
const WAITER_REPLY: Duration = Duration::from_millis(1_500);
/// Unanswered waiters recorded before waiter rounds avoid the timing that loses them.
const MAX_LOST: usize = 3;

const LOCK_KEYS: &[&str] = &["lk:0", "lk:1", "lk:2", "{lk}:3"];
const BF_KEYS: &[&str] = &["bf:0", "bf:1", "bf:2", "bf:ns"];
const RL_TOKEN_KEYS: &[&str] = &["rl:t:0", "rl:t:1"];
const RL_LEAKY_KEYS: &[&str] = &["rl:l:0", "rl:l:1"];
const RL_WINDOW_KEYS: &[&str] = &["rl:w:0", "rl:w:1"];
const RL_GCRA_KEYS: &[&str] = &["rl:g:0", "rl:g:1"];
const OTHER_KEYS: &[&str] = &["str:0", "list:0", "hash:0", "new:0", "new:1", "{new}:2"];

const OWNERS: &[&[u8]] = &[
    b"o1",
    b"o2",
    b"o3",
    b"host:1234:thread-7",
    b"\xff\xfe\x00bin",
];

/// Extreme and malformed numbers.
const NUMS: &[&str] = &[
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

/// Every option word of every command (plus look-alikes).
const WORDS: &[&str] = &[
    "WAIT",
    "EXPANSION",
    "NONSCALING",
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
    "WAITX",
    "ITEM",
    "COSTS",
];

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

const ERROR_RATES: &[&str] = &["0.01", "0.001", "0.1", "0.5", "0.9999", "1e-5", "0.25"];
const CAPACITIES: &[&str] = &["1", "2", "10", "100", "1000", "20000"];
const EXPANSIONS: &[&str] = &["1", "2", "4", "32768"];

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

/// `w` in a random mix of upper and lower case.
fn rand_case(rng: &mut Rng, w: &str) -> Vec<u8> {
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
fn any_key(rng: &mut Rng) -> Vec<u8> {
    if rng.chance(1, 20) {
        return match rng.below(4) {
            0 => Vec::new(),
            1 => rng.some_bytes(1, 12),
            2 => vec![b'k'; 1 + rng.below(2048)],
            _ => b"\x00\xff\xc3\x28".to_vec(),
        };
    }
    let groups: [&[&str]; 8] = [
        LOCK_KEYS,
        BF_KEYS,
        RL_TOKEN_KEYS,
        RL_LEAKY_KEYS,
        RL_WINDOW_KEYS,
        RL_GCRA_KEYS,
        OTHER_KEYS,
        OTHER_KEYS,
    ];
    let g = rng.pick(&groups);
    b(rng.pick(g))
}

/// A malformed value: an extreme number, odd bytes, an option word or a key.
fn nasty(rng: &mut Rng) -> Vec<u8> {
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

/// Generates an option's value.
type ValueGen = fn(&Gen, &mut Rng) -> Vec<u8>;

/// Generates command arguments; `p` is the percentage of values drawn malformed.
struct Gen {
    p: usize,
    now: i64,
}

impl Gen {
    fn val(&self, rng: &mut Rng, good: impl FnOnce(&mut Rng) -> Vec<u8>) -> Vec<u8> {
        if rng.below(100) < self.p {
            nasty(rng)
        } else {
            good(rng)
        }
    }

    fn key(&self, rng: &mut Rng, own: &[&str]) -> Vec<u8> {
        if self.p > 0 && rng.chance(1, 3) {
            any_key(rng)
        } else {
            b(rng.pick(own))
        }
    }

    fn owner(&self, rng: &mut Rng) -> Vec<u8> {
        self.val(rng, |r| r.pick(OWNERS).to_vec())
    }

    fn ttl(&self, rng: &mut Rng) -> Vec<u8> {
        self.val(rng, |r| {
            let t = match r.below(10) {
                0..=3 => 1 + r.below(200),
                4 => 1,
                _ => 1_000 + r.below(60_000),
            };
            t.to_string().into_bytes()
        })
    }

    fn int(&self, rng: &mut Rng, max: usize) -> Vec<u8> {
        self.val(rng, |r| r.below(max + 1).to_string().into_bytes())
    }

    fn word(&self, rng: &mut Rng, w: &str) -> Vec<u8> {
        self.val(rng, |r| rand_case(r, w))
    }

    fn pick(&self, rng: &mut Rng, from: &[&str]) -> Vec<u8> {
        self.val(rng, |r| b(r.pick(from)))
    }

    /// A rate: well-formed ones only in valid calls.
    fn rate(&self, rng: &mut Rng) -> Vec<u8> {
        let from = if self.p > 0 {
            RATES
        } else {
            &RATES[..GOOD_RATES]
        };
        self.pick(rng, from)
    }

    fn item(&self, rng: &mut Rng) -> Vec<u8> {
        self.val(rng, |r| {
            if r.chance(1, 8) {
                r.some_bytes(0, 40)
            } else {
                format!("i{}", r.below(300)).into_bytes()
            }
        })
    }

    fn items(&self, rng: &mut Rng, at_least: usize) -> Vec<Vec<u8>> {
        let spread = if rng.chance(1, 10) { 200 } else { 12 };
        let n = at_least + rng.below(spread);
        (0..n).map(|_| self.item(rng)).collect()
    }

    /// `token:holds:deadline_ms`, as DLOCK._SET takes it.
    fn lock_state(&self, rng: &mut Rng) -> Vec<u8> {
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

    /// `kind:f1:f2:f3:f4:pxat_ms`, as RL._SET takes it.
    fn limiter_state(&self, rng: &mut Rng, kind: usize) -> Vec<u8> {
        let now = self.now;
        let damage = self.p > 0;
        self.val(rng, |r| {
            let mut parts: Vec<String> = if kind == 4 {
                vec![
                    (now - r.below(10_000) as i64).to_string(),
                    (1 + r.below(60_000)).to_string(),
                    r.below(100).to_string(),
                    r.below(100).to_string(),
                ]
            } else {
                let deficit: u128 = if r.chance(1, 5) {
                    u128::from(r.next()) << r.below(60)
                } else {
                    u128::from(r.next() % 1_000_000_000_000)
                };
                vec![
                    (now - r.below(10_000) as i64).to_string(),
                    deficit.to_string(),
                    (1 + r.next() % 1_000_000_000_000).to_string(),
                    (1 + r.next() % 1_000_000_000).to_string(),
                ]
            };
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

    /// Options `(word, value generator)` in random order, case and number.
    fn options(&self, rng: &mut Rng, opts: &[(&str, Option<ValueGen>)]) -> Vec<Vec<u8>> {
        let mut chosen: Vec<usize> = (0..opts.len()).filter(|_| rng.chance(1, 3)).collect();
        if self.p > 0 && rng.chance(1, 6) && !opts.is_empty() {
            chosen.push(rng.below(opts.len()));
        }
        for i in (1..chosen.len()).rev() {
            let j = rng.below(i + 1);
            chosen.swap(i, j);
        }
        let mut out = Vec::new();
        for i in chosen {
            let (w, v) = opts[i];
            out.push(self.word(rng, w));
            if let Some(v) = v {
                out.push(v(self, rng));
            }
        }
        out
    }
}

fn g_timeout(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    g.val(rng, |r| (1 + r.below(50)).to_string().into_bytes())
}
fn g_expansion(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    g.pick(rng, EXPANSIONS)
}
fn g_capacity(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    g.pick(rng, CAPACITIES)
}
fn g_error(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    g.pick(rng, ERROR_RATES)
}
fn g_cost(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    g.int(rng, 5)
}
fn g_maxwait(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    g.int(rng, 5_000)
}

/// Every warden command the fuzzer knows.
const COMMANDS: &[&str] = &[
    "DLOCK.ACQUIRE",
    "DLOCK.RELEASE",
    "DLOCK.EXTEND",
    "DLOCK.INFO",
    "DLOCK._SET",
    "BF.RESERVEX",
    "BF.ADDX",
    "BF.MADDX",
    "BF.EXISTSX",
    "BF.MEXISTSX",
    "BF.INSERTX",
    "BF.INFOX",
    "BF.CARDX",
    "BF._LOADX",
    "RL.TOKEN",
    "RL.LEAKY",
    "RL.WINDOW",
    "RL.GCRA",
    "RL._SET",
];

/// Arguments (after the name) of a plausible call of `name`.
fn grammar(g: &Gen, rng: &mut Rng, name: &str) -> Vec<Vec<u8>> {
    let mut a: Vec<Vec<u8>> = Vec::new();
    match name {
        "DLOCK.ACQUIRE" => {
            a.push(g.key(rng, LOCK_KEYS));
            a.push(g.owner(rng));
            a.push(g.ttl(rng));
            a.extend(g.options(rng, &[("WAIT", Some(g_timeout))]));
        }
        "DLOCK.RELEASE" => {
            a.push(g.key(rng, LOCK_KEYS));
            a.push(g.owner(rng));
        }
        "DLOCK.EXTEND" => {
            a.push(g.key(rng, LOCK_KEYS));
            a.push(g.owner(rng));
            a.push(g.ttl(rng));
        }
        "DLOCK.INFO" => a.push(g.key(rng, LOCK_KEYS)),
        "DLOCK._SET" => {
            a.push(g.key(rng, LOCK_KEYS));
            a.push(g.owner(rng));
            a.push(g.lock_state(rng));
        }
        "BF.RESERVEX" => {
            a.push(g.key(rng, BF_KEYS));
            a.push(g.pick(rng, ERROR_RATES));
            a.push(g.pick(rng, CAPACITIES));
            a.extend(g.options(
                rng,
                &[("EXPANSION", Some(g_expansion)), ("NONSCALING", None)],
            ));
        }
        "BF.ADDX" | "BF.EXISTSX" => {
            a.push(g.key(rng, BF_KEYS));
            a.push(g.item(rng));
        }
        "BF.MADDX" | "BF.MEXISTSX" => {
            a.push(g.key(rng, BF_KEYS));
            a.extend(g.items(rng, 1));
        }
        "BF.INSERTX" => {
            a.push(g.key(rng, BF_KEYS));
            a.extend(g.options(
                rng,
                &[
                    ("CAPACITY", Some(g_capacity)),
                    ("ERROR", Some(g_error)),
                    ("EXPANSION", Some(g_expansion)),
                    ("NOCREATE", None),
                    ("NONSCALING", None),
                ],
            ));
            a.push(g.word(rng, "ITEMS"));
            a.extend(g.items(rng, 1));
        }
        "BF.INFOX" => {
            a.push(g.key(rng, BF_KEYS));
            if rng.chance(1, 2) {
                let w = rng.pick(&["CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION", "ERROR"]);
                a.push(g.word(rng, w));
            }
        }
        "BF.CARDX" => a.push(g.key(rng, BF_KEYS)),
        "BF._LOADX" => {
            a.push(g.key(rng, BF_KEYS));
            if rng.chance(1, 2) {
                a.push(g.word(rng, "LAYER"));
                a.push(g.pick(rng, ERROR_RATES));
                a.push(g.pick(rng, EXPANSIONS));
                a.push(g.int(rng, 3));
                a.push(g.pick(rng, CAPACITIES));
                a.push(g.pick(rng, &["0.005", "0.01", "0.0025", "0.05"]));
                a.push(g.int(rng, 20));
                a.push(g.int(rng, 100));
            } else {
                a.push(g.word(rng, "BITS"));
                a.push(g.int(rng, 3));
                a.push(g.int(rng, 64));
                a.push(g.val(rng, |r| {
                    let words = r.pick(&[0usize, 1, 2, 8, 64, 512]);
                    r.bytes(8 * words)
                }));
            }
        }
        "RL.TOKEN" => {
            a.push(g.key(rng, RL_TOKEN_KEYS));
            a.push(g.rate(rng));
            a.push(g.int(rng, 20));
            a.extend(g.options(rng, &[("COST", Some(g_cost)), ("MAXWAIT", Some(g_maxwait))]));
        }
        "RL.LEAKY" => {
            a.push(g.key(rng, RL_LEAKY_KEYS));
            a.push(g.rate(rng));
            a.push(g.val(rng, |r| (1 + r.below(20)).to_string().into_bytes()));
            a.extend(g.options(rng, &[("COST", Some(g_cost))]));
        }
        "RL.WINDOW" => {
            a.push(g.key(rng, RL_WINDOW_KEYS));
            a.push(g.val(rng, |r| (1 + r.below(20)).to_string().into_bytes()));
            a.push(g.val(rng, |r| (1 + r.below(5_000)).to_string().into_bytes()));
            a.extend(g.options(rng, &[("COST", Some(g_cost))]));
        }
        "RL.GCRA" => {
            a.push(g.key(rng, RL_GCRA_KEYS));
            a.push(g.int(rng, 20));
            a.push(g.val(rng, |r| (1 + r.below(100)).to_string().into_bytes()));
            a.push(g.val(rng, |r| (1 + r.below(60)).to_string().into_bytes()));
            a.extend(g.options(rng, &[("QUANTITY", Some(g_cost))]));
        }
        "RL._SET" => {
            // Kinds 1 token, 2 leaky, 3 GCRA, 4 window, each on its own keys.
            let kind = 1 + rng.below(4);
            let keys = [RL_TOKEN_KEYS, RL_LEAKY_KEYS, RL_GCRA_KEYS, RL_WINDOW_KEYS][kind - 1];
            a.push(g.key(rng, keys));
            a.push(g.limiter_state(rng, kind));
        }
        other => unreachable!("{other}"),
    }
    a
}

/// Structural damage: arities, duplicates, insertions, swaps.
fn mutate(rng: &mut Rng, a: &mut Vec<Vec<u8>>) {
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

/// Timeouts that are safe to send outside MULTI: at most 50 ms, or not a number.
const SAFE_TIMEOUTS: &[&str] = &[
    "1", "2", "5", "10", "20", "50", "-1", "-50", "abc", "", "1ms", "five",
];

/// Makes every value after a `WAIT` word a safe timeout (never 0, never long).
fn sanitize_wait(rng: &mut Rng, a: &mut [Vec<u8>]) {
    for i in 0..a.len().saturating_sub(1) {
        if a[i].eq_ignore_ascii_case(b"WAIT")
            && !SAFE_TIMEOUTS.iter().any(|s| s.as_bytes() == a[i + 1])
        {
            a[i + 1] = b(rng.pick(SAFE_TIMEOUTS));
        }
    }
}

fn show(name: &[u8], args: &[Vec<u8>]) -> String {
    let mut s = escape(name);
    for a in args {
        s.push(' ');
        if a.len() > 120 {
            s.push_str(&format!("<{} bytes: {}…>", a.len(), escape(&a[..40])));
        } else {
            s.push('"');
            s.push_str(&escape(a));
            s.push('"');
        }
    }
    s
}

fn build(name: &[u8], args: &[Vec<u8>]) -> redis::Cmd {
    let mut c = redis::Cmd::new();
    c.arg(name);
    for a in args {
        c.arg(&a[..]);
    }
    c
}

/// Error replies in `v`, nested ones included.
fn errors_in(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::ServerError(_) => out.push(err_of(v).unwrap_or_default()),
        Value::Array(a) | Value::Set(a) | Value::Push { data: a, .. } => {
            a.iter().for_each(|x| errors_in(x, out))
        }
        Value::Map(m) => m.iter().for_each(|(k, x)| {
            errors_in(k, out);
            errors_in(x, out);
        }),
        Value::Attribute { data, .. } => errors_in(data, out),
        _ => {}
    }
}

fn is_int01(v: &Value) -> bool {
    matches!(v, Value::Int(0) | Value::Int(1))
}

/// What a valid call must answer when it does not answer an error.
#[derive(Clone, Copy, Debug)]
enum Shape {
    TokenOrNil,
    Int01,
    IntNonNeg,
    Ok,
    LockInfo,
    Flags(usize),
    FilterInfo,
    Four,
    Five,
    Any,
}

fn fits(shape: Shape, v: &Value) -> bool {
    match shape {
        Shape::TokenOrNil => matches!(v, Value::Nil) || matches!(v, Value::Int(t) if *t > 0),
        Shape::Int01 => is_int01(v),
        Shape::IntNonNeg => matches!(v, Value::Int(n) if *n >= 0),
        Shape::Ok => matches!(v, Value::Okay) || *v == Value::SimpleString("OK".into()),
        Shape::LockInfo => match v {
            Value::Nil => true,
            Value::Array(a) => a.len() == 10,
            Value::Map(m) => m.len() == 5,
            _ => false,
        },
        Shape::Flags(n) => match v {
            Value::Array(a) => {
                a.len() == n
                    && a.iter()
                        .all(|x| is_int01(x) || matches!(x, Value::ServerError(_)))
            }
            _ => false,
        },
        Shape::FilterInfo => match v {
            Value::Array(a) => a.len() == 12,
            Value::Map(m) => m.len() == 6,
            _ => false,
        },
        Shape::Four => match v {
            Value::Array(a) => {
                a.len() == 4 && a.iter().all(|x| matches!(x, Value::Int(_))) && is_int01(&a[0])
            }
            _ => false,
        },
        Shape::Five => match v {
            Value::Array(a) => {
                a.len() == 5 && a.iter().all(|x| matches!(x, Value::Int(_))) && is_int01(&a[0])
            }
            _ => false,
        },
        Shape::Any => true,
    }
}

/// Which server and protocol a command goes to.
#[derive(Clone, Copy, Debug, PartialEq)]
enum To {
    Master,
    Master3,
    Replica,
}

struct Fuzz {
    rng: Rng,
    seed: u64,
    m: Server,
    r: Server,
    con: Connection,
    con3: Connection,
    rcon: Connection,
    waiters: Vec<Connection>,
    history: VecDeque<String>,
    sent: u64,
    errors: u64,
    internal: Vec<String>,
    odd_codes: Vec<String>,
    wrong_shapes: Vec<String>,
    /// Blocked acquires that never got a reply.
    lost: Vec<String>,
    /// Error replies by message.
    by_message: HashMap<String, u64>,
    /// Valid calls sent, and how many of them answered an error.
    valid: (u64, u64),
    /// Acquires sent with WAIT from the waiter connections.
    blocked_waits: u64,
}

fn timed(con: Connection) -> Connection {
    con.set_read_timeout(Some(READ_TIMEOUT))
        .expect("read timeout");
    con.set_write_timeout(Some(READ_TIMEOUT))
        .expect("write timeout");
    con
}

impl Fuzz {
    fn note(&mut self, to: To, text: String) {
        if self.history.len() == 25 {
            self.history.pop_front();
        }
        self.history.push_back(format!("{to:?}: {text}"));
    }

    /// Panics with everything needed to reproduce a failure.
    fn fail(&mut self, what: &str) -> ! {
        let m_alive = self.m.is_alive();
        let r_alive = self.r.is_alive();
        panic!(
            "fuzz failure (seed {:#x}, after {} commands): {what}\n\
             master alive: {m_alive}, replica alive: {r_alive}\n\
             last commands:\n  {}\n\
             master log tail:\n{}\n\
             replica log tail:\n{}",
            self.seed,
            self.sent,
            self.history
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join("\n  "),
            self.m.log_tail(30),
            self.r.log_tail(30),
        )
    }

    fn send(&mut self, to: To, name: &[u8], args: &[Vec<u8>]) -> Value {
        let text = show(name, args);
        self.note(to, text.clone());
        self.sent += 1;
        let c = build(name, args);
        let res = match to {
            To::Master => self.con.req_command(&c),
            To::Master3 => self.con3.req_command(&c),
            To::Replica => self.rcon.req_command(&c),
        };
        match res {
            Ok(v) => {
                self.inspect(&text, &v);
                v
            }
            Err(e) => self.fail(&format!(
                "no valid reply to {to:?} `{text}`: {e} (kind {:?})",
                e.kind()
            )),
        }
    }

    /// Counts errors and records the ones a warden command must never send.
    fn inspect(&mut self, text: &str, v: &Value) {
        let mut errs = Vec::new();
        errors_in(v, &mut errs);
        self.errors += errs.len() as u64;
        for e in errs {
            let short: String = e.chars().take(70).collect();
            *self.by_message.entry(short).or_default() += 1;
            let code = e.split(' ').next().unwrap_or("");
            if e.contains("internal error in warden") {
                if self.internal.len() < 20 {
                    self.internal.push(format!("{text} -> {e}"));
                }
            } else if !matches!(
                code,
                "ERR" | "WRONGTYPE" | "READONLY" | "EXECABORT" | "NOSCRIPT" | "BUSYKEY" | "OOM"
            ) && self.odd_codes.len() < 20
            {
                self.odd_codes.push(format!("{text} -> {e}"));
            }
        }
    }

    fn expect(&mut self, shape: Shape, to: To, name: &str, args: &[Vec<u8>]) -> Value {
        let v = self.send(to, name.as_bytes(), args);
        self.valid.0 += 1;
        if err_of(&v).is_some() {
            self.valid.1 += 1;
        }
        if err_of(&v).is_none() && !fits(shape, &v) && self.wrong_shapes.len() < 20 {
            self.wrong_shapes.push(format!(
                "{} -> {v:?} (want {shape:?})",
                show(name.as_bytes(), args)
            ));
        }
        v
    }

    fn target(&mut self) -> To {
        match self.rng.below(20) {
            0 => To::Replica,
            1..=3 => To::Master3,
            _ => To::Master,
        }
    }

    /// One fuzzed warden command.
    fn fuzzed(&mut self, in_tx: bool) -> (Vec<u8>, Vec<Vec<u8>>) {
        let now = now_ms();
        let name = self.rng.pick(COMMANDS);
        let g = Gen {
            p: 5 + self.rng.below(45),
            now,
        };
        let mut args = grammar(&g, &mut self.rng, name);
        if self.rng.chance(2, 5) {
            mutate(&mut self.rng, &mut args);
        }
        if self.rng.chance(1, 50) {
            args.clear();
        }
        if !in_tx {
            sanitize_wait(&mut self.rng, &mut args);
        }
        let name = if self.rng.chance(1, 4) {
            rand_case(&mut self.rng, name)
        } else {
            b(name)
        };
        (name, args)
    }

    fn fuzz_step(&mut self) {
        let to = self.target();
        let (name, args) = self.fuzzed(false);
        self.send(to, &name, &args);
    }

    /// A valid call of a random command.
    fn valid_step(&mut self) {
        let g = Gen {
            p: 0,
            now: now_ms(),
        };
        let to = if self.rng.chance(1, 8) {
            To::Master3
        } else {
            To::Master
        };
        let name = self.rng.pick(COMMANDS);
        if name.ends_with("_SET") || name == "BF._LOADX" {
            // The internal commands with well-formed states.
            let args = grammar(&g, &mut self.rng, name);
            self.send(to, name.as_bytes(), &args);
            return;
        }
        let args = grammar(&g, &mut self.rng, name);
        let shape = match name {
            "DLOCK.ACQUIRE" => Shape::TokenOrNil,
            "DLOCK.RELEASE" | "DLOCK.EXTEND" | "BF.ADDX" | "BF.EXISTSX" => Shape::Int01,
            "DLOCK.INFO" => Shape::LockInfo,
            "BF.RESERVEX" => Shape::Ok,
            "BF.MADDX" | "BF.MEXISTSX" => Shape::Flags(args.len() - 1),
            "BF.INSERTX" => {
                let at = args
                    .iter()
                    .position(|a| a.eq_ignore_ascii_case(b"ITEMS"))
                    .expect("ITEMS");
                Shape::Flags(args.len() - at - 1)
            }
            "BF.INFOX" if args.len() == 1 => Shape::FilterInfo,
            "BF.CARDX" => Shape::IntNonNeg,
            "RL.TOKEN" | "RL.LEAKY" | "RL.WINDOW" => Shape::Four,
            "RL.GCRA" => Shape::Five,
            _ => Shape::Any,
        };
        let mut args = args;
        sanitize_wait(&mut self.rng, &mut args);
        let v = self.expect(shape, to, name, &args);
        // Fuzzed writes give keys other types now and then: valid traffic takes the
        // key back.
        if let Some(e) = err_of(&v) {
            if e.starts_with("WRONGTYPE") || e.contains("different kind") {
                self.send(To::Master, b"DEL", &args[..1]);
            }
        }
    }

    /// Locks with waiters: a holder, one to three blocked acquires with WAIT of at most
    /// 50 ms on other connections, then a release, DEL, expiry, rename or fuzzed command.
    /// Every waiter must answer (a token or nil) within `WAITER_REPLY`. After
    /// `MAX_LOST` waiters went unanswered, rounds keep to timings where a waiter's
    /// timeout cannot fall due before a hand-off that is still pending, so that a run
    /// with that bug still finishes (and fails at the end).
    fn waiter_round(&mut self) {
        let careful = self.lost.len() >= MAX_LOST;
        let key = b(self.rng.pick(LOCK_KEYS));
        let holder = b(self.rng.pick(&["o1", "o2"]));
        let ttl = if careful {
            1 + self.rng.below(5)
        } else {
            20 + self.rng.below(200)
        };
        let got = self.expect(
            Shape::TokenOrNil,
            To::Master,
            "DLOCK.ACQUIRE",
            &[key.clone(), holder.clone(), b(&ttl.to_string())],
        );
        if careful && !matches!(got, Value::Int(_)) {
            // Held by someone whose lease may end at any time: not a careful round.
            return;
        }
        let n = 1 + self.rng.below(self.waiters.len());
        let mut pending = Vec::new();
        for w in 0..n {
            let timeout = if careful {
                10 + self.rng.below(41)
            } else {
                1 + self.rng.below(50)
            };
            let owner = format!("w{w}");
            let lease = if careful {
                1_000 + self.rng.below(1_000)
            } else {
                50 + self.rng.below(2_000)
            };
            let args = vec![
                key.clone(),
                b(&owner),
                b(&lease.to_string()),
                b("WAIT"),
                b(&timeout.to_string()),
            ];
            let text = show(b"DLOCK.ACQUIRE", &args);
            self.note(To::Master, format!("(waiter {w}) {text}"));
            self.sent += 1;
            let packed = build(b"DLOCK.ACQUIRE", &args).get_packed_command();
            if let Err(e) = self.waiters[w].send_packed_command(&packed) {
                self.fail(&format!("waiter {w} cannot send `{text}`: {e}"));
            }
            pending.push((w, text));
        }
        self.blocked_waits += n as u64;
        std::thread::sleep(Duration::from_millis(self.rng.below(3) as u64));
        let action = if careful {
            self.rng.below(3)
        } else {
            self.rng.below(12)
        };
        let action_text = match action {
            0..=4 => {
                self.expect(
                    Shape::Int01,
                    To::Master,
                    "DLOCK.RELEASE",
                    &[key.clone(), holder],
                );
                "release by the holder"
            }
            5 => {
                self.send(To::Master, b"DEL", std::slice::from_ref(&key));
                "DEL"
            }
            6 => {
                self.send(To::Master, b"UNLINK", std::slice::from_ref(&key));
                "UNLINK"
            }
            7 => {
                self.send(To::Master, b"PEXPIRE", &[key.clone(), b("1")]);
                "PEXPIRE 1"
            }
            8 => {
                let owner = b(self.rng.pick(&["w0", "w1", "o1"]));
                self.expect(
                    Shape::Int01,
                    To::Master,
                    "DLOCK.RELEASE",
                    &[key.clone(), owner],
                );
                "release by another owner"
            }
            9 => {
                let (name, args) = self.fuzzed(false);
                self.send(To::Master, &name, &args);
                "a fuzzed command"
            }
            10 => {
                let other = b(self.rng.pick(LOCK_KEYS));
                self.send(To::Master, b"RENAME", &[key.clone(), other]);
                "RENAME"
            }
            _ => "nothing (the lease runs out)",
        };
        let sent_at = Instant::now();
        for (w, text) in pending {
            let left = WAITER_REPLY
                .saturating_sub(sent_at.elapsed())
                .max(Duration::from_millis(1));
            let _ = self.waiters[w].set_read_timeout(Some(left));
            let reply = self.waiters[w].recv_response();
            let _ = self.waiters[w].set_read_timeout(Some(READ_TIMEOUT));
            match reply {
                Ok(v) => {
                    self.inspect(&text, &v);
                    if err_of(&v).is_none() && !fits(Shape::TokenOrNil, &v) {
                        self.wrong_shapes.push(format!("{text} -> {v:?}"));
                    }
                    if matches!(v, Value::Int(_)) && self.rng.chance(1, 2) {
                        let owner = b(&format!("w{w}"));
                        self.expect(
                            Shape::Int01,
                            To::Master,
                            "DLOCK.RELEASE",
                            &[key.clone(), owner],
                        );
                    }
                }
                Err(e) if e.is_timeout() || e.is_io_error() => {
                    if !self.m.is_alive() {
                        self.fail(&format!("master died while waiter {w} waited: `{text}`"));
                    }
                    let mut con = self.m.conn();
                    let info = cmd("DLOCK.INFO").arg(&key).query::<Value>(&mut con);
                    self.lost.push(format!(
                        "waiter {w} `{text}` (holder `{}` ttl {ttl} ms, then {action_text}): \
                         no reply within {WAITER_REPLY:?} ({e}); DLOCK.INFO now: {info:?}; \
                         warden_locks_handed_off {}",
                        String::from_utf8_lossy(&key),
                        warden_stat(&mut con, "locks_handed_off"),
                    ));
                    // The connection is out of step: replace it.
                    self.waiters[w] = timed(self.m.conn());
                }
                Err(e) => self.fail(&format!("waiter {w} got no valid reply to `{text}`: {e}")),
            }
        }
    }

    /// MULTI with fuzzed and valid commands (WAIT of any value is allowed in here: the
    /// command makes one non-blocking attempt), then EXEC or DISCARD.
    fn multi_block(&mut self) {
        let to = if self.rng.chance(1, 4) {
            To::Master3
        } else {
            To::Master
        };
        self.send(to, b"MULTI", &[]);
        for _ in 0..1 + self.rng.below(6) {
            let (name, mut args) = self.fuzzed(true);
            if self.rng.chance(1, 3) {
                // A WAIT 0 / huge WAIT, which must not block inside MULTI.
                args = vec![
                    b(self.rng.pick(LOCK_KEYS)),
                    b("o9"),
                    b("1000"),
                    b("WAIT"),
                    b(self.rng.pick(&["0", "9223372036854775807", "100000"])),
                ];
                self.send(to, b"DLOCK.ACQUIRE", &args);
            } else {
                self.send(to, &name, &args);
            }
        }
        let end: &[u8] = if self.rng.chance(1, 8) {
            b"DISCARD"
        } else {
            b"EXEC"
        };
        self.send(to, end, &[]);
    }

    /// A script running a fuzzed warden command (no blocking inside scripts either).
    fn script(&mut self) {
        let (name, mut args) = self.fuzzed(true);
        if self.rng.chance(1, 4) {
            args = vec![
                b(self.rng.pick(LOCK_KEYS)),
                b("o8"),
                b("500"),
                b("WAIT"),
                b("0"),
            ];
        }
        let mut full = vec![b("return redis.pcall(unpack(ARGV))"), b("0"), name];
        let name_upper = String::from_utf8_lossy(&full[2]).to_ascii_uppercase();
        if self.rng.chance(1, 4) && name_upper == "DLOCK.ACQUIRE" {
            full[0] = b("return redis.call(unpack(ARGV))");
        }
        full.extend(args);
        self.send(To::Master, b"EVAL", &full);
    }

    /// Native commands on the keyspace, including wrong-type keys.
    fn native_step(&mut self) {
        let k = any_key(&mut self.rng);
        let k2 = any_key(&mut self.rng);
        match self.rng.below(20) {
            0 => {
                self.send(To::Master, b"SET", &[b("str:0"), b("v")]);
            }
            1 => {
                self.send(To::Master, b"RPUSH", &[b("list:0"), b("a"), b("b")]);
            }
            2 => {
                self.send(To::Master, b"HSET", &[b("hash:0"), b("f"), b("v")]);
            }
            3 => {
                self.send(To::Master, b"DEL", &[k]);
            }
            4 => {
                self.send(To::Master, b"COPY", &[k, k2, b("REPLACE")]);
            }
            5 => {
                self.send(To::Master, b"RENAME", &[k, k2]);
            }
            6 => {
                let ms = (10 + self.rng.below(500)).to_string();
                self.send(To::Master, b"PEXPIRE", &[k, b(&ms)]);
            }
            7 => {
                self.send(To::Master, b"PERSIST", &[k]);
            }
            8 | 9 => {
                let v = self.send(To::Master, b"DUMP", &[k]);
                if let Value::BulkString(p) = v {
                    let ttl = if self.rng.chance(1, 2) { "0" } else { "100000" };
                    self.send(To::Master, b"RESTORE", &[k2, b(ttl), p, b("REPLACE")]);
                }
            }
            10 => {
                // Valkey 8.1.8 leaves the connection on the destination database
                // after MOVE when any module subscribes to keyspace events
                // (valkey-io/valkey#4024, fixed upstream): not a warden bug.
                if !std::env::var("REDIS_SERVER").is_ok_and(|s| s.contains("valkey")) {
                    self.send(To::Master, b"MOVE", &[k, b("1")]);
                }
            }
            11 => {
                self.send(To::Master, b"TYPE", std::slice::from_ref(&k));
                self.send(To::Master, b"MEMORY", &[b("USAGE"), k]);
            }
            12 => {
                self.send(To::Master, b"DEBUG", &[b("DIGEST-VALUE"), k]);
            }
            13 => {
                self.send(To::Master, b"OBJECT", &[b("ENCODING"), k]);
            }
            14 => {
                self.send(To::Replica, b"DEBUG", &[b("DIGEST-VALUE"), k]);
            }
            15 => {
                self.send(To::Master, b"WAIT", &[b("1"), b("20")]);
            }
            16 => {
                self.send(To::Master, b"PTTL", &[k]);
            }
            17 if self.rng.chance(1, 20) => {
                self.send(To::Master, b"SWAPDB", &[b("0"), b("1")]);
            }
            18 if self.rng.chance(1, 40) => {
                let what: &[u8] = if self.rng.chance(1, 2) {
                    b"FLUSHDB"
                } else {
                    b"FLUSHALL"
                };
                self.send(To::Master, what, &[]);
            }
            _ => {
                self.send(To::Master, b"EXISTS", &[k]);
            }
        }
    }

    /// Both servers are up and the replica's link is up.
    fn check_alive(&mut self) {
        if !self.m.is_alive() || !self.r.is_alive() {
            self.fail("a server died");
        }
        self.m.assert_alive();
        self.r.assert_alive();
        let mut rc = self.r.conn();
        let link = info_field(&mut rc, "replication", "master_link_status");
        if link.as_deref() != Some("up") {
            self.fail(&format!("replica link is {link:?}"));
        }
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| {
            let v = v.trim();
            match v.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => v.parse().ok(),
            }
        })
        .unwrap_or(default)
}

/// Every key of `db` with its PTTL.
fn keys_with_ttl(con: &mut Connection, db: i64) -> Vec<(Vec<u8>, i64)> {
    let _: () = cmd("SELECT").arg(db).query(con).expect("SELECT");
    let mut cursor: u64 = 0;
    let mut keys: Vec<Vec<u8>> = Vec::new();
    loop {
        let (next, batch): (u64, Vec<Vec<u8>>) = cmd("SCAN")
            .arg(cursor)
            .arg("COUNT")
            .arg(1000)
            .query(con)
            .expect("SCAN");
        keys.extend(batch);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|k| {
            let t: i64 = cmd("PTTL").arg(&k).query(con).expect("PTTL");
            (k, t)
        })
        .collect()
}

/// Filter keys (all databases) and the sum of their sizes from BF.INFOX.
fn filter_census(con: &mut Connection) -> (i64, i64) {
    let (mut n, mut bytes) = (0i64, 0i64);
    for db in 0..2 {
        let _: () = cmd("SELECT").arg(db).query(con).expect("SELECT");
        let mut cursor: u64 = 0;
        let mut keys: Vec<Vec<u8>> = Vec::new();
        loop {
            let (next, batch): (u64, Vec<Vec<u8>>) = cmd("SCAN")
                .arg(cursor)
                .arg("COUNT")
                .arg(1000)
                .arg("TYPE")
                .arg("warden-bf")
                .query(con)
                .expect("SCAN TYPE");
            keys.extend(batch);
            if next == 0 {
                break;
            }
            cursor = next;
        }
        keys.sort();
        keys.dedup();
        for k in keys {
            n += 1;
            let size: Value = cmd("BF.INFOX")
                .arg(&k)
                .arg("SIZE")
                .query(con)
                .expect("BF.INFOX SIZE");
            let size = match size {
                Value::Int(n) => n,
                Value::Array(a) if a.len() == 1 => match a[0] {
                    Value::Int(n) => n,
                    ref other => panic!("BF.INFOX SIZE: {other:?}"),
                },
                other => panic!("BF.INFOX SIZE: {other:?}"),
            };
            bytes += size;
        }
    }
    let _: () = cmd("SELECT").arg(0).query(con).expect("SELECT");
    (n, bytes)
}

#[test]
fn grammar_fuzz_against_master_and_replica() {
    let seed = env_u64("WARDEN_FUZZ_SEED", DEFAULT_SEED);
    let total = env_u64("WARDEN_FUZZ_COMMANDS", DEFAULT_COMMANDS);
    let started = Instant::now();
    let m = Server::start_with(&[], &["bf-max-bytes", BF_MAX_BYTES]);
    let r = m.start_replica(&[], &["bf-max-bytes", BF_MAX_BYTES]);
    let con = timed(m.conn());
    let con3 = timed(m.conn_resp3());
    let rcon = timed(r.conn());
    let waiters = (0..3).map(|_| timed(m.conn())).collect();
    let mut f = Fuzz {
        rng: Rng(seed),
        seed,
        m,
        r,
        con,
        con3,
        rcon,
        waiters,
        history: VecDeque::new(),
        sent: 0,
        errors: 0,
        internal: Vec::new(),
        odd_codes: Vec::new(),
        wrong_shapes: Vec::new(),
        lost: Vec::new(),
        by_message: HashMap::new(),
        valid: (0, 0),
        blocked_waits: 0,
    };
    println!("fuzz: seed {seed:#x}, {total} commands");
    f.send(To::Master, b"SET", &[b("str:0"), b("v")]);
    f.send(To::Master, b"RPUSH", &[b("list:0"), b("a")]);
    f.send(To::Master, b"HSET", &[b("hash:0"), b("f"), b("v")]);

    let mut next_check = 1_000;
    while f.sent < total {
        match f.rng.below(1000) {
            0..=449 => f.fuzz_step(),
            450..=839 => f.valid_step(),
            840..=879 => f.multi_block(),
            880..=899 => f.script(),
            900..=904 => f.waiter_round(),
            _ => f.native_step(),
        }
        if f.sent >= next_check {
            next_check += 1_000;
            f.check_alive();
        }
    }
    f.check_alive();
    let fuzz_time = started.elapsed();

    // Final consistency. First, no waiter is left behind.
    let mut con = timed(f.m.conn());
    if !wait_until(Duration::from_secs(5), || {
        warden_stat(&mut con, "locks_waiting") == 0
    }) {
        let w = warden_stat(&mut con, "locks_waiting");
        f.fail(&format!(
            "warden_locks_waiting is {w} after every waiter got its reply"
        ));
    }
    // Keys that could expire during the comparison get a long TTL (PEXPIRE replicates
    // as PEXPIREAT, so master and replica keep the same absolute expiry).
    for db in 0..2 {
        for (k, ttl) in keys_with_ttl(&mut con, db) {
            if (0..LONG_TTL_MS).contains(&ttl) {
                let _: i64 = cmd("PEXPIRE")
                    .arg(&k)
                    .arg(LONG_TTL_MS)
                    .query(&mut con)
                    .expect("PEXPIRE");
            }
        }
    }
    let _: () = cmd("SELECT").arg(0).query(&mut con).expect("SELECT");
    f.m.sync_replicas(1);
    let mut rc = timed(f.r.conn());
    let md = db_digest(&mut con);
    let rd = db_digest(&mut rc);
    if md != rd {
        let mk: Vec<(Vec<u8>, i64)> = (0..2).flat_map(|db| keys_with_ttl(&mut con, db)).collect();
        let rk: Vec<(Vec<u8>, i64)> = (0..2).flat_map(|db| keys_with_ttl(&mut rc, db)).collect();
        let _: () = cmd("SELECT").arg(0).query(&mut con).expect("SELECT");
        let _: () = cmd("SELECT").arg(0).query(&mut rc).expect("SELECT");
        let mut diffs = Vec::new();
        for db in 0..2 {
            for (k, _) in keys_with_ttl(&mut con, db) {
                let a: Value = cmd("DEBUG")
                    .arg("DIGEST-VALUE")
                    .arg(&k)
                    .query(&mut con)
                    .expect("dv");
                let _: () = cmd("SELECT").arg(db).query(&mut rc).expect("SELECT");
                let bv: Value = cmd("DEBUG")
                    .arg("DIGEST-VALUE")
                    .arg(&k)
                    .query(&mut rc)
                    .expect("dv");
                if a != bv {
                    diffs.push(escape(&k));
                }
            }
        }
        f.fail(&format!(
            "replica digest {rd} != master digest {md}; keys differing: {diffs:?}\nmaster keys: {mk:?}\nreplica keys: {rk:?}"
        ));
    }
    // Filter accounting on both servers.
    for (name, c) in [("master", &mut con), ("replica", &mut rc)] {
        let (n, bytes) = filter_census(c);
        let (sn, sb) = (warden_stat(c, "bf_filters"), warden_stat(c, "bf_bytes"));
        assert_eq!(
            (sn, sb),
            (n, bytes),
            "{name}: INFO warden (bf_filters, bf_bytes) vs filter keys and their sizes"
        );
    }
    // DEBUG RELOAD keeps every value.
    let v: Value = cmd("DEBUG")
        .arg("RELOAD")
        .query(&mut con)
        .expect("DEBUG RELOAD");
    assert!(
        err_of(&v).is_none(),
        "DEBUG RELOAD: {v:?}\n{}",
        f.m.log_tail(20)
    );
    let after = db_digest(&mut con);
    if after != md {
        f.fail(&format!(
            "DEBUG RELOAD changed the master digest: {md} -> {after}"
        ));
    }
    let (n, bytes) = filter_census(&mut con);
    assert_eq!(
        (
            warden_stat(&mut con, "bf_filters"),
            warden_stat(&mut con, "bf_bytes")
        ),
        (n, bytes),
        "after DEBUG RELOAD: INFO warden vs filter keys"
    );
    let v: Value = cmd("DEBUG")
        .arg("RELOAD")
        .query(&mut rc)
        .expect("DEBUG RELOAD");
    assert!(err_of(&v).is_none(), "replica DEBUG RELOAD: {v:?}");
    assert_eq!(
        db_digest(&mut rc),
        md,
        "replica digest after its DEBUG RELOAD"
    );
    f.check_alive();

    let dbsize: i64 = cmd("DBSIZE").query(&mut con).expect("DBSIZE");
    println!(
        "fuzz: {} commands, {} errors, 0 crashes ({} blocked waits, {} unanswered, {} keys at the end, digest {md}); {:.1} s fuzzing, {:.1} s in all",
        f.sent,
        f.errors,
        f.blocked_waits,
        f.lost.len(),
        dbsize,
        fuzz_time.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    let mut top: Vec<(&String, &u64)> = f.by_message.iter().collect();
    top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    println!(
        "fuzz: {} valid calls, {} of them answered an error; most frequent errors:",
        f.valid.0, f.valid.1
    );
    for (m, n) in top.iter().take(12) {
        println!("  {n:>6}  {m}");
    }
    if !f.internal.is_empty() {
        println!(
            "fuzz: {} caught panics (ERR internal error), first: {:#?}",
            f.internal.len(),
            f.internal
        );
    }
    assert!(
        f.lost.is_empty(),
        "{} blocked DLOCK.ACQUIRE … WAIT calls never got a reply (neither a token nor nil); \
         the first ones:\n{}",
        f.lost.len(),
        f.lost.join("\n")
    );
    assert!(
        f.odd_codes.is_empty(),
        "error replies without an ERR/WRONGTYPE code: {:#?}",
        f.odd_codes
    );
    assert!(
        f.wrong_shapes.is_empty(),
        "valid calls with replies of the wrong shape: {:#?}",
        f.wrong_shapes
    );
    assert!(
        f.internal.is_empty(),
        "commands hit a panic in the module (caught, replied ERR internal error): {:#?}\nmaster log:\n{}",
        f.internal,
        f.m.log_tail(20)
    );
}

/// The case the fuzzer found: a holder's lease ends (its timer hands the lock to the
/// oldest waiter) in the same event-loop turn in which Redis processes that waiter's
/// own, already passed, WAIT timeout. Every blocked acquire must still get a reply —
/// its token or nil — and never hang.
#[test]
fn waiter_whose_timeout_passed_before_the_lease_ended_gets_a_reply() {
    let mut s = Server::start();
    let mut con = timed(s.conn());
    let mut lost = Vec::new();
    for trial in 0..5 {
        let key = format!("race:{trial}");
        let token: Value = cmd("DLOCK.ACQUIRE")
            .arg(&key)
            .arg("holder")
            .arg(56)
            .query(&mut con)
            .expect("ACQUIRE");
        assert!(matches!(token, Value::Int(_)), "{token:?}");
        let mut waiters: Vec<Connection> = (0..3).map(|_| s.conn()).collect();
        for (i, (w, timeout)) in waiters.iter_mut().zip([9, 15, 42]).enumerate() {
            let c = cmd("DLOCK.ACQUIRE")
                .arg(&key)
                .arg(format!("w{i}"))
                .arg(600)
                .arg("WAIT")
                .arg(timeout)
                .get_packed_command();
            w.send_packed_command(&c).expect("send");
        }
        let started = Instant::now();
        for (i, w) in waiters.iter_mut().enumerate() {
            let left = Duration::from_millis(1_500).saturating_sub(started.elapsed());
            w.set_read_timeout(Some(left.max(Duration::from_millis(1))))
                .expect("timeout");
            match w.recv_response() {
                Ok(v) => assert!(
                    matches!(v, Value::Nil | Value::Int(_)),
                    "trial {trial} waiter {i}: {v:?}"
                ),
                Err(e) => {
                    let info: Value = cmd("DLOCK.INFO").arg(&key).query(&mut con).expect("INFO");
                    lost.push(format!(
                        "trial {trial}: DLOCK.ACQUIRE {key} w{i} 600 WAIT {} — no reply after 1.5 s ({e}); DLOCK.INFO {key}: {info:?}",
                        [9, 15, 42][i]
                    ));
                }
            }
        }
    }
    s.assert_alive();
    assert!(
        lost.is_empty(),
        "blocked acquires that never got a reply (holder lease 56 ms, waiters WAIT 9/15/42 ms):\n{}\nhanded off: {}",
        lost.join("\n"),
        warden_stat(&mut con, "locks_handed_off")
    );
}

/// The fuzzer covers every command the module registers, and nothing else:
/// `COMMAND LIST FILTERBY MODULE warden` is exactly `COMMANDS`, and each has
/// its documentation and its key at argument 1 (the module's one table).
#[test]
fn the_fuzzer_covers_every_registered_command() {
    let s = Server::start();
    let mut con = s.conn();
    let mut registered: Vec<String> = cmd("COMMAND")
        .arg("LIST")
        .arg("FILTERBY")
        .arg("MODULE")
        .arg("warden")
        .query(&mut con)
        .expect("COMMAND LIST");
    registered.sort();
    let mut known: Vec<String> = COMMANDS.iter().map(|c| c.to_lowercase()).collect();
    known.sort();
    assert_eq!(registered, known);
    for name in &known {
        let docs: Value = cmd("COMMAND")
            .arg("DOCS")
            .arg(name)
            .query(&mut con)
            .expect("COMMAND DOCS");
        let text = format!("{docs:?}");
        assert!(
            text.contains("summary") && text.contains("arguments"),
            "{name}: {text}"
        );
        let info: Value = cmd("COMMAND")
            .arg("INFO")
            .arg(name)
            .query(&mut con)
            .expect("COMMAND INFO");
        let Value::Array(outer) = info else {
            panic!("{name}: COMMAND INFO {info:?}")
        };
        let Some(Value::Array(row)) = outer.first() else {
            panic!("{name}: COMMAND INFO {outer:?}")
        };
        let int = |i: usize| match row.get(i) {
            Some(Value::Int(n)) => *n,
            other => panic!("{name}: field {i} of COMMAND INFO is {other:?}"),
        };
        assert_eq!((int(3), int(4), int(5)), (1, 1, 1), "{name}: key positions");
    }
}
