//! Cache entries with fresh and stale periods, versions, hot-key extension
//! and refresh leases (one refresh per miss). Times are Unix milliseconds
//! passed in by the caller; lease tokens come from the fencing clock.
//!
//! An entry may hold no value: a lease taken on a missing key is kept in an
//! entry of its own until the refresher's SET lands or the lease ends. Who
//! among a key's waiters gets the value or the lease: `handover`.

use crate::common::error::WardenError;
use crate::common::fence_clock::{FenceClock, MAX_TOKEN};
use crate::common::parse::{IntArg, MAX_DURATION_MS};
use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;

use crate::common::relocate::Mover;

#[path = "core_handover.rs"]
pub mod handover;

/// `ttl_ms` of CACHE.SET: how long the value is fresh.
pub const TTL_MS: IntArg = IntArg {
    name: "ttl",
    min: 1,
    max: MAX_DURATION_MS,
    duration: true,
};

/// `STALE stale_ms` of CACHE.SET: how long the value is served stale after.
pub const STALE_MS: IntArg = IntArg {
    name: "stale",
    min: 0,
    max: MAX_DURATION_MS,
    duration: true,
};

/// `VERSION v` of CACHE.SET and `MINVERSION v` of CACHE.GET.
pub const VERSION: IntArg = IntArg {
    name: "version",
    min: 0,
    max: i64::MAX,
    duration: false,
};

/// `LEASE token` of CACHE.SET.
pub const LEASE_TOKEN: IntArg = IntArg {
    name: "lease",
    min: 1,
    max: MAX_TOKEN,
    duration: false,
};

/// `LEASE lease_ms` of CACHE.GET.
pub const LEASE_MS: IntArg = IntArg {
    name: "lease",
    min: 1,
    max: MAX_DURATION_MS,
    duration: true,
};

/// `WAIT timeout_ms` of CACHE.GET (0 waits forever).
pub const WAIT_TIMEOUT_MS: IntArg = IntArg {
    name: "timeout",
    min: 0,
    max: MAX_DURATION_MS,
    duration: true,
};

/// `HOT reads …` of CACHE.GET.
pub const HOT_READS: IntArg = IntArg {
    name: "reads",
    min: 1,
    max: u32::MAX as i64,
    duration: false,
};

/// `HOT … window_ms …` of CACHE.GET.
pub const HOT_WINDOW_MS: IntArg = IntArg {
    name: "window",
    min: 1,
    max: MAX_DURATION_MS,
    duration: true,
};

/// `HOT … EXTEND ttl_ms` of CACHE.GET.
pub const HOT_EXTEND_MS: IntArg = IntArg {
    name: "extend",
    min: 1,
    max: MAX_DURATION_MS,
    duration: true,
};

/// A refresh lease: its token and when it ends (absolute ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// Token the refresher passes to `CACHE.SET … LEASE`.
    pub token: i64,
    /// The lease is over from this moment on.
    pub until_ms: i64,
}

/// Bytes in front of the value in an entry's block: its length.
const LEN_BYTES: usize = 4;

/// `CacheEntry::flags`: the entry holds a value.
const HAS_VALUE: u32 = 1;
/// `CacheEntry::flags`: the block stores a version (8 bytes).
const HAS_VERSION: u32 = 2;
/// `CacheEntry::flags`: the block stores a stale end (8 bytes).
const HAS_STALE: u32 = 4;
/// `CacheEntry::flags`: the block stores a lease token and end (16 bytes).
const HAS_LEASE: u32 = 8;
/// The flags of the extras.
const EXTRAS: u32 = HAS_VERSION | HAS_STALE | HAS_LEASE;

/// What most entries lack (a version, a stale period, a lease). Stored
/// after the value, each field only when it differs from its default (0, the
/// fresh end, no lease), in that order, little-endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Extra {
    version: i64,
    stale_until: i64,
    /// The lease token, 0 without a lease (tokens are positive).
    lease_token: i64,
    lease_until: i64,
}

impl Extra {
    /// The flags of the fields an entry fresh until `fresh_until` stores.
    fn kinds(&self, fresh_until: i64) -> u32 {
        (if self.version != 0 { HAS_VERSION } else { 0 })
            | (if self.stale_until != fresh_until {
                HAS_STALE
            } else {
                0
            })
            | (if self.lease_token != 0 { HAS_LEASE } else { 0 })
    }

