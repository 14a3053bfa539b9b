//! RedisBloom's count-min sketch as RedisBloom lays it out: the value of its
//! `CMSk-TYPE`, which RedisBloom's `CMS.*` names (under `aliases
//! redisbloom`) create and answer, so its files move between RedisBloom and
//! warden unchanged. Written from RedisBloom's definitions, not its code.
//!
//! - `depth` rows of `width` 32-bit counters, row after row; an item's
//!   counter in row i is MurmurHash2(item, seed i) mod width.
//! - An increment adds to each of the item's counters, saturating at
//!   2^32 − 1 (an increment of 2^32 or more saturates at once); the count
//!   of an item is the least of its counters; `counter` sums every
//!   increment (wrapping at 2^64).
//! - Dimensions from an error e and a probability p: width ⌈2 / e⌉, depth
//!   ⌈log10(p) / log10(0.5)⌉ in single precision, as RedisBloom computes it.
//! - A merge sets each counter to the weighted sum of the sources' (and the
//!   total likewise), refused when any sum leaves 0..=2^32 − 1 (counters) or
//!   0..=2^63 − 1 (the total) or a product overflows 64 bits.

use crate::common::murmur2::murmur2;

/// The saturated counter: an item whose count reaches it answers an error.
pub const SATURATED: u32 = u32::MAX;

/// A RedisBloom count-min sketch.
#[derive(Debug, Clone, PartialEq)]
pub struct RbSketch {
    /// Counters per row.
    pub width: u64,
    /// Rows.
    pub depth: u64,
    /// Every increment summed.
    pub counter: u64,
    /// The counters, row after row (`width × depth`).
    pub counters: Vec<u32>,
}

/// Width and depth RedisBloom gives error `e` and probability `p` (both in
/// (0, 1): the caller checks them).
pub fn dims_from_prob(e: f64, p: f64) -> (u64, u64) {
    let width = (2.0 / e).ceil() as u64;
    let depth = ((p as f32).log10() / 0.5f32.log10()).ceil() as u64;
    (width, depth)
}

impl RbSketch {
    /// Bytes of `width × depth` counters; `None` past any machine.
    pub fn bytes_for(width: u64, depth: u64) -> Option<u64> {
        width.checked_mul(depth)?.checked_mul(4)
    }

    /// An empty sketch (dimensions at least 1, checked by the caller), or
    /// `None` where the allocator cannot give its counters.
    pub fn new(width: u64, depth: u64) -> Option<RbSketch> {
        let n = usize::try_from(width.checked_mul(depth)?).ok()?;
        let mut counters = Vec::new();
        counters.try_reserve_exact(n).ok()?;
        counters.resize(n, 0);
        Some(RbSketch {
            width,
            depth,
            counter: 0,
            counters,
        })
    }

    /// A sketch from stored fields, if they agree: dimensions at least 1
    /// and `width × depth` counters.
    pub fn from_parts(
        width: u64,
        depth: u64,
        counter: u64,
        counters: Vec<u32>,
    ) -> Option<RbSketch> {
        let n = width.checked_mul(depth)?;
        (width >= 1 && depth >= 1 && n == counters.len() as u64).then_some(RbSketch {
            width,
            depth,
            counter,
            counters,
        })
    }

    /// The item's counter in row `row`.
    fn cell(&self, item: &[u8], row: u64) -> usize {
        let hash = u64::from(murmur2(item, row as u32));
        (hash % self.width + row * self.width) as usize
    }

    /// Adds `value` to the item: its count after (`SATURATED` when a counter
    /// is saturated).
    pub fn incr_by(&mut self, item: &[u8], value: u64) -> u32 {
        let mut least = u32::MAX;
        for row in 0..self.depth {
            let at = self.cell(item, row);
            let c = &mut self.counters[at];
            *c = match u32::try_from(value) {
                Ok(v) => c.saturating_add(v),
                Err(_) => SATURATED,
            };
            least = least.min(*c);
        }
        self.counter = self.counter.wrapping_add(value);
        least
    }

    /// The item's count: the least of its counters.
    pub fn query(&self, item: &[u8]) -> u32 {
        (0..self.depth)
            .map(|row| self.counters[self.cell(item, row)])
            .min()
            .unwrap_or(0)
    }

    /// Sets the counters and the total (a `merged` result).
    pub fn set(&mut self, (counters, counter): (Vec<u32>, u64)) {
        self.counters = counters;
        self.counter = counter;
    }

    /// Bytes as RedisBloom counts them (`MEMORY USAGE`): a pointer and 8
    /// bytes per counter.
    pub fn mem_usage(&self) -> u64 {
        8 + self.width.saturating_mul(self.depth).saturating_mul(8)
    }
}

/// The weighted sum of `sources` (all of one size, `cells` counters):
/// the counters and the total, or `None` when a sum overflows.
pub fn merged(sources: &[(&RbSketch, i64)], cells: usize) -> Option<(Vec<u32>, u64)> {
    let mut total = 0i64;
    for (s, w) in sources {
        total = total.checked_add((s.counter as i64).checked_mul(*w)?)?;
    }
    if total < 0 {
        return None;
    }
    let mut sums = Vec::with_capacity(cells);
    for i in 0..cells {
        let mut sum = 0i64;
        for (s, w) in sources {
            sum = sum.checked_add(i64::from(s.counters[i]).checked_mul(*w)?)?;
        }
        sums.push(u32::try_from(sum).ok()?);
    }
    Some((sums, total as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dimensions_are_redisblooms() {
        // CMS.INITBYPROB k 0.001 0.01 on RedisBloom 2.8: width 2000, depth 7.
        assert_eq!(dims_from_prob(0.001, 0.01), (2000, 7));
        assert_eq!(dims_from_prob(0.01, 0.002), (200, 9));
        assert_eq!(dims_from_prob(0.5, 0.5), (4, 1));
    }

    #[test]
    fn counts_never_fall_short_and_saturate() {
        let mut s = RbSketch::new(50, 4).expect("new");
        for i in 0..500u64 {
            s.incr_by(format!("i{}", i % 60).as_bytes(), i % 7);
        }
        for n in 0..60u64 {
            let truth: u64 = (0..500u64).filter(|i| i % 60 == n).map(|i| i % 7).sum();
            assert!(u64::from(s.query(format!("i{n}").as_bytes())) >= truth);
        }
        let mut s = RbSketch::new(10, 2).expect("new");
        assert_eq!(s.incr_by(b"a", u64::from(u32::MAX) - 1), u32::MAX - 1);
        assert_eq!(s.incr_by(b"a", 5), SATURATED);
        assert_eq!(s.incr_by(b"b", 1 << 32), SATURATED);
        assert_eq!(s.counter, u64::from(u32::MAX) + 4 + (1 << 32));
    }

    #[test]
    fn merges_sum_with_weights_or_refuse_whole() {
        let mut a = RbSketch::new(20, 3).expect("a");
        let mut b = RbSketch::new(20, 3).expect("b");
        a.incr_by(b"x", 3);
        b.incr_by(b"x", 4);
        let mut dest = RbSketch::new(20, 3).expect("dest");
        dest.set(merged(&[(&a, 2), (&b, 1)], 60).expect("merge"));
        assert_eq!((dest.query(b"x"), dest.counter), (10, 10));
        assert_eq!(merged(&[(&a, -1)], 60), None);
        assert_eq!(merged(&[(&a, i64::MAX)], 60), None);
    }
}
