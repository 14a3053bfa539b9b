//! Cuckoo filters (`warden-cf`) in the corrupt-payload tests (the payload fuzzer
//! and its controls in `tests/it/module/`, through `kit.rs`): real DUMPs of several
//! shapes (one sub-filter, grown with deletes, one-slot and wide buckets, full and
//! never growing, sparse, being loaded by CF.LOADCHUNKX) and their type-specific
//! forgeries, field by field of the RDB layout `src/cuckoo/data_type.rs` writes:
//! capacity, bucket size, max iterations, expansion, fingerprint bits, items,
//! deletes, sub-filter count; per sub-filter its bucket count and its packed slots
//! (little-endian 64-bit words); the bytes loaded (all ones when whole); the hash;
//! the refusals of the loader, what a filter a payload made must answer, and
//! filters of another fingerprint width through an AOF rewrite.

use crate::common::fuzz_calls::is_int01;
use crate::common::kit::foreign;
use crate::common::payload::*;
use crate::common::payload_bases::*;
use crate::common::payload_checks::*;
use crate::common::payload_forgeries::Forged;
use crate::common::*;
use crate::cuckoo::kit::{CUCKOO, KIT};
use crate::cuckoo::support::scandump;

/// Fields before the first sub-filter.
pub const CUCKOO_FIELDS: usize = 8;

/// Index of the bucket count (`0`) or the slots (`1`) of sub-filter `k`.
pub fn sub_field(k: usize, f: usize) -> usize {
    CUCKOO_FIELDS + 2 * k + f
}

/// The number of sub-filters of a cuckoo payload's layout (`None` when the fields
/// are not a cuckoo filter's layout).
pub fn sub_count(d: &Dump) -> Option<usize> {
    let n = d.fields.len().checked_sub(CUCKOO_FIELDS + 2)?;
    let subs = n / 2;
    let ok = n.is_multiple_of(2)
        && subs > 0
        && d.fields[..CUCKOO_FIELDS]
            .iter()
            .all(|f| matches!(f, Field::U(_)))
        && (0..subs).all(|k| {
            matches!(
                (&d.fields[sub_field(k, 0)], &d.fields[sub_field(k, 1)]),
                (Field::U(_), Field::S(_))
            )
        });
    ok.then_some(subs)
}

/// Index of the bytes-loaded field (the hash is the one after it).
pub fn loaded_field(d: &Dump) -> usize {
    d.fields.len() - 2
}

fn u(d: &Dump, i: usize) -> u64 {
    match d.fields[i] {
        Field::U(v) => v,
        ref other => panic!("field {i}: {other:?}"),
    }
}

/// The stored loading field of a whole filter.
pub const WHOLE: u64 = u64::MAX;