    /// The stored fields of `kinds`, in order.
    fn stored(&self, kinds: u32) -> impl Iterator<Item = i64> {
        [
            (HAS_VERSION, self.version),
            (HAS_STALE, self.stale_until),
            (HAS_LEASE, self.lease_token),
            (HAS_LEASE, self.lease_until),
        ]
        .into_iter()
        .filter(move |(kind, _)| kinds & kind != 0)
        .map(|(_, field)| field)
    }

    /// Reads the fields of `kinds` from `bytes` (as `stored` wrote them);
    /// the others take their defaults.
    fn read(bytes: &[u8], kinds: u32, fresh_until: i64) -> Extra {
        let mut fields = bytes.chunks_exact(8).map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            i64::from_le_bytes(b)
        });
        let mut next = |kind: u32, default: i64| {
            if kinds & kind != 0 {
                fields.next().unwrap_or(default)
            } else {
                default
            }
        };
        Extra {
            version: next(HAS_VERSION, 0),
            stale_until: next(HAS_STALE, fresh_until),
            lease_token: next(HAS_LEASE, 0),
            lease_until: next(HAS_LEASE, 0),
        }
    }
}

/// Bytes of the extras of `kinds`.
fn extra_bytes(kinds: u32) -> usize {
    8 * (kinds & (HAS_VERSION | HAS_STALE)).count_ones() as usize
        + if kinds & HAS_LEASE != 0 { 16 } else { 0 }
}

/// The layout of a block holding `len` value bytes and the extras of `kinds`.
fn block_layout(len: usize, kinds: u32) -> Layout {
    let size = LEN_BYTES + len + extra_bytes(kinds);
    Layout::from_size_align(size, 1).unwrap_or_else(|_| handle_alloc_error(Layout::new::<u64>()))
}

/// A new block: the length of `value`, `value`, then the fields of `extra`
/// that `kinds` names. `value` is at most `u32::MAX` bytes (longer input is
/// cut, which no caller passes: values are capped far below).
#[inline]
fn new_block(value: &[u8], extra: Option<&Extra>, kinds: u32) -> NonNull<u8> {
    let value = &value[..value.len().min(u32::MAX as usize)];
    let layout = block_layout(value.len(), kinds);
    // SAFETY: the layout's size is at least LEN_BYTES (non-zero).
    let raw = unsafe { alloc(layout) };
    let Some(block) = NonNull::new(raw) else {
        handle_alloc_error(layout)
    };
    // SAFETY: the block holds LEN_BYTES + len (+ the extras) bytes; a
    // fresh allocation overlaps no source.
    unsafe {
        let p = block.as_ptr();
        p.cast::<[u8; LEN_BYTES]>()
            .write_unaligned((value.len() as u32).to_le_bytes());
        p.add(LEN_BYTES)
            .copy_from_nonoverlapping(value.as_ptr(), value.len());
    }
    if let Some(extra) = extra.filter(|_| kinds != 0) {
        // SAFETY: as above: the block ends with room for these extras.
        unsafe { write_extra(block, value.len(), kinds, extra) };
    }
    block
}

/// Writes the fields of `extra` that `kinds` names after the `len` value
/// bytes of `block` (out of line: most entries have none, and the common
/// path stays short).
///
/// # Safety
/// `block` holds LEN_BYTES + `len` + `extra_bytes(kinds)` bytes, and nothing
/// else references it.
#[inline(never)]
unsafe fn write_extra(block: NonNull<u8>, len: usize, kinds: u32, extra: &Extra) {
    for (i, field) in extra.stored(kinds).enumerate() {
        // SAFETY: per this function's contract, field `i` of the extras
        // lies within the block.
        unsafe {
            block
                .as_ptr()
                .add(LEN_BYTES + len + 8 * i)
                .cast::<[u8; 8]>()
                .write_unaligned(field.to_le_bytes())
        }
    }
}

