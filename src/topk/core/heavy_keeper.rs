//! Top-k heavy hitters: RedisBloom's `TOPK`, a HeavyKeeper sketch and a
//! min-heap of the `k` items it counts highest.
//!
//! The sketch is `depth` rows of `width` buckets, each a fingerprint and a
//! count. An item's increment goes to one bucket per row
//! (`common::sketch::RowHash`): an empty bucket or one with its
//! fingerprint counts it. A bucket held by another item decays, losing one
//! with probability `decay^count` per unit, and is taken over (with the
//! units left) when it reaches zero, and here warden departs from
//! RedisBloom to keep more of the true top k in the same memory: an item
//! counted in some row decays no other item's bucket, and one counted in
//! none decays only the weakest of its buckets (RedisBloom decays every
//! bucket it does not hold, wearing down heavy items that share rows with
//! light ones). The item's count is the
//! largest of its buckets; when that reaches the heap's smallest, the item
//! enters the heap (or updates its place there), and the item it pushes out
//! is the one `TOPK.ADD` returns. RedisBloom's semantics, heap included: `k`
//! slots from the start (empty ones count 0), an item entering at the root
//! and moved down as RedisBloom moves it, the list a stable sort of the
//! slots by count; only counts differ, saturating at 2^32 − 1 instead of
//! wrapping.
//!
//! **Deterministic.** The decays draw from a generator kept in the value
//! (seeded from the key's name at creation, saved with it), and the decay
//! probability is computed with plain multiplications: the same calls on
//! the same value give the same result on every server, so a replica or an
//! AOF replay repeats an add exactly.
//!
//! **Windows.** A top-k made with a window keeps one sketch per time slot
//! (`common::sketch::Ring`) and one heap: adds count in the current slot's
//! sketch, an item's count is its sum over the live slots, and when the
//! sketch moves to a new slot every heap entry is counted again over the
//! slots still live (entries left at 0 leave the heap). Reads between writes
//! count the heap's items over the slots live at that time. Memory: `RING`
//! sketches and one heap, at most (`RING` + 1) × a plain top-k's.

use crate::common::error::WardenError;
use crate::common::relocate::{self, Mover};
use crate::common::sketch::{validate_window, Ring, RowHash, RING};

/// Largest `k`, width and depth (RedisBloom's: 32-bit).
pub const MAX_PARAM: u64 = u32::MAX as u64;

/// Largest increment of `TOPK.INCRBYX` (RedisBloom's).
pub const MAX_INCREMENT: u64 = 100_000;

/// The stored code of how a top-k hashes and decays: XXH3-128 rows, a
/// xorshift64* generator, decay by multiplication. The only kind so far.
pub const KIND: u64 = 1;

/// RedisBloom's error texts, after `ERR ` (which its users match on: a
/// client library that strips the code sees RedisBloom's own text).
pub mod text {
    /// The key already exists.
    pub const KEY_EXISTS: &str = "ERR TopK: key already exists";
    /// The key does not exist.
    pub const KEY_MISSING: &str = "ERR TopK: key does not exist";
    /// A decay outside (0, 1].
    pub const BAD_DECAY: &str = "ERR TopK: invalid decay value. must be '<= 1' & '> 0'";
    /// An increment outside 0 ..= 100,000.
    pub const BAD_INCREMENT: &str =
        "ERR TopK: increment must be an integer greater or equal to 0 and smaller or equal to 100,000";
}

/// The refusal with the whole message `text` (one of `text`'s).
pub fn error(text: &'static str) -> WardenError {
    WardenError::Refused(text)
}

/// `k`, `width` or `depth` outside 1 ..= 2^32 − 1: RedisBloom's text and the range.
pub fn bad_param(name: &str) -> WardenError {
    WardenError::RefusedWith(format!(
        "ERR TopK: invalid {name} (an integer from 1 to {MAX_PARAM})"
    ))
}

/// A top-k's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Items kept.
    pub k: u32,
    /// Buckets per row.
    pub width: u32,
    /// Rows.
    pub depth: u32,
    /// The decay base, in (0, 1].
    pub decay: f64,
}

impl Params {
    /// Checks the decay (the integers are checked as they are read).
    pub fn check_decay(decay: f64) -> Result<f64, WardenError> {
        if decay > 0.0 && decay <= 1.0 {
            Ok(decay)
        } else {
            Err(error(text::BAD_DECAY))
        }
    }

