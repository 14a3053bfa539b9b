//! RedisBloom's cuckoo filter as RedisBloom 2.8 lays it out: the value of
//! its `MBbloomCF` type, which the RedisBloom names (`CF.ADD`, …, under
//! `aliases redisbloom`) create and answer, so RDB files, AOF files and
//! chunk streams move between RedisBloom and warden unchanged. Written from
//! RedisBloom's definitions (its file formats and answers), not its code.
//!
//! - A filter holds tables (sub-filters), oldest first, each of `buckets`
//!   buckets of `bucket_size` one-byte slots (0: empty). The first has the
//!   next power of two of capacity / bucket size buckets (at least 1); table
//!   `n` has the first's times `expansionⁿ`, where the expansion asked is
//!   rounded up to a power of two (0 stays 0: the filter never grows).
//! - Hashing: h = MurmurHash64A(item, seed 0); the fingerprint is
//!   h mod 255 + 1; the item's buckets in a table of `m` buckets are
//!   h1 mod m and h2 mod m, where h1 = h and h2 = alt(fp, h1), with
//!   alt(fp, i) = i XOR (fp · 0x5bd1e995). Slot index = bucket · bucket size,
//!   kept to 32 bits as RedisBloom keeps it.
//! - Insert: the first empty slot of the item's first, then second bucket,
//!   in the newest table first, then the older ones. With none, a walk in
//!   the newest table from the first bucket: swap the carried fingerprint
//!   with slot `v` (from 0, then +1 mod bucket size each step), go to the
//!   evicted fingerprint's other bucket and take its first empty slot;
//!   after `max_iterations` steps without one the walk is undone step by
//!   step and the filter grows a table (not with expansion 0), where the
//!   insert starts over.
//! - Delete: the first matching slot of the first, then second bucket, in
//!   the newest table first; past one table, when deletes exceed a tenth of
//!   the items, a compaction that stops at the first table it cannot empty.
//! - Compaction: from the newest table down to the second, every
//!   fingerprint moves to the first free slot of its two buckets (computed
//!   from its bucket in its own table) in the oldest table that has one; a
//!   newest table left empty is dropped; the delete count is reset.
//! - Chunks: iterator 0 answers the 38-byte header (see `encode_header`);
//!   from 1 on, an iterator is one plus a byte offset into the tables laid
//!   end to end. A table of up to 16 MiB is answered whole from any offset
//!   inside it (the next iterator is the asked one plus its size); a larger
//!   one from that offset, up to 16 MiB. A chunk loads at its iterator minus
//!   its length minus one, into the table holding that offset, or (past the
//!   end) into the newest table at what is left of the offset.

use crate::common::murmur2::murmur64a;

/// Bytes of the chunk-stream header.
pub const HEADER_BYTES: usize = 38;
/// The largest chunk `CF.SCANDUMP` answers.
pub const MAX_CHUNK: u64 = 16 << 20;
/// Most buckets of a table (RedisBloom keeps the count in 56 bits).
pub const MAX_BUCKETS: u64 = 0x00FF_FFFF_FFFF_FFFF;
/// Most slots per bucket.
pub const MAX_BUCKET_SIZE: u16 = 255;
/// Most tables (RedisBloom keeps the count in 16 bits).
pub const MAX_TABLES: usize = u16::MAX as usize;
/// Tables from which RedisBloom refuses adds (its `CF_MAX_EXPANSIONS`).
pub const MAX_EXPANSIONS: usize = 32;
/// Largest expansion asked (`EXPANSION`).
pub const MAX_EXPANSION: i64 = 32_768;
/// RedisBloom's default kicks per insert.
pub const DEFAULT_MAX_ITERATIONS: u16 = 20;
/// The multiplier of the alternate bucket.
const ALT: u64 = 0x5bd1_e995;
/// Bytes of the filter record and of each table record, as RedisBloom
/// counts them in `MEMORY USAGE` and `CF.INFO`'s `Size`.
const FILTER_RECORD: u64 = 40;
const TABLE_RECORD: u64 = 16;

