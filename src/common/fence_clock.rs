//! The fencing clock: tokens that strictly increase across grants, restarts
//! and failovers (the clock part), and the failover epochs that keep a
//! promoted replica's tokens above its old master's. Shared by lock grants
//! and cache leases; times are passed in by the caller.

use crate::common::error::WardenError;

/// Largest token accepted from storage or a master: far above any clock-based
/// token (now_ms × 1000 is about 2^61 in the year 2100), and far enough below
/// i64::MAX that tokens can never run out.
pub const MAX_TOKEN: i64 = 1 << 62;

/// Tokens per millisecond of clock in `FenceClock`: the clock part of a token
/// is `now_ms × TOKENS_PER_MS`, leaving room for this many grants per ms
/// before the counter runs ahead of the clock.
pub const TOKENS_PER_MS: i64 = 1000;

/// How far ahead of `now_ms × 1000` a token in a stored value may be and
/// still raise the server-wide floor (2^58, about 9 years of clock): a real
/// token runs ahead of the clock while grants outpace 1000 per ms and after
/// each failover (`EPOCH_JUMP`; 2^58 is over 1.6 × 10^6 promotions back to
/// back). A client's `RESTORE` of a larger one is refused (`admits`); one
/// already in a file raises only its own key's floor. Either way no stored
/// value can move the floor of every key more than this past the clock.
pub const MAX_TOKEN_LEAD: i64 = 1 << 58;

/// How long (ms) a master cut off by a partition may go on granting after a
/// replica replaced it and still issue only tokens below the new master's
/// (24 h, counted from when the replica stopped hearing from it): the `D` of
/// docs/operations.md, failover and split brain.
pub const EPOCH_HORIZON_MS: i64 = 24 * 3_600_000;

/// How far (ms) the clock of the node a replica replaces may run ahead of the
/// replica's own and keep `EPOCH_HORIZON_MS` whole (1 h): the `S` of
/// docs/operations.md, failover and split brain.
pub const MAX_CLOCK_SKEW_MS: i64 = 3_600_000;

/// How far a promotion raises the token floor above both the largest token
/// the node has seen and its clock. A token is at most the largest clock
/// reading so far plus the grants since (each `next` adds at most one), so a
/// cut-off master, its clock up to `MAX_CLOCK_SKEW_MS` ahead, granting for
/// `EPOCH_HORIZON_MS` at 1000 per ms on average, stays below
/// `(2 × EPOCH_HORIZON_MS + MAX_CLOCK_SKEW_MS) × 1000` above what the
/// replica had seen when it lost the master (about 1.8 × 10^11).
pub const EPOCH_JUMP: i64 = (2 * EPOCH_HORIZON_MS + MAX_CLOCK_SKEW_MS) * TOKENS_PER_MS;

/// The token space left (`FenceClock::headroom`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headroom {
    /// Tokens that can still be issued.
    pub tokens: i64,
    /// Failover epochs that still fit.
    pub promotions: i64,
}

/// Issues fencing tokens as `max(last + 1, now_ms * 1000)`.
///
/// The counter part makes tokens strictly increase while the process lives;
/// the clock part keeps them increasing after the record or the whole process
/// is gone (DEL, FLUSHALL, restart, failover), provided the clock does not step
/// back and fewer than 1000 grants per millisecond were issued on average.
#[derive(Debug, Default, Clone, Copy)]
pub struct FenceClock {
    last: i64,
}

impl FenceClock {
    /// A clock whose largest token so far is `last`.
    pub fn starting_at(last: i64) -> FenceClock {
        FenceClock { last }
    }

    /// The next token; an error instead of a token above `MAX_TOKEN`, so
    /// tokens never repeat and never go down.
    pub fn next(&mut self, now_ms: i64) -> Result<i64, WardenError> {
        self.next_above(0, now_ms)
    }

    /// The next token, also above `floor` (one key's own last token). The
    /// token is recorded whatever its lead on the clock — unless it was the
    /// key's own floor, implausibly far ahead, that put it there (a forged
    /// value an older version stored): then only that key goes on above it.
    pub fn next_above(&mut self, floor: i64, now_ms: i64) -> Result<i64, WardenError> {
        let token = self
            .last
            .max(floor)
            .saturating_add(1)
            .max(now_ms.saturating_mul(TOKENS_PER_MS));
        if token > MAX_TOKEN {
            return Err(WardenError::TokensExhausted);
        }
        if floor <= self.last || token <= Self::plausible(now_ms) {
            self.last = token;
        }
        Ok(token)
    }

    /// Records a token seen in a stored value (a key loaded or replicated),
    /// so later tokens exceed it — unless it runs more than `MAX_TOKEN_LEAD`
    /// ahead of the clock, which no real grant does (its key keeps it as
    /// its own floor).
    pub fn observe(&mut self, token: i64, now_ms: i64) {
        if token <= Self::plausible(now_ms) {
            self.last = self.last.max(token);
        }
    }