    fn buckets(self) -> u64 {
        u64::from(self.width) * u64::from(self.depth)
    }
}

/// One bucket: a fingerprint and a count (RedisBloom's 8 bytes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bucket {
    /// The fingerprint of the item counted here.
    pub fp: u32,
    /// Its count (0: empty).
    pub count: u32,
}

/// A heap slot: an item and its count, or empty (count 0).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Slot {
    count: u32,
    fp: u32,
    item: Option<Box<[u8]>>,
}

/// A top-k, over all time or over a window.
#[derive(Debug, Clone, PartialEq)]
pub struct TopK {
    params: Params,
    /// The decays' generator (xorshift64*), never 0.
    rng: u64,
    /// One sketch, or `RING` (position `p` at `p × width × depth`).
    buckets: Box<[Bucket]>,
    /// A min-heap by count of `k` slots (RedisBloom's layout).
    heap: Box<[Slot]>,
    /// Bytes of the heap's items.
    item_bytes: u64,
    ring: Option<Ring>,
}

/// Bytes of a top-k of `params` (before its items' bytes), with a window or
/// not; `None` when that does not fit a 64-bit count.
pub fn bytes_for(params: Params, windowed: bool) -> Option<u64> {
    let subs = if windowed { RING as u64 } else { 1 };
    let buckets = params
        .buckets()
        .checked_mul(subs)?
        .checked_mul(std::mem::size_of::<Bucket>() as u64)?;
    let heap = u64::from(params.k).checked_mul(std::mem::size_of::<Slot>() as u64)?;
    buckets
        .checked_add(heap)?
        .checked_add(std::mem::size_of::<TopK>() as u64)
}

/// `decay^count`, by squaring with plain multiplications (the same bits on
/// every machine).
fn decay_chance(decay: f64, mut count: u32) -> f64 {
    let (mut base, mut result) = (decay, 1.0f64);
    while count > 0 {
        if count & 1 == 1 {
            result *= base;
        }
        base *= base;
        count >>= 1;
    }
    result
}

/// The chance below which no draw succeeds (a draw is a multiple of 2^−53).
const NEVER: f64 = 1.0 / (1u64 << 53) as f64;

impl TopK {
    /// An empty top-k of `params`, over `window_ms` when given, its
    /// generator seeded with `seed` (the key's name hashed), within
    /// `max_bytes` (RedisBloom's "Insufficient memory" otherwise).
    pub fn new(
        params: Params,
        window_ms: Option<u64>,
        seed: u64,
        max_bytes: u64,
    ) -> Result<TopK, WardenError> {
        if let Some(w) = window_ms {
            validate_window(w)?;
        }
        Params::check_decay(params.decay)?;
        let fits = bytes_for(params, window_ms.is_some()).is_some_and(|b| b <= max_bytes);
        if !fits || params.k == 0 || params.width == 0 || params.depth == 0 {
            return Err(error(
                "ERR Insufficient memory to create topk data structure (it would exceed topk-max-bytes)",
            ));
        }
        let subs = if window_ms.is_some() { RING } else { 1 };
        Ok(TopK {
            params,
            rng: seed | 1,
            buckets: vec![Bucket::default(); params.buckets() as usize * subs].into_boxed_slice(),
            heap: vec![Slot::default(); params.k as usize].into_boxed_slice(),
            item_bytes: 0,
            ring: window_ms.map(Ring::new).transpose()?,
        })
    }

    /// Rebuilds a stored top-k, every part checked: the parameters, the
    /// window and its head, exactly its buckets, `k` heap slots (count and
    /// item, `None` for an empty one: count 0) in the stored order, no item
    /// twice.
    pub fn from_stored(
        params: Params,
        (window, rng): (Option<(u64, u64)>, u64),
        buckets: Vec<Bucket>,
        slots: Vec<(u32, Option<Box<[u8]>>)>,
    ) -> Result<TopK, WardenError> {
        let bad = || WardenError::BadFilterData;
        let subs = if window.is_some() { RING } else { 1 };
        let valid = params.k > 0
            && params.width > 0
            && params.depth > 0
            && rng != 0
            && Params::check_decay(params.decay).is_ok()
            && buckets.len() as u64 == params.buckets() * subs as u64
            && slots.len() == params.k as usize
            && slots.iter().all(|(c, item)| item.is_some() || *c == 0);
        if !valid {
            return Err(bad());
        }
        let mut seen = std::collections::HashSet::with_capacity(slots.len());
        if !slots
            .iter()
            .flat_map(|(_, i)| i)
            .all(|i| seen.insert(&i[..]))
        {
            return Err(bad());
        }
        let heap: Box<[Slot]> = slots
            .into_iter()
            .map(|(count, item)| Slot {
                count,
                fp: item.as_deref().map_or(0, |i| RowHash::of(i).fingerprint()),
                item,
            })
            .collect();
        Ok(TopK {
            params,
            rng,
            buckets: buckets.into_boxed_slice(),
            item_bytes: heap
                .iter()
                .flat_map(|e| &e.item)
                .map(|i| i.len() as u64)
                .sum(),
            heap,
            ring: window
                .map(|(w, head)| Ring::from_parts(w, head))
                .transpose()?,
        })
    }

