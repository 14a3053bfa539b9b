//! Corrupt-payload fuzzer for every warden data type: locks (`warden-lk`), filters
//! (`warden-bf`) and rate limiters (`warden-rl`).
//!
//! Real DUMPs of several shapes per type are truncated, bit-flipped, byte-replaced and
//! forged field by field (huge counts and lengths, negative numbers, wrong opcodes,
//! unknown opcodes, other module ids and encoding versions, other types' fields), and
//! sealed with a valid CRC64 so that Redis hands them to the module's `rdb_load`.
//! Every RESTORE must answer OK or an error; an accepted value must answer its type's
//! read commands (which change nothing), survive the other commands, DUMP and RESTORE
//! to the same value, and replicate: a replica (`--propagation-error-behavior panic`)
//! follows the whole run and must end with the master's digest. INFO's filter counters
//! must match the filter keys at the end, also after `DEBUG RELOAD`.
//!
//! `WARDEN_PAYLOAD_FUZZ` (default 1000) is the number of payloads per type.

mod common;
use common::payload::*;
use common::*;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const DEFAULT_PER_TYPE: usize = 1_000;
const LONG_TTL_MS: i64 = 3_600_000;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}

fn timed(con: Connection) -> Connection {
    con.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("read timeout");
    con
}

fn is_ok(v: &Value) -> bool {
    matches!(v, Value::Okay) || *v == Value::SimpleString("OK".into())
}

fn is_int01(v: &Value) -> bool {
    matches!(v, Value::Int(0) | Value::Int(1))
}

/// The three warden types.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ty {
    Lock,
    Filter,
    Limiter,
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Ty::Lock => "warden-lk",
            Ty::Filter => "warden-bf",
            Ty::Limiter => "warden-rl",
        }
    }
}

/// A real DUMP to start from.
#[derive(Clone)]
struct Base {
    key: String,
    payload: Vec<u8>,
    dump: Dump,
}

fn must(con: &mut Connection, c: &redis::Cmd) -> Value {
    let v = raw(con, c);
    assert!(err_of(&v).is_none(), "{}: {v:?}", show(c));
    v
}

/// RESTORE of `payload` into `dst` with the same absolute expiry as `src` (the expiry
/// is part of a key's digest).
fn restore_like(con: &mut Connection, src: &str, dst: &str, payload: &[u8]) -> redis::Cmd {
    let at: i64 = cmd("PEXPIRETIME").arg(src).query(con).expect("PEXPIRETIME");
    let mut c = cmd("RESTORE");
    c.arg(dst).arg(at.max(0)).arg(payload).arg("REPLACE");
    if at > 0 {
        c.arg("ABSTTL");
    }
    c
}

fn dump_of(con: &mut Connection, key: &str) -> Vec<u8> {
    cmd("DUMP").arg(key).query(con).expect("DUMP")
}

fn digest_value(con: &mut Connection, key: &[u8]) -> Value {
    raw(con, cmd("DEBUG").arg("DIGEST-VALUE").arg(key))
}

fn base(con: &mut Connection, key: &str, ty: Ty) -> Base {
    let payload = dump_of(con, key);
    let dump = parse_dump(&payload);
    assert_eq!(
        dump.type_name(),
        ty.name(),
        "{key}: module id {:#x}",
        dump.module_id
    );
    assert_eq!(dump.encver(), 1, "{key}: encoding version");
    Base {
        key: key.to_string(),
        payload,
        dump,
    }
}

/// Locks: short, long compressible, long random and binary owners, several holds.
fn lock_bases(con: &mut Connection) -> Vec<Base> {
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

/// Filters: one layer, two layers, sparse (LZF), non-scaling and full, expansion 1.
fn filter_bases(con: &mut Connection) -> Vec<Base> {
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
            matches!(f[..3], [Field::D(_), Field::U(_), Field::U(_)]) && (f.len() - 3) % 5 == 0,
            "{}: filter layout {:?}",
            b.key,
            f.iter().map(field_kind).collect::<Vec<_>>()
        );
    }
    assert!(layer_count(&bases[1].dump) >= 2 && layer_count(&bases[4].dump) >= 3);
    bases
}

/// Limiters: every kind, a token bucket in debt, a window with history.
fn limiter_bases(con: &mut Connection) -> Vec<Base> {
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
    let bases: Vec<Base> = ["rb:token", "rb:debt", "rb:leaky", "rb:window", "rb:gcra"]
        .iter()
        .map(|k| base(con, k, Ty::Limiter))
        .collect();
    for b in &bases {
        let kinds: Vec<&str> = b.dump.fields.iter().map(field_kind).collect();
        let want: &[&str] = if b.key == "rb:window" {
            &["U"; 5]
        } else {
            &["U"; 6]
        };
        assert_eq!(kinds, want, "{}: limiter layout", b.key);
    }
    bases
}

