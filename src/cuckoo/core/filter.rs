//! A scalable cuckoo filter: a set of fingerprints you can delete from.
//!
//! An item hashes once, with the filter's own hash (`ItemHash`, kept for
//! its life): the first half picks its bucket, the second its fingerprint, an `f`-bit value other than 0 (0 marks an
//! empty slot). Each item has two candidate buckets in a table of `m`
//! buckets of `b` slots: `i1`, the first half scaled onto `m` (multiply and
//! shift, no division), and `i2 = (g(fp) − i1) mod m`, where `g` mixes the
//! fingerprint alone. The map is its own inverse
//! (`alt(alt(i)) = i`), so a fingerprint found in either bucket can be moved
//! to the other without knowing its item, and `m` need not be a power of
//! two: a table is sized for its capacity at the load its bucket size
//! reaches (`target_load`), not rounded up to the next power of two.
//!
//! When an item finds both buckets full, the first fingerprint there whose
//! other bucket has room moves to it (`shift_one`, decided by the state
//! alone); when none can, a random walk of at most `max_iterations` kicks
//! moves fingerprints to their other bucket; a walk
//! that fails is undone, and the filter grows by a sub-filter of `m₀·eᵏ`
//! buckets (`EXPANSION e`; 0 never grows). Every sub-filter's buckets are the
//! first's times `eᵏ`, and an item's buckets (and fingerprints' offsets) in
//! sub-filter `k` are its buckets in the first plus `m₀` times a share of
//! `eᵏ`, so `i mod m_j` is an item's bucket in an older sub-filter `j`
//! whichever bucket `i` of a newer one holds it, which is what `compact`
//! uses to move fingerprints down.
//!
//! Kicks are random: the glue passes the generator, records the slots a
//! write touched (`Touched`), and replicates those slots' new values, never
//! the call, when a write kicked.

use crate::common::chunks::{chunk_at, Chunk, HEADER_ITERATOR};
use crate::common::error::WardenError;
use crate::common::relocate::{self, Mover};
use crate::cuckoo::core::errors::{self, BUCKET_SIZE, EXPANSION, MAX_CAPACITY, MAX_ITERATIONS};
pub use crate::cuckoo::core::hash::{CuckooHash, ItemHash};
pub use crate::cuckoo::core::subfilter::{words_for, SubFilter};

/// The most sub-filters a filter may have (RedisBloom's `cf-max-expansions`
/// default): an insert into a filter that has them all and no room fails.
pub const MAX_FILTERS: usize = 32;

/// Widest fingerprint a stored filter may have.
pub const MAX_FINGERPRINT_BITS: u32 = 32;

/// Most deletes a filter counts (`CF.INFOX` answers them as a signed 64-bit
/// integer); a stored count above it is refused, and the count stops there.
pub const MAX_DELETES: u64 = i64::MAX as u64;

/// How a filter is made: fixed at creation, stored with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooParams {
    /// Items the first sub-filter is sized for (at least `2 × bucket_size`).
    pub capacity: u64,
    /// Slots per bucket (`BUCKET_SIZE`).
    pub bucket_size: u32,
    /// Most kicks one insert may make (`MAX_ITERATIONS`).
    pub max_iterations: u32,
    /// Growth factor of each new sub-filter's buckets; 0 never grows.
    pub expansion: u32,
}

impl CuckooParams {
    /// Checks each field's range, naming the first that is out of it.
    pub fn validate(&self) -> Result<(), WardenError> {
        BUCKET_SIZE.check(u64::from(self.bucket_size))?;
        MAX_ITERATIONS.check(u64::from(self.max_iterations))?;
        EXPANSION.check(u64::from(self.expansion))?;
        if self.capacity < 2 * u64::from(self.bucket_size) || self.capacity > MAX_CAPACITY {
            return Err(errors::bad_capacity());
        }
        Ok(())
    }

