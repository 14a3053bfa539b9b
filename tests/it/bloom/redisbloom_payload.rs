//! RedisBloom's Bloom filters (`MBbloom--`, made by RedisBloom's names under
//! `aliases redisbloom`) in the corrupt-payload tests (the payload fuzzer and
//! its controls in `tests/it/module/`, `redisbloom_layout.rs` here): real
//! DUMPs of several shapes, the older encoding versions' layouts of them,
//! forgeries field by field of the RDB layout `src/bloom/redisbloom/data_type.rs`
//! reads (items, link count, options, growth; per link its capacity, error
//! rate, hashes, bits per item, bits, n2, bit array and items), the forgeries
//! its loader must refuse, and what a filter a payload made must answer.
//! Filters RedisBloom's commands cannot make (sized to powers of two, hashed
//! with the 32-bit legacy hash) are made by `BF.LOADCHUNK` of a crafted
//! chunk-stream header.

use crate::bloom::kit::{CHAIN, FILTER, KIT};
use crate::common::fuzz_calls::is_int01;
use crate::common::kit::{foreign, of_type, Args};
use crate::common::payload::*;
use crate::common::payload_bases::*;
use crate::common::payload_checks::*;
use crate::common::payload_forgeries::Forged;
use crate::common::*;

/// Options (RedisBloom's `BLOOM_OPT_*`; without `NOROUND`, 1, links are
/// sized to powers of two): the capacity given as the power of two of the
/// bits, 64-bit hashing, no scaling.
pub const ENTS_IS_BITS: u32 = 2;
pub const FORCE64: u32 = 4;
pub const NO_SCALING: u32 = 8;

/// ln 2 and ln² 2 as RedisBloom writes them (its hash counts come from them).
#[allow(clippy::approx_constant)]
const LN2: f64 = 0.693147180559945;
const LN2_SQUARED: f64 = 0.480453013918201;

/// Fields before the first link: items, link count, options, growth.
pub const HEAD: usize = 4;
/// Fields per link: capacity, error rate, hashes, bits per item, bits, n2,
/// bit array, items.
pub const LINK: usize = 8;

/// Index of field `f` of link `l` (0 capacity, 1 error rate, 2 hashes, 3 bits
/// per item, 4 bits, 5 n2, 6 bit array, 7 items).
pub fn link_field(l: usize, f: usize) -> usize {
    HEAD + l * LINK + f
}

/// The number of links of a payload's fields (`None` when they are not a
/// filter's layout of encoding version 4).
pub fn link_count(d: &Dump) -> Option<usize> {
    let n = d.fields.len().checked_sub(HEAD)?;
    let kinds = ["U", "D", "U", "D", "U", "U", "S", "U"];
    let ok = n > 0
        && n.is_multiple_of(LINK)
        && d.fields[..HEAD].iter().all(|f| matches!(f, Field::U(_)))
        && d.fields[HEAD..]
            .chunks(LINK)
            .all(|l| l.iter().map(field_kind).eq(kinds));
    ok.then_some(n / LINK)
}

/// Bits per item of error rate `p`, as RedisBloom computes them.
pub fn bits_per_item(p: f64) -> f64 {
    (p.ln() / LN2_SQUARED).abs()
}

/// The hash count RedisBloom's check demands of `bpe` bits per item (its
/// `(int)ceil(...)`, stored unsigned).
pub fn hashes_for(bpe: f64) -> u64 {
    u64::from((LN2 * bpe).ceil() as i32 as u32)
}

/// One link of a chunk-stream header.
#[derive(Clone, Copy)]
pub struct HeaderLink {
    pub capacity: u64,
    pub error: f64,
    pub bpe: f64,
    pub bits: u64,
    pub n2: u8,
}

impl HeaderLink {
    /// A link of 2^`n2` bits at rate `error`, its capacity what they hold.
    pub fn pow2(error: f64, n2: u8) -> HeaderLink {
        let bpe = bits_per_item(error);
        let bits = 1u64 << n2;
        let capacity = (bits as f64 / bpe) as u64;
        HeaderLink {
            capacity,
            error,
            bpe,
            bits,
            n2,
        }
    }

