//! Locks (`warden-lk`) and lock sets (`warden-ls`) in the corrupt-payload tests
//! (the payload fuzzer and its controls in `tests/it/module/`, through
//! `kit.rs`): real DUMPs of several shapes, the family's forgeries of the packed
//! records (`record.rs`) and of the version 1 layout, the refusals of the
//! loader, what a lock a payload made must answer; and the family's own payload
//! tests: version 1 payloads still load, and a restored token never makes
//! fencing tokens repeat.

use crate::common::kit::foreign;
use crate::common::payload::*;
use crate::common::payload_bases::*;
use crate::common::payload_checks::*;
use crate::common::payload_forgeries::Forged;
use crate::common::*;
use crate::lock::kit::{KIT, LOCK, LOCK_SET};
use crate::lock::record::*;

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
    let bases: Vec<Base> = owners.iter().map(|(k, _)| base(con, k, &LOCK)).collect();
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
    let bases = bases_of(con, &["lsb:shared", "lsb:limit", "lsb:one"], &LOCK_SET);
    for b in &bases {
        let kinds: Vec<&str> = b.dump.fields.iter().map(field_kind).collect();
        assert_eq!(kinds, ["S"], "{}: lock set layout (packed)", b.key);
    }
    bases
}

/// Lock-specific forgeries, of the packed record (owner, token, holds) or
/// of the version 1 layout (owner, token, holds, deadline fields).
pub fn forge_lock(rng: &mut Rng, d: &mut Dump) {
    let now = now_ms();
    let Some(mut g) = Grant::read(d) else {
        return;
    };
    match rng.below(6) {
        0 => {
            g.owner = match rng.below(5) {
                0 => Vec::new(),
                1 => vec![0],
                2 => vec![b'o'; 64 * 1024],
                3 => rng.some_bytes(1, 40),
                _ => b"\xff".to_vec(),
            }
        }
        1 => {
            g.token = rng.pick(&[
                0,
                -1,
                1,
                i64::MIN,
                i64::MAX,
                i64::MAX - 1,
                (1 << 62) + 1,
                now * 1000,
                now * 1000 + 1_000_000_000,
            ])
        }
        2 => g.holds = rng.pick(&[0, -1, 1, 2, 7, 8, i64::MAX, i64::MIN, 1 << 40]),
        3 => {
            // The record's bytes cut, grown or a flag bit flipped.
            let mut b = g.lock_bytes();
            match rng.below(3) {
                0 => b.truncate(rng.below(b.len())),
                1 => b[0] ^= 1 << rng.below(8),
                _ => b.extend(rng.some_bytes(1, 10)),
            }
            d.fields = vec![Field::S(b)];
            return;
        }
        4 => {
            // Version 1 with a field out of range.
            g.deadline = now + 60_000;
            let mut old = g.v1_fields();
            let i = rng.below(4);
            old[i] = match i {
                0 => Field::S(rng.pick(&[Vec::new(), vec![0]])),
                3 => sig(rng.pick(&[0, -1, 1, i64::MAX, i64::MIN])),
                _ => sig(rng.pick(&[0, -1, i64::MAX, i64::MIN])),
            };
            *d = with_encver(d, 1);
            d.fields = old;
            return;
        }
        _ => {
            // The packed record under version 1, or version 1's fields under 2.
            if rng.chance(1, 2) {
                *d = with_encver(d, 1);
            } else {
                g.deadline = now + 60_000;
                d.fields = g.v1_fields();
            }
            return;
        }
    }
    g.put(d);
}

