//! Scalable Bloom filters: optimal sizing, one murmur3 x64-128 hash per item
//! with Kirsch–Mitzenmacher probing, and growth by tighter, larger layers.
//! A filter imported from RedisBloom keeps RedisBloom's hashing, bit
//! placement and sizing instead (`Hashing::RedisBloom`, see `redisbloom`).

use crate::bloom::core::aging::{self, Aging, Target};
use crate::bloom::core::errors;
pub use crate::bloom::core::hashing::{murmur3_x64_128, Hashing, ItemHash};
use crate::bloom::core::hashing::{Modulo, MultiplyShift, Scheme};
use crate::bloom::core::sizing::{check_redisbloom_layer, layer_geometry, redisbloom_geometry};
pub use crate::bloom::core::sizing::{
    expected_fpr, geometry, validate_error_rate, Geometry, Sizing, MAX_HASHES,
};
use crate::common::error::WardenError;
use crate::common::parse::IntArg;
use crate::common::relocate::{self, Mover};

/// Error-rate tightening per new layer: each layer halves the previous rate,
/// so a scaling filter's compound rate stays at or below the asked one.
const TIGHTENING: f64 = 0.5;

/// Most layers a filter may have (the error rate halves each time).
pub const MAX_LAYERS: usize = 64;

/// Largest capacity of one layer (far beyond any filter under the size cap).
pub const MAX_CAPACITY: u64 = 1 << 56;

/// Parameters of a new filter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BloomParams {
    /// Asked false-positive rate, in (0, 1).
    pub error_rate: f64,
    /// Items the first layer holds.
    pub capacity: u64,
    /// Capacity multiplier of each new layer; 0 for a non-scaling filter.
    pub expansion: u32,
}

impl BloomParams {
    /// Checks every parameter range.
    pub fn validate(&self) -> Result<(), WardenError> {
        validate_error_rate(self.error_rate)?;
        if self.capacity == 0 {
            return Err(WardenError::NotPositive("capacity"));
        }
        if u64::from(self.expansion) > errors::EXPANSION.max {
            return Err(errors::EXPANSION.error());
        }
        Ok(())
    }

    /// Whether the filter grows when full.
    pub fn is_scaling(&self) -> bool {
        self.expansion > 0
    }
}

/// `capacity` of BF.RESERVEX and BF.INSERTX.
pub const CAPACITY: IntArg = IntArg {
    name: "capacity",
    min: 1,
    max: aging::MAX_ASKED_CAPACITY as i64,
    duration: false,
};

/// One layer: a fixed-size bit array.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    words: Vec<u64>,
    capacity: u64,
    items: u64,
    error_rate: f64,
    hashes: u32,
}

impl Layer {
    /// Offers the bit array to `m` (active defragmentation).
    pub fn relocate(&mut self, m: &mut dyn Mover) {
        relocate::vec(&mut self.words, m);
    }

    /// An empty layer of the given geometry.
    fn new(capacity: u64, error_rate: f64, g: Geometry) -> Layer {
        Layer {
            words: vec![0; (g.bits / 64) as usize],
            capacity,
            items: 0,
            error_rate,
            hashes: g.hashes,
        }
    }

    /// Checks a stored layer's header (RDB, `BF._LOADX`, a `BF.SCANDUMPX`
    /// header: one check for all). With warden's hashing the bit count is
    /// not recomputed from the sizing (which may change between versions):
    /// any non-empty whole number of words near the nominal size or above is
    /// a valid layer. With RedisBloom's, the layer must be what RedisBloom
    /// sizes (`sizing::check_redisbloom_layer`).
    pub fn check_header(
        hashing: Hashing,
        capacity: u64,
        error_rate: f64,
        hashes: u32,
        items: u64,
        bits: u64,
    ) -> Result<(), WardenError> {
        validate_error_rate(error_rate).map_err(|_| WardenError::BadFilterData)?;
        if !(1..=MAX_CAPACITY).contains(&capacity) {
            return Err(WardenError::BadFilterData);
        }
        if hashing == Hashing::RedisBloom {
            return check_redisbloom_layer(capacity, error_rate, hashes, items, bits);
        }
        // Near the nominal size or above: a forged capacity or a truncated
        // array is refused, while some future change of sizing is tolerated.
        let nominal = geometry(capacity, error_rate, Sizing::Nominal)
            .map_err(|_| WardenError::BadFilterData)?
            .bits;
        let consistent = items <= capacity
            && (1..=MAX_HASHES).contains(&hashes)
            && bits >= (nominal - nominal / 8).max(64)
            && bits.is_multiple_of(64);
        if consistent {
            Ok(())
        } else {
            Err(WardenError::BadFilterData)
        }
    }