    /// A link of `bits` bits (n2 0) for `capacity` items at `bpe` bits each,
    /// as encoding version 0 derives them.
    pub fn exact(capacity: u64, error: f64, bpe: f64) -> HeaderLink {
        HeaderLink {
            capacity,
            error,
            bpe,
            bits: (capacity as f64 * bpe) as u64,
            n2: 0,
        }
    }
}

/// A chunk-stream header (`BF.SCANDUMP`'s first chunk) of a filter with no
/// items yet: items, link count, options, growth, then per link its bytes,
/// bits, items, error rate, bits per item, hashes, capacity and n2; packed,
/// little-endian.
pub fn header(options: u32, growth: u32, links: &[HeaderLink]) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend(0u64.to_le_bytes());
    h.extend((links.len() as u32).to_le_bytes());
    h.extend(options.to_le_bytes());
    h.extend(growth.to_le_bytes());
    for l in links {
        h.extend((l.bits / 8).to_le_bytes());
        h.extend(l.bits.to_le_bytes());
        h.extend(0u64.to_le_bytes());
        h.extend(l.error.to_le_bytes());
        h.extend(l.bpe.to_le_bytes());
        h.extend((hashes_for(l.bpe) as u32).to_le_bytes());
        h.extend(l.capacity.to_le_bytes());
        h.push(l.n2);
    }
    h
}

/// The header of a filter sized to powers of two and hashed with the 32-bit
/// legacy hash (RedisBloom 1.x's), one link of 512 bits.
pub fn legacy_header() -> Vec<u8> {
    header(0, 2, &[HeaderLink::pow2(0.005, 9)])
}

/// The base keys, in the order `chain_bases` returns them.
pub const BASES: [&str; 9] = [
    "rbb:small",
    "rbb:scaled",
    "rbb:full",
    "rbb:sparse",
    "rbb:grow3",
    "rbb:pow2",
    "rbb:legacy",
    "rbb:v0",
    "rbb:bits",
];

/// `BF.MADD key {key}:0 … {key}:{n-1}` (a full non-scaling filter stops).
fn madd(con: &mut Connection, key: &str, n: usize) {
    let mut c = cmd_of!("BF.MADD", key);
    for i in 0..n {
        c.arg(format!("{key}:{i}"));
    }
    must(con, &c);
}

/// Filters: one link, scaled over several, non-scaling and full, sparse
/// (LZF), grown by 3; and from crafted headers: sized to powers of two,
/// legacy (32-bit hash, powers of two), links as encoding version 0 has them
/// (bits from capacity × bits per item), capacity as bits (non-scaling).
pub fn chain_bases(con: &mut Connection) -> Vec<Base> {
    must(con, &cmd_of!("BF.RESERVE", "rbb:small", 0.01, 100));
    madd(con, "rbb:small", 10);
    must(
        con,
        &cmd_of!("BF.RESERVE", "rbb:scaled", 0.01, 8, "EXPANSION", 2),
    );
    madd(con, "rbb:scaled", 100);
    must(
        con,
        &cmd_of!("BF.RESERVE", "rbb:full", 0.001, 20, "NONSCALING"),
    );
    madd(con, "rbb:full", 30);
    must(con, &cmd_of!("BF.RESERVE", "rbb:sparse", 0.0001, 200_000));
    madd(con, "rbb:sparse", 3);
    let mut insert = cmd_of!(
        "BF.INSERT",
        "rbb:grow3",
        "CAPACITY",
        5,
        "ERROR",
        0.05,
        "EXPANSION",
        3,
        "ITEMS"
    );
    for i in 0..40 {
        insert.arg(format!("rbb:grow3:{i}"));
    }
    must(con, &insert);
    let crafted = [
        (
            "rbb:pow2",
            header(FORCE64, 2, &[HeaderLink::pow2(0.005, 10)]),
            150,
        ),
        ("rbb:legacy", legacy_header(), 100),
        (
            "rbb:v0",
            header(
                0,
                2,
                &[
                    HeaderLink::exact(64, 0.01, 9.5),
                    HeaderLink::exact(128, 0.005, 11.0),
                ],
            ),
            30,
        ),
        (
            "rbb:bits",
            header(
                ENTS_IS_BITS | FORCE64 | NO_SCALING,
                2,
                &[HeaderLink::pow2(0.01, 12)],
            ),
            50,
        ),
    ];
    for (key, h, items) in crafted {
        must(con, &cmd_of!("BF.LOADCHUNK", key, 1, h));
        madd(con, key, items);
    }
    let bases = bases_of(con, &BASES, &CHAIN);
    for b in &bases {
        assert!(
            link_count(&b.dump).is_some(),
            "{}: filter layout {:?}",
            b.key,
            b.dump.fields.iter().map(field_kind).collect::<Vec<_>>()
        );
    }
    let links = |i: usize| link_count(&bases[i].dump).unwrap_or(0);
    assert!(links(1) >= 3 && links(4) >= 3 && links(5) >= 2 && links(6) >= 2);
    assert_eq!(links(7), 2, "rbb:v0 stays within its second link");
    assert!(
        bases[5].dump.uint(link_field(1, 5)) > 0,
        "rbb:pow2 grows to a power of two"
    );
    bases
}

