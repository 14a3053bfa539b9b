//! Rate limiters (`warden-rl`) in the corrupt-payload tests (the payload fuzzer
//! and its controls in `tests/it/module/`, through `kit.rs`): real DUMPs of every
//! kind, the layouts of the three encoding versions, the family's forgeries, the
//! refusals of the loader, what a limiter a payload made must answer; and the
//! family's own payload test: version 1 payloads load with their meaning.

use crate::common::kit::foreign;
use crate::common::payload::*;
use crate::common::payload_bases::*;
use crate::common::payload_checks::*;
use crate::common::payload_forgeries::{odd_same, Forged};
use crate::common::*;
use crate::rate::kit::{KIT, LIMITER};

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
    let mut bases = bases_of(con, &LIMITER_BASES, &LIMITER);
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

/// The layout of encoding version 3 the module writes (`limiter_v3`) of a
/// base, which must load as the same value too.
pub fn current_layout(b: &Base) -> Vec<(&'static str, Dump)> {
    limiter_v3(&b.dump)
        .map(|d| ("version 3", d))
        .into_iter()
        .collect()
}

/// Forgeries of limiters the loader must refuse: kinds, counts and limits out of
/// line, rates and bursts out of range, a deficit or clock out of range, one
/// kind's layout under another, other encoding versions and their layouts, the
/// framing of version 3's one string; a value of another family under the
/// limiter id, and back. Each forgery of fields in version 2's layout is
/// refused in version 3's too.
pub fn limiter_refusals(limiters: &[Base], others: &[&Base]) -> Forged {
    let mut f = Forged::default();
    let mut with = |name: &str, base: &Base, g: &dyn Fn(&mut Dump)| f.with(name, base, g);
    let token = &limiters[0];
    let leaky = &limiters[2];
    let window = &limiters[3];
    let gcra = &limiters[4];
    let several = &limiters[5];
    with("kind 0", token, &|d| d.fields[0] = Field::U(0));
    with("kind 5", token, &|d| d.fields[0] = Field::U(5));
    with("kind u64::MAX", token, &|d| {
        d.fields[0] = Field::U(u64::MAX)
    });
    with("count 0", token, &|d| d.fields[1] = Field::U(0));
    with("count 2 with one limit", token, &|d| {
        d.fields[1] = Field::U(2)
    });
    with("count 9", several, &|d| d.fields[1] = Field::U(9));
    with("count u64::MAX", several, &|d| {
        d.fields[1] = Field::U(u64::MAX)
    });
    with("9 limits", token, &|d| {
        let l = d.fields[2..8].to_vec();
        for _ in 0..8 {
            d.fields.extend(l.clone());
        }
        d.fields[1] = Field::U(9);
    });
    with("leaky with 2 limits", leaky, &|d| {
        let l = d.fields[2..8].to_vec();
        d.fields.extend(l);
        d.fields[1] = Field::U(2);
    });
    with("gcra with 2 limits", gcra, &|d| {
        let l = d.fields[2..8].to_vec();
        d.fields.extend(l);
        d.fields[1] = Field::U(2);
    });
    with("rate inf without the ticks of its deficit", token, &|d| {
        d.fields[5] = Field::U(0);
        d.fields[6] = Field::U(0);
    });
    with("gcra ticks per token 0 (inf)", gcra, &|d| {
        d.fields[5] = Field::U(0);
        d.fields[6] = Field::U(0);
    });
    with("gcra ticks per ms 0", gcra, &|d| d.fields[6] = Field::U(0));
    with("token burst above the range", token, &|d| {
        d.fields[7] = Field::U(1_000_000_000_000_001)
    });
    with("leaky burst 1", leaky, &|d| d.fields[7] = Field::U(1));
    with("gcra burst u64::MAX", gcra, &|d| {
        d.fields[7] = Field::U(u64::MAX)
    });
    with("deficit 2^127", token, &|d| d.fields[3] = Field::U(1 << 63));
    with("last_ms -1", token, &|d| d.fields[2] = sig(-1));
    with("last_ms -1 in a later limit", several, &|d| {
        d.fields[14] = sig(-1)
    });
    with("window layout under kind 1", window, &|d| {
        d.fields[0] = Field::U(1)
    });
    with("bucket layout under kind 4", token, &|d| {
        d.fields[0] = Field::U(4)
    });
    with("window_ms 0", window, &|d| d.fields[3] = sig(0));
    with("window_ms -1", window, &|d| d.fields[3] = sig(-1));
    with("start_ms -1", window, &|d| d.fields[2] = sig(-1));
    with("no EOF", token, &|d| d.eof = false);
    with("version 1 layout under version 2", token, &|d| {
        *d = limiter_v1(d);
        d.module_id = (d.module_id & !1023) | 2;
    });
    with("version 2 layout under version 1", token, &|d| {
        d.module_id = (d.module_id & !1023) | 1
    });
    with("version 1 ticks per token 0", token, &|d| {
        *d = limiter_v1(d);
        d.fields[4] = Field::U(0);
        d.fields[5] = Field::U(0);
    });
    with("version 2 layout under version 3", token, &|d| {
        d.module_id = (d.module_id & !1023) | 3
    });
    with("encoding version 4", token, &|d| {
        d.module_id = (d.module_id & !1023) | 4
    });
    // The current layout's own framing: one string of a kind byte, a count
    // byte and varints.
    let v3 = |d: &mut Dump| *d = limiter_v3(d).expect("a limiter layout");
    let string = |d: &mut Dump| -> Vec<u8> {
        match &d.fields[..] {
            [Field::S(b)] => b.clone(),
            other => panic!("not one string: {other:?}"),
        }
    };
    with("version 3: a byte past the end", token, &|d| {
        v3(d);
        let mut b = string(d);
        b.push(0);
        d.fields = vec![Field::S(b)];
    });
    with("version 3: the last byte missing", gcra, &|d| {
        v3(d);
        let mut b = string(d);
        b.pop();
        d.fields = vec![Field::S(b)];
    });
    with("version 3: a varint that never ends", window, &|d| {
        v3(d);
        let mut b = string(d);
        b.truncate(2);
        b.extend([0xff; 24]);
        d.fields = vec![Field::S(b)];
    });
    with("version 3: a deficit past 2^127", leaky, &|d| {
        v3(d);
        let mut b = string(d);
        b.truncate(2);
        b.push(1); // last_ms
        b.extend([0xff; 18]);
        b.push(0x03); // deficit: all 128 bits
        b.extend([1, 1, 0]);
        d.fields = vec![Field::S(b)];
    });
    with("version 3: empty", token, &|d| {
        d.fields = vec![Field::S(Vec::new())]
    });
    with("version 3: two strings", token, &|d| {
        v3(d);
        let b = string(d);
        d.fields = vec![Field::S(b.clone()), Field::S(b)];
    });
    f.confused(token, foreign(others, &KIT));
    // A forgery of fields (not of the version or framing) also in the
    // current layout, where it has one.
    let mut both = Forged::default();
    for (name, d) in f.0 {
        let fields_only = d.encver() == 2 && d.eof && d.type_name() == LIMITER.name;
        if let Some(v3) = limiter_v3(&d).filter(|_| fields_only) {
            both.0.push((format!("{name}, version 3"), v3));
        }
        both.0.push((name, d));
    }
    both
}

