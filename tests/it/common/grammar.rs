//! The grammar of `tests/it/fuzz.rs`'s command fuzzer: a small keyspace per type, odd
//! bytes and numbers, value generators per argument (`Gen`), every warden command's
//! arguments with options in random order, case and number (`grammar`) and mutations
//! of a call. The calls as sent and answered are `fuzz_calls`.

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

/// Every option word of every command (plus look-alikes).
pub const WORDS: &[&str] = &[
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
    let groups: [&[&str]; 9] = [
        LOCK_KEYS,
        BF_KEYS,
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

/// Generates an option's value.
pub type ValueGen = fn(&Gen, &mut Rng) -> Vec<u8>;

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

    pub fn items(&self, rng: &mut Rng, at_least: usize) -> Vec<Vec<u8>> {
        let spread = if rng.chance(1, 10) { 200 } else { 12 };
        let n = at_least + rng.below(spread);
        (0..n).map(|_| self.item(rng)).collect()
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

    /// Options `(word, value generator)` in random order, case and number.
    pub fn options(&self, rng: &mut Rng, opts: &[(&str, Option<ValueGen>)]) -> Vec<Vec<u8>> {
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

pub fn g_timeout(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    g.val(rng, |r| (1 + r.below(50)).to_string().into_bytes())
}

/// `LIMIT n`: small semaphores.
pub fn g_limit(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    g.val(rng, |r| (1 + r.below(3)).to_string().into_bytes())
}

/// A fencing token: near the clock-based tokens the server issues now (so some match a
/// grant), or any small integer.
pub fn g_token(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    let near = g.now.saturating_mul(1000) - rng.below(5_000_000) as i64;
    g.val(rng, |r| {
        if r.chance(1, 2) {
            near.to_string().into_bytes()
        } else {
            r.below(100).to_string().into_bytes()
        }
    })
}

pub fn g_expansion(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    g.pick(rng, EXPANSIONS)
}

pub fn g_window(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    g.pick(rng, WINDOWS)
}

pub fn g_capacity(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    g.pick(rng, CAPACITIES)
}

pub fn g_error(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    g.pick(rng, ERROR_RATES)
}

pub fn g_cost(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    g.int(rng, 5)
}

pub fn g_version(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    g.int(rng, 5)
}

pub fn g_lease_ms(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    g.val(rng, |r| (1 + r.below(300)).to_string().into_bytes())
}

pub fn g_maxwait(g: &Gen, rng: &mut Rng) -> Vec<u8> {
    g.int(rng, 5_000)
}

/// Every warden command the fuzzer knows.
pub const COMMANDS: &[&str] = &[
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

/// Arguments (after the name) of a plausible call of `name`.
pub fn grammar(g: &Gen, rng: &mut Rng, name: &str) -> Vec<Vec<u8>> {
    let mut a: Vec<Vec<u8>> = Vec::new();
    match name {
        "DLOCK.ACQUIRE" => {
            a.push(g.key(rng, LOCK_KEYS));
            a.push(g.owner(rng));
            a.push(g.ttl(rng));
            // `[SHARED | LIMIT n]` is a choice: at most one of them.
            let mut opts: Vec<(&str, Option<ValueGen>)> =
                vec![("WAIT", Some(g_timeout)), ("REENTRANT", None)];
            match rng.below(3) {
                0 => opts.push(("SHARED", None)),
                1 => opts.push(("LIMIT", Some(g_limit))),
                _ => {}
            }
            a.extend(g.options(rng, &opts));
        }
        "DLOCK.RELEASE" => {
            a.push(g.key(rng, LOCK_KEYS));
            a.push(g.owner(rng));
            a.extend(g.options(rng, &[("TOKEN", Some(g_token))]));
        }
        "DLOCK.EXTEND" => {
            a.push(g.key(rng, LOCK_KEYS));
            a.push(g.owner(rng));
            a.push(g.ttl(rng));
            a.extend(g.options(rng, &[("TOKEN", Some(g_token))]));
        }
        "DLOCK.INFO" => a.push(g.key(rng, LOCK_KEYS)),
        "DLOCK.GUARD" => {
            let lock = g.key(rng, LOCK_KEYS);
            let owner = g.owner(rng);
            a.push(lock.clone());
            a.push(owner.clone());
            a.push(g_token(g, rng));
            let other = g.key(rng, OTHER_KEYS);
            let inner: Vec<Vec<u8>> = match rng.below(9) {
                0 | 1 => vec![b("INCR"), other],
                2 => vec![b("SET"), other, g.item(rng)],
                3 => vec![b("GET"), other],
                4 => vec![b("DLOCK.EXTEND"), lock, owner, g.ttl(rng)],
                5 => vec![b("RL.TOKEN"), g.key(rng, RL_TOKEN_KEYS), b("1/h"), b("5")],
                6 => vec![b("BLPOP"), other, b("0")],
                7 => vec![b("MULTI")],
                _ => vec![b("DLOCK.GUARD"), lock, owner, b("1"), b("INCR"), other],
            };
            a.extend(inner);
        }
        "DLOCK._SETS" => {
            a.push(g.key(rng, LOCK_KEYS));
            let floor = g.now * 1000 + 5;
            let expiry = g.now + 60_000;
            a.push(g.val(rng, |r| {
                format!("{}:{floor}:{expiry}", r.below(3)).into_bytes()
            }));
            let holders = format!("1:a{}:1:{};", g.now * 1000, g.now + 60_000);
            a.push(g.val(rng, |_| holders.clone().into_bytes()));
        }
        "DLOCK._FENCE" => {
            let floor = g.now * 1000;
            a.push(g.val(rng, |r| {
                (floor + r.below(1000) as i64).to_string().into_bytes()
            }));
        }
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
                &[
                    ("EXPANSION", Some(g_expansion)),
                    ("NONSCALING", None),
                    ("AGE", Some(g_window)),
                ],
            ));
        }
        "BF._ADDATX" => {
            a.push(g.key(rng, BF_KEYS));
            let at = g.now + rng.below(4_000) as i64 - 2_000;
            a.push(g.val(rng, |_| at.to_string().into_bytes()));
            a.extend(g.items(rng, 1));
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
                let w = rng.pick(&[
                    "CAPACITY",
                    "SIZE",
                    "FILTERS",
                    "ITEMS",
                    "EXPANSION",
                    "ERROR",
                    "WINDOW",
                ]);
                a.push(g.word(rng, w));
            }
        }
        "BF.CARDX" => a.push(g.key(rng, BF_KEYS)),
        "BF._LOADX" => {
            a.push(g.key(rng, BF_KEYS));
            if rng.chance(1, 5) {
                a.push(g.word(rng, "AGE"));
                a.push(g.pick(rng, ERROR_RATES));
                a.push(g.pick(rng, CAPACITIES));
                a.push(g.pick(rng, WINDOWS));
            } else if rng.chance(1, 2) {
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
        "BF.SCANDUMPX" => {
            a.push(g.key(rng, BF_KEYS));
            a.push(g.val(rng, |r| {
                let (it, _) = dump_chunk(r.below(DUMP_SHAPES.len()), r.below(2));
                let it = r.pick(&[0, 0, 1, it, it + 8, 1 << 40]);
                it.to_string().into_bytes()
            }));
        }
        "BF.LOADCHUNKX" => {
            a.push(g.key(rng, BF_KEYS));
            let s = rng.below(DUMP_SHAPES.len());
            if rng.chance(1, 2) {
                a.push(g.val(rng, |_| b("1")));
                a.push(g.val(rng, |r| dump_header(s, r.below(30) as u64)));
            } else {
                let (it, len) = dump_chunk(s, rng.below(2));
                a.push(g.val(rng, |_| it.to_string().into_bytes()));
                a.push(g.val(rng, |r| r.bytes(len as usize)));
            }
        }
        "RL.TOKEN" => {
            a.push(g.key(rng, RL_TOKEN_KEYS));
            // One limit mostly, sometimes several (up to one more than a key holds).
            let limits = if rng.chance(1, 4) {
                2 + rng.below(8)
            } else {
                1
            };
            for _ in 0..limits {
                a.push(g.rate(rng));
                a.push(g.int(rng, 20));
            }
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
            let limits = if rng.chance(1, 4) {
                2 + rng.below(8)
            } else {
                1
            };
            for _ in 0..limits {
                a.push(g.val(rng, |r| (1 + r.below(20)).to_string().into_bytes()));
                a.push(g.val(rng, |r| (1 + r.below(5_000)).to_string().into_bytes()));
            }
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
        "CACHE.SET" => {
            a.push(g.key(rng, CACHE_KEYS));
            a.push(g.item(rng));
            a.push(g.ttl(rng));
            a.extend(g.options(
                rng,
                &[
                    ("STALE", Some(g_maxwait)),
                    ("VERSION", Some(g_version)),
                    (
                        "LEASE",
                        Some(|g: &Gen, r: &mut Rng| {
                            g.val(r, |r| {
                                (g.now * 1000 + r.below(1_000_000) as i64)
                                    .to_string()
                                    .into_bytes()
                            })
                        }),
                    ),
                ],
            ));
        }
        "CACHE.GET" => {
            a.push(g.key(rng, CACHE_KEYS));
            a.extend(g.options(rng, &[("MINVERSION", Some(g_version))]));
            if rng.chance(1, 3) {
                a.push(g.word(rng, "HOT"));
                a.push(g.int(rng, 4));
                a.push(g.val(rng, |r| (1 + r.below(1_000)).to_string().into_bytes()));
                a.push(g.word(rng, "EXTEND"));
                a.push(g.ttl(rng));
            }
            if rng.chance(1, 2) {
                a.push(g.word(rng, "LEASE"));
                a.push(g_lease_ms(g, rng));
                a.extend(g.options(rng, &[("WAIT", Some(g_timeout))]));
            }
        }
        "CACHE.INFO" => a.push(g.key(rng, CACHE_KEYS)),
        "CACHE._SET" => {
            a.push(g.key(rng, CACHE_KEYS));
            a.push(g.item(rng));
            a.push(g.cache_meta(rng, true));
        }
        "CACHE._META" => {
            a.push(g.key(rng, CACHE_KEYS));
            let with_value = rng.chance(1, 2);
            a.push(g.cache_meta(rng, with_value));
        }
        other => unreachable!("{other}"),
    }
    a
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