/// The older encoding versions' layouts of `b` that load as the same value:
/// 3 and 2 (no growth: 2) where its growth is 2, 1 (no options either)
/// where it has none, and 0 (no bits nor n2: bits are capacity × bits per
/// item) where every link's are so.
pub fn chain_layouts(b: &Base) -> Vec<(&'static str, Dump)> {
    let d = &b.dump;
    let Some(links) = link_count(d) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if d.uint(3) != 2 {
        return out;
    }
    let mut v3 = d.clone();
    v3.fields.remove(3);
    out.push(("encoding version 3", with_encver(&v3, 3)));
    out.push(("encoding version 2", with_encver(&v3, 2)));
    if d.uint(2) != 0 {
        return out;
    }
    let mut v1 = v3;
    v1.fields.remove(2);
    out.push(("encoding version 1", with_encver(&v1, 1)));
    let derived = (0..links).all(|l| {
        let Field::D(bpe) = d.fields[link_field(l, 3)] else {
            return false;
        };
        let capacity = d.uint(link_field(l, 0));
        d.uint(link_field(l, 5)) == 0 && d.uint(link_field(l, 4)) == (capacity as f64 * bpe) as u64
    });
    if derived {
        let mut v0 = v1;
        // Per link, the bits and n2 (4 and 5) go; version 1 has two head fields.
        for l in (0..links).rev() {
            let at = 2 + l * LINK + 4;
            v0.fields.drain(at..at + 2);
        }
        out.push(("encoding version 0", with_encver(&v0, 0)));
    }
    out
}

/// The sum of the links' items (wrapping), for forgeries that keep it.
fn items_sum(d: &Dump, links: usize) -> u64 {
    (0..links).fold(0u64, |s, l| s.wrapping_add(d.uint(link_field(l, 7))))
}

