//! Integration tests for `BF.*X` filters and forged DUMP payloads: real filter payloads
//! re-encoded are accepted, forgeries the loader must catch are refused without leaking
//! a filter, 1,000 corrupt or forged RESTORE payloads never crash the server, and the
//! internal load command (`BF._LOADX`, what a rewritten AOF holds) never crashes it
//! either. Parsing, CRC64, encoding and the odd-value forgers are in
//! `tests/it/common/payload.rs`; the fuzzer of every type's payloads is in
//! `tests/it/module/payload_fuzz.rs`.

use crate::bloom::kit::{layer_count, layer_field, odd_layer_counts, FILTER, FILTER_FIELDS};
use crate::bloom::support::*;
use crate::common::payload::*;
use crate::common::payload_checks::{exercise, Findings};
use crate::common::payload_forgeries::forge_fields;
use crate::common::*;

// ---------------------------------------------------------------------------------------
// Forging filter payloads
// ---------------------------------------------------------------------------------------

/// One structural forgery of a parsed filter payload.
fn forge(rng: &mut Rng, d: &Dump, kind: usize) -> Dump {
    let mut d = d.clone();
    let layers = layer_count(&d);
    match kind {
        // An odd value of the same kind, another kind, fields missing,
        // repeated or extra, no EOF, trailing bytes.
        3..=5 => forge_fields(rng, &mut d, kind),
        // Layer count.
        6 => {
            let c = rng.pick(&odd_layer_counts(layers, true));
            d.fields[2] = Field::U(c);
        }
        // Capacities (and items to match).
        7 => {
            let l = rng.below(layers);
            let c = rng.pick(&[0, 1 << 32, 1 << 40, 1 << 62, i64::MAX as u64, u64::MAX]);
            d.fields[layer_field(l, 0)] = Field::U(c);
            if rng.below(2) == 0 {
                d.fields[layer_field(l, 3)] = Field::U(c);
            }
        }
        // Hashes or items.
        8 => {
            let l = rng.below(layers);
            let f = rng.pick(&[2usize, 3]);
            let Field::U(v) = d.fields[layer_field(l, f)] else {
                unreachable!()
            };
            d.fields[layer_field(l, f)] = Field::U(odd_uint(rng, v));
        }
        // Error rates, of the filter or of a layer.
        9 => {
            let i = if rng.below(2) == 0 {
                0
            } else {
                layer_field(rng.below(layers), 1)
            };
            let Field::D(x) = d.fields[i] else {
                unreachable!()
            };
            d.fields[i] = Field::D(odd_double(rng, x));
        }
        // Module id / encoding version / type byte / RDB version.
        10 => match rng.below(4) {
            0 => d.module_id = (d.module_id & !1023) | rng.pick(&[0u64, 2, 4, 1023]),
            1 => d.module_id ^= 1 << (10 + rng.below(54)),
            2 => d.type_byte = rng.pick(&[0u8, 2, 5, 6, 8, 14, 18, 21, 255]),
            _ => {
                let v = u16::from_le_bytes(d.ver);
                let nv = rng.pick(&[0u16, 1, v.wrapping_sub(1), v + 1, 0xffff]);
                d.ver = nv.to_le_bytes();
            }
        },
        // String framing.
        11 => {
            let l = rng.below(layers);
            let i = layer_field(l, 4);
            let Field::S(s) = &d.fields[i] else {
                unreachable!()
            };
            let raw_bytes = forged_string_header(rng, s);
            d.fields[i] = Field::Raw(raw_bytes);
        }
        // Plausible multi-layer filters: copies of real layers, odd expansions,
        // full newest layers (so adds must grow or refuse).
        12 => {
            let want = rng.pick(&[2usize, 3, 10, 63, 64]);
            let mut fields = d.fields[..FILTER_FIELDS].to_vec();
            for k in 0..want {
                let src = k % layers;
                let mut layer = d.fields[layer_field(src, 0)..layer_field(src, 0) + 5].to_vec();
                if rng.below(2) == 0 {
                    layer[3] = layer[0].clone();
                }
                fields.extend(layer);
            }
            fields[2] = Field::U(want as u64);
            fields[1] = Field::U(rng.pick(&[0u64, 1, 2, 32_768, 32_769, u64::from(u32::MAX)]));
            d.fields = fields;
        }
        _ => unreachable!("kind {kind}"),
    }
    d
}

