//! How a cuckoo filter hashes its items. The hash is part of a stored
//! filter: it decides which buckets and fingerprint every item has, so a
//! filter keeps the hash it was made with for its whole life (in RDB, DUMP,
//! the AOF, SCANDUMP and replication), and a new hash is a new kind here,
//! never a change to an old one.
//!
//! - `Murmur3`: murmur3 x64-128, what filters made before hash kinds
//!   existed use (RDB encoding version 1, SCANDUMP header version 1, an
//!   11-argument `CF._LOADX … HEADER`); such filters keep it.
//! - `Xxh3`: XXH3-64, a frozen format, about half murmur3's instructions for
//!   short items; its second half is the first run through a bijective
//!   mix, so an item's bucket and fingerprint come from all 64 bits.

use crate::common::murmur3::murmur3_x64_128;

/// An item's hash, split into what picks its buckets and what makes its
/// fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooHash {
    /// Picks the first bucket (`mod m`).
    pub index: u64,
    /// Makes the fingerprint.
    pub tag: u64,
}

/// The hash function of a filter, stored with it as its `code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemHash {
    /// murmur3 x64-128 (code 0): filters made before hash kinds.
    Murmur3,
    /// XXH3-64 and a mix (code 1): filters made since.
    Xxh3,
}

impl ItemHash {
    /// The hash new filters get.
    pub const NEWEST: ItemHash = ItemHash::Xxh3;

    /// The stored number of this hash.
    pub fn code(self) -> u64 {
        match self {
            ItemHash::Murmur3 => 0,
            ItemHash::Xxh3 => 1,
        }
    }

    /// The hash a stored number names; `None` for one no version writes.
    pub fn from_code(code: u64) -> Option<ItemHash> {
        match code {
            0 => Some(ItemHash::Murmur3),
            1 => Some(ItemHash::Xxh3),
            _ => None,
        }
    }

    /// Hashes an item.
    #[inline]
    pub fn of(self, item: &[u8]) -> CuckooHash {
        match self {
            ItemHash::Xxh3 => {
                let index = xxhash_rust::xxh3::xxh3_64(item);
                CuckooHash {
                    index,
                    tag: mix(index),
                }
            }
            ItemHash::Murmur3 => {
                let (index, tag) = murmur3_x64_128(item, 0);
                CuckooHash { index, tag }
            }
        }
    }
}

/// A bijective 64-bit mix (splitmix64's finalizer): the tag of an XXH3
/// hash, whose high bits (the fingerprint) depend on every bit of the
/// index, not only on the high ones that pick the bucket.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stored filters depend on these exact values: a change to either
    /// hash (a crate update, a refactor) would lose every stored item.
    #[test]
    fn both_hashes_give_the_values_stored_filters_were_built_with() {
        // murmur3 x64-128 of "hello", seed 0 (the reference implementation's halves).
        assert_eq!(
            ItemHash::Murmur3.of(b"hello"),
            CuckooHash {
                index: 0xcbd8_a7b3_41bd_9b02,
                tag: 0x5b1e_906a_48ae_1d19,
            }
        );
        // XXH3-64 of the empty input and of "hello" (the xxHash test vectors).
        assert_eq!(ItemHash::Xxh3.of(b"").index, 0x2d06_8005_38d3_94c2);
        assert_eq!(ItemHash::Xxh3.of(b"hello").index, 0x9555_e855_5c62_dcfd);
        for item in [&b""[..], b"hello", b"item:000000012345", &[7u8; 300]] {
            let h = ItemHash::Xxh3.of(item);
            assert_eq!(h.tag, mix(h.index));
        }
    }

    #[test]
    fn codes_round_trip_and_unknown_codes_are_refused() {
        for kind in [ItemHash::Murmur3, ItemHash::Xxh3] {
            assert_eq!(ItemHash::from_code(kind.code()), Some(kind));
        }
        assert_eq!(ItemHash::from_code(2), None);
        assert_eq!(ItemHash::from_code(u64::MAX), None);
    }

    /// The XXH3 kind's buckets and fingerprints are independent: items that
    /// share a bucket spread their fingerprints evenly (a tag taken from the
    /// index's own high bits would not).
    #[test]
    fn xxh3_fingerprints_do_not_follow_buckets() {
        let mut per_bucket = [[0u32; 16]; 16];
        for i in 0..160_000u32 {
            let h = ItemHash::Xxh3.of(format!("item-{i}").as_bytes());
            per_bucket[(h.index >> 60) as usize][(h.tag >> 60) as usize] += 1;
        }
        // 625 expected per cell; a cell off by 25 % would be a ~10σ event.
        for row in per_bucket {
            for cell in row {
                assert!((469..=781).contains(&cell), "{per_bucket:?}");
            }
        }
    }
}