/// Forgeries of a filter: link counts, options (unknown or other known
/// ones), growth, capacities, error rates, bits per item with the hashes
/// they give or not, bits against bytes and n2, items with their sum kept or
/// not, links swapped, dropped or repeated, plausible filters of many links.
pub fn forge_chain(rng: &mut Rng, d: &mut Dump) {
    let Some(links) = link_count(d) else {
        // Another type's fields: a link count over them.
        if d.fields.len() > 1 {
            d.fields[1] = Field::U(rng.pick(&[0, 1, 2, 64, u64::MAX]));
        }
        return;
    };
    let l = rng.below(links);
    let at = |f: usize| link_field(l, f);
    let keep_sum = rng.chance(2, 3);
    match rng.below(10) {
        0 => {
            let counts = [
                0,
                links as u64 + 1,
                links as u64 - 1,
                64,
                1000,
                1 << 32,
                u64::MAX,
            ];
            d.fields[1] = Field::U(rng.pick(&counts));
        }
        1 => {
            let o = d.uint(2);
            d.fields[2] = Field::U(match rng.chance(1, 2) {
                true => o ^ rng.pick(&[1, 2, 4, 8]),
                false => rng.pick(&[15, 16, 32, 1 << 31, 1 << 32, u64::MAX]),
            });
        }
        2 => {
            let g = [0, 1, 3, 1000, u64::from(u32::MAX), 1 << 32, u64::MAX];
            d.fields[3] = Field::U(rng.pick(&g));
        }
        3 => {
            let items = d.uint(at(7));
            let c = rng.pick(&[0, 1, items, items.wrapping_add(1), 1 << 40, u64::MAX]);
            d.fields[at(0)] = Field::U(c);
        }
        4 => {
            let Field::D(e) = d.fields[at(1)] else {
                unreachable!()
            };
            let odd = odd_double(rng, e);
            d.fields[at(1)] =
                Field::D(rng.pick(&[0.0, 1.0, -0.01, f64::NAN, 1e-300, 0.999_999, odd]));
        }
        5 => {
            let Field::D(bpe) = d.fields[at(3)] else {
                unreachable!()
            };
            let odd = odd_double(rng, bpe);
            let b = rng.pick(&[
                -2.0,
                -0.5,
                0.0,
                f64::NAN,
                1e-9,
                1549.0,
                1e4,
                3e9,
                f64::INFINITY,
                -1e300,
                odd,
            ]);
            d.fields[at(3)] = Field::D(b);
            let h = hashes_for(b);
            d.fields[at(2)] = Field::U(match keep_sum {
                true => h,
                false => rng.pick(&[h.wrapping_add(1), h.wrapping_sub(1), 1 << 32]),
            });
        }
        6 => {
            let bits = d.uint(at(4));
            match rng.below(4) {
                0 => {
                    let odd = odd_uint(rng, bits);
                    let near = [
                        bits.wrapping_add(8),
                        bits.wrapping_sub(8),
                        bits.wrapping_mul(2),
                    ];
                    d.fields[at(4)] = Field::U(rng.pick(&[near[0], near[1], near[2], 0, odd]));
                }
                1 => {
                    // The bytes and the bits changed together.
                    let Field::S(s) = &mut d.fields[at(6)] else {
                        unreachable!()
                    };
                    match rng.chance(1, 2) {
                        true => s.extend([0xa5; 8]),
                        false => s.truncate(s.len().saturating_sub(8)),
                    }
                    let bits = s.len() as u64 * 8;
                    d.fields[at(4)] = Field::U(bits);
                }
                2 => {
                    let log = u64::from(63 - bits.max(1).leading_zeros());
                    let n2 = [0, 1, log, log + 1, 63, 64, 255, 256];
                    d.fields[at(5)] = Field::U(rng.pick(&n2));
                }
                _ => {
                    let Field::S(s) = &mut d.fields[at(6)] else {
                        unreachable!()
                    };
                    s.truncate(s.len().saturating_sub(rng.pick(&[1, 8])));
                }
            }
        }
        7 if rng.chance(1, 3) => {
            // An oldest link full at the top of the items' range, the others
            // empty: the sum is valid, one more add would pass it.
            let top = u64::MAX - rng.below(2) as u64;
            for k in 0..links {
                d.fields[link_field(k, 7)] = Field::U(0);
            }
            d.fields[link_field(0, 0)] = Field::U(top);
            d.fields[link_field(0, 7)] = Field::U(top);
            d.fields[0] = Field::U(top);
        }
        7 => {
            let c = d.uint(at(0));
            let v = rng.pick(&[0, 1, c, c.wrapping_add(1), u64::MAX / 2, u64::MAX]);
            d.fields[at(7)] = Field::U(v);
            if keep_sum {
                d.fields[0] = Field::U(items_sum(d, links));
            } else {
                let odd = odd_uint(rng, d.uint(0));
                d.fields[0] = Field::U(odd);
            }
        }
        8 => {
            let (a, b) = (link_field(l, 0), link_field(rng.below(links), 0));
            match rng.below(3) {
                0 => {
                    for f in 0..LINK {
                        d.fields.swap(a + f, b + f);
                    }
                }
                1 if links > 1 => {
                    d.fields.drain(a..a + LINK);
                }
                _ => {
                    let link = d.fields[a..a + LINK].to_vec();
                    d.fields.splice(b..b, link);
                }
            }
            let now = link_count(d).unwrap_or(links);
            if keep_sum {
                d.fields[1] = Field::U(now as u64);
                d.fields[0] = Field::U(items_sum(d, now));
            }
        }
        _ => {
            // Plausible filters of many (copied) links, the sum kept.
            let want = rng.pick(&[2usize, 3, 10, 63, 64, 65]);
            let mut fields = d.fields[..HEAD].to_vec();
            for k in 0..want {
                let src = link_field(k % links, 0);
                fields.extend_from_slice(&d.fields[src..src + LINK]);
            }
            fields[1] = Field::U(want as u64);
            d.fields = fields;
            d.fields[0] = Field::U(items_sum(d, want));
        }
    }
}