/// A filter small enough to be fuzzed a thousand times: the base payloads.
fn base_payloads(con: &mut Connection) -> Vec<(Vec<u8>, Dump)> {
    // One layer.
    reserve(con, b"base:small", "0.01", 10, &[]);
    madd_range(con, b"base:small", "b", 0..5);
    // Two layers.
    reserve(con, b"base:two", "0.01", 20, &["EXPANSION", "2"]);
    madd_range(con, b"base:two", "t", 0..30);
    assert_eq!(bf_info(con, b"base:two").filters, 2);
    // Sparse and larger: its bit array is LZF-compressed in the payload.
    reserve(con, b"base:sparse", "0.01", 1000, &["NONSCALING"]);
    madd_range(con, b"base:sparse", "s", 0..3);
    ["base:small", "base:two", "base:sparse"]
        .iter()
        .map(|k| {
            let p = dump(con, k.as_bytes());
            let d = parse_dump(&p);
            // A filter is saved with UINT, DOUBLE and STRING fields only.
            for f in &d.fields {
                assert!(
                    matches!(f, Field::U(_) | Field::D(_) | Field::S(_)),
                    "unexpected module field in a filter payload: {f:?}"
                );
            }
            (p, d)
        })
        .collect()
}

#[test]
fn crc64_matches_redis() {
    // The check value from Redis's crc64.c.
    assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    // And the trailer Redis writes after a filter's DUMP (RDB version included).
    let (_s, mut con) = Server::start_conn();
    reserve(&mut con, b"f", "0.01", 100, &[]);
    madd_range(&mut con, b"f", "f:", 0..50);
    let p = dump(&mut con, b"f");
    let (data, trailer) = p.split_at(p.len() - 8);
    assert_eq!(crc64(data).to_le_bytes(), trailer);
}