    /// The fingerprint width for this bucket size and capacity: a lookup
    /// compares `2b` slots per sub-filter, so wider buckets need wider
    /// fingerprints for the same false-positive rate. One-slot buckets need
    /// 11 bits, and one more per doubling of the capacity past 2¹⁹ items
    /// (`ONE_SLOT_ITEMS_PER_FINGERPRINT`): a fingerprint chooses an item's
    /// second bucket, and with too few values for the items, walks fail
    /// before the table reaches its load (8 bits: at a quarter load; 11 bits
    /// at 10⁷ items: at 37 % instead of 44 %).
    pub fn fingerprint_bits(&self) -> u32 {
        match self.bucket_size {
            1 => one_slot_fingerprint_bits(self.capacity),
            2..=4 => 9,
            5..=8 => 10,
            9..=16 => 11,
            17..=32 => 12,
            33..=64 => 13,
            65..=128 => 14,
            _ => 15,
        }
    }

    /// Buckets of sub-filter `k`: `m₀·eᵏ`, `None` on overflow (or past the
    /// first for a filter that never grows).
    pub fn buckets_of(&self, k: usize) -> Option<u64> {
        let base = self.base_buckets();
        match (self.expansion, k) {
            (_, 0) => Some(base),
            (0, _) => None,
            (e, k) => u64::from(e)
                .checked_pow(u32::try_from(k).ok()?)
                .and_then(|g| g.checked_mul(base))
                .filter(|m| m.checked_mul(u64::from(self.bucket_size)).is_some()),
        }
    }

    /// Buckets of the first sub-filter: the capacity at `target_load`.
    pub fn base_buckets(&self) -> u64 {
        let (num, den) = target_load(self.bucket_size);
        let slots = (self.capacity * den).div_ceil(num);
        slots.div_ceil(u64::from(self.bucket_size)).max(1)
    }
}

/// Most items per fingerprint value a table of one-slot buckets is sized
/// for: measured with 500-kick walks at 44 % load, 11 bits held 10⁶ items
/// (about 490 per value) with 6 % to spare and 10⁷ only 83 %; 14 bits
/// (610 per value) fail at 10⁷ in one run of two, 16 bits (150) hold
/// 1.12× it.
const ONE_SLOT_ITEMS_PER_FINGERPRINT: u64 = 256;

/// Fingerprint bits for one-slot buckets and `capacity` items: at least 11,
/// and enough that no more than `ONE_SLOT_ITEMS_PER_FINGERPRINT` items share
/// a value (22 bits at the largest capacity).
fn one_slot_fingerprint_bits(capacity: u64) -> u32 {
    let values = capacity.div_ceil(ONE_SLOT_ITEMS_PER_FINGERPRINT).max(1);
    values.next_power_of_two().trailing_zeros().max(11)
}

/// The share of slots, as `num/den`, a table of `b`-slot buckets is sized to
/// hold at capacity: below the load where random walks of 500 kicks start
/// to fail (measured at 10⁵ to 5·10⁷ items: 87 % for b = 2 and 96 % for
/// b = 4, within a point or two in every run; for b = 1 about 50 % in most
/// runs, but in about one in ten an early walk fails, at 35 % to 43 %, and
/// the filter grows: sizing for that would cost every one-slot filter a
/// fifth more memory).
pub fn target_load(bucket_size: u32) -> (u64, u64) {
    match bucket_size {
        1 => (44, 100),
        2 => (84, 100),
        3 => (90, 100),
        4..=7 => (93, 100),
        _ => (95, 100),
    }
}

/// `x` scaled onto `0..m` (multiply-shift: no division).
#[inline]
fn scale(x: u64, m: u64) -> u64 {
    ((u128::from(x) * u128::from(m)) >> 64) as u64
}

/// An item's first bucket in a sub-filter of `m` buckets, the first having
/// `m0` (`m = m₀·eᵏ`): a bucket of the first, plus `m₀` times a share of
/// the span `eᵏ`, so that `i mod m_j` is its bucket in any older sub-filter
/// `j`. No division for the first sub-filter, nor for any with `EXPANSION 1`.
#[inline]
fn first_bucket(h: CuckooHash, m0: u64, m: u64) -> u64 {
    let i = scale(h.index, m0);
    match m == m0 {
        true => i,
        false => i + m0 * (h.tag % (m / m0)),
    }
}

