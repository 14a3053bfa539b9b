//! RedisBloom's scalable Bloom filter as RedisBloom lays it out: the value
//! of its `MBbloom--` type, which the RedisBloom names (`BF.ADD`, …, under
//! `aliases redisbloom`) create and answer, so RDB files, AOF files and
//! chunk streams move between RedisBloom and warden unchanged. Written from
//! RedisBloom's definitions (its file formats and answers), not its code.
//!
//! - A chain holds links (sub-filters), oldest first; an item is present
//!   when any link has all its bits; a new item goes to the newest link,
//!   and when that holds its capacity a new link gets `growth` times its
//!   capacity at half its error rate (a non-scaling chain refuses).
//! - Hashing: with option FORCE64, a = MurmurHash64A(item, 0xc6a4a7935bd1e995),
//!   b = MurmurHash64A(item, a); without it (filters older than 2.0), the
//!   32-bit MurmurHash2 with seed 0x9747b28c, then with seed a. Probe i is
//!   bit (a + i·b) mod m in wrapping 64-bit arithmetic, where m is 2^n2 for
//!   a link sized to a power of two (n2 > 0) and its bit count otherwise.
//!   Bit x is bit x mod 8 of byte x / 8.
//! - Sizing (`Link::new`): bits per item bpe = |ln p| / ln²2; with option
//!   NOROUND bits = ⌊capacity · bpe⌋, with ENTS_IS_BITS the capacity is n2,
//!   else the next power of two (and the capacity raised to fill it); then
//!   bytes = bits rounded up to 8-byte words; hashes = ⌈ln 2 · bpe⌉.
//! - Chunks: iterator 0 answers the header (see `encode_header`) and
//!   iterator 1; from 1 on, an iterator is one plus a byte offset into the
//!   links' bit arrays laid end to end, and a chunk is up to 16 MiB of one
//!   link from there, answered with the iterator after it (0 past the end).
//!   A chunk loads at its answered iterator minus its length.

use crate::bloom::core::redisbloom::item_hashes;
use crate::common::error::WardenError;
use crate::common::murmur2::murmur2;

/// Option: a link sized exactly (not to a power of two).
pub const OPT_NOROUND: u32 = 1;
/// Option: the capacity asked is the power of two of the bits.
pub const OPT_ENTS_IS_BITS: u32 = 2;
/// Option: 64-bit hashing (every filter RedisBloom 2.x creates).
pub const OPT_FORCE64: u32 = 4;
/// Option: a non-scaling filter.
pub const OPT_NO_SCALING: u32 = 8;
/// Every option RedisBloom defines.
const KNOWN_OPTIONS: u32 = OPT_NOROUND | OPT_ENTS_IS_BITS | OPT_FORCE64 | OPT_NO_SCALING;
/// The options of every filter the RedisBloom names create.
pub const CREATE_OPTIONS: u32 = OPT_NOROUND | OPT_FORCE64;

/// ln 2 with RedisBloom's 15 digits (its hash counts come from this value).
#[allow(clippy::approx_constant)]
const LN2: f64 = 0.693147180559945;
/// ln² 2 with RedisBloom's 15 digits.
const LN2_SQUARED: f64 = 0.480453013918201;
/// Bits per item of the smallest positive error rate (2^-1074: 1549.5), the
/// most any rate gives.
const MAX_BPE: f64 = 1550.0;
/// The 32-bit legacy hash's first seed.
const SEED32: u32 = 0x9747_b28c;

/// Bytes of the header before the links.
pub const HEADER_BYTES: usize = 20;
/// Bytes of one link in the header.
pub const LINK_BYTES: usize = 53;
/// The largest chunk `BF.SCANDUMP` answers.
pub const MAX_CHUNK: usize = 16 << 20;
/// Error rate factor of each new link.
const TIGHTENING: f64 = 0.5;
/// Bytes of the chain record and of each link record, as RedisBloom counts
/// them in `MEMORY USAGE` and `BF.INFO`'s `Size`.
const CHAIN_RECORD: u64 = 32;
const LINK_RECORD: u64 = 64;

