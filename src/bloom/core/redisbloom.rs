//! RedisBloom 2.x's Bloom filter scheme, for filters imported from its
//! `BF.SCANDUMP` (written from RedisBloom's definitions, not its code):
//!
//! - **Hashing** (options FORCE64): a = MurmurHash64A(item, seed
//!   0xc6a4a7935bd1e995), b = MurmurHash64A(item, seed a); probe i of a layer
//!   of `bits` bits is bit (a + i·b) mod bits, in wrapping 64-bit arithmetic.
//!   The 8-byte words of the item are read little-endian (RedisBloom reads
//!   them in the host's order: its dumps from little-endian hosts).
//! - **Bits**: bit x is bit x mod 8 of byte x / 8 (LSB first), which on the
//!   wire is warden's little-endian 64-bit words.
//! - **Sizing** (option NOROUND): bits per item bpe = −ln p / 0.480453013918201,
//!   bits = ⌊capacity · bpe⌋ (at least 1) rounded up to whole 64-bit words,
//!   hashes = ⌈0.693147180559945 · bpe⌉. A scaling filter's first layer has
//!   half the asked rate; each new layer has `expansion` times the capacity
//!   and half the rate of the newest (as warden's).
//! - **Header** of `BF.SCANDUMP` (packed, little-endian): the items added
//!   (u64), the layer count (u32), the options (u32), the expansion (u32);
//!   per layer its bytes (u64), bits (u64), items (u64), error rate (f64),
//!   bits per item (f64), hashes (u32), capacity (u64), n2 (u8): 20 + 53 per
//!   layer bytes. Only the options RedisBloom 2.x gives every filter it
//!   creates (FORCE64 | NOROUND, and NO_SCALING) are accepted.

use crate::bloom::core::errors;
use crate::common::error::WardenError;
use crate::common::murmur64a::murmur64a;

/// Option: layers sized exactly (not to a power of two).
pub const OPT_NOROUND: u32 = 1;
/// Option: capacity given as a power of two of bits (power-of-two sizing).
pub const OPT_ENTS_IS_BITS: u32 = 2;
/// Option: 64-bit MurmurHash64A hashing (else the 32-bit legacy hash).
pub const OPT_FORCE64: u32 = 4;
/// Option: a non-scaling filter.
pub const OPT_NO_SCALING: u32 = 8;

/// ln 2 as RedisBloom writes it (15 digits: its hash counts are computed
/// with this value, not `LN_2`).
#[allow(clippy::approx_constant)]
const LN2: f64 = 0.693147180559945;
/// ln² 2 as RedisBloom writes it.
const LN2_SQUARED: f64 = 0.480453013918201;
/// The seed of the first hash (MurmurHash64A's multiplier).
const SEED: u64 = 0xc6a4_a793_5bd1_e995;
/// Bytes of the header before the layers.
const FIXED_BYTES: usize = 20;
/// Bytes of one layer in the header.
const LAYER_BYTES: usize = 53;

/// MurmurHash2 (32-bit, Austin Appleby) of `data` with `seed`, 4-byte
/// words read little-endian: the hash of RedisBloom filters made before
/// 2.0 (without the FORCE64 option).
pub fn murmur2(data: &[u8], seed: u32) -> u32 {
    const M: u32 = 0x5bd1_e995;
    let mut h = seed ^ data.len() as u32;
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        let mut k = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> 24;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M) ^ k;
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u32::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^ (h >> 15)
}

/// RedisBloom's two hashes of an item: (a, b) of its probes a + i·b.
pub fn item_hashes(item: &[u8]) -> (u64, u64) {
    let a = murmur64a(item, SEED);
    (a, murmur64a(item, a))
}

/// RedisBloom's bits per item for error rate `p`.
fn bits_per_item(p: f64) -> f64 {
    (p.ln() / LN2_SQUARED).abs()
}

/// The bits and hashes of a layer RedisBloom makes for `capacity` items at
/// rate `p` (in (0, 1): the caller checks it); `None` when that is beyond
/// any machine.
pub fn sizing(capacity: u64, p: f64) -> Option<(u64, u64)> {
    let bpe = bits_per_item(p);
    let exact = capacity as f64 * bpe;
    if !exact.is_finite() || exact >= (u64::MAX / 4) as f64 {
        return None;
    }
    let bits = (exact as u64).max(1).div_ceil(64) * 64;
    Some((bits, (LN2 * bpe).ceil() as u64))
}

/// One layer's fields as a RedisBloom header gives them.
#[derive(Debug, Clone, PartialEq)]
pub struct HeaderLayer {
    /// Items the layer holds (RedisBloom's `entries`).
    pub capacity: u64,
    /// The layer's error rate.
    pub error_rate: f64,
    /// Probes per item.
    pub hashes: u32,
    /// Items added to the layer (RedisBloom's `size`).
    pub items: u64,
    /// Bits of the layer.
    pub bits: u64,
}

/// A RedisBloom header, read and checked: the filter's asked error rate (the
/// first layer's, doubled for a scaling filter), its expansion (0:
/// non-scaling) and its layers.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// The asked error rate.
    pub error_rate: f64,
    /// Capacity multiplier per new layer; 0 for non-scaling.
    pub expansion: u32,
    /// The layers' fields, oldest first.
    pub layers: Vec<HeaderLayer>,
}

