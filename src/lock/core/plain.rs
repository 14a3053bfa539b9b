//! The lock state machine: grants, re-entry, release, extension, expiry and
//! fencing tokens. Times are Unix milliseconds passed in by the caller.

use std::ops::Deref;

use crate::common::compact_bytes::CompactBytes;
use crate::common::error::WardenError;
use crate::common::fence_clock::{FenceClock, MAX_TOKEN};
use crate::common::parse::{IntArg, MAX_DURATION_MS};
use crate::common::relocate::Mover;
use crate::lock::core::errors;

/// `ttl_ms` of DLOCK.ACQUIRE and DLOCK.EXTEND.
pub const TTL_MS: IntArg = IntArg {
    name: "ttl",
    min: 1,
    max: MAX_DURATION_MS,
    duration: true,
};

/// `WAIT timeout_ms` of DLOCK.ACQUIRE (0 waits forever).
pub const WAIT_TIMEOUT_MS: IntArg = IntArg {
    name: "timeout",
    min: 0,
    max: MAX_DURATION_MS,
    duration: true,
};

/// `TOKEN t` of DLOCK.RELEASE, DLOCK.EXTEND and the token of DLOCK.GUARD: a
/// grant's fencing token (one above `MAX_TOKEN` is accepted and matches none).
pub const TOKEN: IntArg = IntArg {
    name: "token",
    min: 1,
    max: i64::MAX,
    duration: false,
};

/// The deadline of a lease that never ends (the key was `PERSIST`ed or
/// restored without a TTL): held until released.
pub const NO_DEADLINE: i64 = i64::MAX;

/// A held lock: who holds it, its fencing token, how many holds, and when the
/// lease ends (absolute ms; the lock is free from `deadline_ms` on). The
/// lease is the key's expiry: the glue reads `deadline_ms` from it. `O`
/// holds the owner: its own bytes, or (`LockState<&[u8]>`, a view of a
/// stored `PackedLock`) borrowed ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockState<O = CompactBytes> {
    /// The holder's identity, any non-empty byte string.
    pub owner: O,
    /// Fencing token of this grant.
    pub token: i64,
    /// Re-entrant hold count, at least 1.
    pub holds: i64,
    /// Absolute lease end in ms (`NO_DEADLINE`: none).
    pub deadline_ms: i64,
}

/// What `acquire` decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquire<'a> {
    /// A new grant: store this state (replaces any expired record); its
    /// owner is the caller's.
    Granted(LockState<&'a [u8]>),
    /// The owner already held it: same token, lease renewed, and one more
    /// hold when asked for re-entry (a plain repeat, such as a client's
    /// retry, leaves the count as it was).
    Reentered { token: i64 },
    /// Somebody else holds it.
    Busy,
}

/// What `release` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// The caller does not hold the lock (or it expired).
    NotHeld,
    /// One hold dropped; the owner still holds the rest.
    StillHeld,
    /// The last hold dropped: the lock is free.
    Freed,
}

/// Milliseconds from `now_ms` to `deadline_ms` (0 once passed, -1 for
/// `NO_DEADLINE`): a lease's TTL, or a key's PTTL from its expiry.
pub fn ttl_left(deadline_ms: i64, now_ms: i64) -> i64 {
    if deadline_ms == NO_DEADLINE {
        return -1;
    }
    deadline_ms.saturating_sub(now_ms).max(0)
}

/// Validates a lease length and turns it into an absolute deadline.
pub fn lease_deadline(now_ms: i64, ttl_ms: i64) -> Result<i64, WardenError> {
    if ttl_ms <= 0 {
        return Err(WardenError::NotPositive(TTL_MS.name));
    }
    if ttl_ms > TTL_MS.max {
        return Err(WardenError::OutOfRange(TTL_MS.name));
    }
    // let-else, not `ok_or`: the usual path builds (and drops) no error.
    let Some(deadline) = now_ms.checked_add(ttl_ms) else {
        return Err(WardenError::OutOfRange(TTL_MS.name));
    };
    Ok(deadline)
}