/// Forgeries of `bases` (as `chain_bases` returns them) that the loader must
/// refuse: no link, a link count that is not the links', a link's bits not
/// its bytes' or under 2^n2, n2 past 63 or a byte, items that are not the
/// links' sum (or overflow it), options RedisBloom does not define, fields
/// past 32 bits, an error rate out of (0, 1), hashes other than the bits per
/// item give, bits per item no rate gives (none or negative, with the hashes
/// they give: none, or 2^32 − 1); an older version's layout under version 4
/// and the other way, the next encoding version and no EOF; another family's
/// fields and warden's own filter's under the type's id, and back.
pub fn chain_refusals(bases: &[Base], others: &[&Base]) -> Forged {
    let (small, scaled, pow2, v0) = (&bases[0], &bases[1], &bases[5], &bases[7]);
    let mut f = Forged::default();
    let l0 = |f: usize| link_field(0, f);
    f.with("no link", small, |d| {
        d.fields.truncate(HEAD);
        d.fields[1] = Field::U(0);
    });
    f.uint("link count 0", small, 1, 0);
    f.uint(
        "one link more than stored",
        scaled,
        1,
        scaled.dump.uint(1) + 1,
    );
    f.uint(
        "one link fewer than stored",
        scaled,
        1,
        scaled.dump.uint(1) - 1,
    );
    f.uint("link count u64::MAX", small, 1, u64::MAX);
    let bits = small.dump.uint(l0(4));
    f.uint("bits a byte over the bytes", small, l0(4), bits + 8);
    f.uint("bits a bit under the bytes", small, l0(4), bits - 1);
    f.string("bytes 8 short of the bits", small, l0(6), |s| {
        s.truncate(s.len() - 8)
    });
    f.with("bits 0 and no bytes", small, |d| {
        d.fields[l0(4)] = Field::U(0);
        d.fields[l0(6)] = Field::S(Vec::new());
    });
    let n2 = pow2.dump.uint(l0(5));
    f.uint("n2 past the bits", pow2, l0(5), n2 + 1);
    f.uint("n2 64", pow2, l0(5), 64);
    f.uint("n2 past a byte", pow2, l0(5), 256 + n2);
    f.uint(
        "items one over the links' sum",
        scaled,
        0,
        scaled.dump.uint(0) + 1,
    );
    f.uint(
        "a link's items one under",
        scaled,
        link_field(1, 7),
        scaled.dump.uint(link_field(1, 7)) - 1,
    );
    f.with("link items that overflow their sum", scaled, |d| {
        d.fields[link_field(0, 7)] = Field::U(u64::MAX);
        d.fields[0] = Field::U(items_sum(d, link_count(d).unwrap_or(1)));
    });
    f.uint("unknown option 16", small, 2, small.dump.uint(2) | 16);
    f.uint(
        "options past 32 bits",
        small,
        2,
        small.dump.uint(2) | 1 << 32,
    );
    f.uint("growth past 32 bits", scaled, 3, 1 << 32);
    f.uint(
        "hashes past 32 bits",
        small,
        l0(2),
        small.dump.uint(l0(2)) | 1 << 32,
    );
    f.set("error rate 0", small, l0(1), Field::D(0.0));
    f.set("error rate 1", small, l0(1), Field::D(1.0));
    f.set("error rate NaN", small, l0(1), Field::D(f64::NAN));
    f.set("error rate negative", small, l0(1), Field::D(-0.01));
    let h = small.dump.uint(l0(2));
    f.uint(
        "hashes one more than bits per item give",
        small,
        l0(2),
        h + 1,
    );
    f.uint("hashes one fewer", small, l0(2), h - 1);
    for (what, bpe) in [
        ("bits per item NaN, hashes 0", f64::NAN),
        ("bits per item 0, hashes 0", 0.0),
        ("bits per item negative, hashes 2^32 - 1", -2.0),
        ("bits per item 3e9, hashes as they give", 3e9),
        ("bits per item infinite, hashes as they give", f64::INFINITY),
    ] {
        f.with(what, small, |d| {
            d.fields[l0(3)] = Field::D(bpe);
            d.fields[l0(2)] = Field::U(hashes_for(bpe));
        });
    }
    f.set("bits as a double", small, l0(4), Field::D(bits as f64));
    f.set("bit array as a number", small, l0(6), Field::U(0));
    let v0_layout = chain_layouts(v0)
        .into_iter()
        .find(|(n, _)| *n == "encoding version 0")
        .expect("rbb:v0's version 0 layout")
        .1;
    f.0.push((format!("{} version 0 with capacity one more", v0.key), {
        let mut d = v0_layout.clone();
        d.fields[2] = Field::U(d.uint(2) + 1);
        d
    }));
    f.0.push((
        format!("{} version 0 layout under version 4", v0.key),
        with_encver(&v0_layout, 4),
    ));
    f.with("version 4 layout under version 3", scaled, |d| {
        d.module_id = (d.module_id & !1023) | 3
    });
    f.with("version 4 layout under version 1", scaled, |d| {
        d.module_id = (d.module_id & !1023) | 1
    });
    f.with("next encoding version", small, |d| {
        d.module_id = (d.module_id & !1023) | 5
    });
    f.with("no EOF", small, |d| d.eof = false);
    f.confused(small, foreign(others, &KIT));
    f.confused(small, of_type(others, FILTER.name));
    f
}

