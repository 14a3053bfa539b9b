//! Each warden type's payloads for the corrupt-payload tests
//! (`tests/it/module/payload_fuzz.rs`, `tests/it/module/payload_forged.rs`; cuckoo
//! filters' in `payload_cuckoo.rs`, count-min sketches' and top-k's in their
//! families' `tests/it/cms/payload.rs` and `tests/it/topk/payload.rs`): real DUMPs
//! of several shapes per type (locks, filters, limiters) and their forgeries — odd
//! values, other opcodes, other types' fields, type-specific structural forgeries —
//! sealed with a valid CRC64 so that Redis hands them to the module's `rdb_load`.
//! Parsing, encoding and the odd-value generators are in `tests/it/common/payload.rs`.

use super::payload::*;
use super::payload_forgeries::odd_same;
use super::*;

use std::time::Duration;

/// Reads without a reply after this long fail the test.
pub const PAYLOAD_READ_TIMEOUT: Duration = Duration::from_secs(30);
pub const LONG_TTL_MS: i64 = 3_600_000;

/// The warden types: locks, filters, filters being loaded (BF.LOADCHUNKX), limiters,
/// cache entries, cuckoo filters (whole or being loaded: one type), count-min
/// sketches and top-k.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ty {
    Lock,
    LockSet,
    Filter,
    Loading,
    Limiter,
    Cache,
    Cuckoo,
    Cms,
    TopK,
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
            Ty::Cuckoo => "warden-cf",
            Ty::Cms => "warden-cm",
            Ty::TopK => "warden-tk",
        }
    }

    /// Every warden type.
    pub const ALL: [Ty; 9] = [
        Ty::Lock,
        Ty::LockSet,
        Ty::Filter,
        Ty::Loading,
        Ty::Limiter,
        Ty::Cache,
        Ty::Cuckoo,
        Ty::Cms,
        Ty::TopK,
    ];

    /// The type of a value whose TYPE is `name`, if a warden type.
    pub fn of(name: &str) -> Option<Ty> {
        Ty::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The encoding version the module writes for this type.
    pub fn encver(self) -> u64 {
        match self {
            Ty::Cache | Ty::Cms | Ty::TopK => 1,
            Ty::Lock | Ty::LockSet | Ty::Cuckoo => 2,
            Ty::Filter | Ty::Loading | Ty::Limiter => 3,
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
    let at: i64 = query!(con, "PEXPIRETIME", src);
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
/// `base` of each of `keys`, all of type `ty`.
pub fn bases_of(con: &mut Connection, keys: &[&str], ty: Ty) -> Vec<Base> {
    keys.iter().map(|k| base(con, k, ty)).collect()
}

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
            must(con, &cmd_of!("DLOCK.ACQUIRE", *key, owner, LONG_TTL_MS));
        }
    }
    let bases: Vec<Base> = owners.iter().map(|(k, _)| base(con, k, Ty::Lock)).collect();
    for b in &bases {
        let kinds: Vec<&str> = b.dump.fields.iter().map(field_kind).collect();
        assert_eq!(kinds, ["S"], "{}: lock layout (packed)", b.key);
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
            &cmd_of!("DLOCK.ACQUIRE", key, owner, LONG_TTL_MS, opts),
        );
    }
    let bases = bases_of(con, &["lsb:shared", "lsb:limit", "lsb:one"], Ty::LockSet);
    for b in &bases {
        let kinds: Vec<&str> = b.dump.fields.iter().map(field_kind).collect();
        assert_eq!(kinds, ["S"], "{}: lock set layout (packed)", b.key);
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
        &cmd_of!("BF.RESERVEX", "fb:two", 0.01, 20, "EXPANSION", 2),
    );
    add(con, "fb:two", 30);
    must(
        con,
        &cmd_of!("BF.RESERVEX", "fb:sparse", 0.01, 1000, "NONSCALING"),
    );
    add(con, "fb:sparse", 3);
    must(
        con,
        &cmd_of!("BF.RESERVEX", "fb:full", 0.1, 8, "NONSCALING"),
    );
    add(con, "fb:full", 8);
    must(
        con,
        &cmd_of!("BF.RESERVEX", "fb:three", 0.05, 4, "EXPANSION", 1),
    );
    add(con, "fb:three", 12);
    let bases = bases_of(
        con,
        &["fb:small", "fb:two", "fb:sparse", "fb:full", "fb:three"],
        Ty::Filter,
    );
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
        must(con, &cmd_of!("BF.RESERVEX", &src, rate, capacity, extra));
        let mut c = cmd("BF.MADDX");
        c.arg(&src);
        for i in 0..items {
            c.arg(format!("{key}:{i}"));
        }
        must(con, &c);
        let chunks = crate::bloom::support::scandump(con, src.as_str());
        assert!(chunks.len() > sent, "{src}: {} chunks", chunks.len());
        crate::bloom::support::loadchunks(con, key, &chunks[..sent]);
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