/// Controls for the fuzzer: re-encoded payloads are accepted, and forgeries the loader
/// must catch are refused (so forged payloads really reach the module's rdb_load).
#[test]
fn forged_payloads_reach_the_module_loader() {
    let (mut s, mut con) = Server::start_conn();
    let bases = base_payloads(&mut con);
    let (small_payload, small) = &bases[0];
    let (_, two) = &bases[1];
    let (_, sparse) = &bases[2];
    assert_eq!(small.fields.len(), FILTER_FIELDS + 5);
    assert_eq!(two.fields.len(), FILTER_FIELDS + 10);

    // Re-encoded (raw strings, our own CRC): accepted, identical filter.
    for (i, (orig, d)) in bases.iter().enumerate() {
        let key = format!("reenc{i}");
        ok(
            &mut con,
            cmd("RESTORE")
                .arg(&key)
                .arg(0)
                .arg(encode(d))
                .arg("REPLACE"),
        );
        let src: String = ["base:small", "base:two", "base:sparse"][i].to_string();
        assert_eq!(
            digest(&mut con, key.as_bytes()),
            digest(&mut con, src.as_bytes())
        );
        assert!(orig.len() > 10);
    }
    // Encoding versions 2 (no hashing field) and 1 (no window either) still load, as
    // the same filter (warden's hashing).
    for (i, (_, d)) in bases.iter().enumerate() {
        let src = ["base:small", "base:two", "base:sparse"][i];
        for (version, drop) in [(2u64, 4..5), (1, 3..5)] {
            let mut old = d.clone();
            old.module_id = (old.module_id & !1023) | version;
            old.fields.drain(drop);
            let key = format!("v{version}:{i}");
            ok(&mut con, cmd("RESTORE").arg(&key).arg(0).arg(encode(&old)));
            assert_eq!(
                digest(&mut con, key.as_bytes()),
                digest(&mut con, src.as_bytes()),
                "{src} as version {version}"
            );
        }
    }
    // A bad CRC is refused by Redis itself.
    let mut bad_crc = small_payload.clone();
    let last = bad_crc.len() - 1;
    bad_crc[last] ^= 1;
    let v = raw(&mut con, cmd("RESTORE").arg("x").arg(0).arg(&bad_crc));
    assert!(err_of(&v).is_some(), "{v:?}");

    let mut must_fail: Vec<(&str, Dump)> = Vec::new();
    let mut with = |name: &'static str, base: &Dump, f: &dyn Fn(&mut Dump)| {
        let mut d = base.clone();
        f(&mut d);
        must_fail.push((name, d));
    };
    // (A different but valid hash count is a consistent filter, with another
    // false-positive rate: stored layers are not tied to the sizing formula.)
    with("hashes 0", small, &|d| {
        d.fields[layer_field(0, 2)] = Field::U(0)
    });
    with("hashes 2^32", small, &|d| {
        d.fields[layer_field(0, 2)] = Field::U(1 << 32)
    });
    with("items > capacity", small, &|d| {
        d.fields[layer_field(0, 3)] = Field::U(11)
    });
    with("items u64::MAX", two, &|d| {
        d.fields[layer_field(1, 3)] = Field::U(u64::MAX)
    });
    with("bits short by a word", small, &|d| {
        if let Field::S(s) = &mut d.fields[layer_field(0, 4)] {
            s.truncate(s.len() - 8);
        }
    });
    with("bits not whole words", two, &|d| {
        if let Field::S(s) = &mut d.fields[layer_field(1, 4)] {
            s.push(0);
        }
    });
    with("bits empty", small, &|d| {
        d.fields[layer_field(0, 4)] = Field::S(Vec::new())
    });
    with("layer count 0", small, &|d| d.fields[2] = Field::U(0));
    with("layer count 65", small, &|d| d.fields[2] = Field::U(65));
    with("layer count u64::MAX", two, &|d| {
        d.fields[2] = Field::U(u64::MAX)
    });
    with("layer count + 1", two, &|d| d.fields[2] = Field::U(3));
    with("layer count - 1", two, &|d| d.fields[2] = Field::U(1));
    with("capacity u64::MAX", small, &|d| {
        d.fields[layer_field(0, 0)] = Field::U(u64::MAX)
    });
    with("capacity 2^40", sparse, &|d| {
        d.fields[layer_field(0, 0)] = Field::U(1 << 40)
    });
    with("capacity 0", small, &|d| {
        d.fields[layer_field(0, 0)] = Field::U(0)
    });
    with("error rate NaN", small, &|d| {
        d.fields[0] = Field::D(f64::NAN)
    });
    with("error rate 0", small, &|d| d.fields[0] = Field::D(0.0));
    with("error rate 1", small, &|d| d.fields[0] = Field::D(1.0));
    with("error rate -inf", two, &|d| {
        d.fields[0] = Field::D(f64::NEG_INFINITY)
    });
    with("layer rate 0", small, &|d| {
        d.fields[layer_field(0, 1)] = Field::D(0.0)
    });
    with("layer rate NaN", two, &|d| {
        d.fields[layer_field(1, 1)] = Field::D(f64::NAN)
    });
    with("expansion 0 with 2 layers", two, &|d| {
        d.fields[1] = Field::U(0)
    });
    with("expansion 2^32", two, &|d| d.fields[1] = Field::U(1 << 32));
    with("expansion 32769", small, &|d| {
        d.fields[1] = Field::U(32_769)
    });
    with("encoding version 4", small, &|d| {
        d.module_id = (d.module_id & !1023) | 4
    });
    with("version 3 layout under version 1", small, &|d| {
        d.module_id = (d.module_id & !1023) | 1
    });
    with("version 3 layout under version 2", small, &|d| {
        d.module_id = (d.module_id & !1023) | 2
    });
    with("hashing 2", small, &|d| d.fields[4] = Field::U(2));
    with("hashing 2^63", two, &|d| d.fields[4] = Field::U(1 << 63));
    with(
        "RedisBloom's hashing for an aging filter's layout",
        small,
        &|d| {
            d.fields[3] = Field::U(60_000);
            d.fields[4] = Field::U(1);
        },
    );
    with("window of a plain filter 99", small, &|d| {
        d.fields[3] = Field::U(99)
    });
    with("encoding version 0", small, &|d| d.module_id &= !1023);
    with("uint where a double belongs", small, &|d| {
        d.fields[0] = Field::U(1)
    });
    with("string where a uint belongs", small, &|d| {
        d.fields[2] = Field::S(b"1".to_vec())
    });
    with("no EOF marker", small, &|d| d.eof = false);
    with("extra field", small, &|d| d.fields.push(Field::U(1)));
    with("truncated inside the bits", sparse, &|d| {
        let Field::S(s) = d.fields[layer_field(0, 4)].clone() else {
            unreachable!()
        };
        let mut r = Vec::new();
        enc_len(&mut r, OP_STRING);
        enc_len(&mut r, s.len() as u64);
        r.extend_from_slice(&s[..s.len() / 2]);
        d.fields[layer_field(0, 4)] = Field::Raw(r);
        d.eof = false;
    });
    with("string length 2^62", small, &|d| {
        let mut r = Vec::new();
        enc_len(&mut r, OP_STRING);
        enc_len(&mut r, 1 << 62);
        r.extend_from_slice(&[0; 16]);
        d.fields[layer_field(0, 4)] = Field::Raw(r);
    });

    let filters_before = warden_stat(&mut con, "bf_filters");
    let bytes_before = warden_stat(&mut con, "bf_bytes");
    for (name, d) in &must_fail {
        let v = raw(
            &mut con,
            cmd("RESTORE")
                .arg("forged")
                .arg(0)
                .arg(encode(d))
                .arg("REPLACE"),
        );
        assert!(
            err_of(&v).is_some(),
            "forgery '{name}' was accepted: {v:?}; INFOX: {:?}",
            raw(&mut con, cmd("BF.INFOX").arg("forged"))
        );
        assert!(!exists(&mut con, b"forged"), "{name}");
        let stats = filter_stats(&mut con);
        assert_eq!(
            stats,
            (filters_before, bytes_before),
            "'{name}' leaked filters"
        );
    }
    s.assert_alive();

    // A consistent 64-layer filter whose newest layer is full: loads, and an add of a
    // new item is refused (no 65th layer) without changing it.
    let mut d = small.clone();
    let layer: Vec<Field> = d.fields[layer_field(0, 0)..layer_field(1, 0)].to_vec();
    d.fields.truncate(FILTER_FIELDS);
    d.fields[1] = Field::U(1);
    d.fields[2] = Field::U(64);
    for _ in 0..64 {
        let mut l = layer.clone();
        l[3] = l[0].clone();
        d.fields.extend(l);
    }
    ok(&mut con, cmd("RESTORE").arg("l64").arg(0).arg(encode(&d)));
    let info = bf_info(&mut con, b"l64");
    assert_eq!(info.filters, 64);
    let before = digest(&mut con, b"l64");
    let fresh = absent_item(&mut con, b"l64", "l64:");
    let v = raw(&mut con, cmd("BF.ADDX").arg("l64").arg(&fresh));
    assert!(err_of(&v).is_some(), "a 65th layer was added: {v:?}");
    assert_eq!(digest(&mut con, b"l64"), before);
    s.assert_alive();
}