    /// Rebuilds a stored layer, checking that its fields agree with each other.
    pub fn from_parts(
        hashing: Hashing,
        capacity: u64,
        error_rate: f64,
        hashes: u32,
        items: u64,
        words: Vec<u64>,
    ) -> Result<Layer, WardenError> {
        let bits = words.len() as u64 * 64;
        Layer::check_header(hashing, capacity, error_rate, hashes, items, bits)?;
        Ok(Layer {
            words,
            capacity,
            items,
            error_rate,
            hashes,
        })
    }

    /// A stored layer's header with an all-zero bit array of `bits` bits (its
    /// bits arrive later in chunks). Refused before allocating when the bit
    /// array is larger than `budget_bytes`.
    pub fn zeroed(
        hashing: Hashing,
        (capacity, error_rate, hashes, items): (u64, f64, u32, u64),
        bits: u64,
        budget_bytes: u64,
    ) -> Result<Layer, WardenError> {
        Layer::check_header(hashing, capacity, error_rate, hashes, items, bits)?;
        if bits / 8 > budget_bytes {
            return Err(errors::TOO_LARGE);
        }
        Layer::from_parts(
            hashing,
            capacity,
            error_rate,
            hashes,
            items,
            vec![0; (bits / 64) as usize],
        )
    }

    fn bits(&self) -> u64 {
        self.words.len() as u64 * 64
    }

    fn contains<P: Scheme>(&self, h: ItemHash) -> bool {
        h.probes::<P>(self.bits(), self.hashes)
            .all(|b| self.words[(b >> 6) as usize] & (1 << (b & 63)) != 0)
    }

    /// Sets the item's bits in one pass and counts it when one of them was
    /// 0 (it was not in the layer); returns whether it was new. One pass
    /// lets the probes' cache misses overlap, where a lookup first and a
    /// write after pay one miss, then the rest.
    fn insert<P: Scheme>(&mut self, h: ItemHash) -> bool {
        let bits = self.bits();
        let mut new = false;
        for b in h.probes::<P>(bits, self.hashes) {
            let (word, mask) = (&mut self.words[(b >> 6) as usize], 1u64 << (b & 63));
            new |= *word & mask == 0;
            *word |= mask;
        }
        self.items += u64::from(new);
        new
    }

    /// Items this layer holds.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Items added as new to this layer.
    pub fn items(&self) -> u64 {
        self.items
    }

    /// This layer's error rate.
    pub fn error_rate(&self) -> f64 {
        self.error_rate
    }

    /// Probes per item.
    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    /// The bit array as 64-bit words (bit b is bit b%64 of word b/64).
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Mutable bit array, for loading stored chunks.
    pub fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }

    /// Bytes of the bit array.
    pub fn bytes(&self) -> u64 {
        self.words.len() as u64 * 8
    }
}

/// A filter's stored fields, borrowed: what its RDB form, its digest and a
/// `BF.SCANDUMPX` header are made of, for a complete filter and for one that
/// is still being loaded alike.
#[derive(Debug, Clone, Copy)]
pub struct FilterParts<'a> {
    /// How items are hashed and layers sized.
    pub hashing: Hashing,
    /// The asked error rate.
    pub error_rate: f64,
    /// Capacity multiplier per new layer; 0 for non-scaling.
    pub expansion: u32,
    /// The layers, oldest first (an aging filter's blocks).
    pub layers: &'a [Layer],
    /// An aging filter's window and block openings.
    pub aging: Option<&'a Aging>,
}

/// Bookkeeping bytes of an aging filter's time state (0 for other filters).
pub fn aging_overhead(aging: Option<&Aging>) -> u64 {
    aging.map_or(0, |a| aging_bookkeeping(a.opened().len()))
}