/// Packed slots of `f` bits each as little-endian words, the spare word included
/// (as `SubFilter` stores them).
pub fn pack_slots(slots: &[u32], f: u32) -> Vec<u8> {
    let bits = slots.len() as u64 * u64::from(f);
    let mut words = vec![0u64; (bits.div_ceil(64) + 1) as usize];
    for (s, &fp) in slots.iter().enumerate() {
        let bit = s as u64 * u64::from(f);
        let (w, shift) = ((bit / 64) as usize, bit % 64);
        let v = u128::from(fp) << shift;
        words[w] |= v as u64;
        words[w + 1] |= (v >> 64) as u64;
    }
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Cuckoo filters: one sub-filter; grown (bucket size 2, expansion 2) with
/// deletes; one-slot buckets; wide buckets with expansion 1; full and never
/// growing; sparse (LZF); and two being loaded (the header only, one of several
/// chunks).
pub fn cuckoo_bases(con: &mut Connection) -> Vec<Base> {
    let add = |con: &mut Connection, key: &str, n: usize| {
        let mut c = cmd("CF.INSERTX");
        c.arg(key).arg("NOCREATE").arg("ITEMS");
        for i in 0..n {
            c.arg(format!("{key}:{i}"));
        }
        must(con, &c);
    };
    let shapes: [(&str, &[&str], usize); 6] = [
        ("cfb:small", &["100"], 20),
        (
            "cfb:grown",
            &["8", "BUCKETSIZE", "2", "EXPANSION", "2"],
            120,
        ),
        ("cfb:one", &["50", "BUCKETSIZE", "1"], 15),
        (
            "cfb:wide",
            &[
                "32",
                "BUCKETSIZE",
                "16",
                "MAXITERATIONS",
                "5",
                "EXPANSION",
                "1",
            ],
            100,
        ),
        ("cfb:flat", &["16", "EXPANSION", "0"], 40),
        ("cfb:sparse", &["100000"], 3),
    ];
    for (key, opts, items) in shapes {
        must(con, &cmd_of!("CF.RESERVEX", key, opts));
        add(con, key, items);
    }
    for i in 0..10 {
        must(
            con,
            &cmd_of!("CF.DELX", "cfb:grown", format!("cfb:grown:{i}")),
        );
    }
    // Being loaded: the chunks of a grown filter (one per sub-filter), in part.
    let chunks = scandump(con, "cfb:grown");
    assert!(chunks.len() >= 3, "cfb:grown: {} chunks", chunks.len());
    for (key, sent) in [("cfb:header", 1), ("cfb:part", 2)] {
        for (it, data) in &chunks[..sent] {
            must(con, &cmd_of!("CF.LOADCHUNKX", key, it, data));
        }
    }
    let keys = [
        "cfb:small",
        "cfb:grown",
        "cfb:one",
        "cfb:wide",
        "cfb:flat",
        "cfb:sparse",
        "cfb:header",
        "cfb:part",
    ];
    let bases = bases_of(con, &keys, &CUCKOO);
    for b in &bases {
        let d = &b.dump;
        let subs = sub_count(d).unwrap_or_else(|| {
            panic!(
                "{}: cuckoo layout {:?}",
                b.key,
                d.fields.iter().map(field_kind).collect::<Vec<_>>()
            )
        });
        assert_eq!(u(d, 7), subs as u64, "{}: sub-filter count", b.key);
        let loading = u(d, loaded_field(d)) != WHOLE;
        assert_eq!(loading, b.key == "cfb:header" || b.key == "cfb:part");
    }
    assert!(sub_count(&bases[1].dump) >= Some(3) && sub_count(&bases[3].dump) >= Some(2));
    bases
}

/// Slots of sub-filter `k`: its bucket count times the bucket size.
fn slots_of(d: &Dump, k: usize) -> u64 {
    u(d, sub_field(k, 0)).saturating_mul(u(d, 1))
}

/// Cuckoo-specific forgeries: each header field out of range or off by one, the
/// counts, a sub-filter's buckets or slots, the bytes loaded, the hash, the
/// layout of the other encoding version; and plausible filters: random
/// fingerprints (none to every slot) with the item count they make, in the
/// stored width or another.
pub fn forge_cuckoo(rng: &mut Rng, d: &mut Dump) {
    let Some(subs) = sub_count(d) else {
        d.fields[0] = Field::U(rng.pick(&[0, 1, 8, 100, 1 << 30, u64::MAX]));
        return;
    };
    let b = u(d, 1);
    let k = rng.below(subs);
    let loaded = loaded_field(d);
    match rng.below(12) {
        0 => {
            let c = u(d, 0);
            let v = rng.pick(&[
                0,
                1,
                (2 * b).wrapping_sub(1),
                2 * b,
                c.wrapping_add(1),
                c.wrapping_sub(1),
                1 << 30,
                (1 << 30) + 1,
            ]);
            d.fields[0] = Field::U(v);
        }
        1 => d.fields[1] = Field::U(rng.pick(&[0, 1, 2, 4, 255, 256, 1 << 32])),
        2 => d.fields[2] = Field::U(rng.pick(&[0, 1, 65_535, 65_536, 1 << 32, u64::MAX])),
        3 => d.fields[3] = Field::U(rng.pick(&[0, 1, 2, 4, 32_768, 32_769, u64::MAX])),
        4 => d.fields[4] = Field::U(rng.pick(&[0, 1, 8, 12, 31, 32, 33, 64, 1 << 32])),
        5 => {
            let i = rng.pick(&[5usize, 6]);
            let v = u(d, i);
            let odd = odd_uint(rng, v);
            d.fields[i] =
                Field::U(rng.pick(&[v.wrapping_add(1), v.wrapping_sub(1), 0, odd, u64::MAX]));
        }
        6 => {
            let n = subs as u64;
            d.fields[7] = Field::U(rng.pick(&[0, n - 1, n + 1, 32, 33, u64::MAX]))
        }
        7 => {
            let m = u(d, sub_field(k, 0));
            let v = rng.pick(&[
                0,
                1,
                m.wrapping_add(1),
                m.wrapping_sub(1),
                m.wrapping_mul(2),
                1 << 40,
                u64::MAX,
            ]);
            d.fields[sub_field(k, 0)] = Field::U(v);
        }
        8 => {
            // Slots cut, grown, moved to another sub-filter, or a bit past the last
            // slot set.
            let i = sub_field(k, 1);
            let f = u(d, 4);
            let Field::S(s) = &mut d.fields[i] else {
                unreachable!()
            };
            match rng.below(4) {
                0 => s.truncate(s.len().saturating_sub(8)),
                1 => s.extend_from_slice(&[0; 8]),
                2 => {
                    let bit = slots_of(d, k)
                        .saturating_mul(f)
                        .saturating_add(rng.below(64) as u64);
                    let Field::S(s) = &mut d.fields[i] else {
                        unreachable!()
                    };
                    if let Some(byte) = s.get_mut((bit / 8) as usize) {
                        *byte |= 1 << (bit % 8);
                    }
                }
                _ => {
                    let j = sub_field(rng.below(subs), 1);
                    d.fields.swap(i, j);
                }
            }
        }
        9 => {
            let v = u(d, loaded);
            let total: u64 = (0..subs)
                .map(|k| match &d.fields[sub_field(k, 1)] {
                    Field::S(s) => s.len() as u64,
                    _ => 0,
                })
                .sum();
            let first = match &d.fields[sub_field(0, 1)] {
                Field::S(s) => s.len() as u64,
                _ => 0,
            };
            let odd = odd_uint(rng, v);
            let w = rng.pick(&[
                0,
                8,
                first,
                total,
                total + 8,
                v.wrapping_add(8),
                WHOLE - 1,
                odd,
            ]);
            d.fields[loaded] = Field::U(w);
        }
        10 => match rng.below(4) {
            0 => d.fields[loaded + 1] = Field::U(rng.pick(&[0, 1, 2, 3, 7, 255, u64::MAX])),
            // Version 1 (no hash) under version 2, or version 2 under version 1.
            1 => {
                d.fields.pop();
            }
            2 => *d = with_encver(d, 1),
            _ => *d = with_encver(d, rng.pick(&[0, 3, 1023])),
        },
        _ if (0..subs).any(|k| slots_of(d, k) > 1 << 20) => {}
        _ => {
            let f = u(d, 4).clamp(1, 32) as u32;
            let width = rng.pick(&[f, f, 1, 2, 16, 31, 32]);
            let fill = rng.pick(&[0u64, 1, 50, 90, 100]);
            refill(rng, d, width, fill);
            d.fields[6] = Field::U(rng.pick(&[0, 1, i64::MAX as u64, u64::MAX]));
        }
    }
}

/// A plausible filter from `d` (a whole cuckoo filter's layout): each
/// sub-filter's slots random fingerprints of `width` bits, `fill` percent of
/// them occupied, the item count theirs.
pub fn refill(rng: &mut Rng, d: &mut Dump, width: u32, fill: u64) {
    let subs = sub_count(d).expect("a cuckoo layout");
    let mut items = 0u64;
    for k in 0..subs {
        let n = slots_of(d, k) as usize;
        let slots: Vec<u32> = (0..n)
            .map(|_| {
                if rng.below(100) as u64 >= fill {
                    return 0;
                }
                let fp = (rng.next() as u32) & (u32::MAX >> (32 - width));
                fp.max(1)
            })
            .collect();
        items += slots.iter().filter(|s| **s != 0).count() as u64;
        d.fields[sub_field(k, 1)] = Field::S(pack_slots(&slots, width));
    }
    d.fields[4] = Field::U(u64::from(width));
    d.fields[5] = Field::U(items);
    let loaded = loaded_field(d);
    d.fields[loaded] = Field::U(WHOLE);
}

/// Forgeries of `bases` (as `cuckoo_bases` returns them) that break an invariant
/// the loader checks, each to be refused: a field out of its range, counts that do
/// not match the slots, a sub-filter of the wrong size or with a bit past its last
/// slot, bytes loaded where no chunk starts, an unknown hash, the layout of the
/// other encoding version; and another family's type's fields under the cuckoo id,
/// and back.
pub fn cuckoo_refusals(bases: &[Base], others: &[&Base]) -> Forged {
    let other = foreign(others, &KIT);
    let (small, grown, flat, header, part) =
        (&bases[0], &bases[1], &bases[4], &bases[6], &bases[7]);
    let mut out: Vec<(String, Dump)> = Vec::new();
    let mut with = |name: &str, base: &Base, f: &dyn Fn(&mut Dump)| {
        let mut d = base.dump.clone();
        f(&mut d);
        out.push((format!("{} {name}", base.key), d));
    };
    let set = |i: usize, v: u64| move |d: &mut Dump| d.fields[i] = Field::U(v);
    let b = u(&small.dump, 1);
    with("capacity below 2 × bucket size", small, &set(0, 2 * b - 1));
    with("capacity 2^30 + 1", small, &set(0, (1 << 30) + 1));
    with("bucket size 0", small, &set(1, 0));
    with("bucket size 256", small, &set(1, 256));
    with("max iterations 0", small, &set(2, 0));
    with("max iterations 65536", small, &set(2, 65_536));
    with("expansion 32769", grown, &set(3, 32_769));
    with("expansion 0 with several sub-filters", grown, &set(3, 0));
    with("fingerprint bits 0", small, &set(4, 0));
    with("fingerprint bits 33", small, &set(4, 33));
    for (name, base) in [("", small), (", several sub-filters", grown)] {
        let items = u(&base.dump, 5);
        with(&format!("one item more{name}"), base, &set(5, items + 1));
        with(&format!("one item fewer{name}"), base, &set(5, items - 1));
    }
    with("items u64::MAX", flat, &set(5, u64::MAX));
    with("deletes 2^63", small, &set(6, 1 << 63));
    with("deletes u64::MAX", grown, &set(6, u64::MAX));
    with("sub-filter count 0", small, &set(7, 0));
    let n = sub_count(&grown.dump).expect("layout") as u64;
    with("one sub-filter more claimed", grown, &set(7, n + 1));
    with("one sub-filter fewer claimed", grown, &set(7, n - 1));
    with("sub-filter count 33", grown, &set(7, 33));
    with("sub-filter count u64::MAX", grown, &set(7, u64::MAX));
    let m = u(&small.dump, sub_field(0, 0));
    with("one bucket more", small, &set(sub_field(0, 0), m + 1));
    with("one bucket fewer", small, &set(sub_field(0, 0), m - 1));
    let m1 = u(&grown.dump, sub_field(1, 0));
    with(
        "second sub-filter the first's size",
        grown,
        &set(sub_field(1, 0), m1 / 2),
    );
    let slots = |f: fn(&mut Vec<u8>)| {
        move |d: &mut Dump| {
            if let Field::S(s) = &mut d.fields[sub_field(0, 1)] {
                f(s)
            }
        }
    };
    with(
        "slots a word short",
        small,
        &slots(|s| s.truncate(s.len() - 8)),
    );
    with("slots a word long", small, &slots(|s| s.extend([0; 8])));
    with(
        "a bit set in the spare word",
        small,
        &slots(|s| {
            let at = s.len() - 1;
            s[at] = 0x80
        }),
    );
    with("sub-filters' slots swapped", grown, &|d| {
        d.fields.swap(sub_field(0, 1), sub_field(1, 1))
    });
    with("slots as a number", small, &set(sub_field(0, 1), 0));
    let loaded = |v: fn(&Dump) -> u64| {
        move |d: &mut Dump| {
            let i = loaded_field(d);
            d.fields[i] = Field::U(v(d));
        }
    };
    fn total(d: &Dump) -> u64 {
        d.fields
            .iter()
            .map(|f| match f {
                Field::S(s) => s.len() as u64,
                _ => 0,
            })
            .sum()
    }
    with(
        "loaded inside a chunk",
        part,
        &loaded(|d| u(d, loaded_field(d)) + 8),
    );
    with("loaded everything", part, &loaded(total));
    with("loaded past the end", part, &loaded(|d| total(d) + 8));
    with("loaded u64::MAX - 1", header, &loaded(|_| u64::MAX - 1));
    with("loaded 8, inside its only chunk", small, &loaded(|_| 8));
    let hash = |v: u64| move |d: &mut Dump| *d.fields.last_mut().expect("hash") = Field::U(v);
    with("hash 7", small, &hash(7));
    with("hash u64::MAX", small, &hash(u64::MAX));
    with("no hash under version 2", small, &|d| {
        d.fields.pop();
    });
    with("a hash under version 1", small, &|d| *d = with_encver(d, 1));
    with("encoding version 3", small, &|d| *d = with_encver(d, 3));
    with("no loaded bytes nor hash", small, &|d| {
        d.fields.truncate(d.fields.len() - 2);
    });
    with("no EOF", small, &|d| d.eof = false);
    with("other fields under the cuckoo id", small, &|d| {
        d.fields = other.dump.fields.clone()
    });
    with("cuckoo fields under another id", other, &|d| {
        d.fields = small.dump.fields.clone()
    });
    Forged(out)
}

/// CF.INFOX: nine labelled integers, none negative; at least one sub-filter and
/// one bucket, a bucket size of 1..=255 and a fingerprint width of 1..=32.
pub fn cuckoo_info_ok(v: &Value) -> bool {
    let Some(n) = labelled_ints(v) else {
        return false;
    };
    n.len() == 9
        && n.iter().all(|v| *v >= 0)
        && n[1] >= 1
        && n[2] >= 1
        && (1..=255).contains(&n[5])
        && (1..=32).contains(&n[8])
}

/// The reads of a cuckoo filter (item reads name `item`).
fn cuckoo_reads(key: &str, item: &str) -> Vec<redis::Cmd> {
    vec![
        cmd("CF.INFOX").arg(key).clone(),
        cmd("CF.EXISTSX").arg(key).arg(item).clone(),
        cmd("CF.MEXISTSX")
            .arg(key)
            .arg(item)
            .arg("absent-item")
            .clone(),
        cmd("CF.COUNTX").arg(key).arg(item).clone(),
        cmd("CF.SCANDUMPX").arg(key).arg(0).clone(),
    ]
}

/// The error of a read on a filter being loaded.
pub const LOADING: &str = "ERR filter is still being loaded";

/// Whether `v` is the error of a read on a filter being loaded.
fn is_loading(v: &Value) -> bool {
    err_of(v).as_deref() == Some(LOADING)
}

/// The reads of a cuckoo filter: being loaded, every read answers that; else
/// each in range.
pub fn cuckoo_checked_reads(con: &mut Connection, key: &str, found: &mut Findings, ctx: &str) {
    let reads = cuckoo_reads(key, "cfb:grown:20");
    let reads: Vec<(redis::Cmd, Check)> = if is_loading(&raw(con, &cmd_of!("CF.INFOX", key))) {
        reads
            .into_iter()
            .map(|c| (c, is_loading as Check))
            .collect()
    } else {
        let checks: [Check; 5] = [
            cuckoo_info_ok,
            is_int01,
            |v| matches!(v, Value::Array(a) if a.len() == 2 && a.iter().all(is_int01)),
            |v| matches!(v, Value::Int(n) if *n >= 0),
            |v| matches!(v, Value::Array(a) if a.len() == 2 && a[0] == Value::Int(1)),
        ];
        reads.into_iter().zip(checks).collect()
    };
    run_reads(con, &reads, found, ctx);
}

/// The writes on a filter a payload made (call `i`): adds that kick and grow,
/// deletes, compaction; chunks for one being loaded (taken, or refused as out
/// of order or of the wrong length); then an item it takes must be found.
pub fn cuckoo_writes(con: &mut Connection, key: &str, i: usize, found: &mut Findings, ctx: &str) {
    let mut w = vec![
        cmd_of!("CF.ADDNXX", key, format!("nx{i}")),
        cmd_of!("CF.INSERTNXX", key, "NOCREATE", "ITEMS", "cfb:small:1", "x"),
        cmd_of!("CF.DELX", key, "cfb:grown:30"),
        cmd_of!("CF.RESERVEX", key, 100),
    ];
    let mut many = cmd_of!("CF.INSERTX", key, "NOCREATE", "ITEMS");
    for n in 0..40 {
        many.arg(format!("i{i}:{n}"));
    }
    w.push(many);
    w.push(cmd_of!("CF.COMPACTX", key));
    for (it, len) in [(2u64, 8usize), (2, 64), (3, 8), (1, 0)] {
        w.push(cmd_of!("CF.LOADCHUNKX", key, it, vec![0u8; len]));
    }
    run_all(con, &w, found, ctx);
    no_false_negative(con, key, i, found, ctx);
}

/// An item a cuckoo filter took (CF.ADDX answered 1) is found and counted, and
/// gone again after its CF.DELX when it was alone.
fn no_false_negative(con: &mut Connection, key: &str, i: usize, found: &mut Findings, ctx: &str) {
    let item = format!("new{i}");
    let added = run(con, cmd("CF.ADDX").arg(key).arg(&item), found, ctx);
    if added != Value::Int(1) {
        return;
    }
    let e = run(con, cmd("CF.EXISTSX").arg(key).arg(&item), found, ctx);
    let n = run(con, cmd("CF.COUNTX").arg(key).arg(&item), found, ctx);
    if e != Value::Int(1) || !matches!(n, Value::Int(c) if c >= 1) {
        Findings::push(
            &mut found.read_failures,
            format!("{ctx}: {item} added to {key}, then CF.EXISTSX -> {e:?}, CF.COUNTX -> {n:?}"),
        );
    }
    let d = run(con, cmd("CF.DELX").arg(key).arg(&item), found, ctx);
    if d != Value::Int(1) {
        Findings::push(
            &mut found.read_failures,
            format!("{ctx}: {item} added to {key}, then CF.DELX -> {d:?}"),
        );
    }
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
            for (it, data) in scandump(&mut con, &key) {
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
