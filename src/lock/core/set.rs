//! Locks with several holders: shared (read) holders of a read/write lock and
//! the holders of a `LIMIT n` semaphore, each with its own lease, hold count
//! and fencing token. Also the one rule for who may be granted what, used for
//! new requests and for waiters at the head of the queue alike. Times are Unix
//! milliseconds passed in by the caller.

use std::fmt;
use std::ptr::NonNull;

use crate::common::error::WardenError;
use crate::common::fence_clock::{FenceClock, MAX_TOKEN};
use crate::common::parse::IntArg;
use crate::common::relocate::{self, Mover};
use crate::lock::core::packed::ThinLock;
use crate::lock::core::plain::{LockState, Release, NO_DEADLINE};

/// Largest `n` of `LIMIT n`.
pub const MAX_LIMIT: i64 = 1 << 20;

/// `LIMIT n` of DLOCK.ACQUIRE: how many owners may hold a semaphore.
pub const LIMIT: IntArg = IntArg {
    name: "limit",
    min: 1,
    max: MAX_LIMIT,
    duration: false,
};

/// What one acquire asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// The one holder of a read/write lock (a plain ACQUIRE).
    Exclusive,
    /// One of the read holders of a read/write lock (`SHARED`).
    Shared,
    /// One of at most `n` holders of a semaphore (`LIMIT n`).
    Limit(u32),
}

/// The kind of a key with several holders, fixed while the key exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetKind {
    /// Read holders of a read/write lock.
    Shared,
    /// A semaphore of `n` holders.
    Limit(u32),
}

impl SetKind {
    /// The request a holder of this kind made.
    pub fn want(self) -> Want {
        match self {
            SetKind::Shared => Want::Shared,
            SetKind::Limit(n) => Want::Limit(n),
        }
    }
}

impl Want {
    /// The kind of key a grant of this request makes (`None`: a plain lock).
    pub fn set_kind(self) -> Option<SetKind> {
        match self {
            Want::Exclusive => None,
            Want::Shared => Some(SetKind::Shared),
            Want::Limit(n) => Some(SetKind::Limit(n)),
        }
    }

    /// Whether two requests may share a key: both of a read/write lock
    /// (exclusive or `SHARED`), or both `LIMIT` with the same n.
    pub fn same_kind(self, other: Want) -> bool {
        match (self, other) {
            (Want::Limit(n), Want::Limit(m)) => n == m,
            (Want::Limit(_), _) | (_, Want::Limit(_)) => false,
            _ => true,
        }
    }
}

/// One holder of a set: its lease end and its grant (owner, token, holds) in
/// a `PackedLock` block of its own, 16 bytes in the set's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Absolute lease end in ms (`NO_DEADLINE`: none).
    pub deadline_ms: i64,
    /// The grant.
    lock: ThinLock,
}

impl Holder {
    /// A holder `owner` with the grant of `token`, `holds` holds, until `deadline_ms`.
    pub fn new(owner: &[u8], token: i64, holds: i64, deadline_ms: i64) -> Holder {
        Holder {
            deadline_ms,
            lock: ThinLock::new(owner, token, holds),
        }
    }

    /// The holder as the state machine sees it.
    pub fn state(&self) -> LockState<&[u8]> {
        self.lock.state(self.deadline_ms)
    }

    /// Sets the hold count: in the grant's block, or in a new one when the
    /// block cannot hold it.
    pub fn set_holds(&mut self, holds: i64) {
        if !self.lock.set_holds(holds) {
            self.lock = ThinLock::new(self.lock.owner(), self.lock.token(), holds);
        }
    }

    /// Bytes of the grant's block (before the allocator rounds it).
    pub fn heap_bytes(&self) -> usize {
        self.lock.heap_bytes()
    }

    /// Offers the grant's block to `m` (active defragmentation).
    fn relocate(&mut self, m: &mut dyn Mover) {
        self.lock.relocate(m);
    }
}

/// The holders of a key with several of them, in 32 bytes: the holders are
/// one list of exactly their number (no spare room: most sets have one or
/// two), found through a thin pointer, its length and the kind beside it.
/// `floor` is the largest token granted on the key while it existed, so
/// that a new grant's token exceeds those of holders that already left.
pub struct LockSet {
    /// The largest token ever granted on this key.
    pub floor: i64,
    /// The key's expiry as last read (`NO_DEADLINE` without one): no lease
    /// runs past it. Not stored: the key carries it.
    pub expiry_bound: i64,
    /// The first of `len` holders, oldest grant first (expired ones until
    /// pruned), in a block of a `Box<[Holder]>` (dangling when empty).
    list: NonNull<Holder>,
    /// How many holders.
    len: u32,
    /// The kind: 0 for shared holders, n for a semaphore of n.
    limit: u32,
}

