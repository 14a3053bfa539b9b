//! Each warden type's payloads for the corrupt-payload tests (`tests/payload_fuzz.rs`,
//! `tests/payload_forged.rs`): real DUMPs of several shapes per type (locks, filters,
//! limiters) and their forgeries — odd values, other opcodes, other types' fields,
//! type-specific structural forgeries — sealed with a valid CRC64 so that Redis hands
//! them to the module's `rdb_load`. Parsing, encoding and the odd-value generators are
//! in `tests/common/payload.rs`.

use super::payload::*;
use super::*;

use std::time::Duration;

/// Reads without a reply after this long fail the test.
pub const PAYLOAD_READ_TIMEOUT: Duration = Duration::from_secs(30);
pub const LONG_TTL_MS: i64 = 3_600_000;

/// The warden types: locks, filters, filters being loaded (BF.LOADCHUNKX), limiters,
/// cache entries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ty {
    Lock,
    LockSet,
    Filter,
    Loading,
    Limiter,
    Cache,
}

impl Ty {
    pub fn name(self) -> &'static str {
        match self {
            Ty::Lock => "warden-lk",
            Ty::LockSet => "warden-ls",
            Ty::Filter => "warden-bf",
            Ty::Loading => "warden-bl",
            Ty::Limiter => "warden-rl",
            Ty::Cache => "warden-ch",
        }
    }

    /// The type of a value whose TYPE is `name`, if a warden type.
    pub fn of(name: &str) -> Option<Ty> {
        [
            Ty::Lock,
            Ty::LockSet,
            Ty::Filter,
            Ty::Loading,
            Ty::Limiter,
            Ty::Cache,
        ]
        .into_iter()
        .find(|t| t.name() == name)
    }

    /// The encoding version the module writes for this type.
    pub fn encver(self) -> u64 {
        match self {
            Ty::Lock | Ty::LockSet | Ty::Cache => 1,
            Ty::Limiter | Ty::Filter | Ty::Loading => 2,
        }
    }
}

/// A real DUMP to start from.
#[derive(Clone)]
pub struct Base {
    pub key: String,
    pub payload: Vec<u8>,
    pub dump: Dump,
}

/// Sends `c`, which must not answer an error; returns the reply.
pub fn must(con: &mut Connection, c: &redis::Cmd) -> Value {
    let v = raw(con, c);
    assert!(err_of(&v).is_none(), "{}: {v:?}", show(c));
    v
}

/// RESTORE of `payload` into `dst` with the same absolute expiry as `src` (the expiry
/// is part of a key's digest).
pub fn restore_like(con: &mut Connection, src: &str, dst: &str, payload: &[u8]) -> redis::Cmd {
    let at: i64 = cmd("PEXPIRETIME").arg(src).query(con).expect("PEXPIRETIME");
    let mut c = cmd("RESTORE");
    c.arg(dst).arg(at.max(0)).arg(payload).arg("REPLACE");
    if at > 0 {
        c.arg("ABSTTL");
    }
    c
}

/// `DEBUG DIGEST-VALUE key` as sent (an error stays a value).
pub fn digest_value(con: &mut Connection, key: &[u8]) -> Value {
    raw(con, cmd("DEBUG").arg("DIGEST-VALUE").arg(key))
}

/// The DUMP of `key`, which must be a value of type `ty`, parsed.
pub fn base(con: &mut Connection, key: &str, ty: Ty) -> Base {
    let payload = dump(con, key);
    let dump = parse_dump(&payload);
    assert_eq!(
        dump.type_name(),
        ty.name(),
        "{key}: module id {:#x}",
        dump.module_id
    );
    assert_eq!(dump.encver(), ty.encver(), "{key}: encoding version");
    Base {
        key: key.to_string(),
        payload,
        dump,
    }
}

/// Locks: short, long compressible, long random and binary owners, several holds.
pub fn lock_bases(con: &mut Connection) -> Vec<Base> {
    let long_owner = "worker-host-17:pid-4242:thread-".repeat(10);
    let random_owner: Vec<u8> = Rng(7).bytes(200);
    let owners: Vec<(&str, Vec<u8>)> = vec![
        ("lb:short", b"a".to_vec()),
        ("lb:long", long_owner.into_bytes()),
        ("lb:random", random_owner),
        ("lb:binary", b"\x00\xff\r\n\x00".to_vec()),
        ("lb:holds", b"re-entrant".to_vec()),
    ];
    for (key, owner) in &owners {
        let n = if *key == "lb:holds" { 3 } else { 1 };
        for _ in 0..n {
            must(
                con,
                cmd("DLOCK.ACQUIRE").arg(*key).arg(owner).arg(LONG_TTL_MS),
            );
        }
    }
    let bases: Vec<Base> = owners.iter().map(|(k, _)| base(con, k, Ty::Lock)).collect();
    for b in &bases {
        let kinds: Vec<&str> = b.dump.fields.iter().map(field_kind).collect();
        assert_eq!(kinds, ["S", "U", "U", "U"], "{}: lock layout", b.key);
    }
    bases
}