/// Why an add or a load was refused, as RedisBloom words it.
#[derive(Debug, Clone, PartialEq)]
pub enum ChainError {
    /// A non-scaling filter at its capacity.
    Full,
    /// A new link could not be made (a growth of 0, or sizes past any machine).
    CannotGrow,
    /// A new link needs the chain to take `needed` bytes in all, over the cap.
    TooLarge { needed: u64 },
    /// A chunk-stream header of a filter of `needed` bytes, over the cap.
    HeaderTooLarge { needed: u64 },
    /// The allocator could not give a loaded filter's bits.
    NoMemory,
    /// A chunk-stream header, or stored fields, that are not a filter.
    BadData,
    /// A chunk at an iterator inside no link.
    NoLink,
    /// A chunk longer than the rest of its link.
    ChunkTooBig,
}

impl ChainError {
    /// The reply: RedisBloom's text, and for a cap the setting and the size.
    pub fn to_warden(&self, setting: &str, cap: u64) -> WardenError {
        match self {
            ChainError::Full => WardenError::Refused("ERR non scaling filter is full"),
            ChainError::CannotGrow => WardenError::Refused("ERR problem inserting into filter"),
            ChainError::TooLarge { needed } => WardenError::RefusedWith(format!(
                "ERR problem inserting into filter: it would take {needed} bytes, over \
                 {setting} ({cap}); raise it with CONFIG SET warden.{setting}"
            )),
            ChainError::HeaderTooLarge { needed } => WardenError::RefusedWith(format!(
                "ERR received bad data: the filter takes {needed} bytes, over {setting} \
                 ({cap}); raise it with CONFIG SET warden.{setting} {needed}"
            )),
            ChainError::NoMemory => {
                WardenError::Refused("ERR Insufficient memory to create filter")
            }
            ChainError::BadData => WardenError::Refused("ERR received bad data"),
            ChainError::NoLink => WardenError::Refused("ERR invalid offset - no link found"),
            ChainError::ChunkTooBig => {
                WardenError::Refused("ERR invalid chunk - Too big for current filter")
            }
        }
    }
}

/// An item's two hashes (a, b): its probes are a + i·b.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainHash(u64, u64);

/// One link: a fixed bit array and what RedisBloom records about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// Items it is sized for (RedisBloom's `entries`).
    pub capacity: u64,
    /// Its error rate.
    pub error: f64,
    /// Bits per item.
    pub bpe: f64,
    /// Probes per item.
    pub hashes: u32,
    /// Log2 of its bit count when sized to a power of two, else 0.
    pub n2: u8,
    /// Items added to it (RedisBloom's `size`).
    pub items: u64,
    /// The bit array (its bit count is 8 times its length).
    pub bits: Vec<u8>,
}

/// The fields of a link but its bits: what the header and RDB carry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkFields {
    /// `Link::capacity`.
    pub capacity: u64,
    /// `Link::error`.
    pub error: f64,
    /// `Link::bpe`.
    pub bpe: f64,
    /// `Link::hashes`.
    pub hashes: u32,
    /// `Link::n2`.
    pub n2: u8,
    /// `Link::items`.
    pub items: u64,
    /// The bit count recorded (8 times the bytes in a valid link).
    pub bits: u64,
    /// The bytes of its bit array.
    pub bytes: u64,
}

/// Bits per item at rate `p`.
fn bits_per_item(p: f64) -> f64 {
    (p.ln() / LN2_SQUARED).abs()
}

/// The hash count of `bpe`, as RedisBloom's `(int)ceil(...)` gives it.
fn hashes_for(bpe: f64) -> u32 {
    (LN2 * bpe).ceil() as i32 as u32
}