/// Bookkeeping bytes of an aging filter's time state with `blocks` blocks.
fn aging_bookkeeping(blocks: usize) -> u64 {
    (std::mem::size_of::<Aging>() + 8 * blocks) as u64
}

/// Outcome of adding one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// The item was new: its bits are now set.
    New,
    /// The item may have been present: nothing changed.
    Present,
    /// The item may have been present in an aging filter, which now has it in
    /// its newest block (so its window starts again) or retired old blocks.
    Refreshed,
}

/// A scalable (or non-scaling) Bloom filter, or an aging one whose layers are
/// the blocks of `bloom::core::aging`.
#[derive(Debug, Clone, PartialEq)]
pub struct BloomFilter {
    /// A boxed slice (layers change rarely), so the filter stays as small as
    /// RedisBloom's with room for the aging state's pointer.
    layers: Box<[Layer]>,
    error_rate: f64,
    expansion: u32,
    hashing: Hashing,
    aging: Option<Box<Aging>>,
}

impl BloomFilter {
    /// Offers the filter's heap blocks to `m`: at `from` 0 the layer table
    /// and the aging state, then the bit arrays from layer `from` on;
    /// `Some(layer)` to resume at when `m` asked to stop.
    pub fn relocate(&mut self, from: usize, m: &mut dyn Mover) -> Option<usize> {
        if from == 0 {
            relocate::boxed_slice(&mut self.layers, m);
            if let Some(aging) = &mut self.aging {
                relocate::boxed(aging, m);
                aging.relocate(m);
            }
        }
        relocate::walk(&mut self.layers, from, m, Layer::relocate)
    }

    /// A filter with one empty layer. A scaling filter's first layer uses half
    /// the asked rate. Refused before allocating if it would exceed `max_bytes`.
    pub fn new(params: BloomParams, max_bytes: u64) -> Result<BloomFilter, WardenError> {
        Self::new_with(Hashing::Warden, params, max_bytes)
    }

    /// `new` with the given hashing (RedisBloom's sizes the first layer as
    /// RedisBloom 2.x's BF.RESERVE does).
    pub fn new_with(
        hashing: Hashing,
        params: BloomParams,
        max_bytes: u64,
    ) -> Result<BloomFilter, WardenError> {
        params.validate()?;
        let first_rate = if params.is_scaling() {
            params.error_rate * TIGHTENING
        } else {
            params.error_rate
        };
        let g = match hashing {
            Hashing::Warden => geometry(
                params.capacity,
                first_rate,
                Sizing::for_expansion(params.expansion),
            )?,
            Hashing::RedisBloom => redisbloom_geometry(params.capacity, first_rate)?,
        };
        if Self::overhead(1).saturating_add(g.bits / 8) > max_bytes {
            return Err(errors::TOO_LARGE);
        }
        Ok(BloomFilter {
            layers: Box::new([Layer::new(params.capacity, first_rate, g)]),
            error_rate: params.error_rate,
            expansion: params.expansion,
            hashing,
            aging: None,
        })
    }

    /// An empty aging filter (see `bloom::core::aging`): `capacity` items per
    /// `window_ms` at `error_rate`. Refused unless its largest size (every
    /// block it may hold) fits in `max_bytes`.
    pub fn new_aging(
        error_rate: f64,
        capacity: u64,
        window_ms: u64,
        max_bytes: u64,
    ) -> Result<BloomFilter, WardenError> {
        validate_error_rate(error_rate)?;
        let aging = Aging::new(window_ms, capacity)?;
        let block = Self::block_geometry(error_rate, capacity)?;
        let blocks = aging::MAX_BLOCKS as u64;
        let largest = (block.bits / 8)
            .saturating_mul(blocks)
            .saturating_add(Self::overhead(aging::MAX_BLOCKS))
            .saturating_add(aging_bookkeeping(aging::MAX_BLOCKS));
        if largest > max_bytes {
            return Err(errors::TOO_LARGE);
        }
        Ok(BloomFilter {
            layers: Box::new([]),
            error_rate,
            expansion: 0,
            hashing: Hashing::Warden,
            aging: Some(Box::new(aging)),
        })
    }