/// Why a filter could not be made or loaded, or a table added.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RbError {
    /// The filter would take `needed` bytes in all, over the caller's cap.
    TooLarge {
        /// Bytes of the whole filter.
        needed: u64,
    },
    /// Sizes past what RedisBloom keeps (bucket counts, table counts).
    Impossible,
    /// A header or stored fields that are not a filter.
    BadData,
}

/// An insert's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Insert {
    /// Stored.
    Added,
    /// Present already (an NX insert).
    Exists,
    /// No room, and the filter does not grow (expansion 0).
    NoSpace,
    /// No room, and no table could be added (changes nothing).
    CannotGrow(RbError),
}

/// One table: its bucket count and its slots.
#[derive(Debug, Clone, PartialEq)]
pub struct RbTable {
    /// Buckets (a power of two).
    pub buckets: u64,
    /// `buckets × bucket_size` one-byte slots.
    pub slots: Vec<u8>,
}

/// An item's fingerprint and its two bucket hashes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lookup {
    fp: u8,
    h1: u64,
    h2: u64,
}

/// The other bucket hash of fingerprint `fp` in bucket hash `i`.
fn alt(fp: u8, i: u64) -> u64 {
    i ^ (u64::from(fp) * ALT)
}

impl Lookup {
    /// The fingerprint and bucket hashes of `item`.
    pub fn of(item: &[u8]) -> Lookup {
        let h = murmur64a(item, 0);
        let fp = (h % 255 + 1) as u8;
        Lookup {
            fp,
            h1: h,
            h2: alt(fp, h),
        }
    }
}

/// The parameters of a new filter, as asked (checked by the caller).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewRb {
    /// Items it is sized for.
    pub capacity: u64,
    /// Slots per bucket (1 to 255).
    pub bucket_size: u16,
    /// Kicks per insert (1 to 65535).
    pub max_iterations: u16,
    /// Growth factor asked (0 to 32768; rounded up to a power of two).
    pub expansion: u16,
}

/// The next power of two of `n` as RedisBloom rounds it: 0 for 0 and for
/// values past 2⁶³ (its arithmetic wraps there).
fn next_power_of_two(n: u64) -> u64 {
    match n {
        0 => 0,
        n => n.checked_next_power_of_two().unwrap_or(0),
    }
}

/// The bytes of a filter of these table sizes, as RedisBloom counts them.
fn footprint(table_bytes: impl Iterator<Item = u64>) -> u64 {
    table_bytes.fold(FILTER_RECORD, |sum, b| {
        sum.saturating_add(TABLE_RECORD).saturating_add(b)
    })
}

/// The first free slot of the bucket at `at` of `slots`, if any.
fn free_slot(slots: &[u8], at: usize, bucket_size: usize) -> Option<usize> {
    (at..at + bucket_size).find(|&i| slots[i] == 0)
}

impl RbTable {
    /// The slot index of bucket hash `h` (RedisBloom keeps it to 32 bits).
    fn index(&self, h: u64, bucket_size: u16) -> usize {
        (h % self.buckets).wrapping_mul(u64::from(bucket_size)) as u32 as usize
    }

    /// The first free slot of either bucket of `l`.
    fn free(&self, l: &Lookup, bucket_size: u16) -> Option<usize> {
        let bs = usize::from(bucket_size);
        free_slot(&self.slots, self.index(l.h1, bucket_size), bs)
            .or_else(|| free_slot(&self.slots, self.index(l.h2, bucket_size), bs))
    }

    /// The first slot of either bucket of `l` holding its fingerprint.
    fn find(&self, l: &Lookup, bucket_size: u16) -> Option<usize> {
        let bs = usize::from(bucket_size);
        let holds = |at: usize| (at..at + bs).find(|&i| self.slots[i] == l.fp);
        holds(self.index(l.h1, bucket_size)).or_else(|| holds(self.index(l.h2, bucket_size)))
    }