/// What a key holds, as the rule for grants sees it.
#[derive(Debug, Clone, Copy)]
pub enum Holding<'a> {
    /// An empty key: no lock at all (the hand-over reads it as a key that is
    /// gone, which may have left with its cluster slot).
    Free,
    /// A plain lock's holder.
    Exclusive(LockState<&'a [u8]>),
    /// Shared holders or a semaphore's.
    Set(&'a LockSet),
}

impl Holding<'_> {
    /// The largest token granted on the key (0 for none): a new grant's
    /// token must exceed it.
    pub fn floor(&self) -> i64 {
        match self {
            Holding::Free => 0,
            Holding::Exclusive(s) => s.token,
            Holding::Set(set) => set.floor,
        }
    }

    /// When the next lease of a live holder ends (a waiter may then get in).
    pub fn next_deadline(&self, now: i64) -> Option<i64> {
        match self {
            Holding::Free => None,
            Holding::Exclusive(s) => s.is_live(now).then_some(s.deadline_ms),
            Holding::Set(set) => set.next_deadline(now),
        }
    }
}

/// Whether a request can be granted now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// It can.
    Now,
    /// Not until holders leave.
    Later,
    /// Never while the key holds a lock of another kind.
    OtherKind,
}

/// Whether `want` can be granted on a key holding `holding` at `now`. The
/// caller applies first come, first served: a new request with waiters queued
/// before it waits behind them, whatever this answers.
pub fn admit(holding: Holding, want: Want, now: i64) -> Admit {
    match (holding, want) {
        (Holding::Free, _) => Admit::Now,
        (Holding::Exclusive(s), _) if !s.is_live(now) => Admit::Now,
        (Holding::Exclusive(_), Want::Limit(_)) => Admit::OtherKind,
        (Holding::Exclusive(_), _) => Admit::Later,
        (Holding::Set(set), _) if set.live_count(now) == 0 => Admit::Now,
        (Holding::Set(set), want) => match (set.kind(), want) {
            (SetKind::Shared, Want::Shared) => Admit::Now,
            (SetKind::Shared, Want::Exclusive) => Admit::Later,
            (SetKind::Limit(n), Want::Limit(m)) if n == m => {
                if set.live_count(now) < n as usize {
                    Admit::Now
                } else {
                    Admit::Later
                }
            }
            _ => Admit::OtherKind,
        },
    }
}

impl LockSet {
    /// An empty set of `kind` whose next grant's token exceeds `floor`.
    /// (`SetKind::Limit(0)` is no kind: it would read back as shared; the
    /// parsers never make one.)
    pub fn new(kind: SetKind, floor: i64) -> LockSet {
        LockSet {
            floor,
            expiry_bound: NO_DEADLINE,
            list: NonNull::dangling(),
            len: 0,
            limit: match kind {
                SetKind::Shared => 0,
                SetKind::Limit(n) => n,
            },
        }
    }

    /// A set of `kind` holding `holders` (read from storage or the wire: the
    /// caller validates it), its list made exactly their size.
    pub fn with_holders(
        kind: SetKind,
        floor: i64,
        holders: Vec<Holder>,
    ) -> Result<LockSet, WardenError> {
        if u32::try_from(holders.len()).is_err() {
            return Err(WardenError::InvalidState("too many holders"));
        }
        let mut set = LockSet::new(kind, floor);
        set.put(holders.into_boxed_slice());
        Ok(set)
    }

    /// Shared or a semaphore of n.
    pub fn kind(&self) -> SetKind {
        match self.limit {
            0 => SetKind::Shared,
            n => SetKind::Limit(n),
        }
    }

    /// The holders, oldest grant first (expired ones until pruned).
    pub fn holders(&self) -> &[Holder] {
        // SAFETY: `list` and `len` describe the live block of a
        // `Box<[Holder]>` this set owns (`put`), or dangle with 0 items.
        unsafe { std::slice::from_raw_parts(self.list.as_ptr(), self.len as usize) }
    }

    /// The holders, to change in place.
    fn holders_mut(&mut self) -> &mut [Holder] {
        // SAFETY: as in `holders`, borrowed uniquely with `&mut self`.
        unsafe { std::slice::from_raw_parts_mut(self.list.as_ptr(), self.len as usize) }
    }