impl LinkFields {
    /// The fields of a new link for `capacity` items at rate `p`, with the
    /// chain's `options`: `None` where RedisBloom's sizing fails.
    pub fn sized(capacity: u64, p: f64, options: u32) -> Option<LinkFields> {
        if capacity < 1 || p.is_nan() || p <= 0.0 || p >= 1.0 {
            return None;
        }
        let bpe = bits_per_item(p);
        let mut entries = capacity;
        let (bits, n2) = if options & OPT_ENTS_IS_BITS != 0 {
            if capacity > 63 {
                return None;
            }
            let bits = 1u64 << capacity;
            entries = (bits as f64 / bpe) as u64;
            (bits, capacity as u8)
        } else if options & OPT_NOROUND != 0 {
            let exact = capacity as f64 * bpe;
            if !exact.is_finite() || exact >= (u64::MAX / 2) as f64 {
                return None;
            }
            ((exact as u64).max(1), 0)
        } else {
            let exact = capacity as f64 * bpe;
            let exponent = exact.log2().floor();
            if !exponent.is_finite() || exponent > 62.0 {
                return None;
            }
            let n2 = exponent as u8 + 1;
            let bits = 1u64 << n2;
            let spare_bits = (bits as f64 - exact) as u64;
            entries = entries.checked_add((spare_bits as f64 / bpe) as u64)?;
            (bits, n2)
        };
        let bytes = bits.div_ceil(64) * 8;
        Some(LinkFields {
            capacity: entries,
            error: p,
            bpe,
            hashes: hashes_for(bpe),
            n2,
            items: 0,
            bits: bytes * 8,
            bytes,
        })
    }

    /// RedisBloom's check of a stored link: a rate in (0, 1), a bit count of
    /// 8 per byte and at least 2^n2, the hash count its bits per item give.
    /// Stricter where the filter would misbehave later: no NaN, n2 < 64, and
    /// bits per item some rate gives, in (0, `MAX_BPE`] (a negative value
    /// passes with 2^32 − 1 hashes, billions of probes per item; none or NaN
    /// with none, every item present).
    pub fn is_valid(&self) -> bool {
        let rate_ok = self.error > 0.0 && self.error < 1.0;
        let bpe_ok = self.bpe > 0.0 && self.bpe <= MAX_BPE;
        let n2_ok = self.n2 == 0 || (self.n2 < 64 && self.bits >= 1u64 << self.n2);
        rate_ok
            && bpe_ok
            && n2_ok
            && self.bits != 0
            && self.bytes.checked_mul(8) == Some(self.bits)
            && self.hashes == hashes_for(self.bpe)
    }
}

impl Link {
    /// A link with `fields` and its bit array `bits` (the caller checked
    /// that `fields.bytes` is its length).
    pub fn from_fields(f: LinkFields, bits: Vec<u8>) -> Link {
        Link {
            capacity: f.capacity,
            error: f.error,
            bpe: f.bpe,
            hashes: f.hashes,
            n2: f.n2,
            items: f.items,
            bits,
        }
    }

    /// The link's fields but its bits.
    pub fn fields(&self) -> LinkFields {
        let bytes = self.bits.len() as u64;
        LinkFields {
            capacity: self.capacity,
            error: self.error,
            bpe: self.bpe,
            hashes: self.hashes,
            n2: self.n2,
            items: self.items,
            bits: bytes * 8,
            bytes,
        }
    }

    /// The modulus of its probes.
    fn modulus(&self) -> u64 {
        match self.n2 {
            0 => self.bits.len() as u64 * 8,
            n2 => 1u64 << n2,
        }
    }

    /// The bit of probe `i`.
    fn probe(&self, h: ChainHash, i: u32) -> (usize, u8) {
        let x = h.0.wrapping_add(u64::from(i).wrapping_mul(h.1)) % self.modulus();
        ((x / 8) as usize, 1u8 << (x % 8))
    }

    /// Whether every probe of `h` is set.
    fn contains(&self, h: ChainHash) -> bool {
        (0..self.hashes).all(|i| {
            let (byte, mask) = self.probe(h, i);
            self.bits[byte] & mask != 0
        })
    }