/// The offset that takes fingerprint `fp` between its two buckets in a
/// sub-filter of `m` buckets (the first having `m0`), nested as buckets are.
#[inline]
fn fingerprint_offset(fp: u32, m0: u64, m: u64) -> u64 {
    let mut g = u64::from(fp).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    g ^= g >> 29;
    g = g.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    g ^= g >> 32;
    let o = scale(g, m0);
    match m == m0 {
        true => o,
        false => o + m0 * (g.rotate_left(32) % (m / m0)),
    }
}

/// The other bucket of fingerprint `fp` held in bucket `i` of a sub-filter
/// of `m` buckets (the first having `m0`): `(g − i) mod m`, its own inverse.
#[inline]
fn alt_bucket(i: u64, fp: u32, m0: u64, m: u64) -> u64 {
    let g = fingerprint_offset(fp, m0, m);
    if g >= i {
        g - i
    } else {
        g + m - i
    }
}

/// The bytes a filter may grow to: a number, or a function asked only when
/// the filter grows (the glue's cap costs a server call to read).
pub trait Budget: Copy {
    /// The cap in bytes.
    fn bytes(self) -> u64;
}

impl Budget for u64 {
    fn bytes(self) -> u64 {
        self
    }
}

impl<F: Fn() -> u64 + Copy> Budget for F {
    fn bytes(self) -> u64 {
        self()
    }
}

/// A generator for kicks: which bucket, which victim.
pub trait KickRng {
    /// The next random value.
    fn next_u64(&mut self) -> u64;
}

/// Slots a call wrote that fit without a heap block.
const INLINE_SLOTS: usize = 4;

/// The slots a write changed, as (sub-filter, slot) pairs, in order, and
/// whether the call needs them replicated: once an insert has tried a
/// random walk (or grown after one failed), the call cannot be replayed by
/// its arguments, and the glue replicates these slots' final values.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Touched {
    inline: [(usize, u64); INLINE_SLOTS],
    len: usize,
    spill: Vec<(usize, u64)>,
    /// Whether a random walk decided where something went.
    pub random: bool,
}

impl Touched {
    fn note(&mut self, sub: usize, slot: u64) {
        match self.inline.get_mut(self.len) {
            Some(at) => *at = (sub, slot),
            None => self.spill.push((sub, slot)),
        }
        self.len += 1;
    }

    /// The slots written, in order (a slot may repeat).
    pub fn slots(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let inline = self.len.min(INLINE_SLOTS);
        self.inline[..inline]
            .iter()
            .chain(self.spill.iter())
            .copied()
    }
}

/// What an insert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    /// The fingerprint was stored.
    Added,
    /// `insert_unique` only: it may be present already; nothing changed.
    Exists,
}

/// A scalable cuckoo filter: its parameters, counters and sub-filters,
/// oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuckooFilter {
    params: CuckooParams,
    fingerprint_bits: u32,
    items: u64,
    deletes: u64,
    filters: Vec<SubFilter>,
    /// Bytes of slots `CF.LOADCHUNKX` has loaded, while it loads (the
    /// filter answers nothing until it is whole).
    loading: Option<u64>,
    /// How its items hash, fixed when it is made.
    item_hash: ItemHash,
}

/// Bytes of a filter besides its slots.
pub const FILTER_OVERHEAD: u64 =
    (std::mem::size_of::<CuckooFilter>() + 2 * std::mem::size_of::<usize>()) as u64;

impl CuckooFilter {
    /// An empty filter with one sub-filter; refused when its slots would
    /// take more than `max_bytes`.
    pub fn new(params: CuckooParams, max_bytes: u64) -> Result<CuckooFilter, WardenError> {
        params.validate()?;
        let mut f = CuckooFilter {
            params,
            fingerprint_bits: params.fingerprint_bits(),
            items: 0,
            deletes: 0,
            filters: Vec::new(),
            loading: None,
            item_hash: ItemHash::NEWEST,
        };
        f.grow(max_bytes)?;
        Ok(f)
    }

