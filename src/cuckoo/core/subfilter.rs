//! One sub-filter's table: `b`-slot buckets of `f`-bit fingerprints packed
//! into 64-bit words, and the reads and writes of its slots and buckets.

use crate::common::error::WardenError;

/// One table of buckets, its fingerprints packed `f` bits each, slot `s`
/// at bits `s·f..(s+1)·f` of little-endian 64-bit words (one more word
/// than the bits need, so any slot reads as two words).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubFilter {
    buckets: u64,
    words: Vec<u64>,
}

/// Words that hold `slots` slots of `f` bits, the spare word included.
pub fn words_for(slots: u64, f: u32) -> u64 {
    (slots * u64::from(f)).div_ceil(64) + 1
}

impl SubFilter {
    pub(super) fn zeroed(buckets: u64, b: u32, f: u32) -> SubFilter {
        let words = words_for(buckets * u64::from(b), f) as usize;
        SubFilter {
            buckets,
            words: vec![0; words],
        }
    }

    /// A stored sub-filter: `words` must be exactly the words its slots
    /// need, with every bit past the last slot zero.
    pub fn from_parts(
        buckets: u64,
        b: u32,
        f: u32,
        words: Vec<u64>,
    ) -> Result<SubFilter, WardenError> {
        let bad = WardenError::BadFilterData;
        let slots = buckets.checked_mul(u64::from(b)).ok_or(bad.clone())?;
        let bits = slots.checked_mul(u64::from(f)).ok_or(bad.clone())?;
        if buckets == 0 || words.len() as u64 != bits.div_ceil(64) + 1 {
            return Err(bad);
        }
        let last = (bits / 64) as usize;
        let tail_clean = (bits % 64 == 0 || words[last] >> (bits % 64) == 0)
            && words[last + 1..].iter().all(|w| *w == 0);
        match tail_clean {
            true => Ok(SubFilter { buckets, words }),
            false => Err(bad),
        }
    }

    /// Buckets in this table.
    pub fn buckets(&self) -> u64 {
        self.buckets
    }

    /// The packed slots, the spare word included.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// The packed slots, for a move of their block (`relocate`).
    pub(super) fn words_mut(&mut self) -> &mut Vec<u64> {
        &mut self.words
    }

    /// Writes `words` from word `offset` on (a load in chunks), refused
    /// with nothing changed when they run past the table or set a bit past
    /// its last slot (`b` slots per bucket, `f` bits each).
    pub fn load_words(
        &mut self,
        b: u32,
        f: u32,
        offset: usize,
        words: &[u64],
    ) -> Result<(), WardenError> {
        let end = offset
            .checked_add(words.len())
            .ok_or(WardenError::BadFilterData)?;
        if end > self.words.len() {
            return Err(WardenError::BadFilterData);
        }
        let bits = self.buckets * u64::from(b) * u64::from(f);
        let clean = words.iter().enumerate().all(|(n, w)| {
            let first_bit = (offset + n) as u64 * 64;
            match bits.checked_sub(first_bit) {
                Some(inside) if inside >= 64 => true,
                Some(inside) => w >> inside == 0,
                None => *w == 0,
            }
        });
        if !clean {
            return Err(WardenError::BadFilterData);
        }
        self.words[offset..end].copy_from_slice(words);
        Ok(())
    }

    /// Bytes of its slots.
    pub fn bytes(&self) -> u64 {
        self.words.len() as u64 * 8
    }

    #[inline]
    pub(super) fn get(&self, slot: u64, f: u32) -> u32 {
        let bit = slot * u64::from(f);
        let w = (bit >> 6) as usize;
        let two = u128::from(self.words[w]) | (u128::from(self.words[w + 1]) << 64);
        ((two >> (bit & 63)) as u64 & ((1u64 << f) - 1)) as u32
    }