    /// Whether a client may store a value carrying `token` (`RESTORE`): one
    /// at or below the largest token so far, or within `MAX_TOKEN_LEAD` of
    /// the clock. A larger one would push the floor of every key.
    pub fn admits(&self, token: i64, now_ms: i64) -> bool {
        token <= self.last.max(Self::plausible(now_ms))
    }

    fn plausible(now_ms: i64) -> i64 {
        now_ms
            .saturating_mul(TOKENS_PER_MS)
            .saturating_add(MAX_TOKEN_LEAD)
    }

    /// Raises the floor to `floor`, a failover epoch this node persisted or
    /// its master announced (capped at `MAX_TOKEN`): trusted whatever its
    /// lead on the clock, since the node's own later grants depend on it.
    pub fn raise_to(&mut self, floor: i64) {
        self.last = self.last.max(floor.min(MAX_TOKEN));
    }

    /// Records a token a master issued, as its effect on a key arrives
    /// (replicated, or replayed from the AOF), the way the master recorded
    /// it (`next_above`): the floor follows the master's grants however far
    /// past the clock its epochs have taken them, each a little above the
    /// last. Not a forged key's (an older version stored it), which stays
    /// that key's alone: one whose own floor (`key_floor`, its last token
    /// before this effect) was already above the node's while the token
    /// runs past the plausible lead, or a token more than `MAX_TOKEN_LEAD`
    /// past both the floor and that lead (a key an AOF rewrite wrote out
    /// arrives as new).
    pub fn follow(&mut self, token: i64, key_floor: i64, now_ms: i64) {
        let plausible = Self::plausible(now_ms);
        let as_master = key_floor <= self.last || token <= plausible;
        let within = token <= self.last.max(plausible).saturating_add(MAX_TOKEN_LEAD);
        if as_master && within {
            self.raise_to(token);
        }
    }

    /// Starts a failover epoch when this node becomes master: every token
    /// from now on is above `max(last, now_ms × 1000) + EPOCH_JUMP`, hence
    /// above every token the master it replaced (whose tokens this node had
    /// seen up to `last`) can issue within `EPOCH_HORIZON_MS` at up to 1000
    /// grants per ms with a clock up to `MAX_CLOCK_SKEW_MS` ahead. Returns
    /// the new floor (capped at `MAX_TOKEN`: past it grants are refused).
    pub fn promote(&mut self, now_ms: i64) -> i64 {
        self.last = self
            .last
            .max(now_ms.saturating_mul(TOKENS_PER_MS))
            .saturating_add(EPOCH_JUMP)
            .min(MAX_TOKEN);
        self.last
    }

    /// What is left of the token space at `now_ms`: the tokens still to be
    /// issued, and the promotions (`EPOCH_JUMP` each) that fit in them.
    pub fn headroom(&self, now_ms: i64) -> Headroom {
        let tokens = MAX_TOKEN
            - self
                .last
                .max(now_ms.saturating_mul(TOKENS_PER_MS))
                .min(MAX_TOKEN);
        Headroom {
            tokens,
            promotions: tokens / EPOCH_JUMP,
        }
    }