    /// An empty filter of `filters` sub-filters with a stored filter's
    /// header, for a load to fill: its fingerprint width is the stored one,
    /// which may not be the one its parameters give now (earlier versions
    /// chose others for one-slot buckets). Refused when the header is out of
    /// range or its slots would take more than `max_bytes`.
    pub fn stored_empty(
        params: CuckooParams,
        fingerprint_bits: u32,
        (items, deletes): (u64, u64),
        filters: u64,
        max_bytes: u64,
    ) -> Result<CuckooFilter, WardenError> {
        CuckooFilter::check_header(params, fingerprint_bits, filters, deletes)?;
        let mut f = CuckooFilter {
            params,
            fingerprint_bits,
            items,
            deletes,
            filters: Vec::new(),
            loading: None,
            item_hash: ItemHash::NEWEST,
        };
        while (f.filters.len() as u64) < filters {
            f.grow(max_bytes)?;
        }
        Ok(f)
    }

    /// A stored filter's header, checked: parameters in range, a fingerprint
    /// width of 1..=32 bits, at most `MAX_FILTERS` sub-filters and a delete
    /// count `CF.INFOX` can show (at most `MAX_DELETES`).
    pub fn check_header(
        params: CuckooParams,
        fingerprint_bits: u32,
        filters: u64,
        deletes: u64,
    ) -> Result<(), WardenError> {
        params.validate()?;
        if !(1..=MAX_FINGERPRINT_BITS).contains(&fingerprint_bits)
            || filters == 0
            || filters > MAX_FILTERS as u64
            || deletes > MAX_DELETES
        {
            return Err(WardenError::BadFilterData);
        }
        Ok(())
    }

    /// A stored filter from its parts, each checked: the header, each
    /// sub-filter's bucket count (`m₀·eᵏ`), and the item count against the
    /// occupied slots.
    pub fn from_parts(
        params: CuckooParams,
        fingerprint_bits: u32,
        (items, deletes): (u64, u64),
        filters: Vec<SubFilter>,
    ) -> Result<CuckooFilter, WardenError> {
        CuckooFilter::from_stored(
            params,
            fingerprint_bits,
            (items, deletes),
            filters,
            (None, ItemHash::NEWEST),
        )
    }

    /// `from_parts` for a filter that may be partly loaded (`loading`: bytes
    /// loaded so far, where a chunk ends; its counts are checked once it is
    /// whole), hashed with the stored `item_hash`.
    pub fn from_stored(
        params: CuckooParams,
        fingerprint_bits: u32,
        (items, deletes): (u64, u64),
        filters: Vec<SubFilter>,
        (loading, item_hash): (Option<u64>, ItemHash),
    ) -> Result<CuckooFilter, WardenError> {
        CuckooFilter::check_header(params, fingerprint_bits, filters.len() as u64, deletes)?;
        let f = CuckooFilter {
            params,
            fingerprint_bits,
            items,
            deletes,
            filters,
            loading,
            item_hash,
        };
        for (k, sub) in f.filters.iter().enumerate() {
            if Some(sub.buckets()) != f.buckets_of(k) {
                return Err(WardenError::BadFilterData);
            }
        }
        let consistent = match loading {
            None => f.occupied() == items,
            Some(loaded) => {
                let sizes = f.filters.iter().map(SubFilter::bytes);
                matches!(
                    chunk_at(sizes, loaded + HEADER_ITERATOR),
                    Ok(Chunk::Bits { .. })
                )
            }
        };
        match consistent {
            true => Ok(f),
            false => Err(WardenError::BadFilterData),
        }
    }

    /// Buckets of sub-filter `k` (see `CuckooParams::buckets_of`).
    pub fn buckets_of(&self, k: usize) -> Option<u64> {
        self.params.buckets_of(k)
    }