    /// Its parameters.
    pub fn params(&self) -> Params {
        self.params
    }

    /// Its slots, for a top-k over a window.
    pub fn ring(&self) -> Option<&Ring> {
        self.ring.as_ref()
    }

    /// The decays' generator state.
    pub fn rng(&self) -> u64 {
        self.rng
    }

    /// Every bucket, sketch by sketch.
    pub fn buckets(&self) -> &[Bucket] {
        &self.buckets
    }

    /// The heap's slots (count, item; `None` empty), in heap order.
    pub fn slots(&self) -> impl Iterator<Item = (u32, Option<&[u8]>)> {
        self.heap.iter().map(|e| (e.count, e.item.as_deref()))
    }

    /// Bytes it takes (MEMORY USAGE; the cap): its buckets, room for `k`
    /// heap entries and the items held.
    pub fn size(&self) -> u64 {
        bytes_for(self.params, self.ring.is_some())
            .unwrap_or(u64::MAX)
            .saturating_add(self.item_bytes)
    }

    /// Buckets of one sketch.
    fn sketch_len(&self) -> usize {
        self.params.buckets() as usize
    }

    /// The sketch adds go to.
    fn current(&self) -> usize {
        self.ring.as_ref().map_or(0, Ring::current)
    }

    /// The sketches live at `now` (bits by position; 1 without a window).
    fn live(&self, now: u64) -> u8 {
        self.ring.as_ref().map_or(1, |r| r.live(now))
    }