    /// Sets the probes of `h`: whether one was unset.
    fn insert(&mut self, h: ChainHash) -> bool {
        let mut unset = false;
        for i in 0..self.hashes {
            let (byte, mask) = self.probe(h, i);
            unset |= self.bits[byte] & mask == 0;
            self.bits[byte] |= mask;
        }
        unset
    }
}

/// A RedisBloom scalable Bloom filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// Items added (RedisBloom's `size`: the links' items summed).
    pub items: u64,
    /// RedisBloom's options (`OPT_*`).
    pub options: u32,
    /// Capacity factor of each new link (RedisBloom's `growth`).
    pub growth: u32,
    /// The links, oldest first; never empty.
    pub links: Vec<Link>,
}

/// The parameters of a new chain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewChain {
    /// The first link's capacity.
    pub capacity: u64,
    /// The asked error rate (the first link of a scaling chain gets half).
    pub error: f64,
    /// The capacity factor of new links; unused when not scaling.
    pub growth: u32,
    /// Whether it refuses items past its capacity.
    pub nonscaling: bool,
}

impl NewChain {
    /// The options of a chain made with these parameters.
    pub fn options(&self) -> u32 {
        match self.nonscaling {
            true => CREATE_OPTIONS | OPT_NO_SCALING,
            false => CREATE_OPTIONS,
        }
    }

    /// The first link's fields: `None` where RedisBloom could not make it.
    pub fn first_link(&self) -> Option<LinkFields> {
        let rate = match self.nonscaling {
            true => self.error,
            false => self.error * TIGHTENING,
        };
        LinkFields::sized(self.capacity, rate, self.options())
    }
}

/// Bytes a chain of these links takes, as RedisBloom counts them.
fn footprint(link_bytes: impl Iterator<Item = u64>) -> u64 {
    link_bytes.fold(CHAIN_RECORD, |sum, b| {
        sum.saturating_add(LINK_RECORD).saturating_add(b)
    })
}

/// A zeroed bit array of `bytes`, or `None` where the allocator cannot
/// give it (fail closed, never abort).
fn zeroed(bytes: u64) -> Option<Vec<u8>> {
    let len = usize::try_from(bytes).ok()?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).ok()?;
    v.resize(len, 0);
    Some(v)
}

impl Chain {
    /// A new, empty chain; `max_bytes` caps its footprint.
    pub fn new(p: NewChain, max_bytes: u64) -> Result<Chain, ChainError> {
        let first = p.first_link().ok_or(ChainError::CannotGrow)?;
        let needed = footprint(std::iter::once(first.bytes));
        if needed > max_bytes {
            return Err(ChainError::TooLarge { needed });
        }
        let bits = zeroed(first.bytes).ok_or(ChainError::CannotGrow)?;
        Ok(Chain {
            items: 0,
            options: p.options(),
            growth: p.growth,
            links: vec![Link::from_fields(first, bits)],
        })
    }

    /// An item's hashes, as this chain's options hash it.
    pub fn hash(&self, item: &[u8]) -> ChainHash {
        if self.options & OPT_FORCE64 != 0 {
            let (a, b) = item_hashes(item);
            ChainHash(a, b)
        } else {
            let a = murmur2(item, SEED32);
            ChainHash(u64::from(a), u64::from(murmur2(item, a)))
        }
    }

    /// Whether any link holds `item`.
    pub fn contains(&self, item: &[u8]) -> bool {
        let h = self.hash(item);
        self.links.iter().rev().any(|l| l.contains(h))
    }