/// One cached value and what decides how it is served: a struct of 32
/// bytes (one size class) and one heap block holding the value's length
/// and bytes (length + 4 bytes: the size class of a Redis string's buffer
/// for the same value), then, only when the entry has one of them, its
/// version, stale end and lease. So a plain entry costs 48 bytes more than
/// the same value as a string (the module-value cell and this struct).
pub struct CacheEntry {
    /// The block: value length, value, the extras its flags name.
    block: NonNull<u8>,
    /// Fresh until this moment (absolute ms).
    fresh_until: i64,
    /// End of the current HOT window (master only, not replicated).
    window_until: i64,
    /// Reads counted in the current HOT window (master only, not replicated).
    reads: u32,
    /// `HAS_VALUE` and the extras stored (`EXTRAS`).
    flags: u32,
}

// SAFETY: an entry owns its block alone (like a `Box<[u8]>`); shared
// references only read it.
unsafe impl Send for CacheEntry {}
// SAFETY: as above.
unsafe impl Sync for CacheEntry {}

/// The replicated state of an entry except its value: version, fresh and
/// stale ends, lease token and end (0, 0 for none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    /// As `CacheEntry::version`.
    pub version: i64,
    /// As `CacheEntry::fresh_until`.
    pub fresh_until: i64,
    /// As `CacheEntry::stale_until`.
    pub stale_until: i64,
    /// The lease, if any.
    pub lease: Option<Lease>,
}

/// What `CACHE.SET` asks for, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetRequest {
    /// Fresh period.
    pub ttl_ms: i64,
    /// Stale period after it.
    pub stale_ms: i64,
    /// Version of the data.
    pub version: i64,
    /// The lease this SET refreshes under, if any.
    pub lease: Option<i64>,
}

/// `HOT reads window_ms EXTEND ttl_ms` of CACHE.GET.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hot {
    /// Reads in a window that make the key hot.
    pub reads: u32,
    /// Window length.
    pub window_ms: i64,
    /// A hot key stays fresh at least this long from the read.
    pub extend_ms: i64,
}

/// How a `CACHE.GET` is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// A fresh value of at least the version asked for.
    Fresh,
    /// Nothing fresh; a lease is live (another caller refreshes).
    Refreshing,
    /// Nothing fresh and no live lease: a LEASE caller gets one.
    Vacant,
}

impl Lease {
    /// Whether the lease still runs at `now_ms`.
    pub fn is_live(&self, now_ms: i64) -> bool {
        now_ms < self.until_ms
    }
}

/// The end of a period of `ms` starting at `now_ms`, checked.
fn after(now_ms: i64, ms: i64, arg: &'static str) -> Result<i64, WardenError> {
    // Not `ok_or`: that builds (and drops) the error on every call.
    match now_ms.checked_add(ms) {
        Some(end) => Ok(end),
        None => Err(WardenError::OutOfRange(arg)),
    }
}

impl CacheEntry {
    /// An entry holding `value` (or only a lease, `None`) in the state
    /// `meta`; the HOT read count of `previous` carries over.
    #[inline]
    pub fn new(value: Option<&[u8]>, meta: &Meta, previous: Option<&CacheEntry>) -> CacheEntry {
        let extra = Extra::of(meta);
        let kinds = extra.map_or(0, |x| x.kinds(meta.fresh_until));
        CacheEntry {
            block: new_block(value.unwrap_or(b""), extra.as_ref(), kinds),
            fresh_until: meta.fresh_until,
            window_until: previous.map_or(0, |p| p.window_until),
            reads: previous.map_or(0, |p| p.reads),
            flags: if value.is_some() { HAS_VALUE } else { 0 } | kinds,
        }
    }

    /// The value's length.
    #[inline]
    fn len(&self) -> usize {
        // SAFETY: the block starts with the length, written by `new_block`.
        let bytes = unsafe {
            self.block
                .as_ptr()
                .cast::<[u8; LEN_BYTES]>()
                .read_unaligned()
        };
        u32::from_le_bytes(bytes) as usize
    }