    fn block_geometry(error_rate: f64, capacity: u64) -> Result<Geometry, WardenError> {
        geometry(
            aging::block_capacity(capacity),
            aging::block_rate(error_rate),
            Sizing::Guaranteed,
        )
    }

    /// Checks a stored filter's own fields (RDB, `BF._LOADX`, a
    /// `BF.SCANDUMPX` header: one check for all) before its layers are read
    /// or allocated: the error rate, the expansion (0: non-scaling, which has
    /// one layer) and the layer count; an aging filter has warden's hashing.
    /// Returns the expansion and the count.
    pub fn check_parts(
        hashing: Hashing,
        error_rate: f64,
        expansion: u64,
        (layer_count, aging): (u64, bool),
    ) -> Result<(u32, usize), WardenError> {
        let bad = WardenError::BadFilterData;
        validate_error_rate(error_rate).map_err(|_| bad.clone())?;
        if aging && hashing != Hashing::Warden {
            return Err(bad);
        }
        if aging {
            // An aging filter has 0 to MAX_BLOCKS blocks and no expansion.
            if expansion != 0 || layer_count > aging::MAX_BLOCKS as u64 {
                return Err(bad);
            }
            return Ok((0, layer_count as usize));
        }
        if layer_count == 0 || layer_count > MAX_LAYERS as u64 {
            return Err(bad);
        }
        if expansion > errors::EXPANSION.max || (expansion == 0 && layer_count > 1) {
            return Err(bad);
        }
        Ok((expansion as u32, layer_count as usize))
    }

    /// Rebuilds a stored filter from validated layers (and, for an aging
    /// filter, its time state, with one opening per block).
    pub fn from_parts(
        hashing: Hashing,
        error_rate: f64,
        expansion: u64,
        layers: Vec<Layer>,
        aging: Option<Aging>,
    ) -> Result<BloomFilter, WardenError> {
        let expansion = Self::check_whole(hashing, error_rate, expansion, &layers, aging.as_ref())?;
        Ok(BloomFilter {
            layers: layers.into_boxed_slice(),
            error_rate,
            expansion,
            hashing,
            aging: aging.map(Box::new),
        })
    }

    /// Checks that stored layers and time state make a filter, before they
    /// are handed over (`from_parts` takes them): the filter's own fields, and
    /// one opening per block for an aging filter. Returns the expansion.
    pub fn check_whole(
        hashing: Hashing,
        error_rate: f64,
        expansion: u64,
        layers: &[Layer],
        aging: Option<&Aging>,
    ) -> Result<u32, WardenError> {
        let shape = (layers.len() as u64, aging.is_some());
        let (expansion, _) = Self::check_parts(hashing, error_rate, expansion, shape)?;
        if aging.is_some_and(|a| a.opened().len() != layers.len()) {
            return Err(WardenError::BadFilterData);
        }
        Ok(expansion)
    }