    /// Takes the holders' list out (the set is left without holders).
    fn take(&mut self) -> Box<[Holder]> {
        let list = std::mem::replace(&mut self.list, NonNull::dangling());
        let len = std::mem::take(&mut self.len) as usize;
        let items = std::ptr::slice_from_raw_parts_mut(list.as_ptr(), len);
        // SAFETY: `list` and `len` were the block of a `Box<[Holder]>` this
        // set owned (`put`), or dangling with 0 items (an empty box's own
        // pointer); the set no longer refers to it, so it has one owner.
        unsafe { Box::from_raw(items) }
    }

    /// Makes `list` the holders' list; the set has none (`take`, `new`).
    /// `list` has at most `u32::MAX` items (checked by the callers).
    fn put(&mut self, list: Box<[Holder]>) {
        debug_assert_eq!(self.len, 0, "a list is put only in place of none");
        self.len = list.len() as u32;
        // SAFETY: a box's pointer is never null.
        self.list = unsafe { NonNull::new_unchecked(Box::into_raw(list).cast::<Holder>()) };
    }

    /// Changes the holders' list through `change` on a `Vec` of them, then
    /// makes it exactly their size again.
    fn change(&mut self, change: impl FnOnce(&mut Vec<Holder>)) {
        let mut list = Vec::from(self.take());
        change(&mut list);
        // Never more than `u32::MAX` holders: `grant` refuses a holder past
        // it, and the other changes remove holders.
        self.put(list.into_boxed_slice());
    }

    /// Offers the holders' list to `m`, then each holder's grant from holder
    /// `from` on: `Some(holder)` to resume at when `m` asked to stop.
    pub fn relocate(&mut self, from: usize, m: &mut dyn Mover) -> Option<usize> {
        if from == 0 {
            let mut list = self.take();
            relocate::boxed_slice(&mut list, m);
            self.put(list);
        }
        relocate::walk(self.holders_mut(), from, m, Holder::relocate)
    }

    /// Whether `h`'s lease runs at `now`: its own deadline and the key's
    /// expiry both lie ahead. (Inside MULTI or a script the server judges the
    /// key by the time the transaction began, so a key past its expiry can
    /// still be read: its holders are over all the same.)
    fn runs(&self, h: &Holder, now: i64) -> bool {
        now < self.expiry_bound && h.state().is_live(now)
    }

    /// Holders whose lease runs at `now`.
    pub fn live(&self, now: i64) -> impl Iterator<Item = LockState<&[u8]>> {
        self.holders()
            .iter()
            .filter(move |h| self.runs(h, now))
            .map(Holder::state)
    }

    /// How many holders' leases run at `now`.
    pub fn live_count(&self, now: i64) -> usize {
        self.live(now).count()
    }

    /// Drops holders whose lease ended; true when one was dropped.
    pub fn prune(&mut self, now: i64) -> bool {
        if self.holders().iter().all(|h| self.runs(h, now)) {
            return false;
        }
        let bound = self.expiry_bound;
        self.change(|list| list.retain(|h| now < bound && h.state().is_live(now)));
        true
    }

    /// The live holder `owner` (by the grant of `token`, when given).
    pub fn holder_mut(
        &mut self,
        owner: &[u8],
        token: Option<i64>,
        now: i64,
    ) -> Option<&mut Holder> {
        self.holders_mut()
            .iter_mut()
            .find(|h| h.state().is_held_by(owner, token, now))
    }

    /// A new holder `owner` until `deadline`, with a token above every token
    /// of this key; returns the token. An owner that already holds keeps its
    /// grant and token, its lease renewed to `deadline`.
    pub fn grant(
        &mut self,
        owner: &[u8],
        deadline: i64,
        now: i64,
        fence: &mut FenceClock,
    ) -> Result<i64, WardenError> {
        if let Some(holder) = self.holder_mut(owner, None, now) {
            // A holder asked again (a second waiter of the same owner): one
            // grant per owner, renewed.
            holder.deadline_ms = deadline;
            return Ok(holder.state().token);
        }
        if self.len == u32::MAX {
            return Err(WardenError::HoldsOverflow);
        }
        let token = fence.next_above(self.floor, now)?;
        self.floor = token;
        // Room for this holder only: most sets have one or two holders, and
        // a vector's first growth would make room for four.
        self.change(|list| {
            list.reserve_exact(1);
            list.push(Holder::new(owner, token, 1, deadline));
        });
        Ok(token)
    }