    /// Appends the next sub-filter, zeroed; refused when the filter would
    /// take more than `max_bytes` or has `MAX_FILTERS` already.
    #[cold]
    pub fn grow(&mut self, max_bytes: u64) -> Result<(), WardenError> {
        if self.filters.len() >= MAX_FILTERS {
            return Err(errors::MAX_EXPANSIONS);
        }
        let buckets = self
            .buckets_of(self.filters.len())
            .ok_or(errors::TOO_LARGE)?;
        let (b, f) = (self.params.bucket_size, self.fingerprint_bits);
        let slots = buckets.checked_mul(u64::from(b)).ok_or(errors::TOO_LARGE)?;
        let bytes = slots
            .checked_mul(u64::from(f))
            .map(|bits| bits.div_ceil(64) * 8 + 8);
        match bytes {
            Some(n) if n.saturating_add(self.size()) <= max_bytes => {}
            _ => return Err(errors::TOO_LARGE),
        }
        self.filters.push(SubFilter::zeroed(buckets, b, f));
        Ok(())
    }

    /// Its parameters.
    pub fn params(&self) -> CuckooParams {
        self.params
    }

    /// How its items hash.
    pub fn item_hash(&self) -> ItemHash {
        self.item_hash
    }

    /// The same filter hashing its items with `item_hash`: for a filter
    /// made empty from a stored or replayed header that names (or, from an
    /// older version, implies) its hash.
    pub fn with_item_hash(mut self, item_hash: ItemHash) -> CuckooFilter {
        self.item_hash = item_hash;
        self
    }

    /// An item's hash in this filter.
    #[inline]
    pub fn hash(&self, item: &[u8]) -> CuckooHash {
        self.item_hash.of(item)
    }

    /// Bits per fingerprint.
    pub fn fingerprint_bits(&self) -> u32 {
        self.fingerprint_bits
    }

    /// Fingerprints stored (items added, less those deleted).
    pub fn items(&self) -> u64 {
        self.items
    }

    /// Deletes since creation or the last compaction.
    pub fn deletes(&self) -> u64 {
        self.deletes
    }

    /// Its sub-filters, oldest first.
    pub fn filters(&self) -> &[SubFilter] {
        &self.filters
    }

    /// Its sub-filters, for a load that writes their slots in chunks.
    pub fn filters_mut(&mut self) -> &mut [SubFilter] {
        &mut self.filters
    }

    /// Bytes of slots loaded so far while `CF.LOADCHUNKX` loads it; `None`
    /// when it is whole.
    pub fn loading(&self) -> Option<u64> {
        self.loading
    }

    /// Marks how much of it is loaded (`None`: whole).
    pub fn set_loading(&mut self, loaded: Option<u64>) {
        self.loading = loaded;
    }

    /// Whether its item count is the number of occupied slots (a load's
    /// last check).
    pub fn counts_agree(&self) -> bool {
        self.occupied() == self.items
    }

    /// Bytes of slots (RedisBloom's `Size`).
    pub fn slot_bytes(&self) -> u64 {
        self.filters.iter().map(SubFilter::bytes).sum()
    }

    /// Bytes it takes in memory: slots and overhead.
    pub fn size(&self) -> u64 {
        self.size_with(self.filters.len())
    }

    /// Bytes it took with only its first `n` sub-filters: what it took
    /// before a call grew it (growth only appends sub-filters).
    pub fn size_with(&self, n: usize) -> u64 {
        let kept = &self.filters[..n.min(self.filters.len())];
        FILTER_OVERHEAD
            + kept.iter().map(SubFilter::bytes).sum::<u64>()
            + std::mem::size_of_val(kept) as u64
    }

    /// Slots holding a fingerprint, counted.
    fn occupied(&self) -> u64 {
        let (b, f) = (self.params.bucket_size, self.fingerprint_bits);
        self.filters.iter().map(|s| s.occupied(b, f)).sum()
    }