    #[inline]
    pub(super) fn set(&mut self, slot: u64, f: u32, fp: u32) {
        let bit = slot * u64::from(f);
        let w = (bit >> 6) as usize;
        let shift = bit & 63;
        let mask = ((1u128 << f) - 1) << shift;
        let two = u128::from(self.words[w]) | (u128::from(self.words[w + 1]) << 64);
        let two = (two & !mask) | (u128::from(fp) << shift);
        self.words[w] = two as u64;
        self.words[w + 1] = (two >> 64) as u64;
    }

    /// The first slot of bucket `i` holding `fp`.
    #[inline]
    pub(super) fn find(&self, i: u64, b: u32, f: u32, fp: u32) -> Option<u64> {
        let first = i * u64::from(b);
        match Bucket::fits(b, f) {
            true => Bucket::read(self, i, b, f)
                .find(b, f, fp)
                .map(|s| first + s),
            false => (first..first + u64::from(b)).find(|&s| self.get(s, f) == fp),
        }
    }

    /// The first slot of bucket `i1`, else of bucket `i2`, holding `fp`.
    /// The second bucket is prefetched before the first is read, so that
    /// when both are needed (an insert whose first bucket is full, a miss)
    /// their cache misses overlap, and when the first answers (most
    /// inserts, a hit there) the call does not wait for the second.
    #[inline(always)]
    pub(super) fn find_either(&self, (i1, i2): (u64, u64), b: u32, f: u32, fp: u32) -> Option<u64> {
        if !Bucket::fits(b, f) {
            return self.find(i1, b, f, fp).or_else(|| self.find(i2, b, f, fp));
        }
        self.prefetch(i2, b, f);
        match Bucket::read(self, i1, b, f).find(b, f, fp) {
            Some(s) => Some(i1 * u64::from(b) + s),
            None => Bucket::read(self, i2, b, f)
                .find(b, f, fp)
                .map(|s| i2 * u64::from(b) + s),
        }
    }

    /// Asks the CPU to start loading bucket `i` (`b` slots of `f` bits)
    /// into its cache, without waiting for it: a hint that changes nothing
    /// but when a later read of the bucket is served.
    #[inline(always)]
    fn prefetch(&self, i: u64, b: u32, f: u32) {
        let bit = i * u64::from(b) * u64::from(f);
        // Bucket `i` is in the table, so this is inside `words` (a hint
        // needs no bounds check: it could not fault outside either).
        let at = self.words.as_ptr().wrapping_add((bit >> 6) as usize);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch reads nothing into the program and cannot
        // fault, whatever the address (SSE is baseline on x86_64).
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(at.cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = at;
    }

    /// The first slot of `buckets` (in order) whose fingerprint's other
    /// bucket, `other(bucket, fingerprint)`, has a free slot: that slot and
    /// the free one. Every other bucket is prefetched before any is read,
    /// so that their cache misses overlap and the search waits only for
    /// those it reads.
    pub(super) fn find_move(
        &self,
        buckets: [u64; 2],
        b: u32,
        f: u32,
        other: impl Fn(u64, u32) -> u64,
    ) -> Option<(u64, u64)> {
        let slots = buckets
            .into_iter()
            .flat_map(move |i| (i * u64::from(b)..(i + 1) * u64::from(b)).map(move |s| (i, s)));
        if b <= 4 {
            let mut others = [(0u64, 0u64); 8];
            for (at, (i, slot)) in others.iter_mut().zip(slots) {
                let o = other(i, self.get(slot, f));
                self.prefetch(o, b, f);
                *at = (slot, o);
            }
            return others[..2 * b as usize]
                .iter()
                .find_map(|&(slot, o)| self.find(o, b, f, 0).map(|free| (slot, free)));
        }
        slots.into_iter().find_map(|(i, slot)| {
            let o = other(i, self.get(slot, f));
            self.find(o, b, f, 0).map(|free| (slot, free))
        })
    }

    pub(super) fn count_in(&self, i: u64, b: u32, f: u32, fp: u32) -> u64 {
        let first = i * u64::from(b);
        (first..first + u64::from(b))
            .filter(|&s| self.get(s, f) == fp)
            .count() as u64
    }

    pub(super) fn occupied(&self, b: u32, f: u32) -> u64 {
        (0..self.buckets * u64::from(b))
            .filter(|&s| self.get(s, f) != 0)
            .count() as u64
    }
}

/// A bucket's slots read at once, slot 0 in the low bits: for buckets of
/// at most 64 bits (one- to four-slot buckets at every width the filter
/// picks), a lookup reads two words once instead of two per slot.
#[derive(Clone, Copy)]
struct Bucket(u64);

impl Bucket {
    /// Whether buckets of `b` slots of `f` bits fit in one value.
    #[inline]
    fn fits(b: u32, f: u32) -> bool {
        b * f <= 64
    }