/// Lock sets: a limit, floor or holder count out of line with the holders; a holder's
/// owner, token, holds or deadline out of range; the record cut or grown.
pub fn forge_lock_set(rng: &mut Rng, d: &mut Dump) {
    let now = now_ms();
    let Some(mut set) = SetRec::read(d) else {
        return;
    };
    let holders = set.holders.len();
    let mut claim = holders as u64;
    match rng.below(5) {
        0 => set.limit = rng.pick(&[0, 1, 2, 1 << 20, (1 << 20) + 1, u64::MAX]),
        1 => set.floor = rng.pick(&[0, -1, 1, i64::MAX, now * 1000 - 1]),
        2 => {
            claim = rng.pick(&[
                0,
                holders as u64 + 1,
                holders.saturating_sub(1) as u64,
                1 << 40,
                u64::MAX,
            ])
        }
        3 if holders > 0 => {
            let h = &mut set.holders[rng.below(holders)];
            match rng.below(4) {
                0 => h.owner = rng.pick(&[Vec::new(), b"r1".to_vec(), b"a".to_vec()]),
                1 => h.token = rng.pick(&[0, -1, i64::MAX, now * 1000 + 1_000_000_000_000]),
                2 => h.holds = rng.pick(&[0, -1, i64::MAX]),
                _ => h.deadline = rng.pick(&[0, -1, 1, now - 1, i64::MAX]),
            }
        }
        _ => {
            let mut b = set.bytes_claiming(claim);
            match rng.below(2) {
                0 => b.truncate(rng.below(b.len())),
                _ => b.extend(rng.some_bytes(1, 10)),
            }
            d.fields = vec![Field::S(b)];
            return;
        }
    }
    d.fields = vec![Field::S(set.bytes_claiming(claim))];
}

/// Forgeries of locks the loader must refuse: an empty owner, a token or holds
/// out of range, the packed record cut, flagged wrongly or in another form,
/// another encoding version, a huge owner length; version 1 payloads with a field
/// out of range or missing; and a value of another family under the lock id,
/// and back.
pub fn lock_refusals(locks: &[Base], others: &[&Base]) -> Forged {
    let now = now_ms();
    let mut f = Forged::default();
    let mut with = |name: &str, base: &Base, g: &dyn Fn(&mut Dump)| f.with(name, base, g);
    let lock = &locks[0];
    let grant = Grant::of(&lock.dump);
    let forged: [(&str, Grant); 6] = [
        (
            "owner empty",
            Grant {
                owner: Vec::new(),
                ..grant.clone()
            },
        ),
        (
            "token 0",
            Grant {
                token: 0,
                ..grant.clone()
            },
        ),
        (
            "token -1",
            Grant {
                token: -1,
                ..grant.clone()
            },
        ),
        (
            "token 2^62 + 1",
            Grant {
                token: (1 << 62) + 1,
                ..grant.clone()
            },
        ),
        (
            "holds 0",
            Grant {
                holds: 0,
                ..grant.clone()
            },
        ),
        (
            "holds -5",
            Grant {
                holds: -5,
                ..grant.clone()
            },
        ),
    ];
    for (name, g) in forged {
        with(name, lock, &move |d| g.put(d));
    }
    let bytes = grant.lock_bytes();
    let mut raw_lock =
        |name: &str, b: Vec<u8>| with(name, lock, &move |d| d.fields = vec![Field::S(b.clone())]);
    raw_lock("empty record", Vec::new());
    raw_lock("head only", bytes[..1].to_vec());
    raw_lock("token cut short", bytes[..3].to_vec());
    raw_lock(
        "unknown flag",
        [&[bytes[0] | 0x40][..], &bytes[1..]].concat(),
    );
    raw_lock("holds flag without holds", {
        let n = usize::from(bytes[0] & 7) + 1;
        [&[bytes[0] | 8][..], &bytes[1..=n]].concat()
    });
    raw_lock("holds varint of 11 bytes", {
        let mut b = head(grant.token, 2, 8)[..9].to_vec();
        b.extend([0x80; 10]);
        b.push(1);
        b.extend_from_slice(b"o");
        b
    });
    with("the record as a number", lock, &|d| {
        d.fields = vec![Field::U(5)]
    });
    with("record and an extra field", lock, &|d| {
        d.fields.push(sig(1))
    });
    with("encoding version 3", lock, &|d| *d = with_encver(d, 3));
    with("owner length 2^62", lock, &|d| {
        let mut r = Vec::new();
        enc_len(&mut r, OP_STRING);
        enc_len(&mut r, 1 << 62);
        r.extend_from_slice(b"a");
        d.fields[0] = Field::Raw(r);
    });
    // Version 1 (today's main's layout: owner, token, holds, deadline) is
    // still read, with every field checked.
    let v1 = as_v1(&lock.dump, now + 60_000);
    let v1_with = |f: &dyn Fn(&mut Dump)| {
        let mut d = v1.clone();
        f(&mut d);
        d
    };
    for (name, d) in [
        (
            "v1 owner empty",
            v1_with(&|d| d.fields[0] = Field::S(Vec::new())),
        ),
        ("v1 token 0", v1_with(&|d| d.fields[1] = sig(0))),
        ("v1 token -1", v1_with(&|d| d.fields[1] = sig(-1))),
        ("v1 holds 0", v1_with(&|d| d.fields[2] = sig(0))),
        ("v1 holds -5", v1_with(&|d| d.fields[2] = sig(-5))),
        (
            "v1 token with the SINT opcode",
            v1_with(&|d| d.fields[1] = Field::I(now * 1000)),
        ),
        (
            "v1 missing deadline",
            v1_with(&|d| {
                d.fields.pop();
            }),
        ),
        ("v1 extra field", v1_with(&|d| d.fields.push(sig(1)))),
        ("v1 packed record", with_encver(&lock.dump, 1)),
    ] {
        with(name, lock, &move |x| *x = d.clone());
    }
    f.confused(lock, foreign(others, &KIT));
    f
}