    /// The item's fingerprint, 1..2^f: the tag scaled onto 2^f − 1 values
    /// (a multiply, not a division), plus one.
    #[inline]
    fn fingerprint(&self, h: CuckooHash) -> u32 {
        let values = (1u64 << self.fingerprint_bits) - 1;
        1 + ((u128::from(h.tag) * u128::from(values)) >> 64) as u32
    }

    /// Its two buckets in sub-filter `k`.
    #[inline(always)]
    fn buckets_in(&self, k: usize, h: CuckooHash, fp: u32) -> (u64, u64) {
        let (m0, m) = (self.filters[0].buckets(), self.filters[k].buckets());
        let i1 = first_bucket(h, m0, m);
        (i1, alt_bucket(i1, fp, m0, m))
    }

    /// Whether the item may be in the filter (never false for an item added
    /// and not deleted).
    pub fn contains(&self, h: CuckooHash) -> bool {
        let (b, f) = (self.params.bucket_size, self.fingerprint_bits);
        let fp = self.fingerprint(h);
        (0..self.filters.len()).any(|k| {
            let (i1, i2) = self.buckets_in(k, h, fp);
            let sub = &self.filters[k];
            sub.find_either((i1, i2), b, f, fp).is_some()
        })
    }

    /// How many times the item's fingerprint is stored (at least its adds
    /// less its deletes; more when other items share it).
    pub fn count(&self, h: CuckooHash) -> u64 {
        let (b, f) = (self.params.bucket_size, self.fingerprint_bits);
        let fp = self.fingerprint(h);
        (0..self.filters.len())
            .map(|k| {
                let (i1, i2) = self.buckets_in(k, h, fp);
                let sub = &self.filters[k];
                let second = if i2 == i1 {
                    0
                } else {
                    sub.count_in(i2, b, f, fp)
                };
                sub.count_in(i1, b, f, fp) + second
            })
            .sum()
    }

    /// Removes one copy of the item's fingerprint, newest sub-filter first;
    /// false when none is stored. An item never added may share a stored
    /// item's fingerprint and buckets: deleting it removes that item's copy.
    pub fn delete(&mut self, h: CuckooHash) -> bool {
        let (b, f) = (self.params.bucket_size, self.fingerprint_bits);
        let fp = self.fingerprint(h);
        for k in (0..self.filters.len()).rev() {
            let (i1, i2) = self.buckets_in(k, h, fp);
            let sub = &mut self.filters[k];
            if let Some(slot) = sub.find_either((i1, i2), b, f, fp) {
                sub.set(slot, f, 0);
                self.items -= 1;
                self.deletes = (self.deletes + 1).min(MAX_DELETES);
                return true;
            }
        }
        false
    }

    /// Adds the item unless it may be present already.
    pub fn insert_unique(
        &mut self,
        h: CuckooHash,
        rng: &mut dyn KickRng,
        max_bytes: impl Budget,
        touched: &mut Touched,
    ) -> Result<Inserted, WardenError> {
        if self.contains(h) {
            return Ok(Inserted::Exists);
        }
        self.insert(h, rng, max_bytes, touched)
    }

    /// Adds the item's fingerprint (another copy when it is there already):
    /// into a free slot of its buckets, newest sub-filter first; else by a
    /// random walk in the newest; else into a new sub-filter. Fails with
    /// nothing changed when the filter cannot grow (`EXPANSION 0`: full;
    /// `MAX_FILTERS` or `max_bytes` reached). Slots written are noted in
    /// `touched`.
    pub fn insert(
        &mut self,
        h: CuckooHash,
        rng: &mut dyn KickRng,
        max_bytes: impl Budget,
        touched: &mut Touched,
    ) -> Result<Inserted, WardenError> {
        let fp = self.fingerprint(h);
        loop {
            if let Some((k, slot)) = self.place_free(h, fp) {
                touched.note(k, slot);
                return Ok(Inserted::Added);
            }
            let newest = self.filters.len() - 1;
            let (i1, i2) = self.buckets_in(newest, h, fp);
            if self.shift_one(newest, [i1, i2], fp, touched) {
                self.items += 1;
                return Ok(Inserted::Added);
            }
            touched.random = true;
            if self.kick(newest, [i1, i2], fp, rng, touched) {
                self.items += 1;
                return Ok(Inserted::Added);
            }
            if self.params.expansion == 0 {
                return Err(errors::FULL);
            }
            self.grow(max_bytes.bytes())?;
        }
    }