    /// Adds `item`: whether it was new. A full newest link gets a successor
    /// first, unless the chain does not scale; `max_bytes` caps the growth.
    /// An item the count cannot take (a loaded chain's items may be at the
    /// top of their range) is refused before anything changes: a wrapped
    /// count would not be its links' sum, and the chain would not load again.
    pub fn add(&mut self, item: &[u8], max_bytes: u64) -> Result<bool, ChainError> {
        let h = self.hash(item);
        if self.links.iter().rev().any(|l| l.contains(h)) {
            return Ok(false);
        }
        let items = self.items.checked_add(1).ok_or(ChainError::CannotGrow)?;
        let newest = self.links.last().ok_or(ChainError::BadData)?;
        if newest.items >= newest.capacity {
            if self.options & OPT_NO_SCALING != 0 {
                return Err(ChainError::Full);
            }
            let capacity = newest.capacity.checked_mul(u64::from(self.growth));
            let next = capacity
                .and_then(|c| LinkFields::sized(c, newest.error * TIGHTENING, self.options))
                .ok_or(ChainError::CannotGrow)?;
            let needed = self.size().saturating_add(LINK_RECORD + next.bytes);
            if needed > max_bytes {
                return Err(ChainError::TooLarge { needed });
            }
            let bits = zeroed(next.bytes).ok_or(ChainError::CannotGrow)?;
            self.links.push(Link::from_fields(next, bits));
        }
        let newest = self.links.last_mut().ok_or(ChainError::BadData)?;
        if !newest.insert(h) {
            return Ok(false);
        }
        newest.items += 1;
        self.items = items;
        Ok(true)
    }

    /// The capacities summed (`BF.INFO`'s `Capacity`).
    pub fn capacity(&self) -> u64 {
        self.links
            .iter()
            .fold(0u64, |sum, l| sum.wrapping_add(l.capacity))
    }

    /// Bytes as RedisBloom counts them (`MEMORY USAGE`, `BF.INFO`'s `Size`).
    pub fn size(&self) -> u64 {
        footprint(self.links.iter().map(|l| l.bits.len() as u64))
    }

    /// Whether the chain refuses items past its capacity.
    pub fn is_scaling(&self) -> bool {
        self.options & OPT_NO_SCALING == 0
    }

    /// Checks stored fields as RedisBloom does before trusting them: known
    /// options, at least one link, every link valid and the items summed.
    pub fn check(items: u64, options: u32, links: &[LinkFields]) -> Result<(), ChainError> {
        let sum = links
            .iter()
            .try_fold(0u64, |sum, l| sum.checked_add(l.items));
        let ok = options & !KNOWN_OPTIONS == 0
            && !links.is_empty()
            && links.iter().all(LinkFields::is_valid)
            && sum == Some(items);
        match ok {
            true => Ok(()),
            false => Err(ChainError::BadData),
        }
    }

    /// The chunk-stream header: items (u64), link count (u32), options
    /// (u32), growth (u32), then per link its bytes (u64), bits (u64),
    /// items (u64), error rate (f64), bits per item (f64), hashes (u32),
    /// capacity (u64) and n2 (u8); packed, little-endian.
    pub fn encode_header(&self) -> Vec<u8> {
        let mut h = Vec::with_capacity(HEADER_BYTES + LINK_BYTES * self.links.len());
        h.extend_from_slice(&self.items.to_le_bytes());
        h.extend_from_slice(&(self.links.len() as u32).to_le_bytes());
        h.extend_from_slice(&self.options.to_le_bytes());
        h.extend_from_slice(&self.growth.to_le_bytes());
        for l in &self.links {
            let f = l.fields();
            h.extend_from_slice(&f.bytes.to_le_bytes());
            h.extend_from_slice(&f.bits.to_le_bytes());
            h.extend_from_slice(&f.items.to_le_bytes());
            h.extend_from_slice(&f.error.to_le_bytes());
            h.extend_from_slice(&f.bpe.to_le_bytes());
            h.extend_from_slice(&f.hashes.to_le_bytes());
            h.extend_from_slice(&f.capacity.to_le_bytes());
            h.push(f.n2);
        }
        h
    }