    /// A uniform draw in [0, 1) from the generator (xorshift64*).
    fn draw(&mut self) -> f64 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 * NEVER
    }

    /// Adds `by` to the item's buckets in sketch `sub`: its largest count
    /// there afterwards (0 when every bucket stayed another item's). Buckets
    /// empty or with its fingerprint count it; when there is none, the
    /// weakest of its buckets (the first of equals) decays, and is taken
    /// over if it reaches 0.
    fn count_in_sketch(&mut self, sub: usize, h: &RowHash, by: u32) -> u32 {
        let Params {
            width,
            depth,
            decay,
            ..
        } = self.params;
        let fp = h.fingerprint();
        let base = sub * self.sketch_len();
        let mut largest = 0u32;
        let mut counted = false;
        let mut weakest: Option<(u32, usize)> = None;
        for row in 0..depth {
            let at = base + row as usize * width as usize + h.column(row, width);
            let b = self.buckets[at];
            if b.count == 0 {
                self.buckets[at] = Bucket { fp, count: by };
                largest = largest.max(by);
                counted = true;
            } else if b.fp == fp {
                let count = b.count.saturating_add(by);
                self.buckets[at].count = count;
                largest = largest.max(count);
                counted = true;
            } else if weakest.is_none_or(|(c, _)| b.count < c) {
                weakest = Some((b.count, at));
            }
        }
        if let (false, Some((mut count, at))) = (counted, weakest) {
            let mut left = by;
            let mut chance = decay_chance(decay, count);
            while left > 0 && chance >= NEVER {
                if self.draw() < chance {
                    count -= 1;
                    if count == 0 {
                        self.buckets[at] = Bucket { fp, count: left };
                        return left;
                    }
                    chance = decay_chance(decay, count);
                }
                left -= 1;
            }
            self.buckets[at].count = count;
        }
        largest
    }

    /// The item's count in sketch `sub`: its largest bucket there.
    fn count_of(&self, sub: usize, h: &RowHash) -> u32 {
        let Params { width, depth, .. } = self.params;
        let fp = h.fingerprint();
        let base = sub * self.sketch_len();
        (0..depth)
            .map(|row| self.buckets[base + row as usize * width as usize + h.column(row, width)])
            .filter(|b| b.fp == fp)
            .map(|b| b.count)
            .max()
            .unwrap_or(0)
    }

    /// The item's count over the sketches in `live`.
    fn window_count(&self, h: &RowHash, live: u8) -> u64 {
        (0..RING)
            .filter(|p| live & (1 << p) != 0)
            .map(|p| u64::from(self.count_of(p, h)))
            .sum()
    }

    /// The heap's smallest count (0 while a slot is empty).
    fn heap_min(&self) -> u32 {
        self.heap.first().map_or(0, |e| e.count)
    }

    /// Where the item is in the heap.
    fn find(&self, item: &[u8], fp: u32) -> Option<usize> {
        self.heap
            .iter()
            .position(|e| e.fp == fp && e.item.as_deref() == Some(item))
    }

    /// Adds `by` (RedisBloom's `TOPK.INCRBY`; 1 for `TOPK.ADD`) to `item` in
    /// the current slot's sketch: the item it pushed out of the heap, if any.
    pub fn add(&mut self, item: &[u8], by: u32) -> Option<Box<[u8]>> {
        let h = RowHash::of(item);
        let sub = self.current();
        let mut count = u64::from(self.count_in_sketch(sub, &h, by));
        if let Some(r) = &self.ring {
            let others = r.live(r.head_ms()) & !(1 << sub);
            count += self.window_count(&h, others);
        }
        let count = count.min(u64::from(u32::MAX)) as u32;
        if count < self.heap_min() {
            return None;
        }
        let fp = h.fingerprint();
        if let Some(i) = self.find(item, fp) {
            // RedisBloom's: the new count (it may have decayed), moved down.
            self.heap[i].count = count;
            self.heapify_down(i);
            return None;
        }
        let slot = Slot {
            count,
            fp,
            item: Some(item.into()),
        };
        self.item_bytes += item.len() as u64;
        let out = std::mem::replace(&mut self.heap[0], slot).item;
        self.heapify_down(0);
        if let Some(out) = &out {
            self.item_bytes -= out.len() as u64;
        }
        out
    }

    /// RedisBloom's `heapifyDown`: slot `start` swaps with its smaller child
    /// when that counts no more than it, then goes on down while the next
    /// child counts strictly less.
    fn heapify_down(&mut self, mut start: usize) {
        let len = self.heap.len();
        if len < 2 || (len - 2) / 2 < start {
            return;
        }
        let count = |h: &[Slot], i: usize| h[i].count;
        let mut child = 2 * start + 1;
        if child + 1 < len && count(&self.heap, child) > count(&self.heap, child + 1) {
            child += 1;
        }
        if count(&self.heap, child) > count(&self.heap, start) {
            return;
        }
        let top = count(&self.heap, start);
        loop {
            self.heap.swap(start, child);
            start = child;
            if (len - 2) / 2 < child {
                break;
            }
            child = 2 * child + 1;
            if child + 1 < len && count(&self.heap, child) > count(&self.heap, child + 1) {
                child += 1;
            }
            if count(&self.heap, child) >= top {
                break;
            }
        }
    }

    /// Moves a windowed top-k to the slot starting at `slot_ms`: clears the
    /// sketches it reuses and counts every heap entry again over the live
    /// slots (those left at 0 leave). Whether it moved.
    pub fn rotate_to(&mut self, slot_ms: u64) -> Result<bool, WardenError> {
        let Some(ring) = self.ring.as_mut() else {
            return Err(WardenError::InvalidState("not a windowed top-k"));
        };
        let cleared = ring.rotate_to(slot_ms)?;
        if cleared == 0 {
            return Ok(false);
        }
        let live = ring.live(ring.head_ms());
        let len = self.sketch_len();
        for p in (0..RING).filter(|p| cleared & (1 << p) != 0) {
            self.buckets[p * len..(p + 1) * len].fill(Bucket::default());
        }
        let mut heap = std::mem::take(&mut self.heap);
        for e in heap.iter_mut() {
            let Some(item) = &e.item else { continue };
            let c = self.window_count(&RowHash::of(item), live);
            e.count = c.min(u64::from(u32::MAX)) as u32;
            if e.count == 0 {
                *e = Slot::default();
            }
        }
        self.item_bytes = heap
            .iter()
            .flat_map(|e| &e.item)
            .map(|i| i.len() as u64)
            .sum();
        self.heap = heap;
        for i in (0..self.heap.len() / 2).rev() {
            self.heapify_down(i);
        }
        Ok(true)
    }

    /// The heap's items and counts at `now`, largest first (RedisBloom's
    /// stable sort of the slots), up to the first at 0: a windowed top-k's
    /// counted over the slots live then.
    pub fn list(&self, now: u64) -> Vec<(&[u8], u64)> {
        let fresh = self.ring.as_ref().filter(|r| r.slot_of(now) != r.head_ms());
        let live = self.live(now);
        let mut out: Vec<(&[u8], u64)> = self
            .heap
            .iter()
            .map(|e| match (&e.item, fresh) {
                (Some(item), Some(_)) => (&item[..], self.window_count(&RowHash::of(item), live)),
                (Some(item), None) => (&item[..], u64::from(e.count)),
                (None, _) => (&[][..], 0),
            })
            .collect();
        out.sort_by_key(|e| std::cmp::Reverse(e.1));
        let shown = out.iter().position(|(_, c)| *c == 0).unwrap_or(out.len());
        out.truncate(shown);
        out
    }

    /// Whether `item` is in the top k at `now` (RedisBloom's: in the heap;
    /// over a window, also counted in a live slot).
    pub fn query(&self, item: &[u8], now: u64) -> bool {
        let h = RowHash::of(item);
        let Some(i) = self.find(item, h.fingerprint()) else {
            return false;
        };
        match &self.ring {
            None => true,
            Some(r) if r.slot_of(now) == r.head_ms() => self.heap[i].count > 0,
            Some(_) => self.window_count(&h, self.live(now)) > 0,
        }
    }

    /// The item's count at `now`: RedisBloom's (its largest bucket with its
    /// fingerprint, at least the heap's smallest count for an item in the
    /// heap), over a window the sum over the live slots.
    pub fn count(&self, item: &[u8], now: u64) -> u64 {
        let h = RowHash::of(item);
        if self.ring.is_some() {
            return self.window_count(&h, self.live(now));
        }
        let Params { width, depth, .. } = self.params;
        let fp = h.fingerprint();
        let in_heap = self.find(item, fp).is_some();
        let min = self.heap_min();
        (0..depth)
            .map(|row| self.buckets[row as usize * width as usize + h.column(row, width)])
            .filter(|b| b.fp == fp && (!in_heap || b.count >= min))
            .map(|b| u64::from(b.count))
            .max()
            .unwrap_or(0)
    }

    /// Overwrites buckets of sketch `sub` from `offset` (the AOF form).
    pub fn load_buckets(
        &mut self,
        sub: usize,
        offset: usize,
        values: &[Bucket],
    ) -> Result<(), WardenError> {
        let len = self.sketch_len();
        let subs = self.buckets.len() / len;
        let end = offset.checked_add(values.len()).filter(|e| *e <= len);
        let Some(end) = end.filter(|_| sub < subs) else {
            return Err(WardenError::BadFilterData);
        };
        self.buckets[sub * len + offset..sub * len + end].copy_from_slice(values);
        Ok(())
    }

    /// Sets heap slot `index` as stored (the AOF form): a count and an item
    /// not held by another slot.
    pub fn load_slot(&mut self, index: usize, count: u32, item: &[u8]) -> Result<(), WardenError> {
        let fp = RowHash::of(item).fingerprint();
        let elsewhere = self.find(item, fp).is_some_and(|at| at != index);
        if index >= self.heap.len() || elsewhere {
            return Err(WardenError::BadFilterData);
        }
        let old = std::mem::replace(
            &mut self.heap[index],
            Slot {
                count,
                fp,
                item: Some(item.into()),
            },
        );
        self.item_bytes += item.len() as u64;
        self.item_bytes -= old.item.map_or(0, |i| i.len() as u64);
        Ok(())
    }

    /// Sets the generator state (the AOF form).
    pub fn set_rng(&mut self, rng: u64) -> Result<(), WardenError> {
        if rng == 0 {
            return Err(WardenError::BadFilterData);
        }
        self.rng = rng;
        Ok(())
    }

    /// Offers its heap blocks to `m` (active defragmentation).
    pub fn relocate(&mut self, m: &mut dyn Mover) {
        relocate::boxed_slice(&mut self.buckets, m);
        relocate::boxed_slice(&mut self.heap, m);
        for item in self.heap.iter_mut().flat_map(|e| &mut e.item) {
            relocate::boxed_slice(item, m);
        }
    }
}

#[cfg(test)]
#[path = "heavy_keeper_tests.rs"]
mod tests;
