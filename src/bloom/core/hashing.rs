//! How a filter hashes items and places their bits: warden's own (one
//! murmur3 x64-128 per item, multiply-shift) or, for a filter imported from
//! RedisBloom, RedisBloom's (see `redisbloom`). Probes are Kirsch–Mitzenmacher
//! double hashing, h1 + i·h2 in wrapping 64-bit arithmetic, for both.

use crate::bloom::core::redisbloom;

/// How a filter hashes items, places their bits and sizes new layers:
/// chosen when the filter is created and stored with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Hashing {
    /// warden's own: one murmur3 x64-128 per item, bit positions by
    /// multiply-shift, layers sized by `geometry`.
    #[default]
    Warden,
    /// RedisBloom 2.x's (options FORCE64 | NOROUND), for filters imported
    /// from its `BF.SCANDUMP`: two MurmurHash64A per item, bit positions
    /// modulo the layer's bits, layers sized by `redisbloom::geometry`.
    RedisBloom,
}

impl Hashing {
    /// The number that stands for it in RDB.
    pub fn code(self) -> u64 {
        match self {
            Hashing::Warden => 0,
            Hashing::RedisBloom => 1,
        }
    }

    /// The hashing a stored number stands for.
    pub fn from_code(code: u64) -> Option<Hashing> {
        match code {
            0 => Some(Hashing::Warden),
            1 => Some(Hashing::RedisBloom),
            _ => None,
        }
    }
}

/// The finalization mix of murmur3.
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// MurmurHash3 x64-128 of `data` as its two 64-bit halves, read straight
/// from the slice (the `murmur3` crate, its reference in the tests, reads
/// through `io::Read` at about three times the cost).
pub fn murmur3_x64_128(data: &[u8], seed: u32) -> (u64, u64) {
    const C1: u64 = 0x87c3_7b91_1142_53d5;
    const C2: u64 = 0x4cf5_ad43_2745_937f;
    let mix1 = |k: u64| k.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
    let mix2 = |k: u64| k.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
    let (mut h1, mut h2) = (u64::from(seed), u64::from(seed));
    let mut blocks = data.chunks_exact(16);
    for block in &mut blocks {
        h1 ^= mix1(word(&block[..8]));
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        h2 ^= mix2(word(&block[8..]));
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    let (mut k1, mut k2) = (0u64, 0u64);
    for (i, &b) in tail.iter().enumerate() {
        if i < 8 {
            k1 |= u64::from(b) << (8 * i);
        } else {
            k2 |= u64::from(b) << (8 * (i - 8));
        }
    }
    if tail.len() > 8 {
        h2 ^= mix2(k2);
    }
    if !tail.is_empty() {
        h1 ^= mix1(k1);
    }
    let len = data.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

/// The two 64-bit halves of an item's murmur3 x64-128 hash (seed 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemHash {
    h1: u64,
    h2: u64,
}

impl ItemHash {
    /// Hashes an item once with warden's hashing; every layer derives its
    /// probes from this.
    pub fn of(item: &[u8]) -> ItemHash {
        let (h1, h2) = murmur3_x64_128(item, 0);
        ItemHash { h1, h2 }
    }

    /// Hashes an item as RedisBloom 2.x does (`redisbloom::item_hashes`).
    pub fn redisbloom(item: &[u8]) -> ItemHash {
        let (h1, h2) = redisbloom::item_hashes(item);
        ItemHash { h1, h2 }
    }

    /// Bit positions i = 0..hashes in a layer of `bits` bits: (h1 + i·h2),
    /// wrapping, mapped onto [0, bits) by `P`.
    pub(crate) fn probes<P: Scheme>(self, bits: u64, hashes: u32) -> impl Iterator<Item = u64> {
        (0..u64::from(hashes))
            .map(move |i| P::place(self.h1.wrapping_add(i.wrapping_mul(self.h2)), bits))
    }
}

/// A hashing as a type: how an item is hashed and how a probe's 64-bit
/// value becomes a bit position. Each hashing's loops are compiled apart, so
/// a command branches on the filter's hashing once, not per probe.
pub(crate) trait Scheme {
    /// The item's two hashes.
    fn hash(item: &[u8]) -> ItemHash;
    /// The position in [0, bits) of probe value `x`.
    fn place(x: u64, bits: u64) -> u64;
}

/// warden's: murmur3 x64-128, multiply-shift (the high half of x · bits).
pub(crate) struct MultiplyShift;

impl Scheme for MultiplyShift {
    #[inline(always)]
    fn hash(item: &[u8]) -> ItemHash {
        ItemHash::of(item)
    }

    #[inline(always)]
    fn place(x: u64, bits: u64) -> u64 {
        ((u128::from(x) * u128::from(bits)) >> 64) as u64
    }
}

/// RedisBloom's: two MurmurHash64A, x mod bits.
pub(crate) struct Modulo;

impl Scheme for Modulo {
    #[inline(always)]
    fn hash(item: &[u8]) -> ItemHash {
        ItemHash::redisbloom(item)
    }

    #[inline(always)]
    fn place(x: u64, bits: u64) -> u64 {
        x % bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashing_is_stable() {
        // murmur3 x64-128 of "hello", seed 0 (reference value of the algorithm).
        assert_eq!(
            murmur3_x64_128(b"hello", 0),
            (0xcbd8_a7b3_41bd_9b02, 0x5b1e_906a_48ae_1d19)
        );
        let h = ItemHash::of(b"hello");
        assert_eq!(h.h1, 0xcbd8_a7b3_41bd_9b02);
        assert_eq!(h.h2, 0x5b1e_906a_48ae_1d19);
    }

    /// The slice implementation equals the `murmur3` crate (the reference)
    /// for every length around the 16-byte block and 8-byte tail edges, on
    /// pseudo-random bytes and seeds.
    #[test]
    fn slice_murmur_equals_the_reference_crate() {
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for len in 0..200 {
            for _ in 0..20 {
                let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                let seed = if next() % 4 == 0 { next() as u32 } else { 0 };
                let want =
                    murmur3::murmur3_x64_128(&mut std::io::Cursor::new(&data), seed).expect("read");
                let (h1, h2) = murmur3_x64_128(&data, seed);
                assert_eq!((u128::from(h2) << 64) | u128::from(h1), want, "len {len}");
            }
        }
    }

    #[test]
    fn hashings_have_stable_codes() {
        for code in 0..2 {
            assert_eq!(Hashing::from_code(code).map(Hashing::code), Some(code));
        }
        assert_eq!(Hashing::from_code(2), None);
        assert_ne!(ItemHash::of(b"x"), ItemHash::redisbloom(b"x"));
    }
}