impl LockState {
    /// Offers the owner's heap block, if any, to `m` (active defragmentation).
    pub fn relocate(&mut self, m: &mut dyn Mover) {
        self.owner.relocate(m);
    }
}

impl<O: Deref<Target = [u8]>> LockState<O> {
    /// The same state with its own copy of the owner.
    pub fn owned(&self) -> LockState {
        LockState {
            owner: CompactBytes::from(&*self.owner),
            token: self.token,
            holds: self.holds,
            deadline_ms: self.deadline_ms,
        }
    }

    /// The same state with its owner borrowed.
    pub fn view(&self) -> LockState<&[u8]> {
        LockState {
            owner: &self.owner,
            token: self.token,
            holds: self.holds,
            deadline_ms: self.deadline_ms,
        }
    }

    /// Whether the lock is held at `now_ms`: some holds left and the lease running.
    pub fn is_live(&self, now_ms: i64) -> bool {
        self.holds > 0 && now_ms < self.deadline_ms
    }

    /// Whether `owner` holds this lock at `now_ms`, by the grant that carried
    /// `token` when one is given (an owner name reused by a stale process
    /// does not match a newer grant).
    pub fn is_held_by(&self, owner: &[u8], token: Option<i64>, now_ms: i64) -> bool {
        self.is_live(now_ms) && *self.owner == *owner && token.is_none_or(|t| t == self.token)
    }

    /// Milliseconds left on the lease (0 once expired, -1 when it has no end).
    pub fn ttl_ms(&self, now_ms: i64) -> i64 {
        ttl_left(self.deadline_ms, now_ms)
    }

    /// Drops one hold if `owner` holds the lock (by the grant of `token`, when given).
    pub fn release(&mut self, owner: &[u8], token: Option<i64>, now_ms: i64) -> Release {
        if !self.is_held_by(owner, token, now_ms) {
            return Release::NotHeld;
        }
        if self.holds > 1 {
            self.holds -= 1;
            Release::StillHeld
        } else {
            self.holds = 0;
            Release::Freed
        }
    }

    /// Sets a new lease end if `owner` holds the lock (by the grant of `token`,
    /// when given); never revives an expired one.
    pub fn extend(
        &mut self,
        owner: &[u8],
        token: Option<i64>,
        deadline_ms: i64,
        now_ms: i64,
    ) -> bool {
        if !self.is_held_by(owner, token, now_ms) {
            return false;
        }
        self.deadline_ms = deadline_ms;
        true
    }

    /// Checks a state read from storage or a replication stream.
    pub fn validate(&self) -> Result<(), WardenError> {
        if self.owner.is_empty() {
            return Err(errors::OWNER_EMPTY);
        }
        if self.token <= 0 || self.token > MAX_TOKEN {
            return Err(WardenError::InvalidState("token out of range"));
        }
        if self.holds <= 0 {
            return Err(WardenError::InvalidState("holds must be positive"));
        }
        if self.deadline_ms <= 0 {
            return Err(WardenError::InvalidState("deadline must be positive"));
        }
        Ok(())
    }
}

/// Decides an acquire by `owner` against the current record (`None` = no key).
/// `deadline_ms` is the lease end a grant or re-entry gets; `reentrant` asks
/// for one more hold when `owner` already holds the lock.
pub fn acquire<'a, O: Deref<Target = [u8]>>(
    current: Option<&mut LockState<O>>,
    owner: &'a [u8],
    deadline_ms: i64,
    reentrant: bool,
    now_ms: i64,
    fence: &mut FenceClock,
) -> Result<Acquire<'a>, WardenError> {
    match current {
        Some(state) if state.is_live(now_ms) => {
            if *state.owner != *owner {
                return Ok(Acquire::Busy);
            }
            if reentrant {
                state.holds = state.holds.checked_add(1).ok_or(errors::HOLDS_OVERFLOW)?;
            }
            state.deadline_ms = deadline_ms;
            Ok(Acquire::Reentered { token: state.token })
        }
        expired => {
            let floor = expired.map_or(0, |s| s.token);
            Ok(Acquire::Granted(grant(
                owner,
                deadline_ms,
                floor,
                now_ms,
                fence,
            )?))
        }
    }
}

