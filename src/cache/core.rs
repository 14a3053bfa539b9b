//! Cache entries with fresh and stale periods, versions, hot-key extension
//! and refresh leases (one refresh per miss). Times are Unix milliseconds
//! passed in by the caller; lease tokens come from the fencing clock.
//!
//! An entry may hold no value: a lease taken on a missing key is kept in an
//! entry of its own until the refresher's SET lands or the lease ends.

use crate::common::error::WardenError;
use crate::common::fence_clock::{FenceClock, MAX_TOKEN};
use crate::common::parse::{IntArg, MAX_DURATION_MS};
use crate::common::relocate::{self, Mover};
use crate::common::thin_bytes::ThinBytes;

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

/// The latest time an entry holds (48 bits of milliseconds: the year
/// 10889); periods that would end later are range errors, and stored states
/// reaching past it are refused.
pub const MAX_TIME: i64 = (1 << 48) - 1;

/// A time in `0..=MAX_TIME` in 6 bytes (the entry's struct stays 32 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Time48([u8; 6]);

impl Time48 {
    /// `t`, clamped to `0..=MAX_TIME` (callers check or validate it first).
    fn new(t: i64) -> Time48 {
        let b = (t.clamp(0, MAX_TIME) as u64).to_le_bytes();
        Time48([b[0], b[1], b[2], b[3], b[4], b[5]])
    }

    fn get(self) -> i64 {
        let [a, b, c, d, e, f] = self.0;
        i64::from_le_bytes([a, b, c, d, e, f, 0, 0])
    }
}

/// What most entries lack (a version, a stale period, a lease), boxed so a
/// plain entry pays nothing for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Extra {
    version: i64,
    stale_until: i64,
    /// The lease token, 0 without a lease (tokens are positive).
    lease_token: i64,
    lease_until: i64,
}

/// One cached value and what decides how it is served. A struct of 32
/// bytes (one size class) and the value's own block of its length + 4
/// bytes, the size class of a Redis string's buffer for the same value; the
/// version, stale end and lease are boxed apart, only when an entry has one.
/// So a plain entry costs 48 bytes more than the same value as a string
/// (the module-value cell and this struct).
#[derive(Clone, PartialEq, Eq)]
pub struct CacheEntry {
    /// The value; `None` while only a lease is held on a miss.
    value: Option<ThinBytes>,
    /// Version, stale end and lease, when any is set.
    extra: Option<Box<Extra>>,
    /// Reads counted in the current HOT window (master only, not replicated).
    reads: u32,
    /// Fresh until this moment (absolute ms).
    fresh_until: Time48,
    /// End of the current HOT window (master only, not replicated).
    window_until: Time48,
}

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

/// The end of a period of `ms` starting at `now_ms`, checked: at most
/// `MAX_TIME` (the latest time an entry holds).
fn after(now_ms: i64, ms: i64, arg: &'static str) -> Result<i64, WardenError> {
    now_ms
        .checked_add(ms)
        .filter(|t| *t <= MAX_TIME)
        .ok_or(WardenError::OutOfRange(arg))
}

impl CacheEntry {
    /// An entry holding `value` (or only a lease, `None`) in the state
    /// `meta` (times within `0..=MAX_TIME`); the HOT read count of
    /// `previous` carries over.
    pub fn new(value: Option<&[u8]>, meta: &Meta, previous: Option<&CacheEntry>) -> CacheEntry {
        let mut entry = CacheEntry {
            value: value.map(ThinBytes::from),
            extra: None,
            reads: previous.map_or(0, |p| p.reads),
            fresh_until: Time48::default(),
            window_until: previous.map_or(Time48::default(), |p| p.window_until),
        };
        entry.apply_meta(meta);
        entry
    }

