//! RedisBloom's top-k as RedisBloom lays it out: the value of its
//! `TopK-TYPE`, which RedisBloom's `TOPK.*` names (under `aliases
//! redisbloom`) create and answer, so its files move between RedisBloom and
//! warden unchanged. Written from RedisBloom's definitions, not its code.
//!
//! - HeavyKeeper: `depth` rows of `width` buckets (fingerprint, count); an
//!   item's bucket in row i is MurmurHash2(item, seed i) mod width, its
//!   fingerprint MurmurHash2(item, seed 1919). An add of n to a bucket of
//!   the item's fingerprint (or an empty one) adds n; to another's, each of
//!   the n steps decays that count by one with chance decay^count, and the
//!   bucket is taken over (with the steps left) once it reaches 0.
//! - The top k: a min-heap of k entries (fingerprint, item, count). An item
//!   whose largest bucket count reaches the heap's least count takes its
//!   place (the item put out is answered) or updates its own entry.
//! - The decay's chance is not drawn at random (RedisBloom calls `rand()`):
//!   it is a hash of the item, the row, the count and the step, the same
//!   law of chance made reproducible, so a replica or an AOF replay applying
//!   the calls as sent builds the same top-k.

use crate::common::murmur2::{murmur2, murmur64a};

/// The fingerprint seed.
const FINGERPRINT_SEED: u32 = 1919;
/// Decay powers kept precomputed.
const LOOKUP: usize = 256;

/// A bucket of the sketch.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Bucket {
    /// The fingerprint of the item counted.
    pub fp: u32,
    /// Its count.
    pub count: u32,
}

/// An entry of the top k.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HeapEntry {
    /// The item's fingerprint.
    pub fp: u32,
    /// The item (`None`: an empty entry).
    pub item: Option<Vec<u8>>,
    /// Its count.
    pub count: u32,
}

/// A RedisBloom top-k.
#[derive(Debug, Clone, PartialEq)]
pub struct RbTopK {
    /// Items kept.
    pub k: u32,
    /// Buckets per row.
    pub width: u32,
    /// Rows.
    pub depth: u32,
    /// Decay base, in (0, 1].
    pub decay: f64,
    /// The buckets, row after row (`width × depth`).
    pub buckets: Vec<Bucket>,
    /// The min-heap of the top k (`k` entries).
    pub heap: Vec<HeapEntry>,
    /// decay^i for i below `LOOKUP`.
    powers: Vec<f64>,
}

/// The fingerprint of an item.
fn fingerprint(item: &[u8]) -> u32 {
    murmur2(item, FINGERPRINT_SEED)
}

impl RbTopK {
    /// Bytes of the buckets and heap of these sizes; `None` past any machine.
    pub fn bytes_for(k: u32, width: u32, depth: u32) -> Option<u64> {
        Self::bucket_bytes(width, depth)?.checked_add(u64::from(k).checked_mul(24)?)
    }

    /// Bytes of `width × depth` buckets (8 each); `None` past 64 bits, so
    /// sizes whose bytes would wrap to a stored length match none.
    pub fn bucket_bytes(width: u32, depth: u32) -> Option<u64> {
        u64::from(width)
            .checked_mul(u64::from(depth))?
            .checked_mul(8)
    }

    /// An empty top-k (sizes at least 1, decay in (0, 1]: checked by the
    /// caller), or `None` where the allocator cannot give it.
    pub fn new(k: u32, width: u32, depth: u32, decay: f64) -> Option<RbTopK> {
        let cells = usize::try_from(u64::from(width) * u64::from(depth)).ok()?;
        let mut buckets = Vec::new();
        buckets.try_reserve_exact(cells).ok()?;
        buckets.resize(cells, Bucket::default());
        let mut heap = Vec::new();
        heap.try_reserve_exact(k as usize).ok()?;
        heap.resize(k as usize, HeapEntry::default());
        Some(RbTopK::from_parts(k, width, depth, decay, buckets, heap))
    }