    /// The largest token issued or seen.
    pub fn last(&self) -> i64 {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_strictly_increase_within_one_millisecond() {
        let mut fence = FenceClock::default();
        let tokens: Vec<i64> = (0..5_000).map(|_| fence.next(42).expect("token")).collect();
        assert!(tokens.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(tokens[0], 42_000);
    }

    #[test]
    fn tokens_survive_a_lost_counter_when_time_moves_on() {
        let mut fence = FenceClock::default();
        let before: Vec<i64> = (0..900)
            .map(|_| fence.next(1_000).expect("token"))
            .collect();
        // Process restarted: the counter is gone, the clock has moved on by 1 ms.
        let mut fresh = FenceClock::default();
        assert!(fresh.next(1_001).expect("token") > *before.last().expect("tokens"));
    }

    #[test]
    fn clock_stepping_back_never_lowers_tokens() {
        let mut fence = FenceClock::default();
        let a = fence.next(10_000).expect("token");
        let b = fence.next(5_000).expect("token");
        assert!(b > a);
    }

    #[test]
    fn observed_tokens_raise_the_floor() {
        let mut fence = FenceClock::default();
        let now = MAX_TOKEN / 1000;
        fence.observe(MAX_TOKEN - 1, now);
        assert_eq!(fence.next(now), Ok(MAX_TOKEN));
        assert_eq!(
            fence.next(now),
            Err(WardenError::TokensExhausted),
            "never repeats"
        );
        fence.observe(3, now);
        assert_eq!(fence.last(), MAX_TOKEN);
    }

    /// The tokens `n` grants issued in one millisecond end at (the last of them).
    fn burst(fence: &mut FenceClock, n: i64, now_ms: i64) -> i64 {
        let floor = fence.last().max(now_ms * TOKENS_PER_MS - 1) + n - 1;
        *fence = FenceClock::starting_at(floor);
        fence.next(now_ms).expect("token")
    }

    #[test]
    fn a_promoted_replica_outranks_its_old_master_for_the_horizon() {
        // Random partitions: the old master goes on granting for up to
        // EPOCH_HORIZON_MS at up to 1000 grants per ms (counted from the
        // moment replication stopped), its clock up to MAX_CLOCK_SKEW_MS off.
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut rand = move |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 11) % n
        };
        for _ in 0..2_000 {
            let cut_ms = 1_700_000_000_000 + rand(1 << 40) as i64;
            let lead = if rand(2) == 0 {
                0
            } else {
                rand(1 << 50) as i64
            };
            let seen = cut_ms * TOKENS_PER_MS + lead;
            let mut old = FenceClock::starting_at(seen);
            let mut new = FenceClock::starting_at(seen);
            new.promote(cut_ms + rand(10_000) as i64);
            let first_new = new.next(cut_ms).expect("token");
            let skew = rand(2 * MAX_CLOCK_SKEW_MS as u64 + 1) as i64 - MAX_CLOCK_SKEW_MS;
            let mut elapsed = 0;
            let mut issued = 0;
            let mut highest_old = 0;
            while elapsed < EPOCH_HORIZON_MS {
                elapsed =
                    (elapsed + 1 + rand(EPOCH_HORIZON_MS as u64 / 8) as i64).min(EPOCH_HORIZON_MS);
                // As many grants as the rate allows since the cut, all now.
                let n = (elapsed * TOKENS_PER_MS - issued).max(1);
                issued += n;
                highest_old = burst(&mut old, n, cut_ms + elapsed + skew);
            }
            assert!(
                highest_old < first_new,
                "old {highest_old} reached new {first_new} (skew {skew}, lead {lead})"
            );
        }
    }

    #[test]
    fn past_the_horizon_the_skew_or_the_rate_the_old_master_catches_up() {
        // The bound is tight: the documented assumptions are what it rests on.
        let cut_ms = 1_800_000_000_000;
        let seen = cut_ms * TOKENS_PER_MS;
        let mut new = FenceClock::starting_at(seen);
        new.promote(cut_ms);
        let first_new = new.next(cut_ms).expect("token");
        let at_horizon = cut_ms + EPOCH_HORIZON_MS;
        let allowed = EPOCH_HORIZON_MS * TOKENS_PER_MS;
        let mut within = FenceClock::starting_at(seen);
        assert!(burst(&mut within, allowed, at_horizon + MAX_CLOCK_SKEW_MS) < first_new);
        let mut skewed = FenceClock::starting_at(seen);
        assert!(burst(&mut skewed, allowed, at_horizon + MAX_CLOCK_SKEW_MS + 1) >= first_new);
        let mut busy = FenceClock::starting_at(seen);
        assert!(burst(&mut busy, allowed + 2, at_horizon + MAX_CLOCK_SKEW_MS) >= first_new);
    }

    #[test]
    fn promotions_keep_tokens_rising_with_room_for_a_million() {
        let now = 4_102_444_800_000; // 2100-01-01
        let mut fence = FenceClock::default();
        let mut last = fence.next(now).expect("token");
        for _ in 0..1_000_000 {
            let floor = fence.promote(now);
            assert!(floor >= last + EPOCH_JUMP);
            last = fence.next(now).expect("room for a million promotions");
        }
        assert!(last < MAX_TOKEN / 16, "{last}");
        // A replica of the millionth master still takes its floor as real.
        let mut replica = FenceClock::default();
        replica.observe(last, now);
        assert_eq!(replica.last(), last);
        // At the very top, promotion stops at MAX_TOKEN instead of wrapping.
        let mut top = FenceClock::starting_at(MAX_TOKEN - 5);
        assert_eq!(top.promote(now), MAX_TOKEN);
        assert_eq!(top.promote(now), MAX_TOKEN);
    }

    #[test]
    fn tokens_issued_past_the_lead_still_rise() {
        // A floor pushed past the plausible lead (by promotions, or a
        // restored token near the bound and then one promotion): every grant
        // still gets its own, larger token.
        let now = 1_796_000_000_000;
        let mut fence = FenceClock::default();
        fence.observe(now * TOKENS_PER_MS + MAX_TOKEN_LEAD - 1, now);
        fence.promote(now);
        let tokens: Vec<i64> = (0..7).map(|_| fence.next(now).expect("token")).collect();
        assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
        assert_eq!(fence.last(), tokens[6]);
    }