    /// Adds the item's fingerprint as `insert` does when that needs no
    /// random walk (nearly every add): in a free slot of its buckets, else
    /// by moving one fingerprint (`shift_one`). False, with nothing changed,
    /// when it would take a walk or growth (`insert` does those, deciding
    /// the same up to there). Decided by the state alone, so the call
    /// replays as itself.
    pub fn insert_without_walk(&mut self, h: CuckooHash) -> bool {
        let fp = self.fingerprint(h);
        if self.place_free(h, fp).is_some() {
            return true;
        }
        let newest = self.filters.len() - 1;
        let (i1, i2) = self.buckets_in(newest, h, fp);
        if self.shift_one(newest, [i1, i2], fp, &mut Touched::default()) {
            self.items += 1;
            return true;
        }
        false
    }

    /// Stores `fp` in the first free slot of its buckets, newest sub-filter
    /// first: which (sub-filter, slot), or `None` when all are full.
    #[inline(always)]
    fn place_free(&mut self, h: CuckooHash, fp: u32) -> Option<(usize, u64)> {
        let (b, f) = (self.params.bucket_size, self.fingerprint_bits);
        for k in (0..self.filters.len()).rev() {
            let (i1, i2) = self.buckets_in(k, h, fp);
            let sub = &mut self.filters[k];
            if let Some(slot) = sub.find_either((i1, i2), b, f, 0) {
                sub.set(slot, f, fp);
                self.items += 1;
                return Some((k, slot));
            }
        }
        None
    }

    /// Makes room for `fp` in one of `buckets` of sub-filter `k` by moving
    /// one fingerprint of theirs to its other bucket, when one has a free
    /// slot there: the first such, in slot order. Deterministic (a replica
    /// that replays the call decides the same), and at the loads a filter
    /// is sized for it spares most inserts a random walk: a b = 2 filter
    /// filled from half to two thirds of its capacity walks for about one
    /// insert in ten without it.
    #[inline(never)]
    fn shift_one(&mut self, k: usize, buckets: [u64; 2], fp: u32, touched: &mut Touched) -> bool {
        let (b, f) = (self.params.bucket_size, self.fingerprint_bits);
        let m0 = self.filters[0].buckets();
        let sub = &mut self.filters[k];
        let m = sub.buckets();
        let Some((slot, free)) = sub.find_move(buckets, b, f, |i, v| alt_bucket(i, v, m0, m))
        else {
            return false;
        };
        let victim = sub.get(slot, f);
        sub.set(free, f, victim);
        sub.set(slot, f, fp);
        touched.note(k, free);
        touched.note(k, slot);
        true
    }

    /// A random walk in sub-filter `k` that makes room for `fp` in one of
    /// `buckets`: swaps it with a random victim, takes the victim to its
    /// other bucket, and so on for at most `max_iterations` kicks. Undone
    /// when it fails, so the filter is as it was.
    #[cold]
    #[inline(never)]
    fn kick(
        &mut self,
        k: usize,
        buckets: [u64; 2],
        fp: u32,
        rng: &mut dyn KickRng,
        touched: &mut Touched,
    ) -> bool {
        let (b, f) = (self.params.bucket_size, self.fingerprint_bits);
        let max = self.params.max_iterations;
        let m0 = self.filters[0].buckets();
        let sub = &mut self.filters[k];
        let m = sub.buckets();
        let mut path: Vec<(u64, u32)> = Vec::with_capacity(max.min(64) as usize);
        let r = rng.next_u64();
        let mut bucket = buckets[(r & 1) as usize];
        let mut carried = fp;
        for _ in 0..max {
            let r = rng.next_u64();
            let slot = bucket * u64::from(b) + (r >> 1) % u64::from(b);
            let victim = sub.get(slot, f);
            sub.set(slot, f, carried);
            path.push((slot, victim));
            carried = victim;
            bucket = alt_bucket(bucket, carried, m0, m);
            if let Some(free) = sub.find(bucket, b, f, 0) {
                sub.set(free, f, carried);
                for &(s, _) in &path {
                    touched.note(k, s);
                }
                touched.note(k, free);
                return true;
            }
        }
        for &(slot, before) in path.iter().rev() {
            sub.set(slot, f, before);
        }
        false
    }