    /// Copies of `l`'s fingerprint in its buckets (a bucket that is both
    /// counts twice, as RedisBloom counts it).
    fn count(&self, l: &Lookup, bucket_size: u16) -> u64 {
        let bs = usize::from(bucket_size);
        let in_bucket = |at: usize| {
            self.slots[at..at + bs]
                .iter()
                .filter(|&&s| s == l.fp)
                .count()
        };
        (in_bucket(self.index(l.h1, bucket_size)) + in_bucket(self.index(l.h2, bucket_size))) as u64
    }
}

/// A RedisBloom cuckoo filter.
#[derive(Debug, Clone, PartialEq)]
pub struct RbFilter {
    /// Buckets of the first table (the base of every table's size).
    pub buckets: u64,
    /// Items stored (RedisBloom's `numItems`; wraps below 0 as its does).
    pub items: u64,
    /// Deletes since creation or the last compaction.
    pub deletes: u64,
    /// Slots per bucket.
    pub bucket_size: u16,
    /// Kicks per insert.
    pub max_iterations: u16,
    /// Growth factor of each new table (a power of two, or 0).
    pub expansion: u16,
    /// The tables, oldest first; never empty.
    pub tables: Vec<RbTable>,
}

/// The stored fields of a filter but its slots: what RDB and the header
/// carry, to be checked before anything is allocated.
#[derive(Debug, Clone, PartialEq)]
pub struct RbFields {
    /// `RbFilter::buckets`.
    pub buckets: u64,
    /// `RbFilter::items`.
    pub items: u64,
    /// `RbFilter::deletes`.
    pub deletes: u64,
    /// `RbFilter::bucket_size`.
    pub bucket_size: u64,
    /// `RbFilter::max_iterations`.
    pub max_iterations: u64,
    /// `RbFilter::expansion`.
    pub expansion: u64,
    /// Tables.
    pub tables: u64,
}

impl RbFields {
    /// The filter's parameters, checked as RedisBloom checks a header and
    /// stricter where it would misbehave later: bucket size 1 to 255,
    /// buckets a power of two up to 2⁵⁶ − 1, 1 to 65535 tables, 1 to 65535
    /// kicks, an expansion of 0 (one table only) or a power of two up to
    /// 32768, each table's buckets within 2⁵⁶ − 1. Returns each table's
    /// bucket count.
    pub fn table_buckets(&self) -> Result<Vec<u64>, RbError> {
        let ok = (1..=u64::from(MAX_BUCKET_SIZE)).contains(&self.bucket_size)
            && self.buckets.is_power_of_two()
            && self.buckets <= MAX_BUCKETS
            && (1..=MAX_TABLES as u64).contains(&self.tables)
            && (1..=u64::from(u16::MAX)).contains(&self.max_iterations)
            && (self.expansion == 0 && self.tables == 1
                || self.expansion.is_power_of_two() && self.expansion <= MAX_EXPANSION as u64);
        if !ok {
            return Err(RbError::BadData);
        }
        let mut out = Vec::with_capacity(self.tables as usize);
        let mut buckets = self.buckets;
        for n in 0..self.tables {
            if n > 0 {
                buckets = buckets
                    .checked_mul(self.expansion)
                    .filter(|&b| b <= MAX_BUCKETS)
                    .ok_or(RbError::BadData)?;
            }
            out.push(buckets);
        }
        Ok(out)
    }
}

impl RbFilter {
    /// A new, empty filter of one table; `max_bytes` caps its footprint.
    pub fn new(p: NewRb, max_bytes: u64) -> Result<RbFilter, RbError> {
        let buckets = next_power_of_two(p.capacity / u64::from(p.bucket_size)).max(1);
        let mut f = RbFilter {
            buckets,
            items: 0,
            deletes: 0,
            bucket_size: p.bucket_size,
            max_iterations: p.max_iterations,
            expansion: next_power_of_two(u64::from(p.expansion)) as u16,
            tables: Vec::new(),
        };
        f.grow(max_bytes)?;
        Ok(f)
    }