    /// The value's bytes (empty without a value).
    #[inline]
    fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes follow the length, written by `new_block`, and
        // live as long as `self`.
        unsafe { std::slice::from_raw_parts(self.block.as_ptr().add(LEN_BYTES), self.len()) }
    }

    /// The extras, when the block has them.
    #[inline]
    fn extra(&self) -> Option<Extra> {
        let kinds = self.flags & EXTRAS;
        if kinds == 0 {
            return None;
        }
        // SAFETY: the block ends with the extras its flags name, after the
        // value, written by `new_block` or `write_extra`.
        let bytes = unsafe {
            std::slice::from_raw_parts(
                self.block.as_ptr().add(LEN_BYTES + self.len()),
                extra_bytes(kinds),
            )
        };
        Some(Extra::read(bytes, kinds, self.fresh_until))
    }

    /// The block's layout.
    fn layout(&self) -> Layout {
        block_layout(self.len(), self.flags & EXTRAS)
    }

    /// Stores `extra` (or none; its stale end read against the current
    /// fresh end): in place when the block stores the same fields, else in a
    /// new block with the value copied.
    fn set_extra(&mut self, extra: Option<Extra>) {
        let kinds = extra.map_or(0, |x| x.kinds(self.fresh_until));
        match extra {
            _ if kinds == self.flags & EXTRAS => {
                if let Some(extra) = extra.filter(|_| kinds != 0) {
                    // SAFETY: the block has room for exactly these extras
                    // after the value; `&mut self` owns it alone.
                    unsafe { write_extra(self.block, self.len(), kinds, &extra) }
                }
            }
            extra => {
                let old_layout = self.layout();
                let block = new_block(self.bytes(), extra.as_ref(), kinds);
                let old = std::mem::replace(&mut self.block, block);
                // SAFETY: `old` was this entry's block, allocated with
                // `old_layout` and referenced nowhere else; freed once.
                unsafe { dealloc(old.as_ptr(), old_layout) };
                self.flags = (self.flags & !EXTRAS) | kinds;
            }
        }
    }

    /// Offers the entry's block to `m` (active defragmentation).
    pub fn relocate(&mut self, m: &mut dyn Mover) {
        if let Some(new) = m.relocate(self.block, self.layout()) {
            // `Mover` guarantees the block's bytes were copied there.
            self.block = new;
        }
    }

    /// The entry `CACHE.SET` stores (the caller checked `may_set`); the HOT
    /// read count of `previous` carries over.
    pub fn stored(
        value: &[u8],
        request: &SetRequest,
        previous: Option<&CacheEntry>,
        now_ms: i64,
    ) -> Result<CacheEntry, WardenError> {
        let meta = Meta::stored(request, now_ms)?;
        Ok(CacheEntry::new(Some(value), &meta, previous))
    }

    /// An entry holding only a lease (a miss on a missing key).
    pub fn lease_only(lease: Lease, now_ms: i64) -> CacheEntry {
        let meta = Meta {
            version: 0,
            fresh_until: now_ms,
            stale_until: now_ms,
            lease: Some(lease),
        };
        CacheEntry::new(None, &meta, None)
    }

    /// The value; `None` while only a lease is held on a miss.
    pub fn value(&self) -> Option<&[u8]> {
        (self.flags & HAS_VALUE != 0).then(|| self.bytes())
    }

    /// The value's bytes, or none (empty) while only a lease is held: for a
    /// caller that checked `is_fresh`, without checking again.
    pub fn value_or_empty(&self) -> &[u8] {
        self.bytes()
    }

    /// The caller's version of the data (0 without a value).
    pub fn version(&self) -> i64 {
        self.extra().map_or(0, |x| x.version)
    }

    /// Fresh until this moment (absolute ms).
    pub fn fresh_until(&self) -> i64 {
        self.fresh_until
    }

    /// Served stale until this moment; the value is dropped after it.
    pub fn stale_until(&self) -> i64 {
        self.extra().map_or(self.fresh_until, |x| x.stale_until)
    }

    /// The live or lapsed refresh lease, if any.
    pub fn lease(&self) -> Option<Lease> {
        self.extra().filter(|x| x.lease_token != 0).map(|x| Lease {
            token: x.lease_token,
            until_ms: x.lease_until,
        })
    }

    /// Reads counted in the current HOT window (master only, not replicated).
    pub fn reads(&self) -> u32 {
        self.reads
    }

    /// End of the current HOT window (master only, not replicated).
    pub fn window_until(&self) -> i64 {
        self.window_until
    }

    /// The value while it may be served at all (fresh or stale).
    pub fn live_value(&self, now_ms: i64) -> Option<&[u8]> {
        self.value().filter(|_| now_ms < self.stale_until())
    }

    /// The version guarding writes: the value's while it lives, else 0.
    pub fn live_version(&self, now_ms: i64) -> i64 {
        if self.live_value(now_ms).is_some() {
            self.version()
        } else {
            0
        }
    }

    /// Whether the value is fresh at `now_ms` and at least `min_version`
    /// (versions are never negative: `min_version` 0 is any version).
    #[inline]
    pub fn is_fresh(&self, min_version: i64, now_ms: i64) -> bool {
        self.flags & HAS_VALUE != 0
            && now_ms < self.fresh_until
            && (min_version <= 0 || self.version() >= min_version)
    }

    /// The value a caller asking for `min_version` may be given stale: one
    /// in its stale period (or fresh) and at least that version.
    pub fn stale_value(&self, min_version: i64, now_ms: i64) -> Option<&[u8]> {
        self.live_value(now_ms)
            .filter(|_| self.version() >= min_version)
    }

    /// The lease if it still runs.
    pub fn live_lease(&self, now_ms: i64) -> Option<Lease> {
        self.lease().filter(|l| l.is_live(now_ms))
    }

    /// How a read asking for `min_version` is answered at `now_ms`.
    pub fn read(&self, min_version: i64, now_ms: i64) -> Read {
        if self.is_fresh(min_version, now_ms) {
            Read::Fresh
        } else if self.live_lease(now_ms).is_some() {
            Read::Refreshing
        } else {
            Read::Vacant
        }
    }

    /// Whether `CACHE.SET` with `request` may replace this entry: not an
    /// older version than the live value's, and under `LEASE t` only while
    /// `t` is the live lease.
    pub fn may_set(&self, request: &SetRequest, now_ms: i64) -> bool {
        if request.version < self.live_version(now_ms) {
            return false;
        }
        match request.lease {
            None => true,
            Some(token) => self.live_lease(now_ms).is_some_and(|l| l.token == token),
        }
    }

    /// Counts a fresh read under `hot`; when the key reached `hot.reads`
    /// reads in the window, it stays fresh at least `hot.extend_ms` from
    /// now (the stale period follows). An extension reaches `extend_ms +
    /// window_ms` ahead, so every later read of the same window is already
    /// covered: a hot key moves (and replicates) at most once per window,
    /// not on every millisecond it is read. Returns whether the deadlines
    /// moved. The count is kept in place: no allocation.
    #[inline]
    pub fn count_read(&mut self, hot: &Hot, now_ms: i64) -> bool {
        if now_ms >= self.window_until {
            self.window_until = now_ms.saturating_add(hot.window_ms);
            self.reads = 0;
        }
        self.reads = self.reads.saturating_add(1);
        if self.reads < hot.reads {
            return false;
        }
        let fresh_until = self.fresh_until;
        if now_ms.saturating_add(hot.extend_ms) <= fresh_until {
            return false;
        }
        let target = now_ms
            .saturating_add(hot.extend_ms)
            .saturating_add(hot.window_ms);
        self.fresh_until = target;
        if let Some(mut extra) = self.extra() {
            let stale_period = extra.stale_until.saturating_sub(fresh_until).max(0);
            extra.stale_until = target.saturating_add(stale_period);
            self.set_extra(Some(extra));
        }
        true
    }

    /// Takes a new lease of `lease_ms` with a token from `fence`. A value
    /// past its stale period stays (never served, guarding nothing) until
    /// the refresh replaces it: dropping it here would be a change the
    /// lease's replicated state does not carry.
    pub fn take_lease(
        &mut self,
        lease_ms: i64,
        now_ms: i64,
        fence: &mut FenceClock,
    ) -> Result<Lease, WardenError> {
        let lease = new_lease(lease_ms, now_ms, fence)?;
        let meta = Meta {
            lease: Some(lease),
            ..self.meta()
        };
        self.apply_meta(&meta);
        Ok(lease)
    }

    /// When the key must expire: after the stale period, or the lease if it
    /// ends later.
    #[inline]
    pub fn expires_at(&self) -> i64 {
        match self.extra() {
            None => self.fresh_until,
            Some(x) if x.lease_token != 0 => x.stale_until.max(x.lease_until),
            Some(x) => x.stale_until,
        }
    }

    /// The replicated state except the value.
    #[inline]
    pub fn meta(&self) -> Meta {
        match self.extra() {
            None => Meta {
                version: 0,
                fresh_until: self.fresh_until,
                stale_until: self.fresh_until,
                lease: None,
            },
            Some(x) => Meta {
                version: x.version,
                fresh_until: self.fresh_until,
                stale_until: x.stale_until,
                lease: (x.lease_token != 0).then_some(Lease {
                    token: x.lease_token,
                    until_ms: x.lease_until,
                }),
            },
        }
    }

    /// Replaces the replicated state except the value (from a master, the
    /// AOF or a payload; `meta` validated).
    /// The extras are stored only when the state has one of them.
    pub fn apply_meta(&mut self, meta: &Meta) {
        self.fresh_until = meta.fresh_until;
        self.set_extra(Extra::of(meta));
    }

    /// Bytes the entry uses besides its own struct: its block.
    pub fn heap_bytes(&self) -> usize {
        self.layout().size()
    }
}