/// Lock sets: shared holders (one re-entered), a full semaphore of three with a
/// binary owner, a semaphore of one.
pub fn lock_set_bases(con: &mut Connection) -> Vec<Base> {
    let grants: [(&str, &[u8], &[&str]); 7] = [
        ("lsb:shared", b"r1", &["SHARED"]),
        ("lsb:shared", b"r2", &["SHARED", "REENTRANT"]),
        ("lsb:shared", b"r2", &["SHARED", "REENTRANT"]),
        ("lsb:limit", b"a", &["LIMIT", "3"]),
        ("lsb:limit", b"\x00\xff\r\n", &["LIMIT", "3"]),
        ("lsb:limit", b"c", &["LIMIT", "3"]),
        ("lsb:one", b"only", &["LIMIT", "1"]),
    ];
    for (key, owner, opts) in grants {
        must(
            con,
            cmd("DLOCK.ACQUIRE")
                .arg(key)
                .arg(owner)
                .arg(LONG_TTL_MS)
                .arg(opts),
        );
    }
    let bases: Vec<Base> = ["lsb:shared", "lsb:limit", "lsb:one"]
        .iter()
        .map(|k| base(con, k, Ty::LockSet))
        .collect();
    for b in &bases {
        let kinds: Vec<&str> = b.dump.fields.iter().map(field_kind).collect();
        assert_eq!(kinds[..3], ["U", "U", "U"], "{}: lock set layout", b.key);
        assert!(
            kinds[3..].chunks(4).all(|h| h == ["S", "U", "U", "U"]),
            "{}: {kinds:?}",
            b.key
        );
    }
    bases
}

/// Filters: one layer, two layers, sparse (LZF), non-scaling and full, expansion 1.
pub fn filter_bases(con: &mut Connection) -> Vec<Base> {
    let add = |con: &mut Connection, key: &str, n: usize| {
        let mut c = cmd("BF.MADDX");
        c.arg(key);
        for i in 0..n {
            c.arg(format!("{key}:{i}"));
        }
        must(con, &c);
    };
    must(con, cmd("BF.RESERVEX").arg("fb:small").arg(0.01).arg(10));
    add(con, "fb:small", 5);
    must(
        con,
        cmd("BF.RESERVEX")
            .arg("fb:two")
            .arg(0.01)
            .arg(20)
            .arg("EXPANSION")
            .arg(2),
    );
    add(con, "fb:two", 30);
    must(
        con,
        cmd("BF.RESERVEX")
            .arg("fb:sparse")
            .arg(0.01)
            .arg(1000)
            .arg("NONSCALING"),
    );
    add(con, "fb:sparse", 3);
    must(
        con,
        cmd("BF.RESERVEX")
            .arg("fb:full")
            .arg(0.1)
            .arg(8)
            .arg("NONSCALING"),
    );
    add(con, "fb:full", 8);
    must(
        con,
        cmd("BF.RESERVEX")
            .arg("fb:three")
            .arg(0.05)
            .arg(4)
            .arg("EXPANSION")
            .arg(1),
    );
    add(con, "fb:three", 12);
    let bases: Vec<Base> = ["fb:small", "fb:two", "fb:sparse", "fb:full", "fb:three"]
        .iter()
        .map(|k| base(con, k, Ty::Filter))
        .collect();
    for b in &bases {
        let f = &b.dump.fields;
        assert!(
            matches!(f[..4], [Field::D(_), Field::U(_), Field::U(_), Field::U(0)])
                && (f.len() - FILTER_FIELDS).is_multiple_of(5),
            "{}: filter layout {:?}",
            b.key,
            f.iter().map(field_kind).collect::<Vec<_>>()
        );
    }
    assert!(layer_count(&bases[1].dump) >= 2 && layer_count(&bases[4].dump) >= 3);
    bases
}