    /// The fields of this filter but its slots.
    pub fn fields(&self) -> RbFields {
        RbFields {
            buckets: self.buckets,
            items: self.items,
            deletes: self.deletes,
            bucket_size: u64::from(self.bucket_size),
            max_iterations: u64::from(self.max_iterations),
            expansion: u64::from(self.expansion),
            tables: self.tables.len() as u64,
        }
    }

    /// A filter of checked `fields` (`RbFields::table_buckets`) and their
    /// tables' slots (the caller checked each length).
    pub fn from_parts(f: &RbFields, tables: Vec<RbTable>) -> RbFilter {
        RbFilter {
            buckets: f.buckets,
            items: f.items,
            deletes: f.deletes,
            bucket_size: f.bucket_size as u16,
            max_iterations: f.max_iterations as u16,
            expansion: f.expansion as u16,
            tables,
        }
    }

    /// Adds the next table (`buckets × expansionⁿ` buckets, zeroed).
    fn grow(&mut self, max_bytes: u64) -> Result<(), RbError> {
        let n = u32::try_from(self.tables.len()).map_err(|_| RbError::Impossible)?;
        if self.tables.len() >= MAX_TABLES {
            return Err(RbError::Impossible);
        }
        let buckets = u64::from(self.expansion)
            .checked_pow(n)
            .and_then(|g| self.buckets.checked_mul(g))
            .filter(|&b| b != 0 && b <= MAX_BUCKETS)
            .ok_or(RbError::Impossible)?;
        let bytes = buckets
            .checked_mul(u64::from(self.bucket_size))
            .ok_or(RbError::Impossible)?;
        let needed = self
            .size()
            .saturating_add(TABLE_RECORD)
            .saturating_add(bytes);
        if needed > max_bytes {
            return Err(RbError::TooLarge { needed });
        }
        let len = usize::try_from(bytes).map_err(|_| RbError::Impossible)?;
        self.tables.push(RbTable {
            buckets,
            slots: vec![0; len],
        });
        Ok(())
    }

    /// Whether any table holds `item`'s fingerprint in its buckets.
    pub fn contains(&self, item: &[u8]) -> bool {
        let l = Lookup::of(item);
        self.tables
            .iter()
            .any(|t| t.find(&l, self.bucket_size).is_some())
    }

    /// Copies of `item`'s fingerprint in its buckets, over every table.
    pub fn count(&self, item: &[u8]) -> u64 {
        let l = Lookup::of(item);
        self.tables
            .iter()
            .map(|t| t.count(&l, self.bucket_size))
            .sum()
    }

    /// Inserts `item` (only when absent if `unique`); `max_bytes` caps the
    /// growth. A refused insert changes nothing.
    pub fn insert(&mut self, item: &[u8], unique: bool, max_bytes: u64) -> Insert {
        let l = Lookup::of(item);
        if unique
            && self
                .tables
                .iter()
                .any(|t| t.find(&l, self.bucket_size).is_some())
        {
            return Insert::Exists;
        }
        loop {
            let bs = self.bucket_size;
            if let Some(t) = self.tables.iter_mut().rev().find_map(|t| {
                let at = t.free(&l, bs)?;
                Some((t, at))
            }) {
                t.0.slots[t.1] = l.fp;
                self.items = self.items.wrapping_add(1);
                return Insert::Added;
            }
            if self.walk(&l) {
                self.items = self.items.wrapping_add(1);
                return Insert::Added;
            }
            if self.expansion == 0 {
                return Insert::NoSpace;
            }
            if let Err(e) = self.grow(max_bytes) {
                return Insert::CannotGrow(e);
            }
        }
    }

