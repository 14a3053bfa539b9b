//! Controls for the corrupt-payload fuzzer (`tests/it/module/payload_fuzz.rs`): Redis's
//! CRC64, re-encoded real payloads of every warden type accepted as the same value (so
//! forged ones really reach `rdb_load`; the test fails on a type the module makes that
//! has none), a bad CRC refused by Redis itself, forgeries that break a documented
//! invariant of each type refused, a restored lock whose fencing token is the largest
//! integer never making later tokens repeat, and cuckoo filters of another fingerprint
//! width kept by an AOF rewrite.

use crate::common::module_types::assert_covers;
use crate::common::payload::*;
use crate::common::payload_cuckoo::{cuckoo_bases, cuckoo_refusals, refill};
use crate::common::payload_forgeries::*;
use crate::common::payload_types::*;
use crate::common::*;
use crate::lock::record::*;

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
    let mut con = timed(s.conn(), PAYLOAD_READ_TIMEOUT);
    let locks = lock_bases(&mut con);
    let filters = filter_bases(&mut con);
    let loadings = loading_bases(&mut con);
    let limiters = limiter_bases(&mut con);
    let caches = cache_bases(&mut con);
    let sets = lock_set_bases(&mut con);
    let cuckoos = cuckoo_bases(&mut con);
    let sketches = crate::cms::payload::bases(&mut con);
    let tops = crate::topk::payload::bases(&mut con);
    let mut controlled: Vec<String> = Vec::new();
    for b in locks
        .iter()
        .chain(&sets)
        .chain(&filters)
        .chain(&loadings)
        .chain(&limiters)
        .chain(&caches)
        .chain(&cuckoos)
        .chain(&sketches)
        .chain(&tops)
    {
        // As DUMPed (limiters in the version 2 layout), and a limiter in
        // the current layout too.
        let v3 = limiter_v3(&b.dump).filter(|_| b.dump.type_name() == Ty::Limiter.name());
        for (form, d) in [("re-encoded", Some(b.dump.clone())), ("version 3", v3)] {
            let Some(d) = d else { continue };
            let key = format!("{}:{form}", b.key);
            let restore = restore_like(&mut con, &b.key, &key, &encode(&d));
            let v = raw(&mut con, &restore);
            assert!(is_ok(&v), "{}: {form} payload refused: {v:?}", b.key);
            assert_eq!(
                digest_value(&mut con, key.as_bytes()),
                digest_value(&mut con, b.key.as_bytes()),
                "{}: {form} payload",
                b.key
            );
        }
        controlled.push(b.dump.type_name());
        let mut bad = b.payload.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let v = raw(&mut con, cmd("RESTORE").arg("badcrc").arg(0).arg(&bad));
        assert!(err_of(&v).is_some(), "{}: bad CRC accepted", b.key);
    }

    assert_covers(
        "the payload controls",
        &controlled.iter().map(String::as_str).collect::<Vec<_>>(),
    );

    let now = now_ms();
    let mut must_fail: Vec<(String, Dump)> = Vec::new();
    let mut with = |name: &str, base: &Base, f: &dyn Fn(&mut Dump)| {
        let mut d = base.dump.clone();
        f(&mut d);
        // A limiter forgery of fields (not of the version or framing) also
        // in the current layout, where it has one.
        let fields_only = d.encver() == 2 && d.eof;
        if fields_only && Ty::of(&base.dump.type_name()) == Some(Ty::Limiter) {
            if let Some(v3) = limiter_v3(&d) {
                must_fail.push((format!("{} {name}, version 3", base.key), v3));
            }
        }
        must_fail.push((format!("{} {name}", base.key), d));
    };
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

    // A filter being loaded: the bytes loaded so far must be where a chunk starts,
    // before the end; and the fields are a filter's, checked as a filter's.
    let two = &loadings[2];
    let loaded = |d: &Dump| match d.fields.last() {
        Some(Field::U(v)) => *v,
        other => panic!("loaded: {other:?}"),
    };
    let set_loaded = |d: &mut Dump, v: u64| *d.fields.last_mut().expect("fields") = Field::U(v);
    with("loaded inside a chunk", two, &|d| {
        set_loaded(d, loaded(d) + 8)
    });
    with("loaded everything", two, &|d| set_loaded(d, bit_bytes(d)));
    with("loaded past the end", two, &|d| {
        set_loaded(d, bit_bytes(d) + 8)
    });
    with("loaded u64::MAX", two, &|d| set_loaded(d, u64::MAX));
    with("no loaded count", two, &|d| {
        d.fields.pop();
    });
    with("hashes 0 while loading", two, &|d| {
        d.fields[layer_field(0, 2)] = Field::U(0)
    });
    with("non-scaling with two layers while loading", two, &|d| {
        d.fields[1] = Field::U(0)
    });
    with("a loading value under the filter id", filter, &|d| {
        d.fields = two.dump.fields.clone()
    });
    with("a filter under the loading id", two, &|d| {
        d.fields = filter.dump.fields.clone()
    });

    let (fresh, miss) = (&caches[0], &caches[2]);
    with("has-value flag 2", fresh, &|d| d.fields[0] = Field::U(2));
    with("a value without the flag", miss, &|d| {
        d.fields[0] = Field::U(1)
    });
    with("negative version", fresh, &|d| d.fields[2] = sig(-1));
    with("stale before fresh", fresh, &|d| {
        d.fields[4] = sig(now - 1_000_000_000)
    });
    with("negative fresh end", fresh, &|d| d.fields[3] = sig(-5));
    with("lease token 0 with an end", fresh, &|d| {
        d.fields[6] = sig(now)
    });
    with("lease token above 2^62", miss, &|d| {
        d.fields[4] = sig((1 << 62) + 1)
    });
    with("lease-only without a lease", miss, &|d| {
        d.fields[4] = sig(0);
        d.fields[5] = sig(0);
    });
    with("lease-only with a version", miss, &|d| d.fields[1] = sig(3));
    with("cache encoding version 2", fresh, &|d| {
        d.module_id = (d.module_id & !1023) | 2
    });

    must_fail.extend(cuckoo_refusals(&cuckoos, lock));
    must_fail.extend(crate::cms::payload::refusals(&sketches, lock).0);
    must_fail.extend(crate::topk::payload::refusals(&tops, lock).0);

    let counters: Vec<&str> = ["bf_filters", "bf_bytes", "cf_filters", "cf_bytes"]
        .into_iter()
        .chain(crate::cms::kit::GAUGES)
        .chain(crate::topk::kit::GAUGES)
        .collect();
    let stats = |con: &mut Connection| -> Vec<i64> {
        counters.iter().map(|f| warden_stat(con, f)).collect()
    };
    let before = stats(&mut con);
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
    assert_eq!(
        stats(&mut con),
        before,
        "INFO warden {counters:?} after refused payloads"
    );
    s.assert_alive();
    assert!(
        accepted.is_empty(),
        "forged payloads that must be refused were accepted:\n{}",
        accepted.join("\n")
    );
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