/// Limiters: every kind, a token bucket in debt, a window with history. Their
/// `dump` is in the layout of encoding version 2 (`limiter_v2`), whose fields
/// forgeries can name; `payload` is the real DUMP (version 3).
pub fn limiter_bases(con: &mut Connection) -> Vec<Base> {
    must(con, &cmd_of!("RL.TOKEN", "rb:token", "1/h", 10, "COST", 3));
    must(con, &cmd_of!("RL.TOKEN", "rb:debt", "1/h", 5, "COST", 5));
    must(
        con,
        &cmd_of!(
            "RL.TOKEN",
            "rb:debt",
            "1/h",
            5,
            "COST",
            2,
            "MAXWAIT",
            LONG_TTL_MS * 3
        ),
    );
    must(con, &cmd_of!("RL.LEAKY", "rb:leaky", "1/h", 10, "COST", 4));
    for _ in 0..3 {
        must(con, &cmd_of!("RL.WINDOW", "rb:window", 100, LONG_TTL_MS));
    }
    must(
        con,
        &cmd_of!("RL.GCRA", "rb:gcra", 10, 1, 3600, "QUANTITY", 4),
    );
    // Several limits in one key.
    must(
        con,
        &cmd_of!(
            "RL.TOKEN",
            "rb:limits",
            "1/h",
            10,
            "inf",
            3,
            "0",
            4,
            "COST",
            2
        ),
    );
    must(
        con,
        &cmd_of!(
            "RL.WINDOW",
            "rb:windows",
            100,
            LONG_TTL_MS,
            5,
            60_000,
            "COST",
            2
        ),
    );
    let mut bases = bases_of(con, &LIMITER_BASES, Ty::Limiter);
    for b in &mut bases {
        let kinds: Vec<&str> = b.dump.fields.iter().map(field_kind).collect();
        assert_eq!(kinds, ["S"], "{}: limiter layout", b.key);
        b.dump = limiter_v2(&b.dump);
        let back = limiter_v3(&b.dump).map(|d| d.fields);
        let real = parse_dump(&b.payload).fields;
        assert_eq!(back.as_ref(), Some(&real), "{}: version 3 again", b.key);
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
        &cmd_of!(
            "CACHE.SET",
            "cb:fresh",
            "v",
            &ttl,
            "STALE",
            1000,
            "VERSION",
            7
        ),
    );
    must(
        con,
        &cmd_of!("CACHE.SET", "cb:stale", "old", 1, "STALE", &ttl),
    );
    std::thread::sleep(Duration::from_millis(5));
    must(con, cmd("CACHE.GET").arg("cb:stale").arg("LEASE").arg(&ttl));
    must(con, cmd("CACHE.GET").arg("cb:miss").arg("LEASE").arg(&ttl));
    must(
        con,
        &cmd_of!("CACHE.SET", "cb:binary", &b"\x00\xff\r\n"[..], &ttl),
    );
    must(con, cmd("CACHE.SET").arg("cb:empty").arg("").arg(&ttl));
    must(
        con,
        &cmd_of!("CACHE.SET", "cb:long", "cached ".repeat(200), &ttl),
    );
    let bases = bases_of(con, &CACHE_BASES, Ty::Cache);
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

/// Appends `v` as the varint of encoding version 3 (7 bits a byte, low first).
fn put_varint(out: &mut Vec<u8>, mut v: u128) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint of encoding version 3 at `at`, moving past it.
fn take_varint(bytes: &[u8], at: &mut usize) -> u128 {
    let mut v = 0u128;
    for shift in (0..).step_by(7) {
        let b = bytes[*at];
        *at += 1;
        v |= u128::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return v;
        }
    }
    unreachable!()
}

/// A limiter DUMP of encoding version 3 (one string: kind and count bytes,
/// then each limit's fields as varints) in the layout of version 2 (each
/// field an RDB integer, the deficit as its high and low 64 bits).
pub fn limiter_v2(d: &Dump) -> Dump {
    let [Field::S(bytes)] = &d.fields[..] else {
        panic!("not a version 3 limiter: {:?}", d.fields);
    };
    let (kind, count) = (bytes[0], bytes[1]);
    let mut at = 2;
    let mut fields = vec![Field::U(u64::from(kind)), Field::U(u64::from(count))];
    for _ in 0..count {
        if kind == 4 {
            for _ in 0..4 {
                fields.push(Field::U(take_varint(bytes, &mut at) as u64));
            }
        } else {
            let last = take_varint(bytes, &mut at) as u64;
            let deficit = take_varint(bytes, &mut at);
            fields.push(Field::U(last));
            fields.push(Field::U((deficit >> 64) as u64));
            fields.push(Field::U(deficit as u64));
            for _ in 0..3 {
                fields.push(Field::U(take_varint(bytes, &mut at) as u64));
            }
        }
    }
    assert_eq!(at, bytes.len(), "trailing bytes in {bytes:?}");
    let mut old = d.clone();
    old.fields = fields;
    old.module_id = (old.module_id & !1023) | 2;
    old
}

/// The version 2 layout `d` (as `limiter_v2` makes it, forged or not) in
/// the layout of encoding version 3: the kind and count as their low byte,
/// signed fields as their two's-complement bits. `None` when a field is not
/// an integer or the count of fields fits no count of limits.
pub fn limiter_v3(d: &Dump) -> Option<Dump> {
    let ints: Vec<u64> = d
        .fields
        .iter()
        .map(|f| match f {
            Field::U(v) => Some(*v),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let (kind, count) = (*ints.first()?, *ints.get(1)?);
    let per = if kind == 4 { 4 } else { 6 };
    let limits = &ints[2..];
    if !limits.len().is_multiple_of(per) {
        return None;
    }
    let mut bytes = vec![kind as u8, count as u8];
    for l in limits.chunks(per) {
        if per == 4 {
            l.iter()
                .for_each(|v| put_varint(&mut bytes, u128::from(*v)));
        } else {
            put_varint(&mut bytes, u128::from(l[0]));
            put_varint(&mut bytes, u128::from(l[1]) << 64 | u128::from(l[2]));
            l[3..]
                .iter()
                .for_each(|v| put_varint(&mut bytes, u128::from(*v)));
        }
    }
    let mut new = d.clone();
    new.fields = vec![Field::S(bytes)];
    new.module_id = (new.module_id & !1023) | 3;
    Some(new)
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