    /// Drops one hold of `owner` (by the grant of `token`, when given); at
    /// zero holds the holder leaves (`Freed`), the others stay.
    pub fn release(&mut self, owner: &[u8], token: Option<i64>, now: i64) -> Release {
        let Some(at) = self
            .holders()
            .iter()
            .position(|h| h.state().is_held_by(owner, token, now))
        else {
            return Release::NotHeld;
        };
        let mut state = self.holders()[at].state();
        let outcome = state.release(owner, token, now);
        match outcome {
            Release::Freed => self.change(|list| {
                list.remove(at);
            }),
            Release::StillHeld => {
                let holds = state.holds;
                self.holders_mut()[at].set_holds(holds);
            }
            Release::NotHeld => {}
        }
        outcome
    }

    /// The latest lease end among live holders (the key's expiry), if any.
    pub fn last_deadline(&self, now: i64) -> Option<i64> {
        self.live(now).map(|h| h.deadline_ms).max()
    }

    /// The latest lease end of any holder, live or not (what the key's expiry
    /// is set to when the set is stored).
    pub fn latest_deadline(&self) -> Option<i64> {
        self.holders().iter().map(|h| h.deadline_ms).max()
    }

    /// The earliest lease end among live holders (when a place may free up),
    /// no later than the key's expiry.
    pub fn next_deadline(&self, now: i64) -> Option<i64> {
        self.live(now)
            .map(|h| h.deadline_ms)
            .min()
            .map(|d| d.min(self.expiry_bound))
    }

    /// Lowers every lease to the key's expiry (`expiry_bound`): an external
    /// TTL change (`PEXPIRE` to an earlier time) bounds all holders, and the
    /// next change keeps that bound instead of reviving their old leases.
    pub fn bound_deadlines(&mut self) {
        let bound = self.expiry_bound;
        for h in self.holders_mut() {
            h.deadline_ms = h.deadline_ms.min(bound);
        }
    }

    /// Checks a set read from storage or a replication stream.
    pub fn validate(&self) -> Result<(), WardenError> {
        if let SetKind::Limit(n) = self.kind() {
            if i64::from(n) > MAX_LIMIT {
                return Err(WardenError::InvalidState("limit out of range"));
            }
            if self.holders().len() > n as usize {
                return Err(WardenError::InvalidState("more holders than the limit"));
            }
        }
        if self.floor <= 0 || self.floor > MAX_TOKEN {
            return Err(WardenError::InvalidState("token out of range"));
        }
        let holders = self.holders();
        for (i, h) in holders.iter().enumerate() {
            let h = h.state();
            h.validate()?;
            if h.token > self.floor {
                return Err(WardenError::InvalidState("token above the key's floor"));
            }
            if holders[..i].iter().any(|o| o.lock.owner() == h.owner) {
                return Err(WardenError::InvalidState("owner holds twice"));
            }
        }
        Ok(())
    }
}

impl Drop for LockSet {
    fn drop(&mut self) {
        drop(self.take());
    }
}

impl Clone for LockSet {
    fn clone(&self) -> LockSet {
        let mut set = LockSet {
            list: NonNull::dangling(),
            len: 0,
            ..*self
        };
        set.put(self.holders().into());
        set
    }
}

impl PartialEq for LockSet {
    fn eq(&self, other: &Self) -> bool {
        (self.kind(), self.floor, self.expiry_bound)
            == (other.kind(), other.floor, other.expiry_bound)
            && self.holders() == other.holders()
    }
}

impl Eq for LockSet {}