/// A cuckoo payload whose fingerprint width is not the one its parameters give
/// now (RDB loads any width of 1..=32, as earlier versions chose them) is
/// accepted, and is the same filter after an AOF rewrite and a restart that
/// replays it, and after DEBUG RELOAD.
#[test]
fn cuckoo_filters_of_another_width_survive_an_aof_rewrite() {
    let mut s = Server::start_with(
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
        &[],
    );
    let mut con = timed(s.conn(), PAYLOAD_READ_TIMEOUT);
    let bases = cuckoo_bases(&mut con);
    let mut rng = Rng(0x0c0f_f1d7);
    let mut want = Vec::new();
    for (n, b) in bases.iter().take(4).enumerate() {
        for width in [1u64, 16, 32] {
            let mut d = b.dump.clone();
            let stored = match d.fields[4] {
                Field::U(v) => v,
                ref other => panic!("{}: width {other:?}", b.key),
            };
            assert_ne!(stored, width, "{}", b.key);
            // Random fingerprints of the other width, the item count theirs.
            refill(&mut rng, &mut d, width as u32, 60);
            let key = format!("width:{n}:{width}");
            let v = raw(&mut con, cmd("RESTORE").arg(&key).arg(0).arg(encode(&d)));
            assert!(is_ok(&v), "{key}: {v:?}");
            let _: i64 = query!(&mut con, "CF.ADDX", &key, "after-restore");
            let digest = digest_value(&mut con, key.as_bytes());
            // CF.SCANDUMPX's chunks load back into the same filter.
            let copy = format!("{key}:chunks");
            for (it, data) in crate::cuckoo::support::scandump(&mut con, &key) {
                let v = raw(&mut con, cmd("CF.LOADCHUNKX").arg(&copy).arg(it).arg(data));
                assert!(is_ok(&v), "{copy}: chunk {it}: {v:?}");
            }
            assert_eq!(digest_value(&mut con, copy.as_bytes()), digest, "{copy}");
            want.push((key, digest));
        }
    }
    s.bgrewriteaof();
    s.restart("NOSAVE");
    let mut con = timed(s.conn(), PAYLOAD_READ_TIMEOUT);
    for (key, d) in &want {
        assert_eq!(
            &digest_value(&mut con, key.as_bytes()),
            d,
            "{key} after the AOF"
        );
        let e: i64 = query!(&mut con, "CF.EXISTSX", key, "after-restore");
        assert_eq!(e, 1, "{key}");
    }
    debug_reload(&mut con);
    for (key, d) in &want {
        assert_eq!(
            &digest_value(&mut con, key.as_bytes()),
            d,
            "{key} after DEBUG RELOAD"
        );
    }
    s.assert_alive();
}