/// A fresh grant with a new fencing token above `floor` (the token of the
/// expired record the grant replaces, 0 for none).
pub fn grant<'a>(
    owner: &'a [u8],
    deadline_ms: i64,
    floor: i64,
    now_ms: i64,
    fence: &mut FenceClock,
) -> Result<LockState<&'a [u8]>, WardenError> {
    Ok(LockState {
        owner,
        token: fence.next_above(floor, now_ms)?,
        holds: 1,
        deadline_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A manual clock for the tests.
    struct Clock(i64);

    fn acquire_at<'a>(
        slot: &mut Option<LockState>,
        owner: &'a [u8],
        ttl: i64,
        clock: &Clock,
        fence: &mut FenceClock,
    ) -> Acquire<'a> {
        let deadline = lease_deadline(clock.0, ttl).expect("valid ttl");
        let out =
            acquire(slot.as_mut(), owner, deadline, true, clock.0, fence).expect("no overflow");
        if let Acquire::Granted(state) = &out {
            *slot = Some(state.owned());
        }
        out
    }

    fn token_of(a: &Acquire) -> i64 {
        match a {
            Acquire::Granted(s) => s.token,
            Acquire::Reentered { token } => *token,
            Acquire::Busy => panic!("busy"),
        }
    }

    #[test]
    fn grant_then_busy_then_free_after_ttl() {
        let mut clock = Clock(1_000);
        let mut fence = FenceClock::default();
        let mut slot = None;
        let first = acquire_at(&mut slot, b"a", 100, &clock, &mut fence);
        assert!(matches!(first, Acquire::Granted(_)));
        clock.0 = 1_099;
        assert_eq!(
            acquire_at(&mut slot, b"b", 100, &clock, &mut fence),
            Acquire::Busy
        );
        clock.0 = 1_100; // deadline reached: free
        let second = acquire_at(&mut slot, b"b", 100, &clock, &mut fence);
        assert!(token_of(&second) > token_of(&first));
        assert_eq!(slot.as_ref().map(|s| s.owner.to_vec()), Some(b"b".to_vec()));
    }

    #[test]
    fn reentry_keeps_token_and_needs_as_many_releases() {
        let clock = Clock(5_000);
        let mut fence = FenceClock::default();
        let mut slot = None;
        let t1 = token_of(&acquire_at(&mut slot, b"a", 1_000, &clock, &mut fence));
        let t2 = token_of(&acquire_at(&mut slot, b"a", 2_000, &clock, &mut fence));
        let t3 = token_of(&acquire_at(&mut slot, b"a", 500, &clock, &mut fence));
        assert_eq!((t1, t2), (t3, t3));
        let state = slot.as_mut().expect("held");
        assert_eq!(state.holds, 3);
        assert_eq!(
            state.deadline_ms, 5_500,
            "re-entry resets the lease to its ttl"
        );
        assert_eq!(state.release(b"a", None, clock.0), Release::StillHeld);
        assert_eq!(state.release(b"a", None, clock.0), Release::StillHeld);
        assert_eq!(state.release(b"a", None, clock.0), Release::Freed);
        assert!(
            !state.is_live(clock.0),
            "a freed lock is free before its deadline"
        );
    }

    #[test]
    fn only_the_owner_releases_or_extends() {
        let mut fence = FenceClock::default();
        let mut state = grant(b"a", 200, 0, 100, &mut fence).expect("grant");
        assert_eq!(state.release(b"b", None, 150), Release::NotHeld);
        assert!(!state.extend(b"b", None, 900, 150));
        assert_eq!(state.deadline_ms, 200);
        assert!(state.extend(b"a", None, 900, 150));
        assert_eq!(state.ttl_ms(150), 750);
    }

    #[test]
    fn a_token_selects_the_grant_it_came_with() {
        let mut fence = FenceClock::default();
        let old = grant(b"a", 200, 0, 100, &mut fence).expect("grant");
        // The same owner name, granted again after the old lease ended.
        let mut state = grant(b"a", 900, old.token, 300, &mut fence).expect("grant");
        assert!(state.token > old.token);
        assert!(!state.extend(b"a", Some(old.token), 5_000, 400));
        assert_eq!(state.release(b"a", Some(old.token), 400), Release::NotHeld);
        assert_eq!(
            state.release(b"b", Some(state.token), 400),
            Release::NotHeld
        );
        assert!(state.is_held_by(b"a", Some(state.token), 400));
        assert!(!state.is_held_by(b"a", Some(state.token), 900), "expired");
        assert!(state.extend(b"a", Some(state.token), 5_000, 400));
        assert_eq!(state.release(b"a", Some(state.token), 400), Release::Freed);
    }

    #[test]
    fn expired_lock_cannot_be_released_or_extended() {
        let mut fence = FenceClock::default();
        let mut state = grant(b"a", 200, 0, 100, &mut fence).expect("grant");
        assert_eq!(state.release(b"a", None, 200), Release::NotHeld);
        assert!(!state.extend(b"a", None, 900, 250));
        assert_eq!(state.ttl_ms(250), 0);
    }

    #[test]
    fn ttl_must_be_positive_and_in_range() {
        let positive = WardenError::NotPositive("ttl");
        let range = WardenError::OutOfRange("ttl");
        assert_eq!(lease_deadline(10, 0), Err(positive.clone()));
        assert_eq!(lease_deadline(10, -5), Err(positive));
        assert_eq!(lease_deadline(10, i64::MAX), Err(range.clone()));
        assert_eq!(lease_deadline(10, TTL_MS.max + 1), Err(range));
        assert_eq!(lease_deadline(10, TTL_MS.max), Ok(10 + TTL_MS.max));
        assert_eq!(lease_deadline(10, 1), Ok(11));
    }

    #[test]
    fn a_plain_repeat_keeps_one_hold_and_reentrant_counts() {
        let mut fence = FenceClock::default();
        let mut state = grant(b"a", 1_000, 0, 0, &mut fence).expect("grant");
        let token = state.token;
        for _ in 0..3 {
            let out = acquire(Some(&mut state), b"a", 2_000, false, 10, &mut fence);
            assert_eq!(out, Ok(Acquire::Reentered { token }));
        }
        assert_eq!((state.holds, state.deadline_ms), (1, 2_000));
        let out = acquire(Some(&mut state), b"a", 3_000, true, 10, &mut fence);
        assert_eq!(out, Ok(Acquire::Reentered { token }));
        assert_eq!(state.holds, 2);
        assert_eq!(state.release(b"a", None, 20), Release::StillHeld);
        assert_eq!(state.release(b"a", None, 20), Release::Freed);
    }

    #[test]
    fn ttl_left_counts_down_to_zero_and_is_minus_one_without_end() {
        assert_eq!(ttl_left(1_500, 1_000), 500);
        assert_eq!(ttl_left(1_000, 1_000), 0);
        assert_eq!(ttl_left(900, 1_000), 0);
        assert_eq!(ttl_left(i64::MIN, i64::MAX - 1), 0);
        assert_eq!(ttl_left(NO_DEADLINE, 1_000), -1);
    }

    #[test]
    fn a_lease_without_deadline_never_ends() {
        let mut fence = FenceClock::default();
        let state = grant(b"a", NO_DEADLINE, 0, 0, &mut fence).expect("grant");
        assert!(state.is_live(i64::MAX - 1));
        assert_eq!(state.ttl_ms(5), -1);
    }

    #[test]
    fn a_forged_token_raises_only_its_own_key() {
        let now = 1_800_000_000_000;
        let mut fence = FenceClock::default();
        fence.observe(MAX_TOKEN, now);
        let other = fence.next(now).expect("other keys still get tokens");
        assert_eq!(other, now * 1000);
        let mut forged = grant(b"m", now + 10, 0, now, &mut fence).expect("grant");
        forged.token = MAX_TOKEN - 1;
        // Expired: the next grant on that key must still exceed its token.
        let out = acquire(
            Some(&mut forged),
            b"a",
            now + 100,
            false,
            now + 20,
            &mut fence,
        );
        assert!(matches!(out, Ok(Acquire::Granted(ref s)) if s.token == MAX_TOKEN));
        assert!(fence.next(now).expect("unaffected") < MAX_TOKEN / 2);
        // A plausible token from storage does raise the server-wide floor.
        fence.observe(now * 1000 + 5_000_000, now);
        assert_eq!(fence.next(now), Ok(now * 1000 + 5_000_001));
    }

    #[test]
    fn holds_overflow_is_an_error_and_changes_nothing() {
        let mut fence = FenceClock::default();
        let mut state = grant(b"a", 1_000, 0, 0, &mut fence).expect("grant");
        state.holds = i64::MAX;
        let before = state;
        assert_eq!(
            acquire(Some(&mut state), b"a", 2_000, true, 0, &mut fence),
            Err(errors::HOLDS_OVERFLOW)
        );
        assert_eq!(state, before);
    }

    #[test]
    fn validate_rejects_forged_states() {
        let ok = LockState {
            owner: CompactBytes::from(&b"o"[..]),
            token: 1,
            holds: 1,
            deadline_ms: 1,
        };
        assert!(ok.validate().is_ok());
        for bad in [
            LockState {
                token: MAX_TOKEN + 1,
                ..ok.clone()
            },
            LockState {
                token: i64::MAX,
                ..ok.clone()
            },
            LockState {
                owner: CompactBytes::from(&b""[..]),
                ..ok.clone()
            },
            LockState {
                token: 0,
                ..ok.clone()
            },
            LockState {
                holds: 0,
                ..ok.clone()
            },
            LockState {
                deadline_ms: -1,
                ..ok.clone()
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }

    /// Property: under any interleaving of acquires, releases and clock steps by
    /// a few owners, at most one owner holds the lock at a time and every new
    /// grant's token is larger than all earlier ones.
    #[test]
    fn random_schedules_keep_mutual_exclusion_and_token_order() {
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut rand = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..200 {
            let mut clock = Clock(1_000_000);
            let mut fence = FenceClock::default();
            let mut slot: Option<LockState> = None;
            let mut last_token = 0;
            for _ in 0..300 {
                let owner = [b'a' + rand(3) as u8];
                match rand(3) {
                    0 => {
                        let held_before = slot.clone().filter(|s| s.is_live(clock.0));
                        let out =
                            acquire_at(&mut slot, &owner, 1 + rand(50) as i64, &clock, &mut fence);
                        match (&out, &held_before) {
                            (Acquire::Granted(s), None) => {
                                assert!(s.token > last_token);
                                last_token = s.token;
                            }
                            (Acquire::Granted(_), Some(_)) => panic!("granted while held"),
                            (Acquire::Busy, Some(h)) => assert_ne!(&*h.owner, &owner[..]),
                            (Acquire::Busy, None) => panic!("busy while free"),
                            (Acquire::Reentered { token }, Some(h)) => assert_eq!(*token, h.token),
                            (Acquire::Reentered { .. }, None) => panic!("re-entered a free lock"),
                        }
                    }
                    1 => {
                        if let Some(s) = slot.as_mut() {
                            if s.release(&owner, None, clock.0) == Release::Freed {
                                slot = None;
                            }
                        }
                    }
                    _ => clock.0 += rand(30) as i64,
                }
            }
        }
    }
}