impl fmt::Debug for LockSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockSet")
            .field("kind", &self.kind())
            .field("holders", &self.holders())
            .field("floor", &self.floor)
            .field("expiry_bound", &self.expiry_bound)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn shared_holders_share_and_exclude_the_exclusive() {
        let mut fence = FenceClock::default();
        let mut set = LockSet::new(SetKind::Shared, 1);
        let now = 1_000;
        assert_eq!(
            admit(Holding::Set(&set), Want::Exclusive, now),
            Admit::Now,
            "empty"
        );
        let a = set.grant(b"a", 2_000, now, &mut fence).unwrap();
        let b = set.grant(b"b", 1_500, now, &mut fence).unwrap();
        assert!(b > a, "each grant its own, larger token");
        assert_eq!(admit(Holding::Set(&set), Want::Shared, now), Admit::Now);
        assert_eq!(
            admit(Holding::Set(&set), Want::Exclusive, now),
            Admit::Later
        );
        assert_eq!(
            admit(Holding::Set(&set), Want::Limit(3), now),
            Admit::OtherKind
        );
        assert_eq!(set.next_deadline(now), Some(1_500));
        assert_eq!(set.last_deadline(now), Some(2_000));
        // b's lease ends; a still holds; then a releases: free.
        assert_eq!(set.live_count(1_600), 1);
        assert_eq!(
            set.release(b"b", None, 1_600),
            Release::NotHeld,
            "b's lease ended"
        );
        assert_eq!(
            set.release(b"a", Some(b), 1_600),
            Release::NotHeld,
            "a's token is a"
        );
        assert_eq!(set.release(b"a", Some(a), 1_600), Release::Freed);
        assert_eq!(
            admit(Holding::Set(&set), Want::Exclusive, 1_600),
            Admit::Now
        );
    }

    #[test]
    fn a_semaphore_admits_up_to_its_limit_and_only_its_own_kind() {
        let mut fence = FenceClock::default();
        let mut set = LockSet::new(SetKind::Limit(2), 1);
        for owner in [&b"a"[..], b"b"] {
            assert_eq!(admit(Holding::Set(&set), Want::Limit(2), 0), Admit::Now);
            set.grant(owner, 100, 0, &mut fence).unwrap();
        }
        assert_eq!(admit(Holding::Set(&set), Want::Limit(2), 0), Admit::Later);
        assert_eq!(
            admit(Holding::Set(&set), Want::Limit(3), 0),
            Admit::OtherKind
        );
        assert_eq!(admit(Holding::Set(&set), Want::Shared, 0), Admit::OtherKind);
        assert_eq!(
            admit(Holding::Set(&set), Want::Exclusive, 0),
            Admit::OtherKind
        );
        assert_eq!(
            admit(Holding::Set(&set), Want::Limit(2), 100),
            Admit::Now,
            "leases ended"
        );
        assert!(set.prune(100));
        assert!(set.holders().is_empty());
    }

    #[test]
    fn an_exclusive_holder_excludes_everyone_until_its_lease_ends() {
        let mut fence = FenceClock::default();
        let x = crate::lock::core::plain::grant(b"x", 500, 0, 0, &mut fence).unwrap();
        assert_eq!(
            admit(Holding::Exclusive(x.view()), Want::Shared, 10),
            Admit::Later
        );
        assert_eq!(
            admit(Holding::Exclusive(x.view()), Want::Exclusive, 10),
            Admit::Later
        );
        assert_eq!(
            admit(Holding::Exclusive(x.view()), Want::Limit(2), 10),
            Admit::OtherKind
        );
        assert_eq!(
            admit(Holding::Exclusive(x.view()), Want::Limit(2), 500),
            Admit::Now
        );
    }

    #[test]
    fn a_holding_tells_its_floor_and_next_lease_end() {
        let mut fence = FenceClock::default();
        assert_eq!(
            (Holding::Free.floor(), Holding::Free.next_deadline(0)),
            (0, None)
        );
        let x = crate::lock::core::plain::grant(b"x", 500, 0, 0, &mut fence).unwrap();
        let held = Holding::Exclusive(x.view());
        assert_eq!((held.floor(), held.next_deadline(10)), (x.token, Some(500)));
        assert_eq!(held.next_deadline(500), None, "lease ended");
        let mut set = LockSet::new(SetKind::Shared, x.token);
        set.grant(b"a", 300, 0, &mut fence).unwrap();
        set.grant(b"b", 200, 0, &mut fence).unwrap();
        let shared = Holding::Set(&set);
        assert_eq!(shared.floor(), set.floor);
        assert!(shared.floor() > x.token);
        assert_eq!(shared.next_deadline(10), Some(200));
        assert_eq!(shared.next_deadline(250), Some(300));
    }

    #[test]
    fn kinds_that_share_a_key() {
        use Want::*;
        assert!(Exclusive.same_kind(Shared) && Shared.same_kind(Exclusive));
        assert!(Limit(3).same_kind(Limit(3)));
        assert!(!Limit(3).same_kind(Limit(4)));
        assert!(!Limit(1).same_kind(Exclusive) && !Shared.same_kind(Limit(1)));
    }

    #[test]
    fn an_owner_granted_again_keeps_one_grant_and_its_token() {
        let mut fence = FenceClock::default();
        let mut set = LockSet::new(SetKind::Shared, 1);
        let a = set.grant(b"a", 100, 0, &mut fence).unwrap();
        set.grant(b"b", 100, 0, &mut fence).unwrap();
        assert_eq!(set.grant(b"a", 300, 10, &mut fence), Ok(a));
        assert_eq!(set.holders().len(), 2);
        let first = set.holders()[0].state();
        assert_eq!((first.deadline_ms, first.holds), (300, 1));
        assert_eq!(set.validate(), Ok(()));
        // Once a's lease ended, a new grant to a is a new holder.
        set.prune(400);
        let again = set.grant(b"a", 900, 400, &mut fence).unwrap();
        assert!(again > a);
    }

    #[test]
    fn the_key_expiry_bounds_every_lease() {
        let mut fence = FenceClock::default();
        let mut set = LockSet::new(SetKind::Limit(3), 1);
        set.grant(b"a", 1_000, 0, &mut fence).unwrap();
        set.grant(b"b", 5_000, 0, &mut fence).unwrap();
        assert_eq!(set.next_deadline(0), Some(1_000));
        set.expiry_bound = 500;
        assert_eq!(set.next_deadline(0), Some(500));
        set.bound_deadlines();
        let deadlines: Vec<i64> = set.holders().iter().map(|h| h.deadline_ms).collect();
        assert_eq!(deadlines, [500, 500]);
        assert_eq!(set.latest_deadline(), Some(500));
    }

    #[test]
    fn no_holder_runs_past_the_key_expiry() {
        // The key read past its expiry (in MULTI or a script): its holders
        // are over, however long their own leases.
        let mut fence = FenceClock::default();
        let mut set = LockSet::new(SetKind::Shared, 1);
        set.grant(b"a", 10_000, 0, &mut fence).unwrap();
        set.expiry_bound = 500;
        assert_eq!(set.live_count(499), 1);
        assert_eq!(set.live_count(500), 0);
        assert_eq!(admit(Holding::Set(&set), Want::Exclusive, 600), Admit::Now);
        assert_eq!(
            admit(Holding::Set(&set), Want::Exclusive, 400),
            Admit::Later
        );
        assert!(set.prune(600));
        assert!(set.holders().is_empty());
    }

    #[test]
    fn stored_sets_are_validated() {
        let mut fence = FenceClock::default();
        let mut set = LockSet::new(SetKind::Limit(1), 1);
        set.grant(b"a", 100, 0, &mut fence).unwrap();
        assert_eq!(set.validate(), Ok(()));
        let a = set.holders()[0].clone();
        let two = vec![a.clone(), a.clone()];
        let over = LockSet::with_holders(SetKind::Limit(1), set.floor, two.clone()).unwrap();
        assert!(over.validate().is_err(), "two holders of a limit of one");
        let twice = LockSet::with_holders(SetKind::Shared, set.floor, two).unwrap();
        assert!(twice.validate().is_err(), "one owner twice");
        let low = LockSet::with_holders(SetKind::Shared, 0, vec![a.clone()]).unwrap();
        assert!(low.validate().is_err(), "floor below the tokens");
        let wide = Holder::new(b"b", set.floor, 1, 100);
        let above = LockSet::with_holders(SetKind::Shared, set.floor - 1, vec![wide]).unwrap();
        assert!(above.validate().is_err(), "a token above the floor");
        let huge = LockSet::new(SetKind::Limit(MAX_LIMIT as u32 + 1), 1);
        assert!(huge.validate().is_err());
        for bad in [
            Holder::new(b"", 1, 1, 100),
            Holder::new(b"b", 1, 0, 100),
            Holder::new(b"b", 1, 1, 0),
            Holder::new(b"b", 0, 1, 100),
        ] {
            let set = LockSet::with_holders(SetKind::Shared, 1, vec![bad]).unwrap();
            assert!(set.validate().is_err(), "{set:?}");
        }
    }

    #[test]
    fn a_set_is_32_bytes_and_its_list_exactly_its_holders() {
        use crate::common::relocate::tests::TestMover;
        assert_eq!(std::mem::size_of::<LockSet>(), 32);
        assert_eq!(std::mem::size_of::<Holder>(), 16);
        let mut fence = FenceClock::default();
        let mut set = LockSet::new(SetKind::Limit(3), 1);
        assert_eq!(set.kind(), SetKind::Limit(3));
        let owners = [&b"a"[..], &[b'w'; 300], b"c"];
        for owner in owners {
            set.grant(owner, 1_000, 0, &mut fence).unwrap();
        }
        // Holds past the compact form's 7 move the grant to a wide block.
        set.holder_mut(b"c", None, 0).unwrap().set_holds(9);
        assert_eq!(set.holders()[2].state().holds, 9);
        assert_eq!(set.release(b"c", None, 0), Release::StillHeld);
        assert_eq!(set.holders()[2].state().holds, 8);
        let copy = set.clone();
        assert_eq!(copy, set);
        let mut m = TestMover::default();
        assert_eq!(set.relocate(0, &mut m), None);
        assert_eq!(m.moved, 4, "the list and each holder's block");
        assert_eq!(set, copy);
        // A walk stopped after two moves resumes at the second holder.
        let mut m = TestMover {
            budget: 2,
            ..TestMover::default()
        };
        assert_eq!(set.relocate(0, &mut m), Some(1));
        m.budget = usize::MAX;
        assert_eq!(set.relocate(1, &mut m), None);
        assert_eq!(set, copy);
        assert_eq!(set.release(b"a", None, 0), Release::Freed);
        let owners: Vec<&[u8]> = set.live(0).map(|h| h.owner).collect();
        assert_eq!(owners, [&[b'w'; 300][..], b"c"]);
    }

    /// A tiny deterministic generator (xorshift) for the schedules below.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// One key under a random schedule, driven the way the glue drives it:
    /// the holders (one exclusive, or a set), a FIFO queue of waiters with
    /// timeouts, and a hand-off after every event.
    struct Model {
        exclusive: Option<LockState>,
        set: Option<LockSet>,
        queue: VecDeque<(Vec<u8>, Want, i64, u64)>, // owner, want, wait deadline, arrival
        fence: FenceClock,
        arrivals: u64,
        /// Arrival numbers of waiters in the order they were granted.
        granted_order: Vec<u64>,
    }

    impl Model {
        fn holding(&self) -> Holding<'_> {
            match (&self.exclusive, &self.set) {
                (Some(x), _) => Holding::Exclusive(x.view()),
                (None, Some(s)) => Holding::Set(s),
                (None, None) => Holding::Free,
            }
        }

        /// Grants `want` to `owner`, replacing a key whose holders all left.
        fn grant(&mut self, owner: &[u8], want: Want, deadline: i64, now: i64) {
            let floor = self.floor();
            if self.live_count(now) == 0 {
                self.exclusive = None;
                self.set = None;
            }
            match want.set_kind() {
                None => {
                    let s = crate::lock::core::plain::grant(
                        owner,
                        deadline,
                        floor,
                        now,
                        &mut self.fence,
                    );
                    self.exclusive = Some(s.unwrap().owned());
                }
                Some(kind) => {
                    let set = self.set.get_or_insert_with(|| LockSet::new(kind, floor));
                    set.grant(owner, deadline, now, &mut self.fence).unwrap();
                }
            }
        }

        fn floor(&self) -> i64 {
            let x = self.exclusive.as_ref().map_or(0, |s| s.token);
            x.max(self.set.as_ref().map_or(0, |s| s.floor))
        }

        fn live_count(&self, now: i64) -> usize {
            match self.holding() {
                Holding::Free => 0,
                Holding::Exclusive(x) => usize::from(x.is_live(now)),
                Holding::Set(s) => s.live_count(now),
            }
        }

        /// Serves the head of the queue while it can be granted.
        fn serve(&mut self, now: i64) {
            self.queue.retain(|w| w.2 > now); // waiters whose WAIT ran out leave
            while let Some(&(ref owner, want, _, arrival)) = self.queue.front() {
                match admit(self.holding(), want, now) {
                    Admit::Now => {
                        let owner = owner.clone();
                        self.queue.pop_front();
                        self.grant(&owner, want, now + 50, now);
                        self.granted_order.push(arrival);
                    }
                    _ => break,
                }
            }
        }

        fn check(&self, now: i64) {
            // Never shared (or anyone) beside a live exclusive holder, never
            // more than the limit.
            if let (Some(x), Some(s)) = (&self.exclusive, &self.set) {
                assert!(
                    !(x.is_live(now) && s.live_count(now) > 0),
                    "exclusive beside a set"
                );
            }
            if let Some(s) = &self.set {
                if let SetKind::Limit(n) = s.kind() {
                    assert!(s.live_count(now) <= n as usize, "over the limit");
                }
            }
            // No waiter is left behind a key it could have now (no starvation
            // by a free key); grants follow arrival order.
            if let Some(&(_, want, _, _)) = self.queue.front() {
                assert_ne!(
                    admit(self.holding(), want, now),
                    Admit::Now,
                    "head not served"
                );
            }
            assert!(
                self.granted_order.windows(2).all(|w| w[0] < w[1]),
                "grants out of order"
            );
        }
    }

    /// Random schedules of exclusive, shared and limit acquires (with and
    /// without waiting), releases, expiries and waiter timeouts never exceed
    /// the limit, never grant beside an exclusive holder, and serve waiters in
    /// arrival order with none left behind a lock it could take.
    #[test]
    fn random_schedules_keep_the_rules() {
        for seed in 1..=300u64 {
            let mut rng = Rng(seed * 0x9E37_79B9_7F4A_7C15);
            let mut m = Model {
                exclusive: None,
                set: None,
                queue: VecDeque::new(),
                fence: FenceClock::default(),
                arrivals: 0,
                granted_order: Vec::new(),
            };
            let limit = 1 + rng.below(4) as u32;
            let mut now = 1_000;
            for _ in 0..400 {
                now += rng.below(20) as i64;
                let owner = format!("o{}", rng.below(6)).into_bytes();
                // Even seeds: a read/write lock; odd seeds: a semaphore, with
                // now and then a request of the other kind.
                let want = match (seed % 2, rng.below(10)) {
                    (0, 0..=4) => Want::Exclusive,
                    (0, _) => Want::Shared,
                    (_, 0) => Want::Exclusive,
                    _ => Want::Limit(limit),
                };
                match rng.below(4) {
                    0 | 1 => {
                        // A new request: FIFO behind waiters, or granted, or queued.
                        let held = match m.holding() {
                            Holding::Exclusive(x) => x.is_held_by(&owner, None, now),
                            Holding::Set(s) => s.live(now).any(|h| *h.owner == *owner),
                            Holding::Free => false,
                        };
                        let admitted = admit(m.holding(), want, now);
                        if !held && m.queue.is_empty() && admitted == Admit::Now {
                            m.grant(&owner, want, now + 1 + rng.below(100) as i64, now);
                            m.arrivals += 1;
                            m.granted_order.push(m.arrivals);
                        } else if !held && admitted != Admit::OtherKind && rng.below(2) == 0 {
                            m.arrivals += 1;
                            let wait_until = now + 1 + rng.below(200) as i64;
                            m.queue.push_back((owner, want, wait_until, m.arrivals));
                        }
                    }
                    2 => {
                        // A holder releases.
                        match (&mut m.exclusive, &mut m.set) {
                            (Some(x), _) => {
                                let o = x.owner.to_vec();
                                if x.release(&o, None, now) == Release::Freed {
                                    m.exclusive = None;
                                }
                            }
                            (None, Some(s)) => {
                                let first = s.live(now).next().map(|h| h.owner.to_vec());
                                if let Some(o) = first {
                                    s.release(&o, None, now);
                                }
                            }
                            _ => {}
                        }
                    }
                    _ => {} // time passes: leases and waits run out
                }
                if let Some(s) = &mut m.set {
                    s.prune(now);
                }
                m.serve(now);
                m.check(now);
            }
        }
    }

    #[test]
    fn consecutive_shared_waiters_are_granted_together_and_a_writer_is_not_starved() {
        let mut fence = FenceClock::default();
        let x = crate::lock::core::plain::grant(b"x", 100, 0, 0, &mut fence).unwrap();
        // Queue: shared r1, shared r2, exclusive w, shared r3.
        let queue = [Want::Shared, Want::Shared, Want::Exclusive, Want::Shared];
        assert_eq!(
            admit(Holding::Exclusive(x.view()), queue[0], 50),
            Admit::Later
        );
        // At 100 the exclusive lease ends: r1 and r2 go together, w stops r3.
        let mut set = LockSet::new(SetKind::Shared, x.token);
        let mut served = 0;
        for want in queue {
            let holding = if served == 0 {
                Holding::Free
            } else {
                Holding::Set(&set)
            };
            if admit(holding, want, 100) != Admit::Now {
                break;
            }
            set.grant(format!("r{served}").as_bytes(), 200, 100, &mut fence)
                .unwrap();
            served += 1;
        }
        assert_eq!(
            served, 2,
            "the two shared waiters at the head, not the one behind w"
        );
        assert!(set.holders().iter().all(|h| h.state().token > x.token));
    }
}