/// Little-endian fields off the front of a header.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        match self.0.split_first_chunk::<N>() {
            Some((head, rest)) => {
                self.0 = rest;
                *head
            }
            // The caller checked the length first.
            None => [0; N],
        }
    }

    fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }

    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }

    fn f64(&mut self) -> f64 {
        f64::from_le_bytes(self.take())
    }
}

/// Reads a RedisBloom `BF.SCANDUMP` header: `None` when `bytes` does not
/// have its shape (20 bytes, then 53 per layer as counted in it), else the
/// header or why it is refused. The options, the counts and each layer's
/// bytes, bits and n2 are checked here; the layers' sizes and rates, and
/// the layer count, are checked by the caller as any stored filter's.
pub fn parse_header(bytes: &[u8]) -> Option<Result<Header, WardenError>> {
    let count = bytes.get(8..12)?;
    let count = u32::from_le_bytes([count[0], count[1], count[2], count[3]]) as usize;
    let expected = count.checked_mul(LAYER_BYTES)?.checked_add(FIXED_BYTES)?;
    if bytes.len() != expected {
        return None;
    }
    Some(read_header(bytes, count))
}

fn read_header(bytes: &[u8], count: usize) -> Result<Header, WardenError> {
    let bad = WardenError::BadFilterData;
    let mut r = Reader(bytes);
    let total_items = r.u64();
    r.u32();
    let options = r.u32();
    let growth = r.u32();
    let known = OPT_NOROUND | OPT_ENTS_IS_BITS | OPT_FORCE64 | OPT_NO_SCALING;
    if options & !known != 0 {
        return Err(errors::redisbloom_options(options & !known));
    }
    if options & OPT_FORCE64 == 0 {
        return Err(errors::REDISBLOOM_HASH32);
    }
    if options & OPT_NOROUND == 0 || options & OPT_ENTS_IS_BITS != 0 {
        return Err(errors::REDISBLOOM_POWER_OF_TWO);
    }
    let scaling = options & OPT_NO_SCALING == 0;
    if count == 0 || (scaling && growth == 0) || (!scaling && count != 1) {
        return Err(bad);
    }
    // `count` is at most the header's length / 53.
    let mut layers = Vec::with_capacity(count);
    let mut items_sum = 0u64;
    for _ in 0..count {
        let bytes = r.u64();
        let bits = r.u64();
        let items = r.u64();
        let error_rate = r.f64();
        let _bits_per_item = r.f64();
        let hashes = r.u32();
        let capacity = r.u64();
        let n2 = r.u8();
        if n2 != 0 {
            return Err(errors::REDISBLOOM_POWER_OF_TWO);
        }
        if bytes.checked_mul(8) != Some(bits) {
            return Err(bad);
        }
        items_sum = items_sum.checked_add(items).ok_or_else(|| bad.clone())?;
        layers.push(HeaderLayer {
            capacity,
            error_rate,
            hashes,
            items,
            bits,
        });
    }
    if items_sum != total_items {
        return Err(bad);
    }
    let first = layers[0].error_rate;
    let error_rate = if scaling { first * 2.0 } else { first };
    Ok(Header {
        error_rate,
        expansion: if scaling { growth } else { 0 },
        layers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bits an item sets in one layer of `(bits, hashes)`, sorted.
    fn positions(item: &[u8], (bits, hashes): (u64, u64)) -> Vec<u64> {
        let (a, b) = item_hashes(item);
        let mut p: Vec<u64> = (0..hashes)
            .map(|i| a.wrapping_add(i.wrapping_mul(b)) % bits)
            .collect();
        p.sort_unstable();
        p.dedup();
        p
    }

    /// Vectors read from RedisBloom 2.8.2 itself: the bits set in the
    /// `BF.SCANDUMP` of a filter holding one item.
    #[test]
    fn bit_positions_match_redisbloom() {
        // BF.RESERVE k 0.01 100 NONSCALING; BF.ADD k hello
        let g = sizing(100, 0.01).expect("sizing");
        assert_eq!(g, (960, 7));
        assert_eq!(positions(b"hello", g), [153, 189, 481, 517, 809, 845, 881]);
        // BF.RESERVE s 0.001 1000 (first layer at 0.0005); a 25-byte item.
        let g = sizing(1000, 0.0005).expect("sizing");
        assert_eq!(g, (15_872, 11));
        assert_eq!(
            positions(b"warden imports RedisBloom", g),
            [2049, 2385, 4553, 5401, 7905, 10409, 10745, 12913, 13249, 15417, 15753]
        );
    }

    #[test]
    fn sizing_follows_redisbloom() {
        // BF.INFO sizes RedisBloom reports (research: 1M at 0.005 is
        // 1,378,472 bytes with 8 hashes; at 0.01, 7 hashes).
        assert_eq!(sizing(1_000_000, 0.005), Some((1_378_472 * 8, 8)));
        assert_eq!(sizing(1_000_000, 0.01).map(|g| g.1), Some(7));
        // At least one word, however loose the rate; nothing beyond a machine.
        assert_eq!(sizing(1, 0.9).map(|g| g.0), Some(64));
        assert_eq!(sizing(1 << 62, 1e-300), None);
    }

    /// A RedisBloom header: (items, options, growth) and per layer
    /// (bytes, bits, items, error, bpe, hashes, capacity, n2).
    type RawLayer = (u64, u64, u64, f64, f64, u32, u64, u8);

    fn header(items: u64, options: u32, growth: u32, layers: &[RawLayer]) -> Vec<u8> {
        let mut h = Vec::new();
        h.extend_from_slice(&items.to_le_bytes());
        h.extend_from_slice(&(layers.len() as u32).to_le_bytes());
        h.extend_from_slice(&options.to_le_bytes());
        h.extend_from_slice(&growth.to_le_bytes());
        for &(bytes, bits, size, error, bpe, hashes, entries, n2) in layers {
            h.extend_from_slice(&bytes.to_le_bytes());
            h.extend_from_slice(&bits.to_le_bytes());
            h.extend_from_slice(&size.to_le_bytes());
            h.extend_from_slice(&error.to_le_bytes());
            h.extend_from_slice(&bpe.to_le_bytes());
            h.extend_from_slice(&hashes.to_le_bytes());
            h.extend_from_slice(&entries.to_le_bytes());
            h.push(n2);
        }
        h
    }

    const L1: RawLayer = (144, 1152, 1, 0.005, 11.03, 8, 100, 0);
    const L2: RawLayer = (312, 2496, 0, 0.0025, 12.47, 9, 200, 0);
    const SCALING: u32 = OPT_NOROUND | OPT_FORCE64;

    #[test]
    fn headers_are_read_and_checked() {
        let h = header(1, SCALING, 2, &[L1, L2]);
        assert_eq!(h.len(), 20 + 2 * 53);
        let read = parse_header(&h).expect("shape").expect("header");
        assert_eq!(read.error_rate, 0.01);
        assert_eq!(read.expansion, 2);
        assert_eq!(read.layers.len(), 2);
        assert_eq!(read.layers[1].capacity, 200);
        assert_eq!(read.layers[1].bits, 2496);
        let nonscaling = header(
            1,
            SCALING | OPT_NO_SCALING,
            2,
            &[(120, 960, 1, 0.01, 9.58, 7, 100, 0)],
        );
        let read = parse_header(&nonscaling).expect("shape").expect("header");
        assert_eq!((read.error_rate, read.expansion), (0.01, 0));
        // Not RedisBloom's shape: left to the caller (warden's own header).
        assert_eq!(parse_header(&[]), None);
        assert_eq!(parse_header(&h[..h.len() - 1]), None);
        assert_eq!(parse_header(&[&h[..], &[0]].concat()), None);
        let mut huge = h.clone();
        huge[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(parse_header(&huge), None);
        // Refused with what is unsupported.
        let refused = |items: u64, options: u32, growth: u32, layers: &[RawLayer]| {
            parse_header(&header(items, options, growth, layers))
                .expect("shape")
                .err()
        };
        assert_eq!(
            refused(1, OPT_NOROUND, 2, &[L1]),
            Some(errors::REDISBLOOM_HASH32)
        );
        assert_eq!(refused(1, 0, 2, &[L1]), Some(errors::REDISBLOOM_HASH32));
        assert_eq!(
            refused(1, OPT_FORCE64, 2, &[L1]),
            Some(errors::REDISBLOOM_POWER_OF_TWO)
        );
        assert_eq!(
            refused(1, SCALING | OPT_ENTS_IS_BITS, 2, &[L1]),
            Some(errors::REDISBLOOM_POWER_OF_TWO)
        );
        let mut n2 = L1;
        n2.7 = 10;
        assert_eq!(
            refused(1, SCALING, 2, &[n2]),
            Some(errors::REDISBLOOM_POWER_OF_TWO)
        );
        assert_eq!(
            refused(1, SCALING | 16, 2, &[L1]),
            Some(errors::redisbloom_options(16))
        );
        assert_eq!(
            refused(1, SCALING | 0x8000_0000, 2, &[L1]),
            Some(errors::redisbloom_options(0x8000_0000))
        );
        // Inconsistent counts.
        let bad = Some(WardenError::BadFilterData);
        assert_eq!(refused(0, SCALING, 2, &[]), bad, "no layers");
        assert_eq!(refused(2, SCALING, 2, &[L1, L2]), bad, "items sum");
        assert_eq!(refused(1, SCALING, 0, &[L1]), bad, "scaling without growth");
        assert_eq!(refused(1, SCALING | OPT_NO_SCALING, 2, &[L1, L2]), bad);
        let mut odd = L1;
        odd.0 = 145;
        assert_eq!(refused(1, SCALING, 2, &[odd]), bad, "bytes != bits / 8");
        let mut wrap = L1;
        wrap.0 = 1 << 61;
        wrap.1 = 0;
        assert_eq!(refused(1, SCALING, 2, &[wrap]), bad, "bytes · 8 wraps");
    }
}
