//! Locks with several holders: shared (read) holders of a read/write lock and
//! the holders of a `LIMIT n` semaphore, each with its own lease, hold count
//! and fencing token. Also the one rule for who may be granted what, used for
//! new requests and for waiters at the head of the queue alike. Times are Unix
//! milliseconds passed in by the caller.

use std::alloc::{alloc, handle_alloc_error, realloc, Layout};
use std::fmt;
use std::ptr::NonNull;

use crate::common::error::WardenError;
use crate::common::fence_clock::{FenceClock, MAX_TOKEN};
use crate::common::parse::IntArg;
use crate::common::relocate::{self, Mover};
use crate::lock::core::errors;
use crate::lock::core::lapse::LAPSE_SLACK_MS;
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

    /// Whether the lease runs at `now` under the key's expiry `bound`: its
    /// own deadline and the key's expiry both lie ahead. (Inside MULTI or a
    /// script the server judges the key by the time the transaction began,
    /// so a key past its expiry can still be read: its holders are over all
    /// the same.) A holder of a set has at least one hold (`validate`;
    /// `release` removes it at zero), so this is `LockState::is_live` of
    /// `state` without decoding the grant.
    fn runs(&self, bound: i64, now: i64) -> bool {
        now < bound && now < self.deadline_ms
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
    /// pruned), in one block with the layout of `[Holder; len]`, the one a
    /// `Box<[Holder]>` of them has (dangling when empty).
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

    /// Adds `holder` at the end, the list grown by exactly its place.
    /// (The set has fewer than `u32::MAX` holders: checked by the caller.)
    fn push(&mut self, holder: Holder) {
        let len = self.len as usize;
        let (Ok(old), Ok(grown)) = (
            Layout::array::<Holder>(len),
            Layout::array::<Holder>(len + 1),
        ) else {
            handle_alloc_error(Layout::new::<Holder>())
        };
        let raw = if len == 0 {
            // SAFETY: the layout holds one holder (non-zero size).
            unsafe { alloc(grown) }
        } else {
            // SAFETY: `list` is the live block of `len` holders this set owns,
            // allocated with `old`, the layout of `[Holder; len]` (`put`, `push`);
            // the new size is non-zero and fits `isize` (`Layout::array`).
            unsafe { realloc(self.list.as_ptr().cast(), old, grown.size()) }
        };
        let Some(list) = NonNull::new(raw.cast::<Holder>()) else {
            handle_alloc_error(grown)
        };
        // SAFETY: the block holds `len + 1` holders, the first `len` moved
        // there by `realloc`; the last place is written once, here.
        unsafe { list.as_ptr().add(len).write(holder) };
        self.list = list;
        self.len += 1;
    }

    /// Holders whose lease runs at `now`.
    pub fn live(&self, now: i64) -> impl Iterator<Item = LockState<&[u8]>> {
        let bound = self.expiry_bound;
        self.holders()
            .iter()
            .filter(move |h| h.runs(bound, now))
            .map(Holder::state)
    }

    /// How many holders' leases run at `now`.
    pub fn live_count(&self, now: i64) -> usize {
        let bound = self.expiry_bound;
        self.holders().iter().filter(|h| h.runs(bound, now)).count()
    }

    /// Drops holders whose lease ended; true when one was dropped.
    pub fn prune(&mut self, now: i64) -> bool {
        let bound = self.expiry_bound;
        if self.holders().iter().all(|h| h.runs(bound, now)) {
            return false;
        }
        self.change(|list| list.retain(|h| h.runs(bound, now)));
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
        let token = self.next_token(now, fence)?;
        self.join(owner, token, deadline);
        Ok(token)
    }

    /// The token a new holder gets (above every token of this key), drawn
    /// from `fence`; an error when the set has no room for another holder.
    pub fn next_token(&self, now: i64, fence: &mut FenceClock) -> Result<i64, WardenError> {
        if self.len == u32::MAX {
            return Err(errors::HOLDS_OVERFLOW);
        }
        fence.next_above(self.floor, now)
    }

    /// Adds `owner`, who holds nothing here, as a holder until `deadline`
    /// with the grant `token` (from `next_token`), the key's new floor.
    pub fn join(&mut self, owner: &[u8], token: i64, deadline: i64) {
        debug_assert!(
            token > self.floor || self.len == 0,
            "a token above the floor"
        );
        self.floor = token;
        // Room for this holder only (`push`): most sets have one or two
        // holders, and a vector's first growth would make room for four.
        self.push(Holder::new(owner, token, 1, deadline));
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

    /// When the first live holder's lease ends, if another's runs on more
    /// than `LAPSE_SLACK_MS` past it (`lock::core::lapse`): then that holder
    /// is to be dropped and told on its own. `None` when every live lease
    /// ends within the slack of the last: the key's expiry ends them all.
    pub fn first_lapse(&self, now: i64) -> Option<i64> {
        let bound = self.expiry_bound;
        let mut ends = self
            .holders()
            .iter()
            .filter(|h| h.runs(bound, now))
            .map(|h| h.deadline_ms.min(bound));
        let first = ends.next()?;
        let (earliest, last) = ends.fold((first, first), |(lo, hi), d| (lo.min(d), hi.max(d)));
        (earliest.saturating_add(LAPSE_SLACK_MS) < last).then_some(earliest)
    }

    /// When the lapse watch should look at this set next: `now` when a
    /// holder whose lease ended is still listed beside a live one (it lapsed
    /// where nobody dropped it: before a restart or a promotion), else its
    /// first lapse.
    pub fn next_look(&self, now: i64) -> Option<i64> {
        let live = self.live_count(now);
        if live > 0 && live < self.holders().len() {
            return Some(now);
        }
        self.first_lapse(now)
    }

    /// The tokens of the holders whose lease ended at `now` (`prune` drops
    /// them).
    pub fn lapsed_tokens(&self, now: i64) -> impl Iterator<Item = i64> + '_ {
        let bound = self.expiry_bound;
        self.holders()
            .iter()
            .filter(move |h| !h.runs(bound, now))
            .map(|h| h.lock.token())
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
#[path = "set_tests.rs"]
mod tests;