    /// The walk in the newest table: whether it placed `l`'s fingerprint
    /// (else every swap is undone).
    fn walk(&mut self, l: &Lookup) -> bool {
        let bs = u64::from(self.bucket_size);
        let Some(t) = self.tables.last_mut() else {
            return false;
        };
        let m = t.buckets;
        let mut fp = l.fp;
        let mut victim = 0u64;
        let mut i = l.h1 % m;
        for _ in 0..self.max_iterations {
            std::mem::swap(&mut t.slots[(i * bs + victim) as usize], &mut fp);
            i = alt(fp, i) % m;
            if let Some(at) = free_slot(&t.slots, (i * bs) as usize, bs as usize) {
                t.slots[at] = fp;
                return true;
            }
            victim = (victim + 1) % bs;
        }
        for _ in 0..self.max_iterations {
            victim = (victim + bs - 1) % bs;
            i = alt(fp, i) % m;
            std::mem::swap(&mut t.slots[(i * bs + victim) as usize], &mut fp);
        }
        false
    }

    /// Deletes one copy of `item`'s fingerprint: whether one was there.
    /// Past one table, deletes above a tenth of the items compact the filter
    /// (stopping at the first table that cannot be emptied).
    pub fn delete(&mut self, item: &[u8]) -> bool {
        let l = Lookup::of(item);
        let bs = self.bucket_size;
        let Some((t, at)) = self.tables.iter_mut().rev().find_map(|t| {
            let at = t.find(&l, bs)?;
            Some((t, at))
        }) else {
            return false;
        };
        t.slots[at] = 0;
        self.items = self.items.wrapping_sub(1);
        self.deletes = self.deletes.wrapping_add(1);
        if self.tables.len() > 1 && self.deletes as f64 > self.items as f64 * 0.10 {
            self.compact(false);
        }
        true
    }

    /// Moves fingerprints from the newest tables down to older ones and
    /// drops a newest table left empty; with `go_on` false, stops at the
    /// first table it cannot empty. Resets the delete count. Returns
    /// whether the filter changed.
    pub fn compact(&mut self, go_on: bool) -> bool {
        let mut changed = self.deletes != 0;
        let bs = usize::from(self.bucket_size);
        for index in (1..self.tables.len()).rev() {
            let (older, rest) = self.tables.split_at_mut(index);
            let table = &mut rest[0];
            let mut emptied = true;
            for bucket in 0..table.buckets {
                for slot in 0..bs {
                    let at = bucket as usize * bs + slot;
                    let fp = table.slots[at];
                    if fp == 0 {
                        continue;
                    }
                    let l = Lookup {
                        fp,
                        h1: bucket,
                        h2: alt(fp, bucket),
                    };
                    let home = older
                        .iter_mut()
                        .find_map(|t| t.free(&l, self.bucket_size).map(|i| (t, i)));
                    match home {
                        Some((t, i)) => {
                            t.slots[i] = fp;
                            table.slots[at] = 0;
                            changed = true;
                        }
                        None => emptied = false,
                    }
                }
            }
            if emptied && index == self.tables.len() - 1 {
                self.tables.pop();
                changed = true;
            }
            if !emptied && !go_on {
                break;
            }
        }
        self.deletes = 0;
        changed
    }

    /// Bytes as RedisBloom counts them (`MEMORY USAGE`, `CF.INFO`'s `Size`).
    pub fn size(&self) -> u64 {
        footprint(self.tables.iter().map(|t| t.slots.len() as u64))
    }