#[test]
fn thousand_corrupt_restore_payloads_never_crash_the_server() {
    let (mut s, mut con) = Server::start_conn();
    let bases = base_payloads(&mut con);
    let base_keys = ["base:small", "base:two", "base:sparse"];
    let base_digests: Vec<String> = base_keys
        .iter()
        .map(|k| digest(&mut con, k.as_bytes()))
        .collect();
    let filters_before = warden_stat(&mut con, "bf_filters");
    let bytes_before = warden_stat(&mut con, "bf_bytes");

    const KINDS: usize = 14;
    let mut rng = Rng(0x5eed_b10f_0000_0001);
    let (mut accepted, mut refused) = (0usize, 0usize);
    let mut per_kind = [[0usize; 2]; KINDS];
    let mut found = Findings::default();
    for i in 0..1_000 {
        let kind = i % KINDS;
        let (payload, parsed) = &bases[(i / KINDS) % bases.len()];
        let forged = match kind {
            0..=2 => corrupt_bytes(&mut rng, payload, kind),
            3..=12 => encode(&forge(&mut rng, parsed, kind)),
            _ => {
                // Two or three forgeries on top of each other.
                let mut d = parsed.clone();
                for _ in 0..2 + rng.below(2) {
                    if layer_count(&d) == 0 || !(d.fields.len() - FILTER_FIELDS).is_multiple_of(5) {
                        break;
                    }
                    let k = rng.pick(&[3usize, 6, 7, 8, 9, 12]);
                    d = forge(&mut rng, &d, k);
                }
                encode(&d)
            }
        };
        let key = format!("c{i}");
        let v = raw(
            &mut con,
            cmd("RESTORE").arg(&key).arg(0).arg(&forged).arg("REPLACE"),
        );
        if err_of(&v).is_some() {
            refused += 1;
            per_kind[kind][1] += 1;
            assert!(
                !exists(&mut con, key.as_bytes()),
                "case {i}: refused RESTORE left a key"
            );
        } else {
            accepted += 1;
            per_kind[kind][0] += 1;
            exercise(&mut con, &FILTER, &key, i, &mut found, &format!("case {i}"));
            // `exercise` may leave a COPY of the key.
            let _ = raw(&mut con, cmd("DEL").arg(&key).arg(format!("{key}:copy")));
        }
        if i % 50 == 49 {
            s.assert_alive();
            con = s.conn();
        }
    }
    println!("accepted {accepted}, refused {refused}; per kind [accepted, refused]: {per_kind:?}");
    assert!(refused > 500, "most corrupt payloads must be refused");
    let lists = [
        ("panics caught", &found.internal),
        ("odd error codes", &found.odd_codes),
        ("DUMP/RESTORE round trips", &found.round_trips),
    ];
    for (what, list) in lists {
        assert!(list.is_empty(), "{what}: {list:#?}");
    }
    s.assert_alive();

    // Nothing leaked or changed: the base filters are intact, the counters match.
    for (k, d) in base_keys.iter().zip(&base_digests) {
        assert_eq!(&digest(&mut con, k.as_bytes()), d);
    }
    assert_eq!(warden_stat(&mut con, "bf_filters"), filters_before);
    assert_eq!(warden_stat(&mut con, "bf_bytes"), bytes_before);
    let dbsize: i64 = query!(&mut con, "DBSIZE");
    assert_eq!(dbsize, 3);
    ok(&mut con, cmd("DEBUG").arg("RELOAD"));
    s.assert_alive();
}