    /// A chain of zeroed links from a chunk-stream header, checked; its
    /// footprint capped by `max_bytes`.
    pub fn from_header(h: &[u8], max_bytes: u64) -> Result<Chain, ChainError> {
        let field = |at: usize| -> [u8; 8] {
            let mut w = [0u8; 8];
            w.copy_from_slice(&h[at..at + 8]);
            w
        };
        let word =
            |at: usize| -> u32 { u32::from_le_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]) };
        if h.len() < HEADER_BYTES {
            return Err(ChainError::BadData);
        }
        let count = word(8) as usize;
        if Some(h.len()) != count.checked_mul(LINK_BYTES).map(|b| b + HEADER_BYTES) {
            return Err(ChainError::BadData);
        }
        let (items, options, growth) = (u64::from_le_bytes(field(0)), word(12), word(16));
        let fields: Vec<LinkFields> = (0..count)
            .map(|i| {
                let at = HEADER_BYTES + i * LINK_BYTES;
                LinkFields {
                    bytes: u64::from_le_bytes(field(at)),
                    bits: u64::from_le_bytes(field(at + 8)),
                    items: u64::from_le_bytes(field(at + 16)),
                    error: f64::from_le_bytes(field(at + 24)),
                    bpe: f64::from_le_bytes(field(at + 32)),
                    hashes: word(at + 40),
                    capacity: u64::from_le_bytes(field(at + 44)),
                    n2: h[at + 52],
                }
            })
            .collect();
        Chain::check(items, options, &fields)?;
        let needed = footprint(fields.iter().map(|f| f.bytes));
        if needed > max_bytes {
            return Err(ChainError::HeaderTooLarge { needed });
        }
        let mut links = Vec::with_capacity(fields.len());
        for f in fields {
            links.push(Link::from_fields(
                f,
                zeroed(f.bytes).ok_or(ChainError::NoMemory)?,
            ));
        }
        Ok(Chain {
            items,
            options,
            growth,
            links,
        })
    }

    /// The link holding byte `offset` of the links laid end to end, and the
    /// offset within it.
    fn link_at(&self, offset: u64) -> Option<(usize, usize)> {
        let mut start = 0u64;
        for (i, l) in self.links.iter().enumerate() {
            let len = l.bits.len() as u64;
            if offset < start + len {
                return Some((i, (offset - start) as usize));
            }
            start += len;
        }
        None
    }

    /// The chunk at iterator `iter` (at least 1) and the iterator after it;
    /// `None` past the end (RedisBloom answers iterator 0 and no bytes).
    pub fn chunk(&self, iter: u64) -> Option<(u64, &[u8])> {
        let (link, offset) = self.link_at(iter.checked_sub(1)?)?;
        let bits = &self.links[link].bits[offset..];
        let chunk = &bits[..bits.len().min(MAX_CHUNK)];
        Some((iter + chunk.len() as u64, chunk))
    }

    /// Writes a chunk answered with iterator `iter` into its place.
    pub fn load_chunk(&mut self, iter: i64, data: &[u8]) -> Result<(), ChainError> {
        let len = data.len() as i64;
        if iter <= 0 || iter < len {
            return Err(ChainError::BadData);
        }
        let start = (iter - len) as u64;
        let (link, offset) = start
            .checked_sub(1)
            .and_then(|o| self.link_at(o))
            .ok_or(ChainError::NoLink)?;
        let bits = &mut self.links[link].bits[offset..];
        if data.len() > bits.len() {
            return Err(ChainError::ChunkTooBig);
        }
        bits[..data.len()].copy_from_slice(data);
        Ok(())
    }

    /// `BF.DEBUG`'s lines: the items, then one line per link.
    pub fn debug_lines(&self) -> Vec<String> {
        let width = if self.options & OPT_FORCE64 != 0 {
            64
        } else {
            32
        };
        std::iter::once(format!("size:{}", self.items))
            .chain(self.links.iter().map(|l| {
                let f = l.fields();
                let bits = if f.bits != 0 { f.bits } else { 1u64 << f.n2 };
                format!(
                    "bytes:{} bits:{} hashes:{} hashwidth:{} capacity:{} size:{} ratio:{}",
                    f.bytes,
                    bits,
                    f.hashes,
                    width,
                    f.capacity,
                    f.items,
                    crate::common::printf::g(f.error)
                )
            }))
            .collect()
    }
}