/// A signed field as `RedisModule_SaveSigned` writes it: the UINT opcode with the
/// two's-complement bits.
fn sig(v: i64) -> Field {
    Field::U(v as u64)
}

fn field_kind(f: &Field) -> &'static str {
    match f {
        Field::I(_) => "I",
        Field::U(_) => "U",
        Field::F(_) => "F",
        Field::D(_) => "D",
        Field::S(_) => "S",
        Field::Raw(_) => "R",
    }
}

fn layer_count(d: &Dump) -> usize {
    d.fields.len().saturating_sub(3) / 5
}

/// Index of field `f` of filter layer `layer` (0 capacity, 1 rate, 2 hashes, 3 items, 4 bits).
fn layer_field(layer: usize, f: usize) -> usize {
    3 + layer * 5 + f
}

/// A value of the same kind but odd.
fn odd_same(rng: &mut Rng, f: &Field) -> Field {
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
fn forge_lock(rng: &mut Rng, d: &mut Dump) {
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
fn forge_filter(rng: &mut Rng, d: &mut Dump) {
    let layers = layer_count(d);
    if layers == 0 || !(d.fields.len() - 3).is_multiple_of(5) {
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
            let mut fields = d.fields[..3].to_vec();
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

/// Limiter-specific forgeries: kinds, clock, deficit, tick rates, window fields.
fn forge_limiter(rng: &mut Rng, d: &mut Dump) {
    let now = now_ms();
    if d.fields.is_empty() {
        return;
    }
    let window = d.fields.len() == 5;
    if !window && d.fields.len() != 6 {
        // Not a limiter layout (another type's fields): only the kind.
        d.fields[0] = Field::U(rng.pick(&[1, 2, 3, 4]));
        return;
    }
    match rng.below(6) {
        0 => d.fields[0] = Field::U(rng.pick(&[0, 1, 2, 3, 4, 5, 255, 1 << 32, u64::MAX])),
        1 => {
            // The other layout under this kind, or this layout under the other kind.
            if window {
                d.fields = vec![
                    Field::U(rng.pick(&[1, 2, 3, 4])),
                    sig(now),
                    Field::U(0),
                    Field::U(rng.next()),
                    Field::U(1 + rng.below(1 << 20) as u64),
                    Field::U(1 + rng.below(1 << 20) as u64),
                ];
            } else {
                d.fields = vec![
                    Field::U(rng.pick(&[1, 2, 3, 4])),
                    sig(now),
                    sig(rng.pick(&[1, 1000, LONG_TTL_MS])),
                    Field::U(rng.below(1000) as u64),
                    Field::U(rng.below(1000) as u64),
                ];
            }
        }
        2 => d.fields[1] = sig(rng.pick(&[-1, 0, 1, now + 1_000_000_000, i64::MAX, i64::MIN])),
        3 if !window => {
            // Deficit high / low words.
            let i = rng.pick(&[2usize, 3]);
            let r = rng.next();
            d.fields[i] = Field::U(rng.pick(&[0, 1, 1 << 63, u64::MAX, u64::MAX - 1, r]));
        }
        4 if !window => {
            // Ticks per token / per ms.
            let i = rng.pick(&[4usize, 5]);
            d.fields[i] = Field::U(rng.pick(&[0, 1, 2, 1 << 32, 1 << 63, u64::MAX]));
        }
        _ if window => {
            let i = 2 + rng.below(3);
            d.fields[i] = if i == 2 {
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

fn forge_typed(rng: &mut Rng, ty: Ty, d: &mut Dump) {
    match ty {
        Ty::Lock => forge_lock(rng, d),
        Ty::Filter => forge_filter(rng, d),
        Ty::Limiter => forge_limiter(rng, d),
    }
}

const KINDS: usize = 12;

/// One corrupt or forged payload of kind `kind` from `b`. `others` are bases of the
/// other types (for type confusion).
fn make_payload(rng: &mut Rng, ty: Ty, b: &Base, others: &[&Base], kind: usize) -> Vec<u8> {
    let mut d = b.dump.clone();
    let n = d.fields.len();
    match kind {
        0..=2 => return corrupt_bytes(rng, &b.payload, kind),
        3 => {
            let i = rng.below(n);
            d.fields[i] = odd_same(rng, &d.fields[i]);
        }
        4 => {
            let i = rng.below(n);
            d.fields[i] = other_kind(rng, &d.fields[i]);
        }
        5 => match rng.below(5) {
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

/// What went wrong without taking the server down (reported at the end).
#[derive(Default)]
struct Findings {
    internal: Vec<String>,
    read_failures: Vec<String>,
    reads_that_wrote: Vec<String>,
    round_trips: Vec<String>,
    odd_codes: Vec<String>,
}

impl Findings {
    fn push(list: &mut Vec<String>, s: String) {
        if list.len() < 10 {
            list.push(s);
        }
    }

    fn is_empty(&self) -> bool {
        self.internal.is_empty()
            && self.read_failures.is_empty()
            && self.reads_that_wrote.is_empty()
            && self.round_trips.is_empty()
            && self.odd_codes.is_empty()
    }
}

/// Runs `c`, recording caught panics and odd error codes.
fn run(con: &mut Connection, c: &redis::Cmd, found: &mut Findings, ctx: &str) -> Value {
    let v = raw(con, c);
    if let Some(e) = err_of(&v) {
        if e.contains("internal error") {
            Findings::push(&mut found.internal, format!("{ctx}: {} -> {e}", show(c)));
        } else if !e.starts_with("ERR") && !e.starts_with("WRONGTYPE") {
            Findings::push(&mut found.odd_codes, format!("{ctx}: {} -> {e}", show(c)));
        }
    }
    v
}

fn ints(v: &Value) -> Option<Vec<i64>> {
    match v {
        Value::Array(a) => a
            .iter()
            .map(|x| match x {
                Value::Int(n) => Some(*n),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// DLOCK.INFO: nil, or owner, token > 0, ttl_ms >= -1 (-1: the key has no
/// expiry, as after a RESTORE with ttl 0), holds > 0, waiters >= 0.
fn lock_info_ok(v: &Value) -> bool {
    match v {
        Value::Nil => true,
        Value::Array(a) if a.len() == 10 => {
            let n = |i: usize| match a[i] {
                Value::Int(n) => n,
                _ => i64::MIN,
            };
            matches!(a[1], Value::BulkString(ref o) if !o.is_empty())
                && n(3) > 0
                && n(5) >= -1
                && n(7) > 0
                && n(9) >= 0
        }
        _ => false,
    }
}

/// BF.INFOX: capacity, size, number of filters (>= 1), items (all >= 0), expansion
/// (>= 1 or nil) and an error rate in (0, 1).
fn filter_info_ok(v: &Value) -> bool {
    let Value::Array(a) = v else {
        return false;
    };
    if a.len() != 12 {
        return false;
    }
    let n = |i: usize| match a[i] {
        Value::Int(n) => n,
        _ => i64::MIN,
    };
    let rate = match &a[11] {
        Value::Double(d) => *d,
        Value::BulkString(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(f64::NAN),
        Value::SimpleString(s) => s.parse().unwrap_or(f64::NAN),
        _ => f64::NAN,
    };
    n(1) >= 0
        && n(3) >= 0
        && n(5) >= 1
        && n(7) >= 0
        && (matches!(a[9], Value::Nil) || n(9) >= 1)
        && rate > 0.0
        && rate < 1.0
}

/// RL.TOKEN / LEAKY / WINDOW: allowed 0/1, remaining >= 0, wait_ms >= -1, reset_ms >= 0.
fn decision_ok(v: &Value) -> bool {
    matches!(ints(v).as_deref(), Some([a, r, w, z]) if (0..=1).contains(a) && *r >= 0 && *w >= -1 && *z >= 0)
}

/// RL.GCRA: limited 0/1, limit, remaining >= 0, retry_after_s >= -1, reset_after_s >= 0.
fn gcra_ok(v: &Value) -> bool {
    matches!(ints(v).as_deref(), Some([l, lim, r, retry, reset]) if (0..=1).contains(l) && *lim >= 0 && *r >= 0 && *retry >= -1 && *reset >= 0)
}

/// A check of a reply.
type Check = fn(&Value) -> bool;

/// The type's read commands: must answer (not an error) and change nothing.
fn read_checks(con: &mut Connection, ty: Ty, key: &str, found: &mut Findings, ctx: &str) {
    let before = digest_value(con, key.as_bytes());
    let reads: Vec<(redis::Cmd, Check)> = match ty {
        Ty::Lock => vec![(cmd("DLOCK.INFO").arg(key).clone(), lock_info_ok)],
        Ty::Filter => vec![
            (cmd("BF.INFOX").arg(key).clone(), filter_info_ok),
            (
                cmd("BF.EXISTSX").arg(key).arg("fb:small:1").clone(),
                is_int01,
            ),
            (
                cmd("BF.EXISTSX").arg(key).arg("absent-item").clone(),
                is_int01,
            ),
            (
                cmd("BF.CARDX").arg(key).clone(),
                |v| matches!(v, Value::Int(n) if *n >= 0),
            ),
            (
                cmd("BF.MEXISTSX").arg(key).arg("a").arg("fb:two:3").clone(),
                |v| matches!(v, Value::Array(a) if a.len() == 2 && a.iter().all(is_int01)),
            ),
        ],
        Ty::Limiter => Vec::new(),
    };
    for (c, ok) in &reads {
        let v = run(con, c, found, ctx);
        if !ok(&v) {
            Findings::push(
                &mut found.read_failures,
                format!("{ctx}: {} -> {v:?}", show(c)),
            );
        }
    }
    if ty == Ty::Limiter {
        // COST 0 only looks. Exactly the command of the stored kind answers; the
        // others say the key holds another kind (or arithmetic would overflow).
        let looks = [
            cmd("RL.TOKEN")
                .arg(key)
                .arg("10/s")
                .arg(10)
                .arg("COST")
                .arg(0)
                .clone(),
            cmd("RL.LEAKY")
                .arg(key)
                .arg("10/s")
                .arg(10)
                .arg("COST")
                .arg(0)
                .clone(),
            cmd("RL.WINDOW")
                .arg(key)
                .arg(10)
                .arg(1000)
                .arg("COST")
                .arg(0)
                .clone(),
            cmd("RL.GCRA")
                .arg(key)
                .arg(10)
                .arg(10)
                .arg(1)
                .arg("QUANTITY")
                .arg(0)
                .clone(),
        ];
        let mut answered = 0;
        for (i, c) in looks.iter().enumerate() {
            let v = run(con, c, found, ctx);
            match &v {
                Value::ServerError(_) => {}
                v if (i < 3 && decision_ok(v)) || (i == 3 && gcra_ok(v)) => answered += 1,
                other => Findings::push(
                    &mut found.read_failures,
                    format!("{ctx}: {} -> {other:?}", show(c)),
                ),
            }
        }
        if answered > 1 {
            Findings::push(
                &mut found.read_failures,
                format!("{ctx}: {answered} RL commands of different kinds answered for {key}"),
            );
        }
    }
    let after = digest_value(con, key.as_bytes());
    if after != before {
        Findings::push(
            &mut found.reads_that_wrote,
            format!("{ctx}: read commands changed {key}: {before:?} -> {after:?}"),
        );
    }
}

/// Every other command on an accepted value; then DUMP / RESTORE must give it back.
fn exercise(con: &mut Connection, ty: Ty, key: &str, i: usize, found: &mut Findings, ctx: &str) {
    let generic = [
        cmd("TYPE").arg(key).clone(),
        cmd("PTTL").arg(key).clone(),
        cmd("MEMORY").arg("USAGE").arg(key).clone(),
        cmd("OBJECT").arg("ENCODING").arg(key).clone(),
    ];
    for c in &generic {
        run(con, c, found, ctx);
    }
    // Whatever was accepted DUMPs and RESTOREs to the same value.
    if let Value::BulkString(p) = raw(con, cmd("DUMP").arg(key)) {
        let again = format!("{key}:again");
        let restore = restore_like(con, key, &again, &p);
        let v = run(con, &restore, found, ctx);
        if err_of(&v).is_some() {
            Findings::push(
                &mut found.round_trips,
                format!(
                    "{ctx}: DUMP of the accepted value does not RESTORE: {v:?}; payload {}",
                    hex(&p)
                ),
            );
        } else {
            let (a, b) = (
                digest_value(con, key.as_bytes()),
                digest_value(con, again.as_bytes()),
            );
            if a != b {
                Findings::push(
                    &mut found.round_trips,
                    format!("{ctx}: DUMP/RESTORE changed the value: {a:?} -> {b:?}"),
                );
            }
        }
        raw(con, cmd("DEL").arg(&again));
    }
    let owner = format!("fz{}", i % 3);
    let writes: Vec<redis::Cmd> = match ty {
        Ty::Lock => vec![
            cmd("DLOCK.ACQUIRE")
                .arg(key)
                .arg(&owner)
                .arg(LONG_TTL_MS)
                .clone(),
            cmd("DLOCK.EXTEND")
                .arg(key)
                .arg(&owner)
                .arg(LONG_TTL_MS)
                .clone(),
            cmd("DLOCK.RELEASE").arg(key).arg("a").clone(),
            cmd("DLOCK.RELEASE").arg(key).arg("re-entrant").clone(),
            cmd("DLOCK.ACQUIRE")
                .arg(key)
                .arg("re-entrant")
                .arg(LONG_TTL_MS)
                .clone(),
            cmd("DLOCK.INFO").arg(key).clone(),
        ],
        Ty::Filter => vec![
            cmd("BF.ADDX").arg(key).arg(format!("new{i}")).clone(),
            cmd("BF.MADDX")
                .arg(key)
                .arg(format!("m{i}a"))
                .arg(format!("m{i}b"))
                .arg("fb:small:0")
                .clone(),
            cmd("BF.INSERTX")
                .arg(key)
                .arg("NOCREATE")
                .arg("ITEMS")
                .arg(format!("n{i}"))
                .clone(),
            cmd("BF.EXISTSX").arg(key).arg(format!("new{i}")).clone(),
            cmd("BF.INFOX").arg(key).arg("SIZE").clone(),
            cmd("BF.RESERVEX").arg(key).arg(0.01).arg(10).clone(),
        ],
        Ty::Limiter => vec![
            cmd("RL.TOKEN").arg(key).arg("1/h").arg(10).clone(),
            cmd("RL.TOKEN")
                .arg(key)
                .arg("inf")
                .arg(5)
                .arg("COST")
                .arg(2)
                .arg("MAXWAIT")
                .arg(1000)
                .clone(),
            cmd("RL.LEAKY").arg(key).arg("1/h").arg(10).clone(),
            cmd("RL.WINDOW").arg(key).arg(100).arg(LONG_TTL_MS).clone(),
            cmd("RL.GCRA").arg(key).arg(10).arg(1).arg(3600).clone(),
            cmd("RL.TOKEN").arg(key).arg("1000000/ms").arg(0).clone(),
        ],
    };
    for c in &writes {
        run(con, c, found, ctx);
    }
    if rand_copy(i) {
        run(
            con,
            cmd("COPY")
                .arg(key)
                .arg(format!("{key}:copy"))
                .arg("REPLACE"),
            found,
            ctx,
        );
    }
}

fn rand_copy(i: usize) -> bool {
    i % 7 == 3
}

fn keys_matching(con: &mut Connection, filter: &[&str]) -> Vec<Vec<u8>> {
    let mut cursor: u64 = 0;
    let mut keys = Vec::new();
    loop {
        let mut c = cmd("SCAN");
        c.arg(cursor).arg("COUNT").arg(1000);
        for f in filter {
            c.arg(*f);
        }
        let (next, batch): (u64, Vec<Vec<u8>>) = c.query(con).expect("SCAN");
        keys.extend(batch);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    keys.sort();
    keys.dedup();
    keys
}

/// Filter keys and the sum of their sizes.
fn filter_census(con: &mut Connection) -> (i64, i64) {
    let keys = keys_matching(con, &["TYPE", "warden-bf"]);
    let mut bytes = 0;
    for k in &keys {
        let v: Value = cmd("BF.INFOX").arg(k).arg("SIZE").query(con).expect("SIZE");
        bytes += match v {
            Value::Int(n) => n,
            Value::Array(a) if a.len() == 1 => match a[0] {
                Value::Int(n) => n,
                _ => panic!("BF.INFOX SIZE"),
            },
            other => panic!("BF.INFOX SIZE: {other:?}"),
        };
    }
    (keys.len() as i64, bytes)
}

#[test]
fn crc64_matches_redis() {
    // The check value from Redis's crc64.c.
    assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
}

/// Controls: re-encoded real payloads are accepted as the same value (so forged ones
/// really reach `rdb_load`), a bad CRC is refused by Redis itself, and forgeries that
/// break a documented invariant of each type are refused.
#[test]
fn forged_payloads_reach_each_types_loader() {
    let mut s = Server::start();
    let mut con = timed(s.conn());
    let locks = lock_bases(&mut con);
    let filters = filter_bases(&mut con);
    let limiters = limiter_bases(&mut con);
    for b in locks.iter().chain(&filters).chain(&limiters) {
        let key = format!("{}:reenc", b.key);
        let restore = restore_like(&mut con, &b.key, &key, &encode(&b.dump));
        let v = raw(&mut con, &restore);
        assert!(is_ok(&v), "{}: re-encoded payload refused: {v:?}", b.key);
        assert_eq!(
            digest_value(&mut con, key.as_bytes()),
            digest_value(&mut con, b.key.as_bytes()),
            "{}: re-encoded payload",
            b.key
        );
        let mut bad = b.payload.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let v = raw(&mut con, cmd("RESTORE").arg("badcrc").arg(0).arg(&bad));
        assert!(err_of(&v).is_some(), "{}: bad CRC accepted", b.key);
    }

    let now = now_ms();
    let mut must_fail: Vec<(String, Dump)> = Vec::new();
    let mut with = |name: &str, base: &Base, f: &dyn Fn(&mut Dump)| {
        let mut d = base.dump.clone();
        f(&mut d);
        must_fail.push((format!("{} {name}", base.key), d));
    };
    let lock = &locks[0];
    with("owner empty", lock, &|d| d.fields[0] = Field::S(Vec::new()));
    with("token 0", lock, &|d| d.fields[1] = sig(0));
    with("token -1", lock, &|d| d.fields[1] = sig(-1));
    with("holds 0", lock, &|d| d.fields[2] = sig(0));
    with("holds -5", lock, &|d| d.fields[2] = sig(-5));
    with("deadline 0", lock, &|d| d.fields[3] = sig(0));
    with("deadline i64::MIN", lock, &|d| d.fields[3] = sig(i64::MIN));
    with("token with the SINT opcode", lock, &|d| {
        d.fields[1] = Field::I(now * 1000)
    });
    with("missing deadline", lock, &|d| {
        d.fields.pop();
    });
    with("extra field", lock, &|d| d.fields.push(sig(1)));
    with("encoding version 2", lock, &|d| {
        d.module_id = (d.module_id & !1023) | 2
    });
    with("owner length 2^62", lock, &|d| {
        let mut r = Vec::new();
        enc_len(&mut r, OP_STRING);
        enc_len(&mut r, 1 << 62);
        r.extend_from_slice(b"a");
        d.fields[0] = Field::Raw(r);
    });
    let token = &limiters[0];
    let window = &limiters[3];
    with("kind 0", token, &|d| d.fields[0] = Field::U(0));
    with("kind 5", token, &|d| d.fields[0] = Field::U(5));
    with("kind u64::MAX", token, &|d| {
        d.fields[0] = Field::U(u64::MAX)
    });
    with("ticks per token 0", token, &|d| d.fields[4] = Field::U(0));
    with("last_ms -1", token, &|d| d.fields[1] = sig(-1));
    with("window layout under kind 1", window, &|d| {
        d.fields[0] = Field::U(1)
    });
    with("bucket layout under kind 4", token, &|d| {
        d.fields[0] = Field::U(4)
    });
    with("window_ms 0", window, &|d| d.fields[2] = sig(0));
    with("window_ms -1", window, &|d| d.fields[2] = sig(-1));
    with("start_ms -1", window, &|d| d.fields[1] = sig(-1));
    with("no EOF", token, &|d| d.eof = false);
    let filter = &filters[0];
    with("layer count 0", filter, &|d| d.fields[2] = Field::U(0));
    with("layer count u64::MAX", filter, &|d| {
        d.fields[2] = Field::U(u64::MAX)
    });
    with("hashes 0", filter, &|d| {
        d.fields[layer_field(0, 2)] = Field::U(0)
    });
    with("error rate NaN", filter, &|d| {
        d.fields[0] = Field::D(f64::NAN)
    });
    with("lock fields under the filter id", filter, &|d| {
        d.fields = lock.dump.fields.clone()
    });
    with("filter fields under the lock id", lock, &|d| {
        d.fields = filter.dump.fields.clone()
    });
    with("limiter fields under the lock id", lock, &|d| {
        d.fields = token.dump.fields.clone()
    });

    let filters_before = warden_stat(&mut con, "bf_filters");
    let bytes_before = warden_stat(&mut con, "bf_bytes");
    let mut accepted = Vec::new();
    for (name, d) in &must_fail {
        let payload = encode(d);
        let v = raw(
            &mut con,
            cmd("RESTORE")
                .arg("forged")
                .arg(0)
                .arg(&payload)
                .arg("REPLACE"),
        );
        if err_of(&v).is_none() {
            accepted.push(format!("{name}: accepted; payload {}", hex(&payload)));
            raw(&mut con, cmd("DEL").arg("forged"));
        }
    }
    assert_eq!(warden_stat(&mut con, "bf_filters"), filters_before);
    assert_eq!(warden_stat(&mut con, "bf_bytes"), bytes_before);
    s.assert_alive();
    assert!(
        accepted.is_empty(),
        "forged payloads that must be refused were accepted:\n{}",
        accepted.join("\n")
    );
}

#[test]
fn corrupt_payloads_of_every_type_never_crash_the_server() {
    let per_type = std::env::var("WARDEN_PAYLOAD_FUZZ")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_PER_TYPE);
    let started = Instant::now();
    let mut m = Server::start();
    let mut r = m.start_replica(&[], &[]);
    let mut con = timed(m.conn());
    let lock = lock_bases(&mut con);
    let filter = filter_bases(&mut con);
    let limiter = limiter_bases(&mut con);
    let base_keys: Vec<String> = lock
        .iter()
        .chain(&filter)
        .chain(&limiter)
        .map(|b| b.key.clone())
        .collect();
    let base_digests: Vec<Value> = base_keys
        .iter()
        .map(|k| digest_value(&mut con, k.as_bytes()))
        .collect();

    let mut rng = Rng(0x5eed_0fda_7a00_0001);
    let mut found = Findings::default();
    let (mut total, mut accepted, mut refused) = (0usize, 0usize, 0usize);
    let mut non_module = 0usize;
    let mut per_type_counts = Vec::new();
    for ty in [Ty::Lock, Ty::Filter, Ty::Limiter] {
        let (bases, others): (&[Base], Vec<&Base>) = match ty {
            Ty::Lock => (&lock, filter.iter().chain(&limiter).collect()),
            Ty::Filter => (&filter, lock.iter().chain(&limiter).collect()),
            Ty::Limiter => (&limiter, lock.iter().chain(&filter).collect()),
        };
        let mut per_kind = [[0usize; 2]; KINDS];
        let (mut acc, mut refu) = (0usize, 0usize);
        for i in 0..per_type {
            let kind = i % KINDS;
            let b = &bases[(i / KINDS) % bases.len()];
            let payload = make_payload(&mut rng, ty, b, &others, kind);
            let key = format!("scratch:{}:{}", ty.name(), i % 8);
            let ctx = format!(
                "{} payload {i} (kind {kind}, from {}) {}",
                ty.name(),
                b.key,
                hex(&payload)
            );
            total += 1;
            let v = run(
                &mut con,
                cmd("RESTORE").arg(&key).arg(0).arg(&payload).arg("REPLACE"),
                &mut found,
                &ctx,
            );
            if err_of(&v).is_some() {
                refused += 1;
                refu += 1;
                per_kind[kind][1] += 1;
                // A refused RESTORE with REPLACE leaves the old key alone or gone, never
                // a half-built value: whatever is there answers as before.
                continue;
            }
            assert!(is_ok(&v), "{ctx}: RESTORE answered {v:?}");
            accepted += 1;
            acc += 1;
            per_kind[kind][0] += 1;
            let t: Value = raw(&mut con, cmd("TYPE").arg(&key));
            let ty_name = match &t {
                Value::SimpleString(s) => s.clone(),
                Value::Okay => "OK".to_string(),
                other => format!("{other:?}"),
            };
            // An accepted payload may carry another warden type's id (forged on
            // purpose): check the type it became.
            let actual = match ty_name.as_str() {
                "warden-lk" => Ty::Lock,
                "warden-bf" => Ty::Filter,
                "warden-rl" => Ty::Limiter,
                _ => {
                    // A forged type byte made it a native value: not the module's.
                    non_module += 1;
                    raw(&mut con, cmd("DEL").arg(&key));
                    continue;
                }
            };
            read_checks(&mut con, actual, &key, &mut found, &ctx);
            exercise(&mut con, actual, &key, i, &mut found, &ctx);
            if i % 100 == 99 {
                m.assert_alive();
                assert!(
                    r.is_alive(),
                    "replica died (an effect of an accepted payload was refused there?) after {ctx}; replica log:\n{}",
                    r.log_tail(20)
                );
                con = timed(m.conn());
            }
        }
        println!(
            "payload fuzz {}: {per_type} payloads, {acc} accepted, {refu} refused; per kind [accepted, refused]: {per_kind:?}",
            ty.name()
        );
        per_type_counts.push((ty, acc, refu));
        m.assert_alive();
    }
    m.assert_alive();
    r.assert_alive();

    // The bases are untouched.
    for (k, d) in base_keys.iter().zip(&base_digests) {
        assert_eq!(&digest_value(&mut con, k.as_bytes()), d, "base {k} changed");
    }
    // Filter accounting, then master and replica agree (long TTLs first, so nothing
    // expires while they are compared), then DEBUG RELOAD keeps everything.
    let (n, bytes) = filter_census(&mut con);
    assert_eq!(
        (
            warden_stat(&mut con, "bf_filters"),
            warden_stat(&mut con, "bf_bytes")
        ),
        (n, bytes),
        "INFO warden (bf_filters, bf_bytes) vs filter keys and their sizes"
    );
    for k in keys_matching(&mut con, &[]) {
        let t: i64 = cmd("PTTL").arg(&k).query(&mut con).expect("PTTL");
        if (0..LONG_TTL_MS).contains(&t) {
            let _: i64 = cmd("PEXPIRE")
                .arg(&k)
                .arg(LONG_TTL_MS)
                .query(&mut con)
                .expect("PEXPIRE");
        }
    }
    m.sync_replicas(1);
    let mut rc = timed(r.conn());
    let md = db_digest(&mut con);
    assert_eq!(
        db_digest(&mut rc),
        md,
        "replica digest differs from the master's; replica log:\n{}",
        r.log_tail(20)
    );
    assert_eq!(
        (
            warden_stat(&mut rc, "bf_filters"),
            warden_stat(&mut rc, "bf_bytes")
        ),
        (n, bytes),
        "replica: INFO warden vs filter keys"
    );
    must(&mut con, cmd("DEBUG").arg("RELOAD"));
    assert_eq!(db_digest(&mut con), md, "DEBUG RELOAD changed the dataset");
    assert_eq!(
        (
            warden_stat(&mut con, "bf_filters"),
            warden_stat(&mut con, "bf_bytes")
        ),
        filter_census(&mut con),
        "after DEBUG RELOAD: INFO warden vs filter keys"
    );
    m.assert_alive();
    r.assert_alive();
    println!(
        "payload fuzz: {total} payloads, {accepted} accepted ({non_module} of them as native values), {refused} refused, 0 crashes ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    for (ty, acc, refu) in per_type_counts {
        assert!(
            refu > acc,
            "{}: most corrupt payloads must be refused ({acc} accepted, {refu} refused)",
            ty.name()
        );
    }
    assert!(
        found.is_empty(),
        "accepted payloads misbehaved:\ncaught panics: {:#?}\nread replies of the wrong shape or out of range: {:#?}\nreads that wrote: {:#?}\nDUMP/RESTORE round trips: {:#?}\nodd error codes: {:#?}",
        found.internal,
        found.read_failures,
        found.reads_that_wrote,
        found.round_trips,
        found.odd_codes
    );
}

/// A lock payload whose fencing token is the largest 64-bit integer is either refused,
/// or later grants still get strictly increasing tokens (or an error): never the same
/// token twice.
#[test]
fn restored_lock_token_cannot_exhaust_fencing_tokens() {
    let mut s = Server::start();
    let mut con = timed(s.conn());
    let lock = lock_bases(&mut con);
    let mut findings = Vec::new();
    for token in [i64::MAX, i64::MAX - 1] {
        let mut d = lock[0].dump.clone();
        d.fields[1] = sig(token);
        let payload = encode(&d);
        let v = raw(
            &mut con,
            cmd("RESTORE")
                .arg("forged:lock")
                .arg(0)
                .arg(&payload)
                .arg("REPLACE"),
        );
        if err_of(&v).is_some() {
            continue;
        }
        let mut tokens = Vec::new();
        for i in 0..3 {
            let key = format!("fresh:{token}:{i}");
            let v = raw(
                &mut con,
                cmd("DLOCK.ACQUIRE").arg(&key).arg("p").arg(10_000),
            );
            tokens.push(v.clone());
            raw(&mut con, cmd("DLOCK.RELEASE").arg(&key).arg("p"));
        }
        let ints: Vec<i64> = tokens
            .iter()
            .filter_map(|v| match v {
                Value::Int(t) => Some(*t),
                _ => None,
            })
            .collect();
        if ints.windows(2).any(|w| w[1] <= w[0]) {
            findings.push(format!(
                "after RESTORE of a lock with token {token} (payload {}), three grants on fresh keys returned {tokens:?}",
                hex(&payload)
            ));
        }
    }
    s.assert_alive();
    assert!(
        findings.is_empty(),
        "fencing tokens repeat:\n{}",
        findings.join("\n")
    );
}