// ---------------------------------------------------------------------------------------
// The internal load command
// ---------------------------------------------------------------------------------------

#[test]
fn internal_load_command_never_crashes() {
    // BF._LOADX is what a rewritten AOF holds; clients can send it too.
    let (mut s, mut con) = Server::start_conn();
    reserve(&mut con, b"f", "0.01", 100, &[]);
    madd_range(&mut con, b"f", "f:", 0..300);
    let _: () = query!(&mut con, "SET", "str", "v");
    let mut rng = Rng(0x10ad_0000_0000_0001);
    let nums = [
        "0",
        "1",
        "2",
        "-1",
        "7",
        "64",
        "100",
        "32768",
        "32769",
        "4294967296",
        "9223372036854775807",
        "18446744073709551615",
        "abc",
        "",
        "1e3",
    ];
    let rates = [
        "0.01", "0.005", "0", "1", "-0.5", "nan", "inf", "1e-300", "5e-324", "abc", "",
    ];
    for i in 0..400 {
        let key = rng.pick(&["f", "new", "str", "missing"]);
        let mut c = cmd("BF._LOADX");
        c.arg(key);
        match rng.below(4) {
            0 | 1 => {
                c.arg(rng.pick(&["LAYER", "layer", "BITS", "FOO"]));
                c.arg(rng.pick(&rates));
                c.arg(rng.pick(&nums));
                c.arg(rng.pick(&nums));
                c.arg(rng.pick(&nums));
                c.arg(rng.pick(&rates));
                c.arg(rng.pick(&nums));
                c.arg(rng.pick(&nums));
            }
            2 => {
                c.arg(rng.pick(&["BITS", "bits", "LAYER"]));
                c.arg(rng.pick(&nums));
                c.arg(rng.pick(&nums));
                let len = rng.pick(&[0usize, 1, 7, 8, 16, 64, 1000, 4096]);
                let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                c.arg(bytes);
            }
            _ => {
                for _ in 0..rng.below(12) {
                    c.arg(rng.pick(&nums));
                }
            }
        }
        let _ = raw(&mut con, &c);
        if i % 50 == 49 {
            s.assert_alive();
            for k in ["f", "new"] {
                if exists(&mut con, k.as_bytes()) {
                    let _ = raw(&mut con, cmd("BF.INFOX").arg(k));
                    let _ = raw(&mut con, cmd("BF.MADDX").arg(k).arg("p").arg("q"));
                    let _ = raw(&mut con, cmd("DEBUG").arg("DIGEST-VALUE").arg(k));
                }
            }
        }
    }
    ok(&mut con, cmd("DEBUG").arg("RELOAD"));
    s.assert_alive();
}