    /// The chunk-stream header: items, buckets, deletes and tables (u64),
    /// bucket size, kicks and expansion (u16); packed, little-endian.
    pub fn encode_header(&self) -> [u8; HEADER_BYTES] {
        let mut h = [0u8; HEADER_BYTES];
        let words = [
            self.items,
            self.buckets,
            self.deletes,
            self.tables.len() as u64,
        ];
        for (i, w) in words.iter().enumerate() {
            h[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
        }
        for (i, v) in [self.bucket_size, self.max_iterations, self.expansion]
            .iter()
            .enumerate()
        {
            h[32 + i * 2..34 + i * 2].copy_from_slice(&v.to_le_bytes());
        }
        h
    }

    /// The fields of a chunk-stream header (the caller checked its length);
    /// the table count is kept to 16 bits, as RedisBloom keeps it.
    pub fn header_fields(h: &[u8; HEADER_BYTES]) -> RbFields {
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&h[i * 8..i * 8 + 8]);
            u64::from_le_bytes(w)
        };
        let half = |i: usize| u64::from(u16::from_le_bytes([h[32 + i * 2], h[33 + i * 2]]));
        RbFields {
            items: word(0),
            buckets: word(1),
            deletes: word(2),
            tables: u64::from(word(3) as u16),
            bucket_size: half(0),
            max_iterations: half(1),
            expansion: half(2),
        }
    }

    /// A filter of zeroed tables from a chunk-stream header, checked; its
    /// footprint capped by `max_bytes`.
    pub fn from_header(h: &[u8; HEADER_BYTES], max_bytes: u64) -> Result<RbFilter, RbError> {
        let fields = RbFilter::header_fields(h);
        let buckets = fields.table_buckets()?;
        let bytes: Vec<u64> = buckets
            .iter()
            .map(|b| b.checked_mul(fields.bucket_size).ok_or(RbError::BadData))
            .collect::<Result<_, _>>()?;
        let needed = footprint(bytes.iter().copied());
        if needed > max_bytes {
            return Err(RbError::TooLarge { needed });
        }
        let mut tables = Vec::with_capacity(buckets.len());
        for (buckets, bytes) in buckets.into_iter().zip(bytes) {
            let len = usize::try_from(bytes).map_err(|_| RbError::Impossible)?;
            tables.push(RbTable {
                buckets,
                slots: vec![0; len],
            });
        }
        Ok(RbFilter::from_parts(&fields, tables))
    }

    /// The table holding byte `offset` of the tables laid end to end and the
    /// offset in it; past the end, the newest table and what is left of the
    /// offset (RedisBloom's reading when loading).
    fn table_at(&self, mut offset: u64) -> (usize, u64, bool) {
        for (i, t) in self.tables.iter().enumerate() {
            let size = t.slots.len() as u64;
            if offset < size {
                return (i, offset, true);
            }
            offset -= size;
        }
        (self.tables.len().saturating_sub(1), offset, false)
    }

    /// The chunk at iterator `iter` (at least 1) and the iterator after it;
    /// `None` past the end.
    pub fn chunk(&self, iter: u64) -> Option<(u64, &[u8])> {
        let (i, offset, inside) = self.table_at(iter.checked_sub(1)?);
        if !inside {
            return None;
        }
        let slots = &self.tables[i].slots;
        let size = slots.len() as u64;
        if size <= MAX_CHUNK {
            return Some((iter + size, slots));
        }
        let len = (size - offset).min(MAX_CHUNK);
        Some((iter + len, &slots[offset as usize..(offset + len) as usize]))
    }

    /// Writes a chunk answered with iterator `iter` where RedisBloom writes
    /// it: whether it fitted (else nothing is written).
    pub fn load_chunk(&mut self, iter: i64, data: &[u8]) -> bool {
        let len = data.len() as u64;
        if data.is_empty() || iter <= 0 || ((iter - 1) as u64) < len {
            return false;
        }
        let (i, offset, _) = self.table_at(iter as u64 - 1 - len);
        let Some(t) = self.tables.get_mut(i) else {
            return false;
        };
        match offset.checked_add(len) {
            Some(end) if end <= t.slots.len() as u64 => {
                t.slots[offset as usize..end as usize].copy_from_slice(data);
                true
            }
            _ => false,
        }
    }

    /// `CF.DEBUG`'s line.
    pub fn debug_line(&self) -> String {
        format!(
            "bktsize:{} buckets:{} items:{} deletes:{} filters:{} max_iterations:{} expansion:{}",
            self.bucket_size,
            self.buckets,
            self.items,
            self.deletes,
            self.tables.len(),
            self.max_iterations,
            self.expansion
        )
    }
}