/// Filters being loaded: a header only (one layer; a sparse non-scaling one), one of
/// two layers loaded, two of three. Their layout is a filter's, then the bytes loaded.
pub fn loading_bases(con: &mut Connection) -> Vec<Base> {
    // Key, rate, capacity, reserve options, items, chunks sent (the header first).
    type Shape = (&'static str, f64, u64, &'static [&'static str], u64, usize);
    let shapes: [Shape; 4] = [
        ("lb:header", 0.01, 10, &[], 5, 1),
        ("lb:sparse", 0.01, 1000, &["NONSCALING"], 3, 1),
        ("lb:two", 0.01, 20, &[], 30, 2),
        ("lb:three", 0.05, 4, &["EXPANSION", "1"], 12, 3),
    ];
    let mut bases = Vec::new();
    for (key, rate, capacity, extra, items, sent) in shapes {
        let src = format!("{key}:src");
        must(
            con,
            cmd("BF.RESERVEX")
                .arg(&src)
                .arg(rate)
                .arg(capacity)
                .arg(extra),
        );
        let mut c = cmd("BF.MADDX");
        c.arg(&src);
        for i in 0..items {
            c.arg(format!("{key}:{i}"));
        }
        must(con, &c);
        let chunks = super::bloom::scandump(con, src.as_str());
        assert!(chunks.len() > sent, "{src}: {} chunks", chunks.len());
        super::bloom::loadchunks(con, key, &chunks[..sent]);
        let b = base(con, key, Ty::Loading);
        let f = &b.dump.fields;
        assert!(
            matches!(f[..4], [Field::D(_), Field::U(_), Field::U(_), Field::U(0)])
                && (f.len() - FILTER_FIELDS - 1).is_multiple_of(5)
                && matches!(f[f.len() - 1], Field::U(_)),
            "{key}: layout {:?}",
            f.iter().map(field_kind).collect::<Vec<_>>()
        );
        bases.push(b);
    }
    bases
}

/// Limiters: every kind, a token bucket in debt, a window with history.
pub fn limiter_bases(con: &mut Connection) -> Vec<Base> {
    must(
        con,
        cmd("RL.TOKEN")
            .arg("rb:token")
            .arg("1/h")
            .arg(10)
            .arg("COST")
            .arg(3),
    );
    must(
        con,
        cmd("RL.TOKEN")
            .arg("rb:debt")
            .arg("1/h")
            .arg(5)
            .arg("COST")
            .arg(5),
    );
    must(
        con,
        cmd("RL.TOKEN")
            .arg("rb:debt")
            .arg("1/h")
            .arg(5)
            .arg("COST")
            .arg(2)
            .arg("MAXWAIT")
            .arg(LONG_TTL_MS * 3),
    );
    must(
        con,
        cmd("RL.LEAKY")
            .arg("rb:leaky")
            .arg("1/h")
            .arg(10)
            .arg("COST")
            .arg(4),
    );
    for _ in 0..3 {
        must(
            con,
            cmd("RL.WINDOW").arg("rb:window").arg(100).arg(LONG_TTL_MS),
        );
    }
    must(
        con,
        cmd("RL.GCRA")
            .arg("rb:gcra")
            .arg(10)
            .arg(1)
            .arg(3600)
            .arg("QUANTITY")
            .arg(4),
    );
    // Several limits in one key.
    must(
        con,
        cmd("RL.TOKEN")
            .arg("rb:limits")
            .arg("1/h")
            .arg(10)
            .arg("inf")
            .arg(3)
            .arg("0")
            .arg(4)
            .arg("COST")
            .arg(2),
    );
    must(
        con,
        cmd("RL.WINDOW")
            .arg("rb:windows")
            .arg(100)
            .arg(LONG_TTL_MS)
            .arg(5)
            .arg(60_000)
            .arg("COST")
            .arg(2),
    );
    let bases: Vec<Base> = LIMITER_BASES
        .iter()
        .map(|k| base(con, k, Ty::Limiter))
        .collect();
    for b in &bases {
        let kinds: Vec<&str> = b.dump.fields.iter().map(field_kind).collect();
        let n = match b.key.as_str() {
            "rb:limits" => 3,
            "rb:windows" => 2,
            _ => 1,
        };
        let per = if b.key.contains("window") { 4 } else { 6 };
        assert_eq!(kinds, vec!["U"; 2 + per * n], "{}: limiter layout", b.key);
        assert_eq!(b.dump.fields[1], Field::U(n as u64), "{}: count", b.key);
    }
    bases
}

/// Cache entries: fresh with a version, stale with a lease, lease-only (a miss),
/// binary and empty values, a long compressible value.
pub fn cache_bases(con: &mut Connection) -> Vec<Base> {
    let ttl = LONG_TTL_MS.to_string();
    must(
        con,
        cmd("CACHE.SET")
            .arg("cb:fresh")
            .arg("v")
            .arg(&ttl)
            .arg("STALE")
            .arg(1000)
            .arg("VERSION")
            .arg(7),
    );
    must(
        con,
        cmd("CACHE.SET")
            .arg("cb:stale")
            .arg("old")
            .arg(1)
            .arg("STALE")
            .arg(&ttl),
    );
    std::thread::sleep(Duration::from_millis(5));
    must(con, cmd("CACHE.GET").arg("cb:stale").arg("LEASE").arg(&ttl));
    must(con, cmd("CACHE.GET").arg("cb:miss").arg("LEASE").arg(&ttl));
    must(
        con,
        cmd("CACHE.SET")
            .arg("cb:binary")
            .arg(&b"\x00\xff\r\n"[..])
            .arg(&ttl),
    );
    must(con, cmd("CACHE.SET").arg("cb:empty").arg("").arg(&ttl));
    must(
        con,
        cmd("CACHE.SET")
            .arg("cb:long")
            .arg("cached ".repeat(200))
            .arg(&ttl),
    );
    let bases: Vec<Base> = CACHE_BASES
        .iter()
        .map(|k| base(con, k, Ty::Cache))
        .collect();
    for b in &bases {
        let kinds: Vec<&str> = b.dump.fields.iter().map(field_kind).collect();
        let want: &[&str] = if b.key == "cb:miss" {
            &["U", "U", "U", "U", "U", "U"]
        } else {
            &["U", "S", "U", "U", "U", "U", "U"]
        };
        assert_eq!(kinds, want, "{}: cache layout", b.key);
    }
    bases
}

/// The cache bases, in the order `cache_bases` returns them.
pub const CACHE_BASES: [&str; 6] = [
    "cb:fresh",
    "cb:stale",
    "cb:miss",
    "cb:binary",
    "cb:empty",
    "cb:long",
];

/// Cache-specific forgeries: the has-value flag, the value, the version,
/// fresh and stale ends out of order, lease tokens and ends.
pub fn forge_cache(rng: &mut Rng, d: &mut Dump) {
    let now = now_ms();
    let Some(Field::U(flag)) = d.fields.first().cloned() else {
        return;
    };
    let at = if flag == 1 { 2 } else { 1 };
    if d.fields.len() != at + 5 {
        d.fields[0] = Field::U(rng.pick(&[0, 1, 2, u64::MAX]));
        return;
    }
    match rng.below(7) {
        0 => {
            // The flag without its value, or a value without the flag.
            if flag == 1 {
                d.fields[0] = Field::U(rng.pick(&[0, 2, u64::MAX]));
            } else {
                d.fields[0] = Field::U(1);
                if rng.chance(1, 2) {
                    d.fields.insert(1, Field::S(b"v".to_vec()));
                }
            }
        }
        1 if flag == 1 => {
            d.fields[1] = Field::S(match rng.below(3) {
                0 => Vec::new(),
                1 => vec![b'x'; 64 * 1024],
                _ => rng.some_bytes(1, 40),
            })
        }
        2 => d.fields[at] = sig(rng.pick(&[-1, 0, 1, i64::MAX, i64::MIN])),
        3 => {
            let i = at + 1 + rng.below(2);
            d.fields[i] = sig(rng.pick(&[-1, 0, 1, now, now + LONG_TTL_MS, i64::MAX, i64::MIN]));
        }
        4 => {
            d.fields[at + 3] =
                sig(rng.pick(&[0, -1, 1, now * 1000, 1 << 62, (1 << 62) + 1, i64::MAX]))
        }
        5 => d.fields[at + 4] = sig(rng.pick(&[0, -1, 1, now, now + LONG_TTL_MS, i64::MAX])),
        _ => {
            let i = rng.below(d.fields.len());
            d.fields[i] = odd_same(rng, &d.fields[i]);
        }
    }
}

/// The limiter bases, in the order `limiter_bases` returns them.
pub const LIMITER_BASES: [&str; 7] = [
    "rb:token",
    "rb:debt",
    "rb:leaky",
    "rb:window",
    "rb:gcra",
    "rb:limits",
    "rb:windows",
];

/// The fields of limit `i` of a limiter dump: (first field, fields per limit).
pub fn limiter_limit(d: &Dump, i: usize) -> (usize, usize) {
    let window = d.fields.first() == Some(&Field::U(4));
    let per = if window { 4 } else { 6 };
    (2 + per * i, per)
}

/// A one-limit limiter dump in the layout of encoding version 1 (no count,
/// no burst), as an earlier warden wrote it.
pub fn limiter_v1(d: &Dump) -> Dump {
    let mut old = d.clone();
    let window = d.fields[0] == Field::U(4);
    old.fields = if window {
        [&d.fields[..1], &d.fields[2..6]].concat()
    } else {
        [&d.fields[..1], &d.fields[2..7]].concat()
    };
    old.module_id = (old.module_id & !1023) | 1;
    old
}

/// A signed field as `RedisModule_SaveSigned` writes it: the UINT opcode with the
/// two's-complement bits.
pub fn sig(v: i64) -> Field {
    Field::U(v as u64)
}

/// The opcode of a field, as a letter (I, U, F, D, S; R for raw bytes).
pub fn field_kind(f: &Field) -> &'static str {
    match f {
        Field::I(_) => "I",
        Field::U(_) => "U",
        Field::F(_) => "F",
        Field::D(_) => "D",
        Field::S(_) => "S",
        Field::Raw(_) => "R",
    }
}

// ---------------------------------------------------------------------------------------
// Forgeries
// ---------------------------------------------------------------------------------------

/// A value of the same kind but odd.
pub fn odd_same(rng: &mut Rng, f: &Field) -> Field {
    match f {
        Field::I(v) => Field::I(odd_int(rng, *v)),
        // Signed fields are stored as UINT too: odd signed values as well.
        Field::U(v) if rng.chance(1, 2) => Field::U(odd_int(rng, *v as i64) as u64),
        Field::U(v) => Field::U(odd_uint(rng, *v)),
        Field::F(x) => Field::F(odd_double(rng, f64::from(*x)) as f32),
        Field::D(x) => Field::D(odd_double(rng, *x)),
        Field::S(s) => Field::S(odd_string(rng, s)),
        Field::Raw(r) => Field::Raw(r.clone()),
    }
}

/// Lock-specific forgeries: owner, token, holds, deadline.
pub fn forge_lock(rng: &mut Rng, d: &mut Dump) {
    let now = now_ms();
    if d.fields.len() != 4 {
        return;
    }
    match rng.below(5) {
        0 => {
            d.fields[0] = Field::S(match rng.below(5) {
                0 => Vec::new(),
                1 => vec![0],
                2 => vec![b'o'; 64 * 1024],
                3 => rng.some_bytes(1, 40),
                _ => b"\xff".to_vec(),
            })
        }
        1 => {
            d.fields[1] = sig(rng.pick(&[
                0,
                -1,
                1,
                i64::MIN,
                i64::MAX,
                i64::MAX - 1,
                now * 1000,
                now * 1000 + 1_000_000_000,
            ]))
        }
        2 => d.fields[2] = sig(rng.pick(&[0, -1, 1, 2, i64::MAX, i64::MIN, 1 << 40])),
        3 => {
            d.fields[3] = sig(rng.pick(&[
                0,
                -1,
                1,
                now - 1_000,
                now + 10,
                now + 1_000_000_000,
                i64::MAX,
                i64::MIN,
            ]))
        }
        _ => {
            // A signed number written with the SINT opcode (RedisModule_SaveSigned
            // writes UINT; the loader must not take SINT for it).
            let i = 1 + rng.below(3);
            if let Field::U(v) = d.fields[i] {
                d.fields[i] = Field::I(v as i64);
            }
        }
    }
}

/// Filter-specific forgeries: layer counts, capacities, hashes, items, error rates,
/// expansion and plausible multi-layer filters.
pub fn forge_filter(rng: &mut Rng, d: &mut Dump) {
    let layers = layer_count(d);
    if layers == 0 || !(d.fields.len() - FILTER_FIELDS).is_multiple_of(5) {
        return;
    }
    match rng.below(7) {
        0 => {
            d.fields[2] = Field::U(rng.pick(&[
                0,
                layers as u64 + 1,
                layers as u64 - 1,
                64,
                65,
                1000,
                1 << 32,
                u64::MAX,
            ]))
        }
        1 => {
            let l = rng.below(layers);
            let c = rng.pick(&[0, 1, 1 << 32, 1 << 40, 1 << 62, i64::MAX as u64, u64::MAX]);
            d.fields[layer_field(l, 0)] = Field::U(c);
            if rng.chance(1, 2) {
                d.fields[layer_field(l, 3)] = Field::U(c);
            }
        }
        2 => {
            let l = rng.below(layers);
            let f = rng.pick(&[2usize, 3]);
            if let Field::U(v) = d.fields[layer_field(l, f)] {
                d.fields[layer_field(l, f)] = Field::U(odd_uint(rng, v));
            }
        }
        3 => {
            let i = if rng.chance(1, 2) {
                0
            } else {
                layer_field(rng.below(layers), 1)
            };
            if let Field::D(x) = d.fields[i] {
                d.fields[i] = Field::D(odd_double(rng, x));
            }
        }
        4 => {
            d.fields[1] =
                Field::U(rng.pick(&[0, 1, 2, 32_768, 32_769, u64::from(u32::MAX), u64::MAX]))
        }
        5 => {
            // Bits of one layer moved to another (sizes no longer match).
            if layers >= 2 {
                let (a, b) = (rng.below(layers), rng.below(layers));
                d.fields.swap(layer_field(a, 4), layer_field(b, 4));
            } else if let Field::S(s) = &mut d.fields[layer_field(0, 4)] {
                s.truncate(s.len() / 2);
            }
        }
        _ => {
            // Plausible filters of many (copied) layers, full or not.
            let want = rng.pick(&[2usize, 3, 10, 63, 64]);
            let mut fields = d.fields[..FILTER_FIELDS].to_vec();
            for k in 0..want {
                let src = k % layers;
                let mut layer = d.fields[layer_field(src, 0)..layer_field(src, 0) + 5].to_vec();
                if rng.chance(1, 2) {
                    layer[3] = layer[0].clone();
                }
                fields.extend(layer);
            }
            fields[2] = Field::U(want as u64);
            fields[1] = Field::U(rng.pick(&[0u64, 1, 2, 32_768, u64::from(u32::MAX)]));
            d.fields = fields;
        }
    }
}

/// Bytes of all bit arrays of a filter payload (being loaded or not).
pub fn bit_bytes(d: &Dump) -> u64 {
    d.fields
        .iter()
        .map(|f| match f {
            Field::S(s) => s.len() as u64,
            _ => 0,
        })
        .sum()
}

/// Forgeries of a filter being loaded: the bytes loaded so far (inside a chunk, at or
/// past the end, odd values), or the filter's own fields.
pub fn forge_loading(rng: &mut Rng, d: &mut Dump) {
    let Some(Field::U(loaded)) = d.fields.last().cloned() else {
        return;
    };
    if rng.chance(1, 2) {
        let total = bit_bytes(d);
        let odd = odd_uint(rng, loaded);
        let v = rng.pick(&[
            loaded + 8,
            loaded + 1,
            loaded.wrapping_sub(8),
            total,
            total + 8,
            u64::MAX,
            odd,
        ]);
        *d.fields.last_mut().expect("a field") = Field::U(v);
    } else {
        d.fields.pop();
        forge_filter(rng, d);
        d.fields.push(Field::U(loaded));
    }
}

/// Limiter-specific forgeries: kinds, counts, clock, deficit, tick rates,
/// bursts, window fields, the layout of the other encoding version.
pub fn forge_limiter(rng: &mut Rng, d: &mut Dump) {
    let now = now_ms();
    if d.fields.len() < 2 {
        return;
    }
    let window = d.fields[0] == Field::U(4);
    let per = if window { 4 } else { 6 };
    let Field::U(n) = d.fields[1] else {
        d.fields[0] = Field::U(rng.pick(&[1, 2, 3, 4]));
        return;
    };
    let layout = usize::try_from(n)
        .ok()
        .and_then(|n| n.checked_mul(per))
        .and_then(|f| f.checked_add(2));
    if layout != Some(d.fields.len()) || n == 0 {
        // Not a limiter layout (another type's fields): only the kind.
        d.fields[0] = Field::U(rng.pick(&[1, 2, 3, 4]));
        return;
    }
    let limit = rng.below(n as usize);
    let at = 2 + per * limit;
    match rng.below(9) {
        0 => d.fields[0] = Field::U(rng.pick(&[0, 1, 2, 3, 4, 5, 255, 1 << 32, u64::MAX])),
        1 => d.fields[1] = Field::U(rng.pick(&[0, n - 1, n + 1, 8, 9, 1 << 32, u64::MAX])),
        2 => {
            // Limits added or removed without the count, or with it.
            if rng.chance(1, 2) {
                let l = d.fields[at..at + per].to_vec();
                d.fields.extend(l);
            } else {
                d.fields.truncate(d.fields.len() - per);
            }
            if rng.chance(1, 2) {
                d.fields[1] = Field::U((d.fields.len() as u64 - 2) / per as u64);
            }
        }
        3 => d.fields[at] = sig(rng.pick(&[-1, 0, 1, now + 1_000_000_000, i64::MAX, i64::MIN])),
        4 if !window => {
            // Deficit high / low words.
            let i = at + rng.pick(&[1usize, 2]);
            let r = rng.next();
            d.fields[i] = Field::U(rng.pick(&[0, 1, 1 << 63, u64::MAX, u64::MAX - 1, r]));
        }
        5 if !window => {
            // Ticks per token / per ms: 0 per token is a rate of inf (its
            // deficit's ticks per token then in the per-ms field), 0 per ms a
            // rate of 0.
            let i = at + rng.pick(&[3usize, 4]);
            d.fields[i] = Field::U(rng.pick(&[0, 1, 2, 1 << 32, 1 << 63, u64::MAX]));
        }
        6 if !window => {
            // The burst: RL.TOKEN's, unknown (u64::MAX), or any on the others.
            let b = rng.pick(&[
                0,
                1,
                1_000_000_000_000_000,
                1_000_000_000_000_001,
                u64::MAX - 1,
                u64::MAX,
            ]);
            d.fields[at + 5] = Field::U(b);
        }
        7 => {
            // The layout of the other encoding version under this one's id.
            if rng.chance(1, 2) {
                *d = limiter_v1(d);
                d.module_id = (d.module_id & !1023) | 2;
            } else {
                d.module_id = (d.module_id & !1023) | 1;
            }
        }
        _ if window => {
            let i = at + 1 + rng.below(3);
            d.fields[i] = if i == at + 1 {
                sig(rng.pick(&[0, -1, 1, i64::MAX, i64::MIN]))
            } else {
                Field::U(rng.pick(&[0, 1, 1 << 63, u64::MAX, i64::MAX as u64]))
            };
        }
        _ => {
            let i = 1 + rng.below(d.fields.len() - 1);
            d.fields[i] = odd_same(rng, &d.fields[i]);
        }
    }
}

/// Lock sets: a limit, floor or holder count out of line with the holders; a holder's
/// owner, token, holds or deadline out of range.
pub fn forge_lock_set(rng: &mut Rng, d: &mut Dump) {
    let now = now_ms();
    if d.fields.len() < 3 {
        return;
    }
    let holders = (d.fields.len() - 3) / 4;
    match rng.below(4) {
        0 => d.fields[0] = Field::U(rng.pick(&[0, 1, 2, 1 << 20, (1 << 20) + 1, u64::MAX])),
        1 => d.fields[1] = sig(rng.pick(&[0, -1, 1, i64::MAX, now * 1000 - 1])),
        2 => d.fields[2] = Field::U(rng.pick(&[0, holders as u64 + 1, 1 << 40, u64::MAX])),
        _ if holders > 0 => {
            let at = 3 + 4 * rng.below(holders);
            match rng.below(4) {
                0 => {
                    d.fields[at] = Field::S(rng.pick(&[Vec::new(), b"r1".to_vec(), b"a".to_vec()]))
                }
                1 => {
                    d.fields[at + 1] =
                        sig(rng.pick(&[0, -1, i64::MAX, now * 1000 + 1_000_000_000_000]))
                }
                2 => d.fields[at + 2] = sig(rng.pick(&[0, -1, i64::MAX])),
                _ => d.fields[at + 3] = sig(rng.pick(&[0, -1, 1, now - 1, i64::MAX])),
            }
        }
        _ => {}
    }
}

/// The forgeries of type `ty`.
pub fn forge_typed(rng: &mut Rng, ty: Ty, d: &mut Dump) {
    match ty {
        Ty::Lock => forge_lock(rng, d),
        Ty::LockSet => forge_lock_set(rng, d),
        Ty::Filter => forge_filter(rng, d),
        Ty::Loading => forge_loading(rng, d),
        Ty::Limiter => forge_limiter(rng, d),
        Ty::Cache => forge_cache(rng, d),
    }
}

/// The field-level forgeries every type shares, on `d` (kinds 3 to 5 of
/// `make_payload`): 3, one field gets an odd value of its kind; 4, another
/// kind; 5, a field missing, repeated or extra, the EOF missing, or junk after.
pub fn forge_fields(rng: &mut Rng, d: &mut Dump, kind: usize) {
    let n = d.fields.len();
    match kind {
        3 => {
            let i = rng.below(n);
            d.fields[i] = odd_same(rng, &d.fields[i]);
        }
        4 => {
            let i = rng.below(n);
            d.fields[i] = other_kind(rng, &d.fields[i]);
        }
        _ => match rng.below(5) {
            0 => {
                d.fields.remove(rng.below(n));
            }
            1 => {
                let i = rng.below(n);
                let f = d.fields[i].clone();
                d.fields.insert(i, f);
            }
            2 => {
                let f = rng.pick(&[
                    Field::U(7),
                    Field::I(-7),
                    Field::D(0.5),
                    Field::F(0.5),
                    Field::S(vec![0; 8]),
                ]);
                d.fields.insert(rng.below(n + 1), f);
            }
            3 => d.eof = false,
            _ => {
                let junk = rng.some_bytes(1, 16);
                d.fields.push(Field::Raw(junk));
            }
        },
    }
}

/// The kinds of payload `make_payload` makes.
pub const KINDS: usize = 12;

/// One corrupt or forged payload of kind `kind` from `b`. `others` are bases of the
/// other types (for type confusion).
pub fn make_payload(rng: &mut Rng, ty: Ty, b: &Base, others: &[&Base], kind: usize) -> Vec<u8> {
    let mut d = b.dump.clone();
    let n = d.fields.len();
    match kind {
        0..=2 => return corrupt_bytes(rng, &b.payload, kind),
        3..=5 => forge_fields(rng, &mut d, kind),
        6 => {
            // Unknown opcodes.
            let mut r = Vec::new();
            enc_len(&mut r, rng.pick(&[6u64, 7, 8, 63, 64, 1000, u64::MAX]));
            r.extend_from_slice(&rng.some_bytes(0, 9));
            d.fields.insert(rng.below(n + 1), Field::Raw(r));
        }
        7 => match rng.below(5) {
            0 => d.module_id = (d.module_id & !1023) | rng.pick(&[0u64, 2, 3, 1023]),
            1 => d.module_id ^= 1 << (10 + rng.below(54)),
            2 => d.type_byte = rng.pick(&[0u8, 2, 5, 6, 8, 14, 18, 21, 255]),
            3 => {
                // Another warden type's id on these fields.
                d.module_id = rng.pick(others).dump.module_id;
            }
            _ => {
                let v = u16::from_le_bytes(d.ver);
                let nv = rng.pick(&[0u16, 1, v.wrapping_sub(1), v + 1, 0xffff]);
                d.ver = nv.to_le_bytes();
            }
        },
        8 => {
            // String framing.
            let strings: Vec<usize> = (0..n)
                .filter(|i| matches!(d.fields[*i], Field::S(_)))
                .collect();
            if strings.is_empty() {
                // Limiters have no strings: a string where a number belongs.
                let i = rng.below(n);
                let data = rng.some_bytes(0, 40);
                d.fields[i] = Field::Raw(forged_string_header(rng, &data));
            } else {
                let i = rng.pick(&strings);
                let Field::S(s) = &d.fields[i] else {
                    unreachable!()
                };
                let s = s.clone();
                d.fields[i] = Field::Raw(forged_string_header(rng, &s));
            }
        }
        9 => forge_typed(rng, ty, &mut d),
        10 => {
            // Another type's fields under this type's id.
            let o = rng.pick(others);
            d.fields = o.dump.fields.clone();
            if rng.chance(1, 2) {
                forge_typed(rng, ty, &mut d);
            }
        }
        _ => {
            for _ in 0..2 + rng.below(2) {
                if rng.chance(1, 2) {
                    forge_typed(rng, ty, &mut d);
                } else if !d.fields.is_empty() {
                    let i = rng.below(d.fields.len());
                    d.fields[i] = odd_same(rng, &d.fields[i]);
                }
            }
        }
    }
    encode(&d)
}