/// Forgeries of lock sets the loader must refuse: no holders, an owner twice,
/// more holders than the limit, a limit, floor, token or deadline out of range,
/// a holder count that is not theirs, an owner cut short; the same in version 1.
pub fn lock_set_refusals(sets: &[Base], _: &[&Base]) -> Forged {
    let mut f = Forged::default();
    let mut with = |name: &str, base: &Base, g: &dyn Fn(&mut Dump)| f.with(name, base, g);
    // Lock sets: limit, floor, count, then each holder's grant, deadline and owner.
    let (shared, one) = (&sets[0], &sets[2]);
    let set = SetRec::of(&shared.dump);
    let mut with_set = |name: &str, base: &Base, s: SetRec, claim: Option<u64>| {
        let b = s.bytes_claiming(claim.unwrap_or(s.holders.len() as u64));
        with(name, base, &move |d| d.fields = vec![Field::S(b.clone())])
    };
    let none = SetRec {
        holders: Vec::new(),
        ..SetRec::of(&one.dump)
    };
    with_set("a set without holders", one, none, None);
    let mut twice = set.clone();
    twice.holders[1].owner = twice.holders[0].owner.clone();
    with_set("an owner holding twice", shared, twice, None);
    with_set(
        "two holders of LIMIT 1",
        shared,
        SetRec {
            limit: 1,
            ..set.clone()
        },
        None,
    );
    with_set(
        "limit 2^20 + 1",
        shared,
        SetRec {
            limit: (1 << 20) + 1,
            ..set.clone()
        },
        None,
    );
    with_set(
        "floor 0",
        shared,
        SetRec {
            floor: 0,
            ..set.clone()
        },
        None,
    );
    let mut above = set.clone();
    above.holders[0].token = set.floor + 1;
    with_set("a token above the floor", shared, above, None);
    let mut no_deadline = set.clone();
    no_deadline.holders[0].deadline = 0;
    with_set("deadline 0", shared, no_deadline, None);
    with_set("one holder more claimed", shared, set.clone(), Some(3));
    with_set("one holder fewer claimed", shared, set.clone(), Some(1));
    with_set("2^40 holders claimed", shared, set.clone(), Some(1 << 40));
    let mut long = set.clone();
    long.holders[1].owner = vec![b'o'; 5];
    let mut cut = long.bytes_claiming(2);
    cut.truncate(cut.len() - 2);
    with("an owner cut short", shared, &move |d| {
        d.fields = vec![Field::S(cut.clone())]
    });
    let v1_set = as_v1(&shared.dump, 0);
    with("v1 owner holding twice", shared, &|d| {
        *d = v1_set.clone();
        d.fields[7] = d.fields[3].clone();
    });
    with("v1 holders cut", shared, &|d| {
        *d = v1_set.clone();
        d.fields.pop();
    });
    f
}