/// A filter's `BF.INFO`: five labelled values, its size at least a link's,
/// at least one link, and a growth or nil; capacity and items may be any
/// (RedisBloom answers its unsigned counts signed).
pub fn chain_info_ok(v: &Value) -> bool {
    let Value::Array(a) = v else {
        return false;
    };
    let int = |i: usize| match a.get(i) {
        Some(Value::Int(n)) => Some(*n),
        _ => None,
    };
    a.len() == 10
        && int(1).is_some()
        && int(3).is_some_and(|n| n >= 96)
        && int(5).is_some_and(|n| n >= 1)
        && int(7).is_some()
        && (matches!(a[9], Value::Nil) || int(9).is_some_and(|n| n >= 0))
}

/// `BF.DEBUG`: the items, then a line per link.
fn debug_ok(v: &Value) -> bool {
    let Value::Array(a) = v else {
        return false;
    };
    let lines: Vec<String> = a.iter().filter_map(text_of).collect();
    lines.len() == a.len()
        && a.len() >= 2
        && lines[0].starts_with("size:")
        && lines[1..].iter().all(|l| l.starts_with("bytes:"))
}

/// `BF.SCANDUMP key 0`: iterator 1 and the header, of whole links.
fn header_ok(v: &Value) -> bool {
    match v {
        Value::Array(a) => match &a[..] {
            [Value::Int(1), Value::BulkString(h)] => {
                h.len() >= 20 + 53 && (h.len() - 20).is_multiple_of(53)
            }
            _ => false,
        },
        _ => false,
    }
}