    /// Moves fingerprints from newer sub-filters into free slots of older
    /// ones and drops the newest sub-filters left empty; resets the delete
    /// count. Deterministic: replicas repeat it.
    pub fn compact(&mut self) {
        let (b, f) = (self.params.bucket_size, self.fingerprint_bits);
        for k in (1..self.filters.len()).rev() {
            let (older, newer) = self.filters.split_at_mut(k);
            let m0 = older[0].buckets();
            let sub = &mut newer[0];
            for slot in 0..sub.buckets() * u64::from(b) {
                let fp = sub.get(slot, f);
                if fp == 0 {
                    continue;
                }
                let i = slot / u64::from(b);
                let home = older.iter_mut().find_map(|o| {
                    let i1 = i % o.buckets();
                    let i2 = alt_bucket(i1, fp, m0, o.buckets());
                    let free = o.find_either((i1, i2), b, f, 0)?;
                    Some((o, free))
                });
                if let Some((o, free)) = home {
                    o.set(free, f, fp);
                    sub.set(slot, f, 0);
                }
            }
        }
        while self.filters.len() > 1
            && self
                .filters
                .last()
                .is_some_and(|s| s.words().iter().all(|w| *w == 0))
        {
            self.filters.pop();
        }
        self.filters.shrink_to_fit();
        self.deletes = 0;
    }

    /// Applies a replicated effect (`CF._PLACEX`): grows to `filters`
    /// sub-filters, then writes each (sub-filter, slot, value), keeping the
    /// item count. Every entry is checked first, against the filter as it
    /// will be: refused with nothing changed for a count, slot or value out
    /// of range, or a growth past `max_bytes`.
    pub fn place_all(
        &mut self,
        filters: usize,
        writes: &[(usize, u64, u64)],
        max_bytes: u64,
    ) -> Result<(), WardenError> {
        let (b, f) = (self.params.bucket_size, self.fingerprint_bits);
        let bad = WardenError::BadFilterData;
        if filters < self.filters.len() || filters > MAX_FILTERS {
            return Err(bad);
        }
        for &(sub, slot, fp) in writes {
            let buckets = self.buckets_of(sub).ok_or(bad.clone())?;
            if sub >= filters || slot >= buckets.saturating_mul(u64::from(b)) || fp >= 1u64 << f {
                return Err(bad);
            }
        }
        let before = self.filters.len();
        while self.filters.len() < filters {
            if let Err(e) = self.grow(max_bytes) {
                self.filters.truncate(before);
                return Err(e);
            }
        }
        for &(sub, slot, fp) in writes {
            let target = &mut self.filters[sub];
            let old = target.get(slot, f);
            target.set(slot, f, fp as u32);
            self.items = self.items + u64::from(fp != 0) - u64::from(old != 0);
        }
        Ok(())
    }

    /// The value of a slot (replication of touched slots).
    pub fn slot(&self, sub: usize, slot: u64) -> u32 {
        self.filters[sub].get(slot, self.fingerprint_bits)
    }

    /// Offers its blocks to `m` from sub-filter `from` on; the sub-filter
    /// to resume at when `m` asks to stop.
    pub fn relocate(&mut self, from: usize, m: &mut dyn Mover) -> Option<usize> {
        if from == 0 {
            relocate::vec(&mut self.filters, m);
        }
        for k in from..self.filters.len() {
            if k > from && m.should_stop() {
                return Some(k);
            }
            relocate::vec(self.filters[k].words_mut(), m);
        }
        None
    }
}