    /// A top-k of stored parts (the caller checked their sizes and decay).
    pub fn from_parts(
        k: u32,
        width: u32,
        depth: u32,
        decay: f64,
        buckets: Vec<Bucket>,
        heap: Vec<HeapEntry>,
    ) -> RbTopK {
        let powers = (0..LOOKUP as i32).map(|i| decay.powi(i)).collect();
        RbTopK {
            k,
            width,
            depth,
            decay,
            buckets,
            heap,
            powers,
        }
    }

    /// The chance of a decay step of a count.
    fn decay_of(&self, count: u32) -> f64 {
        let count = count as usize;
        if count < LOOKUP {
            self.powers[count]
        } else {
            let last = self.powers[LOOKUP - 1];
            last.powi((count / (LOOKUP - 1)) as i32) * self.powers[count % (LOOKUP - 1)]
        }
    }

    /// Where the item sits in the heap. An entry without an item holds the
    /// empty one (an empty item loads as none, and RedisBloom compares an
    /// entry's bytes: none for it).
    fn heap_position(&self, fp: u32, item: &[u8]) -> Option<usize> {
        (0..self.heap.len())
            .rev()
            .find(|&i| self.heap[i].fp == fp && self.heap[i].item.as_deref().unwrap_or(b"") == item)
    }

    /// Moves entry `start` down the min-heap as RedisBloom does: past a
    /// child of its count at the first step, past smaller ones after.
    fn sift_down(&mut self, start: usize) {
        let len = self.heap.len();
        if len < 2 || (len - 2) / 2 < start {
            return;
        }
        let count = |h: &[HeapEntry], i: usize| h[i].count;
        let smaller_child =
            |h: &[HeapEntry], c: usize| match c + 1 < len && count(h, c) > count(h, c + 1) {
                true => c + 1,
                false => c,
            };
        let mut child = smaller_child(&self.heap, 2 * start + 1);
        if count(&self.heap, child) > count(&self.heap, start) {
            return;
        }
        let top = std::mem::take(&mut self.heap[start]);
        let mut at = start;
        loop {
            self.heap[at] = std::mem::take(&mut self.heap[child]);
            at = child;
            if (len - 2) / 2 < child {
                break;
            }
            child = smaller_child(&self.heap, 2 * child + 1);
            if count(&self.heap, child) >= top.count {
                break;
            }
        }
        self.heap[at] = top;
    }

    /// Adds `increment` to the item: the item put out of the top k, if any.
    pub fn add(&mut self, item: &[u8], increment: u32) -> Option<Vec<u8>> {
        let fp = fingerprint(item);
        let heap_min = self.heap.first().map_or(0, |e| e.count);
        let mut max_count = 0u32;
        for row in 0..self.depth {
            let at = (murmur2(item, row) % self.width + row * self.width) as usize;
            let bucket = self.buckets[at];
            if bucket.count == 0 {
                self.buckets[at] = Bucket {
                    fp,
                    count: increment,
                };
                max_count = max_count.max(increment);
            } else if bucket.fp == fp {
                let count = bucket.count.wrapping_add(increment);
                self.buckets[at].count = count;
                max_count = max_count.max(count);
            } else {
                let mut count = bucket.count;
                for left in (1..=increment).rev() {
                    if self.chance(item, row, count, left) < self.decay_of(count) {
                        count -= 1;
                        if count == 0 {
                            self.buckets[at] = Bucket { fp, count: left };
                            max_count = max_count.max(left);
                            break;
                        }
                    }
                }
                if count != 0 {
                    self.buckets[at].count = count;
                }
            }
        }
        if max_count < heap_min {
            return None;
        }
        match self.heap_position(fp, item) {
            Some(at) => {
                self.heap[at].count = max_count;
                self.sift_down(at);
                None
            }
            None => {
                let out = std::mem::replace(
                    &mut self.heap[0],
                    HeapEntry {
                        fp,
                        item: Some(item.to_vec()),
                        count: max_count,
                    },
                );
                self.sift_down(0);
                out.item
            }
        }
    }