/// The reads of a filter, each answer in range, and `BF.CARD` agreeing with
/// `BF.INFO`'s items.
pub fn chain_reads(con: &mut Connection, key: &str, found: &mut Findings, ctx: &str) {
    let reads: [(redis::Cmd, Check); 7] = [
        (cmd_of!("BF.INFO", key), chain_info_ok),
        (cmd_of!("BF.EXISTS", key, "rbb:small:1"), is_int01),
        (cmd_of!("BF.EXISTS", key, "absent-item"), is_int01),
        (cmd_of!("BF.CARD", key), |v| matches!(v, Value::Int(_))),
        (
            cmd_of!("BF.MEXISTS", key, "a", "rbb:scaled:3"),
            |v| matches!(v, Value::Array(a) if a.len() == 2 && a.iter().all(is_int01)),
        ),
        (cmd_of!("BF.DEBUG", key), debug_ok),
        (cmd_of!("BF.SCANDUMP", key, 0), header_ok),
    ];
    run_reads(con, &reads, found, ctx);
    let items = run(con, &cmd_of!("BF.INFO", key, "ITEMS"), found, ctx);
    let card = run(con, &cmd_of!("BF.CARD", key), found, ctx);
    if Value::Array(vec![card.clone()]) != items {
        Findings::push(
            &mut found.read_failures,
            format!("{ctx}: BF.CARD {card:?} but BF.INFO ITEMS {items:?}"),
        );
    }
}

/// The writes on a filter a payload made (call `i`): its chunks loaded into
/// another key must make the same filter; an item added is then present;
/// adds, inserts, a chunk written into it, and creations it refuses.
pub fn chain_writes(con: &mut Connection, key: &str, i: usize, found: &mut Findings, ctx: &str) {
    chunks_copy_same(con, ["BF.SCANDUMP", "BF.LOADCHUNK"], key, found, ctx);
    let item = format!("new{i}");
    let added = run(con, &cmd_of!("BF.ADD", key, &item), found, ctx);
    let there = run(con, &cmd_of!("BF.EXISTS", key, &item), found, ctx);
    if err_of(&added).is_none() && there != Value::Int(1) {
        let what = format!("{ctx}: BF.ADD {item} -> {added:?}, then BF.EXISTS -> {there:?}");
        Findings::push(&mut found.read_failures, what);
    }
    let writes = [
        cmd_of!(
            "BF.MADD",
            key,
            format!("m{i}a"),
            format!("m{i}b"),
            "rbb:small:0"
        ),
        cmd_of!("BF.INSERT", key, "NOCREATE", "ITEMS", format!("n{i}")),
        cmd_of!("BF.LOADCHUNK", key, 9, vec![0x5au8; 8]),
        cmd_of!("BF.LOADCHUNK", key, 1, legacy_header()),
        cmd_of!("BF.RESERVE", key, 0.01, 10),
        cmd_of!("BF.INFO", key, "SIZE"),
    ];
    run_all(con, &writes, found, ctx);
}

/// A filter's bytes as `bf_bytes` counts them (`BF.INFO key SIZE`).
pub fn chain_size(con: &mut Connection, key: &[u8]) -> i64 {
    let v = raw(con, &cmd_of!("BF.INFO", key, "SIZE"));
    match &v {
        Value::Array(a) if a.len() == 1 => int_of(&a[0]),
        _ => int_of(&v),
    }
    .unwrap_or_else(|| panic!("BF.INFO SIZE: {v:?}"))
}

/// A filter `src` of several links made with RedisBloom's names, and its
/// chunks (the header first), each as its iterator, its data and `rb`, for
/// `BF.LOADCHUNK` in the leak workload.
pub fn rb_chunks_of(con: &mut Connection, src: &str) -> Vec<Args> {
    must(con, &cmd_of!("BF.RESERVE", src, 0.01, 100, "EXPANSION", 2));
    madd(con, src, 300);
    let chunks = scandump_chunks(con, "BF.SCANDUMP", src).expect("chunks");
    assert!(chunks.len() >= 3, "chunks of {src}");
    chunks
        .into_iter()
        .map(|(it, data)| vec![it.to_string().into_bytes(), data, b"rb".to_vec()])
        .collect()
}