impl Extra {
    /// The extras of `meta`, or `None` when it has none of them (version 0,
    /// no stale period, no lease).
    #[inline]
    fn of(meta: &Meta) -> Option<Extra> {
        let lease = meta.lease.unwrap_or(Lease {
            token: 0,
            until_ms: 0,
        });
        let extra = Extra {
            version: meta.version,
            stale_until: meta.stale_until,
            lease_token: lease.token,
            lease_until: lease.until_ms,
        };
        let plain =
            extra.version == 0 && extra.stale_until == meta.fresh_until && meta.lease.is_none();
        (!plain).then_some(extra)
    }
}

impl Drop for CacheEntry {
    fn drop(&mut self) {
        let layout = self.layout();
        // SAFETY: the entry's block, allocated by `new_block` with this
        // layout (its length and extras never change in place), freed once.
        unsafe { dealloc(self.block.as_ptr(), layout) }
    }
}

impl Clone for CacheEntry {
    fn clone(&self) -> Self {
        CacheEntry {
            block: new_block(self.bytes(), self.extra().as_ref(), self.flags & EXTRAS),
            ..*self
        }
    }
}

impl PartialEq for CacheEntry {
    fn eq(&self, other: &Self) -> bool {
        self.value() == other.value()
            && self.meta() == other.meta()
            && (self.reads, self.window_until) == (other.reads, other.window_until)
    }
}