/// DLOCK.INFO of a lock: nil, or owner, token > 0, ttl_ms >= -1 (-1: the key has
/// no expiry, as after a RESTORE with ttl 0), holds > 0, waiters >= 0.
pub fn lock_info_ok(v: &Value) -> bool {
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

/// DLOCK.INFO of a lock set: nil, or the plain fields, `mode` and `holders`.
pub fn lock_set_info_ok(v: &Value) -> bool {
    match v {
        Value::Nil => true,
        Value::Array(a) => {
            let names: Vec<&[u8]> = a
                .iter()
                .step_by(2)
                .filter_map(|n| match n {
                    Value::BulkString(b) => Some(b.as_slice()),
                    _ => None,
                })
                .collect();
            names.contains(&&b"mode"[..]) && names.contains(&&b"holders"[..])
        }
        _ => false,
    }
}

/// The writes on a lock a payload made (call `i`): acquires, extends and
/// releases by its owner and others, re-entered.
pub fn lock_writes(con: &mut Connection, key: &str, i: usize, found: &mut Findings, ctx: &str) {
    let owner = format!("fz{}", i % 3);
    let writes = [
        cmd_of!("DLOCK.ACQUIRE", key, &owner, LONG_TTL_MS),
        cmd_of!("DLOCK.EXTEND", key, &owner, LONG_TTL_MS),
        cmd_of!("DLOCK.RELEASE", key, "a"),
        cmd_of!("DLOCK.RELEASE", key, "re-entrant"),
        cmd_of!("DLOCK.ACQUIRE", key, "re-entrant", LONG_TTL_MS),
        cmd_of!("DLOCK.INFO", key),
    ];
    run_all(con, &writes, found, ctx);
}

/// The writes on a lock set a payload made (call `i`): shared and counted
/// acquires, extends and releases by holders and others, a plain acquire.
pub fn lock_set_writes(con: &mut Connection, key: &str, i: usize, found: &mut Findings, ctx: &str) {
    let owner = format!("fz{}", i % 3);
    let writes = [
        cmd_of!("DLOCK.ACQUIRE", key, &owner, LONG_TTL_MS, "SHARED"),
        cmd_of!("DLOCK.ACQUIRE", key, &owner, LONG_TTL_MS, "LIMIT", 3),
        cmd_of!("DLOCK.EXTEND", key, "r1", LONG_TTL_MS),
        cmd_of!("DLOCK.RELEASE", key, "a"),
        cmd_of!("DLOCK.RELEASE", key, "r2"),
        cmd_of!("DLOCK.ACQUIRE", key, "x", LONG_TTL_MS),
        cmd_of!("DLOCK.INFO", key),
    ];
    run_all(con, &writes, found, ctx);
}

/// Payloads of encoding version 1 (today's main's RDB and DUMP layout: one
/// field per value) still load, as the same value: the same digest, the
/// same DLOCK.INFO, and the lease from the key's TTL.
#[test]
fn version_1_lock_payloads_still_load() {
    let mut s = Server::start();
    let mut con = timed(s.conn(), PAYLOAD_READ_TIMEOUT);
    let locks = lock_bases(&mut con);
    let sets = lock_set_bases(&mut con);
    for b in locks.iter().chain(&sets) {
        assert_eq!(b.dump.encver(), 2, "{}: saved as version 2", b.key);
        let old = as_v1(&b.dump, now_ms() + 1_000);
        let key = format!("{}:v1", b.key);
        let v = raw(
            &mut con,
            cmd("RESTORE").arg(&key).arg(LONG_TTL_MS).arg(encode(&old)),
        );
        assert!(is_ok(&v), "{}: version 1 payload refused: {v:?}", b.key);
        assert_eq!(
            digest_value(&mut con, key.as_bytes()),
            digest_value(&mut con, b.key.as_bytes()),
            "{}: version 1 payload",
            b.key
        );
        let info = |con: &mut Connection, k: &str| {
            let v = raw(con, cmd("DLOCK.INFO").arg(k));
            format!("{v:?}").split("ttl_ms").next().map(str::to_owned)
        };
        assert_eq!(info(&mut con, &key), info(&mut con, &b.key), "{}", b.key);
        // Saved again, it is version 2.
        let again: Vec<u8> = cmd("DUMP").arg(&key).query(&mut con).unwrap();
        assert_eq!(parse_dump(&again).encver(), 2, "{}", b.key);
    }
    s.assert_alive();
}

/// A lock payload whose fencing token is the largest 64-bit integer is either refused,
/// or later grants still get strictly increasing tokens (or an error): never the same
/// token twice.
#[test]
fn restored_lock_token_cannot_exhaust_fencing_tokens() {
    let mut s = Server::start();
    let mut con = timed(s.conn(), PAYLOAD_READ_TIMEOUT);
    let lock = lock_bases(&mut con);
    let mut findings = Vec::new();
    for token in [i64::MAX, i64::MAX - 1] {
        let d = with_token(&lock[0].dump, token);
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