    #[test]
    fn promotions_without_end_fail_closed_at_the_top() {
        let now = 1_796_000_000_000;
        let mut fence = FenceClock::default();
        let room = fence.headroom(now);
        assert_eq!(room.tokens, MAX_TOKEN - now * TOKENS_PER_MS);
        let mut last = fence.next(now).expect("token");
        let mut promotions = 0;
        loop {
            fence.promote(now);
            match fence.next(now) {
                Ok(token) => {
                    assert!(token > last, "promotion {promotions}: {token} after {last}");
                    last = token;
                    promotions += 1;
                }
                Err(e) => {
                    assert_eq!(e, WardenError::TokensExhausted);
                    break;
                }
            }
        }
        // The capacity src/lock/README.md states: over 2.6 × 10^7 promotions.
        assert!(
            promotions >= room.promotions - 1,
            "{promotions} of {room:?}"
        );
        assert!(promotions > 26_000_000, "{promotions}");
        assert_eq!(
            fence.headroom(now),
            Headroom {
                tokens: 0,
                promotions: 0
            }
        );
        // Refused from then on, by every path: nothing repeats.
        assert_eq!(fence.next(now), Err(WardenError::TokensExhausted));
        assert_eq!(
            fence.next_above(5, now + 1_000),
            Err(WardenError::TokensExhausted)
        );
        assert_eq!(fence.promote(now), MAX_TOKEN);
        assert_eq!(fence.next(now), Err(WardenError::TokensExhausted));
    }

    #[test]
    fn trusted_floors_are_kept_whatever_their_lead() {
        let now = 1_796_000_000_000;
        let far = now * TOKENS_PER_MS + 4 * MAX_TOKEN_LEAD;
        let mut fence = FenceClock::default();
        fence.observe(far, now);
        assert_eq!(
            fence.last(),
            0,
            "a stored value's implausible token is not the floor"
        );
        fence.raise_to(far);
        assert_eq!(fence.last(), far, "an epoch persisted or announced is");
        assert_eq!(fence.next(now), Ok(far + 1));
        fence.raise_to(i64::MAX);
        assert_eq!(fence.last(), MAX_TOKEN, "capped");
        fence.raise_to(5);
        assert_eq!(fence.last(), MAX_TOKEN, "never lowered");
    }

    #[test]
    fn a_client_may_restore_tokens_within_the_lead_or_below_the_floor() {
        let now = 1_796_000_000_000;
        let bound = now * TOKENS_PER_MS + MAX_TOKEN_LEAD;
        let mut fence = FenceClock::default();
        assert!(fence.admits(1, now));
        assert!(fence.admits(bound, now));
        assert!(!fence.admits(bound + 1, now));
        assert!(!fence.admits(MAX_TOKEN, now));
        // A node whose own epochs run past the lead takes back its own dumps.
        fence.raise_to(bound + 1_000);
        assert!(fence.admits(bound + 1_000, now));
        assert!(!fence.admits(bound + 1_001, now));
        // Admitted tokens raise the floor at most MAX_TOKEN_LEAD past the clock.
        let mut other = FenceClock::default();
        for _ in 0..100 {
            let t = other.last().max(bound);
            if other.admits(t, now) {
                other.observe(t, now);
            }
        }
        assert_eq!(other.last(), bound);
    }

    #[test]
    fn a_master_s_tokens_are_followed_but_a_forged_key_s_stay_its_own() {
        let now = 1_796_000_000_000;
        // A replica of a master whose epochs run far past the lead follows
        // its grants one by one, on keys it follows too.
        let mut replica = FenceClock::default();
        let far = now * TOKENS_PER_MS + 3 * MAX_TOKEN_LEAD;
        replica.raise_to(far);
        let mut key_floor = 0;
        for t in far + 1..far + 100 {
            replica.follow(t, key_floor, now);
            key_floor = t;
        }
        assert_eq!(replica.last(), far + 99);
        // A chain of forged keys near the top, each 2^58 above the last (an
        // older version took them): their grants' and extensions' effects
        // move no floor, however many.
        let mut fresh = FenceClock::default();
        for i in 1..16 {
            let forged = MAX_TOKEN - 5 - (15 - i) * MAX_TOKEN_LEAD;
            fresh.follow(forged, forged, now);
            fresh.follow(forged + 1, forged, now);
        }
        assert_eq!(fresh.last(), 0);
        // One written out by an AOF rewrite arrives as a new key.
        fresh.follow(MAX_TOKEN - 904, 0, now);
        assert_eq!(fresh.last(), 0);
        assert!(fresh.next(now).expect("token") < now * TOKENS_PER_MS + 1_000);
    }
}