    /// Bucket `i` of `sub` (only when `fits`).
    #[inline]
    fn read(sub: &SubFilter, i: u64, b: u32, f: u32) -> Bucket {
        let bit = i * u64::from(b * f);
        let w = (bit >> 6) as usize;
        let two = u128::from(sub.words[w]) | (u128::from(sub.words[w + 1]) << 64);
        Bucket((two >> (bit & 63)) as u64)
    }

    /// The first of its `b` slots holding `fp`.
    #[inline]
    pub(super) fn find(self, b: u32, f: u32, fp: u32) -> Option<u64> {
        let mask = (1u64 << f) - 1;
        (0..b)
            .find(|s| (self.0 >> (s * f)) & mask == u64::from(fp))
            .map(u64::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::test_rng::Rng;

    /// The slot-by-slot search the bucket reads must agree with.
    fn find_slot_by_slot(sub: &SubFilter, i: u64, b: u32, f: u32, fp: u32) -> Option<u64> {
        let first = i * u64::from(b);
        (first..first + u64::from(b)).find(|&s| sub.get(s, f) == fp)
    }

    #[test]
    fn bucket_reads_find_what_slot_reads_find() {
        let mut rng = Rng(0x5eed);
        for (b, f) in [
            (1, 11),
            (1, 22),
            (1, 32),
            (2, 9),
            (2, 32),
            (3, 9),
            (4, 9),
            (4, 16),
            (6, 10),
            (8, 8),
            (7, 10),
            (16, 11),
        ] {
            let buckets = 1 + rng.below(40);
            let mut sub = SubFilter::zeroed(buckets, b, f);
            // Few distinct values, many zeros: every bucket has matches,
            // misses and free slots somewhere.
            for slot in 0..buckets * u64::from(b) {
                let v = [0, 0, 1, (1u64 << f) - 1, rng.below(1 << f)][rng.below(5) as usize];
                sub.set(slot, f, v as u32);
            }
            for _ in 0..400 {
                let (i1, i2) = (rng.below(buckets), rng.below(buckets));
                let fp = [0, 1, (1u64 << f) - 1, rng.below(1 << f)][rng.below(4) as usize] as u32;
                let want1 = find_slot_by_slot(&sub, i1, b, f, fp);
                let want2 = find_slot_by_slot(&sub, i2, b, f, fp);
                assert_eq!(
                    sub.find(i1, b, f, fp),
                    want1,
                    "b {b} f {f} bucket {i1} fp {fp}"
                );
                assert_eq!(
                    sub.find_either((i1, i2), b, f, fp),
                    want1.or(want2),
                    "b {b} f {f}"
                );
                // A move: the first slot whose value's other bucket (here
                // a mix of the bucket and the value) has a free slot.
                let other = |i: u64, v: u32| (i * 7 + u64::from(v)) % buckets;
                let want = [i1, i2].into_iter().find_map(|i| {
                    (i * u64::from(b)..(i + 1) * u64::from(b)).find_map(|slot| {
                        find_slot_by_slot(&sub, other(i, sub.get(slot, f)), b, f, 0)
                            .map(|free| (slot, free))
                    })
                });
                assert_eq!(sub.find_move([i1, i2], b, f, other), want, "b {b} f {f}");
            }
        }
    }
}