    /// The filter's stored fields, borrowed.
    pub fn parts(&self) -> FilterParts<'_> {
        FilterParts {
            hashing: self.hashing,
            error_rate: self.error_rate,
            expansion: self.expansion,
            layers: &self.layers,
            aging: self.aging.as_deref(),
        }
    }

    /// How the filter hashes items and sizes layers.
    pub fn hashing(&self) -> Hashing {
        self.hashing
    }

    /// Hashes an item with the filter's hashing (once per item; every layer
    /// derives its probes from the result).
    #[inline]
    pub fn hash(&self, item: &[u8]) -> ItemHash {
        match self.hashing {
            Hashing::Warden => ItemHash::of(item),
            Hashing::RedisBloom => ItemHash::redisbloom(item),
        }
    }

    /// The filter taken apart: hashing, error rate, expansion, layers, time state.
    pub fn into_parts(self) -> (Hashing, f64, u32, Vec<Layer>, Option<Aging>) {
        let aging = self.aging.map(|a| *a);
        (
            self.hashing,
            self.error_rate,
            self.expansion,
            self.layers.into_vec(),
            aging,
        )
    }

    /// An aging filter's window and block openings.
    pub fn aging(&self) -> Option<&Aging> {
        self.aging.as_deref()
    }

    /// Replaces the layers with `change` applied to them (layers change only
    /// when a filter grows or an aging filter opens or retires blocks).
    fn change_layers(&mut self, change: impl FnOnce(&mut Vec<Layer>)) {
        let mut layers = std::mem::take(&mut self.layers).into_vec();
        change(&mut layers);
        self.layers = layers.into_boxed_slice();
    }

    /// The layers a read at `now` looks at: an aging filter's live blocks.
    fn live_layers(&self, now: u64) -> &[Layer] {
        match &self.aging {
            Some(a) => &self.layers[a.first_live(now)..],
            None => &self.layers,
        }
    }

    /// Whether the item may have been added (for an aging filter: in a block
    /// still live at `now`, Unix ms; other filters ignore `now`).
    pub fn contains(&self, h: ItemHash, now: u64) -> bool {
        match self.hashing {
            Hashing::Warden => self.contains_in::<MultiplyShift>(h, now),
            Hashing::RedisBloom => self.contains_in::<Modulo>(h, now),
        }
    }

    /// `contains` of an item, hashed with the filter's hashing; `clock` (Unix
    /// ms) is read only for an aging filter. The common case (warden's
    /// hashing, not aging) is one check; an imported filter's path is out of
    /// line.
    #[inline]
    pub fn contains_item(&self, item: &[u8], clock: impl FnOnce() -> u64) -> bool {
        match (&self.aging, self.hashing) {
            (None, Hashing::Warden) => {
                let h = ItemHash::of(item);
                self.layers
                    .iter()
                    .rev()
                    .any(|l| l.contains::<MultiplyShift>(h))
            }
            (Some(_), _) => self.contains_in::<MultiplyShift>(ItemHash::of(item), clock()),
            (None, Hashing::RedisBloom) => self.contains_imported(item),
        }
    }

    #[cold]
    #[inline(never)]
    fn contains_imported(&self, item: &[u8]) -> bool {
        self.contains_in::<Modulo>(Modulo::hash(item), 0)
    }

    fn contains_in<P: Scheme>(&self, h: ItemHash, now: u64) -> bool {
        self.live_layers(now)
            .iter()
            .rev()
            .any(|l| l.contains::<P>(h))
    }

    /// What an aging filter's adds may change without a clock: `(blocks,
    /// first opening)`. Adds that leave it as it was changed the newest block
    /// only (no block retired or opened), so they replay as
    /// `add_to_newest`. `None` for other filters.
    pub fn aging_shape(&self) -> Option<(usize, u64)> {
        let a = self.aging.as_deref()?;
        Some((a.opened().len(), a.opened().first().copied().unwrap_or(0)))
    }

    /// An aging filter's add replayed without a clock (from a master or the
    /// AOF, for an add that changed only the newest block): the item's bits
    /// set in the newest block.
    pub fn add_to_newest(&mut self, h: ItemHash) -> Result<Added, WardenError> {
        if self.aging.is_none() {
            return Err(WardenError::InvalidState("not an aging filter"));
        }
        let newest = self
            .layers
            .last_mut()
            .ok_or(WardenError::InvalidState("aging filter without blocks"))?;
        Ok(match newest.insert::<MultiplyShift>(h) {
            true => Added::New,
            false => Added::Present,
        })
    }

    /// Adds an item at `now` (Unix ms, used by aging filters only), growing a
    /// scaling filter when its newest layer is full. On error nothing changed.
    pub fn add(&mut self, h: ItemHash, now: u64, max_bytes: u64) -> Result<Added, WardenError> {
        if self.aging.is_some() {
            return self.add_aging(h, now, max_bytes);
        }
        match self.hashing {
            Hashing::Warden => self.add_scaling::<MultiplyShift>(h, max_bytes),
            Hashing::RedisBloom => self.add_scaling::<Modulo>(h, max_bytes),
        }
    }

    /// `add` of an item, hashed with the filter's hashing (one check for the
    /// common case; an imported filter's path is out of line).
    #[inline]
    pub fn add_item(
        &mut self,
        item: &[u8],
        now: u64,
        max_bytes: u64,
    ) -> Result<Added, WardenError> {
        match (&self.aging, self.hashing) {
            (None, Hashing::Warden) => {
                self.add_scaling::<MultiplyShift>(ItemHash::of(item), max_bytes)
            }
            (Some(_), _) => self.add_aging(ItemHash::of(item), now, max_bytes),
            (None, Hashing::RedisBloom) => self.add_imported(item, max_bytes),
        }
    }

    #[cold]
    #[inline(never)]
    fn add_imported(&mut self, item: &[u8], max_bytes: u64) -> Result<Added, WardenError> {
        self.add_scaling::<Modulo>(Modulo::hash(item), max_bytes)
    }

    /// A scalable (or non-scaling) filter's add, as RedisBloom's: present in
    /// any layer is present; otherwise into the newest layer, after a new
    /// layer is added when the newest is full.
    fn add_scaling<P: Scheme>(
        &mut self,
        h: ItemHash,
        max_bytes: u64,
    ) -> Result<Added, WardenError> {
        let newest = self.layers.len() - 1;
        if self.layers[..newest].iter().any(|l| l.contains::<P>(h)) {
            return Ok(Added::Present);
        }
        let last = &mut self.layers[newest];
        if last.items < last.capacity {
            // Setting bits an item already has changes nothing.
            let new = last.insert::<P>(h);
            return Ok(if new { Added::New } else { Added::Present });
        }
        if last.contains::<P>(h) {
            return Ok(Added::Present);
        }
        self.grow(max_bytes)?;
        let last = self.layers.len() - 1;
        self.layers[last].insert::<P>(h);
        Ok(Added::New)
    }

    /// An aging filter's add: retires the blocks whose time has passed, then
    /// puts the item in the newest block (opening one when the newest is full
    /// or its slot ended) unless it is there already.
    fn add_aging(&mut self, h: ItemHash, now: u64, max_bytes: u64) -> Result<Added, WardenError> {
        let Some(aging) = self.aging.as_deref() else {
            return Err(WardenError::Internal);
        };
        let live = aging.first_live(now);
        let newest = self.layers.len().wrapping_sub(1);
        let open = live == 0
            && aging.in_slot(newest, now)
            && self.layers.last().is_some_and(|l| l.items < l.capacity);
        if open {
            // The common add: nothing retires and the newest block takes it.
            // One pass sets its bits and tells whether it held the item.
            let (older, last) = self.layers.split_at_mut(newest);
            if !last[0].insert::<MultiplyShift>(h) {
                return Ok(Added::Present);
            }
            return Ok(
                match older.iter().rev().any(|l| l.contains::<MultiplyShift>(h)) {
                    true => Added::Refreshed,
                    false => Added::New,
                },
            );
        }
        let present = self.layers[live..]
            .iter()
            .rev()
            .any(|l| l.contains::<MultiplyShift>(h));
        // In the newest block, still in its slot: it lives a window from now.
        let kept = present
            && aging.in_slot(newest, now)
            && self.layers[newest].contains::<MultiplyShift>(h);
        if kept && live == 0 {
            return Ok(Added::Present);
        }
        let newest_full = self.layers.last().is_some_and(|l| l.items >= l.capacity);
        let target = match kept {
            true => None,
            false => Some(aging.target(now, newest_full)?),
        };
        let block = match target {
            Some(Target::NewBlock) => {
                let g = Self::block_geometry(self.error_rate, aging.capacity())?;
                // Reserved at creation; checked again (once the retired blocks
                // are gone) for stored filters, which bring their own sizes.
                let per_block = |count: usize| {
                    aging_bookkeeping(count) - aging_bookkeeping(0) + Self::overhead(count)
                        - Self::overhead(0)
                };
                let retired: u64 = self.layers[..live].iter().map(Layer::bytes).sum();
                let after = self.size() - retired - per_block(live);
                if after.saturating_add(g.bits / 8 + per_block(1)) > max_bytes {
                    return Err(errors::TOO_LARGE);
                }
                let capacity = aging::block_capacity(aging.capacity());
                Some(Layer::new(capacity, aging::block_rate(self.error_rate), g))
            }
            Some(Target::Newest) | None => None,
        };
        if let Some(aging) = self.aging.as_deref_mut() {
            aging.retire(live);
            if block.is_some() {
                aging.open(now);
            }
        }
        if live > 0 || block.is_some() {
            self.change_layers(|layers| {
                layers.drain(..live);
                layers.extend(block);
            });
        }
        if let Some(newest) = self.layers.last_mut().filter(|_| !kept) {
            newest.insert::<MultiplyShift>(h);
        }
        Ok(if present {
            Added::Refreshed
        } else {
            Added::New
        })
    }

    fn grow(&mut self, max_bytes: u64) -> Result<(), WardenError> {
        if self.expansion == 0 {
            return Err(errors::FULL);
        }
        if self.layers.len() >= MAX_LAYERS {
            return Err(errors::TOO_LARGE);
        }
        let last = &self.layers[self.layers.len() - 1];
        let capacity = last
            .capacity
            .checked_mul(u64::from(self.expansion))
            .filter(|c| *c <= MAX_CAPACITY)
            .ok_or(errors::TOO_LARGE)?;
        let error_rate = last.error_rate * TIGHTENING;
        if error_rate <= 0.0 {
            return Err(errors::TOO_LARGE);
        }
        let g = layer_geometry(self.hashing, capacity, error_rate)?;
        let total = self.bytes().saturating_add(g.bits / 8);
        if Self::overhead(self.layers.len() + 1).saturating_add(total) > max_bytes {
            return Err(errors::TOO_LARGE);
        }
        self.change_layers(|layers| layers.push(Layer::new(capacity, error_rate, g)));
        Ok(())
    }

    /// Bookkeeping bytes reported on top of the bit arrays of `layers` layers.
    pub fn overhead(layers: usize) -> u64 {
        (std::mem::size_of::<BloomFilter>() + layers * std::mem::size_of::<Layer>()) as u64
    }

    /// Bytes of all bit arrays.
    pub fn bytes(&self) -> u64 {
        self.layers.iter().map(Layer::bytes).sum()
    }

    /// Bytes the filter occupies: bit arrays plus bookkeeping (for an aging
    /// filter also each block's opening time).
    pub fn size(&self) -> u64 {
        self.bytes() + Self::overhead(self.layers.len()) + aging_overhead(self.aging())
    }

    /// Items the filter holds before it grows again (sum over layers); for an
    /// aging filter, the items per window its error rate holds for.
    pub fn capacity(&self) -> u64 {
        if let Some(a) = &self.aging {
            return a.capacity();
        }
        self.layers
            .iter()
            .map(|l| l.capacity)
            .fold(0, u64::saturating_add)
    }

    /// Items added as new (for an aging filter: to the blocks live at `now`,
    /// an item added again in a later block counting once per block).
    pub fn items(&self, now: u64) -> u64 {
        self.live_layers(now).iter().map(|l| l.items).sum()
    }

    /// The asked error rate.
    pub fn error_rate(&self) -> f64 {
        self.error_rate
    }

    /// Capacity multiplier per new layer; 0 for non-scaling.
    pub fn expansion(&self) -> u32 {
        self.expansion
    }

    /// The layers, oldest first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// Mutable layers, for loading stored chunks.
    pub fn layers_mut(&mut self) -> &mut [Layer] {
        &mut self.layers
    }

    /// Bytes a new layer may still take under `max_bytes`.
    pub fn layer_budget(&self, max_bytes: u64) -> u64 {
        max_bytes.saturating_sub(self.size() + Self::overhead(1) - Self::overhead(0))
    }

    /// Appends a stored layer (AOF loading) to a scaling filter, or a block
    /// opened at `opened` to an aging filter.
    pub fn push_layer(&mut self, layer: Layer, opened: Option<u64>) -> Result<(), WardenError> {
        if let (Some(a), Some(at)) = (&self.aging, opened) {
            let mut openings = a.opened().to_vec();
            openings.push(at);
            let aging = Aging::from_parts(a.window_ms(), a.capacity(), openings)?;
            self.aging = Some(Box::new(aging));
            self.change_layers(|layers| layers.push(layer));
            return Ok(());
        }
        if self.expansion == 0 || self.layers.len() >= MAX_LAYERS || opened.is_some() {
            return Err(WardenError::BadFilterData);
        }
        self.change_layers(|layers| layers.push(layer));
        Ok(())
    }

    /// Bytes a one-layer filter takes on top of its bit array.
    pub fn single_layer_overhead() -> u64 {
        Self::overhead(1)
    }
}

#[cfg(test)]
#[path = "filter_tests.rs"]
mod tests;