    /// Offers the value's and the extras' heap blocks to `m` (active
    /// defragmentation).
    pub fn relocate(&mut self, m: &mut dyn Mover) {
        if let Some(value) = &mut self.value {
            value.relocate(m);
        }
        if let Some(extra) = &mut self.extra {
            relocate::boxed(extra, m);
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
        let fresh_until = after(now_ms, request.ttl_ms, TTL_MS.name)?;
        let stale_until = after(fresh_until, request.stale_ms, STALE_MS.name)?;
        let meta = Meta {
            version: request.version,
            fresh_until,
            stale_until,
            lease: None,
        };
        Ok(CacheEntry::new(Some(value), &meta, previous))
    }

    /// An entry holding only a lease (a miss on a missing key).
    pub fn lease_only(lease: Lease, now_ms: i64) -> CacheEntry {
        let now_ms = now_ms.clamp(0, MAX_TIME);
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
        self.value.as_deref()
    }

    /// The caller's version of the data (0 without a value).
    pub fn version(&self) -> i64 {
        self.extra.as_ref().map_or(0, |x| x.version)
    }

    /// Fresh until this moment (absolute ms).
    pub fn fresh_until(&self) -> i64 {
        self.fresh_until.get()
    }

    /// Served stale until this moment; the value is dropped after it.
    pub fn stale_until(&self) -> i64 {
        self.extra
            .as_ref()
            .map_or_else(|| self.fresh_until(), |x| x.stale_until)
    }

    /// The live or lapsed refresh lease, if any.
    pub fn lease(&self) -> Option<Lease> {
        self.extra
            .as_ref()
            .filter(|x| x.lease_token != 0)
            .map(|x| Lease {
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
        self.window_until.get()
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
    pub fn is_fresh(&self, min_version: i64, now_ms: i64) -> bool {
        self.value.is_some()
            && now_ms < self.fresh_until()
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
    pub fn count_read(&mut self, hot: &Hot, now_ms: i64) -> bool {
        if now_ms >= self.window_until() {
            self.window_until = Time48::new(now_ms.saturating_add(hot.window_ms));
            self.reads = 0;
        }
        self.reads = self.reads.saturating_add(1);
        if self.reads < hot.reads {
            return false;
        }
        let fresh_until = self.fresh_until();
        if now_ms.saturating_add(hot.extend_ms) <= fresh_until {
            return false;
        }
        let target = now_ms
            .saturating_add(hot.extend_ms)
            .saturating_add(hot.window_ms)
            .min(MAX_TIME);
        self.fresh_until = Time48::new(target);
        if let Some(extra) = &mut self.extra {
            let stale_period = extra.stale_until.saturating_sub(fresh_until).max(0);
            extra.stale_until = target.saturating_add(stale_period).min(MAX_TIME);
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
    pub fn expires_at(&self) -> i64 {
        let lease_end = self.lease().map_or(i64::MIN, |l| l.until_ms);
        self.stale_until().max(lease_end)
    }

    /// The replicated state except the value.
    pub fn meta(&self) -> Meta {
        Meta {
            version: self.version(),
            fresh_until: self.fresh_until(),
            stale_until: self.stale_until(),
            lease: self.lease(),
        }
    }

    /// Replaces the replicated state except the value (from a master, the
    /// AOF or a payload; `meta` validated).
    /// The extras are boxed only when the state has one of them.
    pub fn apply_meta(&mut self, meta: &Meta) {
        self.fresh_until = Time48::new(meta.fresh_until);
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
            extra.version == 0 && extra.stale_until == self.fresh_until() && extra.lease_token == 0;
        match &mut self.extra {
            _ if plain => self.extra = None,
            Some(boxed) => **boxed = extra,
            None => self.extra = Some(Box::new(extra)),
        }
    }

    /// Bytes the entry uses besides its own struct: the value and the
    /// extras.
    pub fn heap_bytes(&self) -> usize {
        self.value.as_ref().map_or(0, ThinBytes::heap_bytes)
            + self
                .extra
                .as_ref()
                .map_or(0, |_| std::mem::size_of::<Extra>())
    }
}

impl std::fmt::Debug for CacheEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheEntry")
            .field("value", &self.value)
            .field("meta", &self.meta())
            .field("reads", &self.reads)
            .field("window_until", &self.window_until())
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
    /// Checks a state read from storage or a replication stream: times not
    /// negative nor past `MAX_TIME`, fresh before stale, a version only
    /// with a value, a lease token in the fencing range.
    pub fn validate(&self, has_value: bool) -> Result<(), WardenError> {
        if self.version < 0 || (!has_value && self.version != 0) {
            return Err(WardenError::InvalidState("version out of range"));
        }
        if self.fresh_until < 0 || self.stale_until < self.fresh_until {
            return Err(WardenError::InvalidState(
                "fresh and stale ends out of order",
            ));
        }
        if self.stale_until > MAX_TIME {
            return Err(WardenError::InvalidState("stale end out of range"));
        }
        match self.lease {
            Some(l)
                if l.token <= 0
                    || l.token > MAX_TOKEN
                    || l.until_ms <= 0
                    || l.until_ms > MAX_TIME =>
            {
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
mod tests {
    use super::*;

    const T0: i64 = 1_800_000_000_000;

    fn set(ttl_ms: i64, stale_ms: i64, version: i64, lease: Option<i64>) -> SetRequest {
        SetRequest {
            ttl_ms,
            stale_ms,
            version,
            lease,
        }
    }

    fn entry(value: &[u8], ttl: i64, stale: i64, version: i64) -> CacheEntry {
        CacheEntry::stored(value, &set(ttl, stale, version, None), None, T0).unwrap()
    }

    #[test]
    fn a_value_is_fresh_then_stale_then_gone() {
        let e = entry(b"v", 100, 50, 0);
        assert!(e.is_fresh(0, T0));
        assert!(e.is_fresh(0, T0 + 99));
        assert!(!e.is_fresh(0, T0 + 100));
        assert_eq!(e.stale_value(0, T0 + 100), Some(&b"v"[..]));
        assert_eq!(e.stale_value(0, T0 + 149), Some(&b"v"[..]));
        assert_eq!(e.stale_value(0, T0 + 150), None);
        assert_eq!(e.expires_at(), T0 + 150);
        assert_eq!(e.read(0, T0 + 120), Read::Vacant);
    }

    #[test]
    fn min_version_turns_an_older_fresh_value_into_a_miss() {
        let e = entry(b"v", 100, 50, 7);
        assert!(e.is_fresh(7, T0));
        assert!(!e.is_fresh(8, T0));
        assert_eq!(e.read(8, T0), Read::Vacant);
        assert_eq!(e.stale_value(8, T0), None, "too old to serve even stale");
    }

    #[test]
    fn older_versions_are_refused_while_the_value_lives() {
        let e = entry(b"v", 100, 50, 7);
        assert!(!e.may_set(&set(10, 0, 6, None), T0 + 149));
        assert!(e.may_set(&set(10, 0, 7, None), T0));
        assert!(e.may_set(&set(10, 0, 8, None), T0));
        // Once the value is gone its version guards nothing.
        assert!(e.may_set(&set(10, 0, 0, None), T0 + 150));
    }

    #[test]
    fn a_lease_set_lands_only_while_its_lease_is_current() {
        let mut fence = FenceClock::default();
        let mut e = entry(b"old", 10, 1000, 0);
        let lease = e.take_lease(500, T0 + 20, &mut fence).unwrap();
        assert_eq!(e.read(0, T0 + 20), Read::Refreshing);
        assert!(e.may_set(&set(10, 0, 0, Some(lease.token)), T0 + 519));
        assert!(
            !e.may_set(&set(10, 0, 0, Some(lease.token)), T0 + 520),
            "lapsed"
        );
        assert!(!e.may_set(&set(10, 0, 0, Some(lease.token + 1)), T0 + 30));
        // A plain SET replaces the entry and with it the lease.
        let replaced = CacheEntry::stored(b"new", &set(10, 0, 0, None), Some(&e), T0 + 30).unwrap();
        assert!(!replaced.may_set(&set(10, 0, 0, Some(lease.token)), T0 + 31));
        assert_eq!(
            e.expires_at(),
            T0 + 1010,
            "the stale end is later than the lease"
        );
    }

    #[test]
    fn leases_take_fencing_tokens_and_outlive_the_value() {
        let mut fence = FenceClock::starting_at(T0 * 1000 + 5);
        let mut e = entry(b"v", 10, 10, 3);
        let first = e.take_lease(100, T0 + 30, &mut fence).unwrap();
        assert_eq!(first.token, (T0 + 30) * 1000);
        assert_eq!(e.stale_value(0, T0 + 30), None, "past its stale period");
        assert_eq!(e.live_version(T0 + 30), 0, "a dead value guards nothing");
        assert_eq!(e.expires_at(), T0 + 130);
        let second = e.take_lease(100, T0 + 30, &mut fence).unwrap();
        assert!(second.token > first.token);
    }

    #[test]
    fn hot_reads_extend_freshness_never_shorten_it() {
        let hot = Hot {
            reads: 3,
            window_ms: 100,
            extend_ms: 1000,
        };
        let mut e = entry(b"v", 500, 200, 0);
        assert!(!e.count_read(&hot, T0 + 10));
        assert!(!e.count_read(&hot, T0 + 20));
        assert!(e.count_read(&hot, T0 + 30), "third read in the window");
        assert_eq!(e.fresh_until(), T0 + 1130, "extend_ms + window_ms ahead");
        assert_eq!(e.stale_until(), T0 + 1330, "the stale period follows");
        assert!(!e.count_read(&hot, T0 + 30), "already fresh that long");
        for t in 31..110 {
            assert!(
                !e.count_read(&hot, T0 + t),
                "once per window (read at +{t})"
            );
            assert!(
                e.fresh_until() - (T0 + t) >= hot.extend_ms,
                "at least extend_ms left"
            );
        }
        // A new window starts the count again.
        assert!(!e.count_read(&hot, T0 + 200));
        assert_eq!(e.reads(), 1);
        let long = Hot {
            extend_ms: 10,
            ..hot
        };
        let before = e.clone();
        for t in 0..5 {
            e.count_read(&long, T0 + 210 + t);
        }
        assert_eq!(e.fresh_until(), before.fresh_until(), "never shortened");
    }

    #[test]
    fn meta_round_trips_and_validates() {
        let mut fence = FenceClock::default();
        let mut e = entry(b"v", 10, 20, 4);
        e.take_lease(50, T0 + 5, &mut fence).unwrap();
        let meta = e.meta();
        assert!(meta.validate(true).is_ok());
        let mut other = entry(b"v", 1, 1, 0);
        other.apply_meta(&meta);
        assert_eq!(other.meta(), meta);
        let bad = [
            Meta {
                version: -1,
                ..meta
            },
            Meta {
                stale_until: meta.fresh_until - 1,
                ..meta
            },
            Meta {
                lease: Some(Lease {
                    token: 0,
                    until_ms: 1,
                }),
                ..meta
            },
            Meta {
                lease: Some(Lease {
                    token: MAX_TOKEN + 1,
                    until_ms: 1,
                }),
                ..meta
            },
        ];
        for m in bad {
            assert!(m.validate(true).is_err(), "{m:?}");
        }
        assert!(Meta { version: 1, ..meta }.validate(false).is_err());
        assert!(Meta {
            version: 0,
            lease: None,
            ..meta
        }
        .validate(false)
        .is_err());
        assert!(Meta { version: 0, ..meta }.validate(false).is_ok());
    }

    #[test]
    fn huge_periods_are_range_errors_not_overflow() {
        let far = i64::MAX - 5;
        assert_eq!(
            CacheEntry::stored(b"v", &set(10, 0, 0, None), None, far),
            Err(WardenError::OutOfRange("ttl"))
        );
        assert_eq!(
            CacheEntry::stored(b"v", &set(1, i64::MAX - 10, 0, None), None, T0),
            Err(WardenError::OutOfRange("stale"))
        );
        let mut fence = FenceClock::default();
        assert_eq!(
            new_lease(10, far, &mut fence),
            Err(WardenError::OutOfRange("lease"))
        );
    }

    #[test]
    fn a_plain_entry_costs_32_bytes_besides_its_value() {
        assert_eq!(std::mem::size_of::<CacheEntry>(), 32, "one size class");
        assert_eq!(std::mem::size_of::<Extra>(), 32);
        let e = entry(&[7u8; 100], 10, 0, 0);
        assert_eq!(e.heap_bytes(), 4 + 100, "a string's buffer: 3 + 100 + 1");
        assert!(e.extra.is_none());
        for (stale, version) in [(5, 0), (0, 9)] {
            let e = entry(&[7u8; 100], 10, stale, version);
            assert_eq!(e.heap_bytes(), 4 + 100 + 32, "{stale} {version}");
        }
    }

    #[test]
    fn extras_come_and_go_with_the_state() {
        let mut fence = FenceClock::default();
        let mut e = entry(b"v", 10, 0, 0);
        let lease = e.take_lease(50, T0, &mut fence).unwrap();
        assert_eq!(e.lease(), Some(lease));
        assert_eq!((e.version(), e.stale_until()), (0, T0 + 10));
        let meta = Meta {
            lease: None,
            ..e.meta()
        };
        e.apply_meta(&meta);
        assert!(e.extra.is_none(), "a plain state boxes nothing");
        assert_eq!(e.meta(), meta);
        let hot = Hot {
            reads: 1,
            window_ms: 5,
            extend_ms: 100,
        };
        let mut stale = entry(b"v", 10, 20, 0);
        assert!(stale.count_read(&hot, T0));
        assert_eq!(
            (stale.fresh_until(), stale.stale_until()),
            (T0 + 105, T0 + 125)
        );
        assert_eq!(Time48::new(MAX_TIME + 1).get(), MAX_TIME);
        assert_eq!(Time48::new(-1).get(), 0);
    }

    #[test]
    fn times_past_48_bits_are_range_errors_or_refused() {
        assert_eq!(
            CacheEntry::stored(b"v", &set(MAX_TIME - T0 + 1, 0, 0, None), None, T0),
            Err(WardenError::OutOfRange("ttl"))
        );
        let meta = entry(b"v", 10, 0, 0).meta();
        for bad in [
            Meta {
                stale_until: MAX_TIME + 1,
                ..meta
            },
            Meta {
                lease: Some(Lease {
                    token: 5,
                    until_ms: MAX_TIME + 1,
                }),
                ..meta
            },
        ] {
            assert!(bad.validate(true).is_err(), "{bad:?}");
        }
        assert!(Meta {
            stale_until: MAX_TIME,
            ..meta
        }
        .validate(true)
        .is_ok());
    }

    #[test]
    fn random_schedules_never_serve_stale_as_fresh_or_accept_old_versions() {
        // A small deterministic generator: no dependency needed.
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut fence = FenceClock::default();
        for _ in 0..200 {
            let mut e: Option<CacheEntry> = None;
            let mut now = T0;
            let mut leases: Vec<i64> = Vec::new();
            for _ in 0..100 {
                now += next(40) as i64;
                if e.as_ref().is_some_and(|e| now >= e.expires_at()) {
                    e = None; // Redis expired the key
                }
                match next(3) {
                    0 => {
                        let lease = match next(3) {
                            0 => leases.last().copied(),
                            1 => leases.first().copied(),
                            _ => None,
                        };
                        let req = set(1 + next(30) as i64, next(30) as i64, next(5) as i64, lease);
                        let allowed = e.as_ref().is_none_or(|e| e.may_set(&req, now));
                        let allowed = allowed && (lease.is_none() || e.is_some());
                        if allowed {
                            let stored = CacheEntry::stored(b"x", &req, e.as_ref(), now).unwrap();
                            if let Some(prev) = &e {
                                assert!(req.version >= prev.live_version(now));
                                if let Some(t) = lease {
                                    assert_eq!(prev.live_lease(now).map(|l| l.token), Some(t));
                                }
                            }
                            e = Some(stored);
                        }
                    }
                    1 => {
                        if let Some(entry) = &e {
                            let min = next(5) as i64;
                            if entry.is_fresh(min, now) {
                                assert!(now < entry.fresh_until() && entry.version() >= min);
                            }
                        }
                    }
                    _ => {
                        let entry = e.get_or_insert_with(|| {
                            let lease = new_lease(20, now, &mut fence).unwrap();
                            leases.push(lease.token);
                            CacheEntry::lease_only(lease, now)
                        });
                        if entry.read(0, now) == Read::Vacant {
                            let lease = entry.take_lease(20, now, &mut fence).unwrap();
                            leases.push(lease.token);
                        }
                        let live: Vec<_> = entry.live_lease(now).into_iter().collect();
                        assert!(live.len() <= 1);
                        assert!(entry.expires_at() >= now, "a live entry outlives now");
                    }
                }
            }
        }
    }
}