impl Eq for CacheEntry {}

impl std::fmt::Debug for CacheEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheEntry")
            .field("value", &self.value().map(String::from_utf8_lossy))
            .field("meta", &self.meta())
            .field("reads", &self.reads)
            .field("window_until", &self.window_until)
            .finish()
    }
}

/// A lease of `lease_ms` from `now_ms` with the next fencing token.
pub fn new_lease(lease_ms: i64, now_ms: i64, fence: &mut FenceClock) -> Result<Lease, WardenError> {
    let until_ms = after(now_ms, lease_ms, LEASE_MS.name)?;
    Ok(Lease {
        token: fence.next(now_ms)?,
        until_ms,
    })
}

impl Meta {
    /// The state `CACHE.SET` with `request` stores at `now_ms` (a period
    /// that overflows is a range error).
    #[inline]
    pub fn stored(request: &SetRequest, now_ms: i64) -> Result<Meta, WardenError> {
        let fresh_until = after(now_ms, request.ttl_ms, TTL_MS.name)?;
        let stale_until = after(fresh_until, request.stale_ms, STALE_MS.name)?;
        Ok(Meta {
            version: request.version,
            fresh_until,
            stale_until,
            lease: None,
        })
    }

    /// Checks a state read from storage or a replication stream: times not
    /// negative, fresh before stale, a version only with a value, a lease
    /// token in the fencing range.
    pub fn validate(&self, has_value: bool) -> Result<(), WardenError> {
        if self.version < 0 || (!has_value && self.version != 0) {
            return Err(WardenError::InvalidState("version out of range"));
        }
        if self.fresh_until < 0 || self.stale_until < self.fresh_until {
            return Err(WardenError::InvalidState(
                "fresh and stale ends out of order",
            ));
        }
        match self.lease {
            Some(l) if l.token <= 0 || l.token > MAX_TOKEN || l.until_ms <= 0 => {
                Err(WardenError::InvalidState("lease out of range"))
            }
            None if !has_value => Err(WardenError::InvalidState(
                "an entry without a value needs a lease",
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
#[path = "core_tests.rs"]
mod tests;