    /// The decay step's draw in [0, 1): a hash of the item, row, count and
    /// step.
    fn chance(&self, item: &[u8], row: u32, count: u32, step: u32) -> f64 {
        let seed = (u64::from(row) << 32 | u64::from(count)) ^ u64::from(step).rotate_left(17);
        (murmur64a(item, seed) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Whether the item is in the top k.
    pub fn query(&self, item: &[u8]) -> bool {
        self.heap_position(fingerprint(item), item).is_some()
    }

    /// The item's count: its largest bucket of its fingerprint (for an item
    /// in the top k, of those at least the top k's least count).
    pub fn count(&self, item: &[u8]) -> u32 {
        let fp = fingerprint(item);
        let heap_min = self.heap.first().map_or(0, |e| e.count);
        let in_heap = self.heap_position(fp, item).is_some();
        (0..self.depth)
            .map(|row| self.buckets[(murmur2(item, row) % self.width + row * self.width) as usize])
            .filter(|b| b.fp == fp && (!in_heap || b.count >= heap_min))
            .map(|b| b.count)
            .max()
            .unwrap_or(0)
    }

    /// The top k, most counted first (ties in heap order), empty entries
    /// left out; an entry without an item (the empty item, loaded) as none,
    /// which RedisBloom answers as nil.
    pub fn list(&self) -> Vec<(Option<&[u8]>, u32)> {
        let mut entries: Vec<&HeapEntry> = self.heap.iter().collect();
        entries.sort_by_key(|e| std::cmp::Reverse(e.count));
        entries
            .into_iter()
            .take_while(|e| e.count != 0)
            .map(|e| (e.item.as_deref(), e.count))
            .collect()
    }

    /// Bytes as RedisBloom counts them (`MEMORY USAGE`): its record (with a
    /// 256-entry decay table), the buckets and the heap.
    pub fn mem_usage(&self) -> u64 {
        2088 + self.buckets.len() as u64 * 8 + u64::from(self.k) * 24
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heaviest_items_are_kept_and_put_out_items_answered() {
        let mut t = RbTopK::new(3, 50, 4, 0.9).expect("new");
        let mut out = Vec::new();
        for round in 0..50u32 {
            for (item, times) in [("a", 5), ("b", 4), ("c", 3), ("d", 1)] {
                for _ in 0..times {
                    if let Some(o) = t.add(item.as_bytes(), 1) {
                        out.push((round, o));
                    }
                }
            }
        }
        let list: Vec<Option<&[u8]>> = t.list().into_iter().map(|(i, _)| i).collect();
        assert_eq!(list, [Some(&b"a"[..]), Some(b"b"), Some(b"c")]);
        assert!(!t.query(b"d") && t.query(b"a"));
        assert_eq!(t.count(b"a"), 250);
        assert!(out.iter().all(|(_, o)| o.as_slice() != b"a"));
    }

    /// The top-k as RDB loads it: an empty item as none.
    fn reloaded(t: &RbTopK) -> RbTopK {
        let mut t = t.clone();
        for e in &mut t.heap {
            e.item = e.item.take().filter(|i| !i.is_empty());
        }
        t
    }

    #[test]
    fn the_empty_item_is_found_once_reloaded() {
        let mut t = RbTopK::new(3, 10, 2, 0.9).expect("new");
        t.add(b"", 2);
        t.add(b"a", 1);
        let mut t = reloaded(&t);
        assert!(t.query(b""));
        assert_eq!(t.count(b""), 2);
        t.add(b"", 1);
        assert_eq!(t.list(), [(None, 3), (Some(&b"a"[..]), 1)]);
    }

    #[test]
    fn sizes_whose_bytes_wrap_have_none() {
        assert_eq!(RbTopK::bucket_bytes(20, 4), Some(640));
        // 583550761 × 3951400912 = 2^61 + 80: × 8 wraps to 640.
        let (w, d) = (583_550_761u32, 3_951_400_912u32);
        assert_eq!((u64::from(w) * u64::from(d)).wrapping_mul(8), 640);
        assert_eq!(RbTopK::bucket_bytes(w, d), None);
        assert_eq!(RbTopK::bytes_for(1, w, d), None);
    }

    #[test]
    fn the_same_calls_build_the_same_top_k() {
        let run = || {
            let mut t = RbTopK::new(5, 8, 3, 0.9).expect("new");
            for i in 0..5_000u32 {
                t.add(format!("i{}", i % 41).as_bytes(), 1 + i % 3);
            }
            t
        };
        assert_eq!(run(), run());
    }
}