/// RL.TOKEN / LEAKY / WINDOW: allowed 0/1, remaining >= 0, wait_ms >= -1, reset_ms >= 0.
pub fn decision_ok(v: &Value) -> bool {
    matches!(ints(v).as_deref(), Some([a, r, w, z]) if (0..=1).contains(a) && *r >= 0 && *w >= -1 && *z >= 0)
}

/// RL.GCRA: limited 0/1, limit, remaining >= 0, retry_after_s >= -1, reset_after_s >= 0.
pub fn gcra_ok(v: &Value) -> bool {
    matches!(ints(v).as_deref(), Some([l, lim, r, retry, reset]) if (0..=1).contains(l) && *lim >= 0 && *r >= 0 && *retry >= -1 && *reset >= 0)
}

/// The reads of a limiter: COST 0 only looks. Exactly the command of the stored
/// kind answers; the others say the key holds another kind (or arithmetic
/// would overflow).
pub fn limiter_reads(con: &mut Connection, key: &str, found: &mut Findings, ctx: &str) {
    let looks = [
        cmd_of!("RL.TOKEN", key, "10/s", 10, "COST", 0),
        cmd_of!("RL.LEAKY", key, "10/s", 10, "COST", 0),
        cmd_of!("RL.WINDOW", key, 10, 1000, "COST", 0),
        cmd_of!("RL.GCRA", key, 10, 10, 1, "QUANTITY", 0),
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

/// The writes on a limiter a payload made: a call of every kind, several
/// limits, costs past the burst, a rate of inf and a huge one.
pub fn limiter_writes(con: &mut Connection, key: &str, _: usize, found: &mut Findings, ctx: &str) {
    let writes = [
        cmd_of!("RL.TOKEN", key, "1/h", 10),
        cmd_of!("RL.TOKEN", key, "inf", 5, "COST", 2, "MAXWAIT", 1000),
        cmd_of!("RL.LEAKY", key, "1/h", 10),
        cmd_of!("RL.WINDOW", key, 100, LONG_TTL_MS),
        cmd_of!("RL.GCRA", key, 10, 1, 3600),
        cmd_of!("RL.TOKEN", key, "1000000/ms", 0),
    ];
    run_all(con, &writes, found, ctx);
}

/// Limiter payloads in the layout of encoding version 1 (as an earlier warden
/// wrote them: one limit, no count, a token bucket without its burst) still
/// load, and mean what they meant: the same state (leaky, GCRA, window), or
/// for a token bucket the same deficit, read against the burst of the call.
#[test]
fn limiter_payloads_of_encoding_version_1_load_with_their_meaning() {
    let mut s = Server::start();
    let mut con = timed(s.conn(), PAYLOAD_READ_TIMEOUT);
    let limiters = limiter_bases(&mut con);
    let looks: [(&str, &[&str]); 5] = [
        ("rb:token", &["RL.TOKEN", "1/h", "10", "COST", "0"]),
        (
            "rb:debt",
            &["RL.TOKEN", "1/h", "5", "COST", "0", "MAXWAIT", "100000000"],
        ),
        ("rb:leaky", &["RL.LEAKY", "1/h", "10", "COST", "0"]),
        ("rb:window", &["RL.WINDOW", "100", "3600000", "COST", "0"]),
        ("rb:gcra", &["RL.GCRA", "10", "1", "3600", "QUANTITY", "0"]),
    ];
    for (key, look) in looks {
        let b = limiters.iter().find(|b| b.key == key).expect("base");
        let old = limiter_v1(&b.dump);
        assert_eq!(old.encver(), 1);
        let copy = format!("{key}:v1");
        let restore = restore_like(&mut con, key, &copy, &encode(&old));
        let v = raw(&mut con, &restore);
        assert!(is_ok(&v), "{key}: version 1 payload refused: {v:?}");
        let ask = |k: &str| {
            let mut c = cmd(look[0]);
            c.arg(k).arg(&look[1..]);
            c
        };
        let asked = std::time::Instant::now();
        let (now, then) = (raw(&mut con, &ask(key)), raw(&mut con, &ask(&copy)));
        // The second call lands later, by at most the time both took (several
        // ms on a busy machine): its wait and reset (ms) may be that much
        // shorter; everything else is equal.
        let apart = asked.elapsed().as_millis() as i64 + 1;
        match (ints(&now), ints(&then)) {
            (Some(a), Some(b)) if a.len() == 4 && b.len() == 4 => {
                assert_eq!(
                    a[..2],
                    b[..2],
                    "{key}: the version 1 state decides as the original"
                );
                for i in 2..4 {
                    assert!(
                        (0..=apart).contains(&(a[i] - b[i])),
                        "{key}: the version 1 state decides as the original: {a:?} vs {b:?}"
                    );
                }
            }
            _ => assert_eq!(
                then, now,
                "{key}: the version 1 state decides as the original"
            ),
        }
        if key != "rb:token" && key != "rb:debt" {
            assert_eq!(
                digest_value(&mut con, copy.as_bytes()),
                digest_value(&mut con, key.as_bytes()),
                "{key}: the same state"
            );
        }
    }
    // A version 1 token bucket missing 3 tokens: 7 of a burst of 10, 2 of 5.
    let r: Vec<i64> = query!(&mut con, "RL.TOKEN", "rb:token:v1", "1/h", 5, "COST", 0);
    assert_eq!(r[1], 2, "{r:?}");
    s.assert_alive();
}
