//! How a filter hashes items and places their bits: warden's own (one
//! murmur3 x64-128 per item, multiply-shift) or, for a filter imported from
//! RedisBloom, RedisBloom's (see `redisbloom`). Probes are Kirsch–Mitzenmacher
//! double hashing, h1 + i·h2 in wrapping 64-bit arithmetic, for both.

use crate::bloom::core::redisbloom;
pub use crate::common::murmur3::murmur3_x64_128;

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

    #[test]
    fn hashings_have_stable_codes() {
        for code in 0..2 {
            assert_eq!(Hashing::from_code(code).map(Hashing::code), Some(code));
        }
        assert_eq!(Hashing::from_code(2), None);
        assert_ne!(ItemHash::of(b"x"), ItemHash::redisbloom(b"x"));
    }
}
