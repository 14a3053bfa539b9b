//! Token buckets (RL.TOKEN, golang.org/x/time/rate semantics) and leaky
//! buckets (RL.LEAKY, a meter), with one or several limits per key and the
//! rules for a live key whose parameters change.
//!
//! A call lists its limits; the i-th continues the i-th the key holds (a
//! limit beyond those starts full; stored ones beyond the call's are
//! dropped). It passes only when every limit lets it, and then counts
//! against all of them; the reply is the tightest (smallest remaining,
//! largest wait and reset).
//!
//! A limit whose rate or size changed carries over what was used, as
//! x/time/rate's `SetLimitAt` / `SetBurstAt` do: it first refills at the
//! rate it was written with up to now, capped at its old burst, then the
//! new parameters apply from now. A token bucket keeps its tokens, capped
//! at the new burst (raising the burst hands out no tokens); a leaky bucket
//! keeps its level (a lower capacity forgives nothing). Tokens moved to a
//! new rate's ticks round down and a level rounds up: a change never mints
//! an event. At rate inf everything passes and nothing is kept: the limit is
//! full again as soon as any time passes. At rate 0 nothing refills.

use crate::common::error::WardenError;
use crate::rate::core::errors;
use crate::rate::core::rate::{
    clamp, clamp128, elapsed_ms, full_at, ms_for, mul_div_ceil, mul_div_floor, overflow,
    stored_time, to_i64, BucketState, Decided, Decision, Outcome, Rate,
};

/// One limit of a bucket call: its rate, and its burst (RL.TOKEN) or
/// capacity (RL.LEAKY).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketLimit {
    /// Refill (token) or drain (leaky) rate.
    pub rate: Rate,
    /// Burst or capacity, in events.
    pub size: u64,
}

impl BucketLimit {
    /// A placeholder to fill a buffer of limits with.
    pub const NONE: BucketLimit = BucketLimit {
        rate: Rate::Inf,
        size: 0,
    };
}

/// What a parameter change keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keeps {
    /// Token bucket: the tokens, capped at the new burst.
    Tokens,
    /// Leaky bucket: the level, whatever the new capacity.
    Level,
}

/// The ticks of a rate: (per token, per ms); (0, 0) for inf.
fn ticks(rate: Rate) -> (u64, u64) {
    match rate {
        Rate::Inf => (0, 0),
        Rate::Finite {
            ticks_per_token,
            ticks_per_ms,
        } => (ticks_per_token, ticks_per_ms),
    }
}

/// The ticks per token a stored deficit is counted in: its rate's, or at
/// rate inf (`ticks_per_token` 0, which refills nothing per ms) the ones
/// kept in `ticks_per_ms` from the rate before, so that a switch to inf
/// and back within a millisecond loses no fraction of a token.
fn unit_of(s: &BucketState) -> u64 {
    if s.ticks_per_token == 0 {
        s.ticks_per_ms.max(1)
    } else {
        s.ticks_per_token
    }
}

/// Whether a stored limit was written with other parameters than the rate
/// of ticks (`tpt`, `tpm`) and `burst` (0 for a leaky bucket).
fn params_changed(s: &BucketState, tpt: u64, tpm: u64, burst: u64) -> bool {
    let rate_changed = s.ticks_per_token != tpt || (tpt != 0 && s.ticks_per_ms != tpm);
    rate_changed || (s.burst != burst && s.burst != crate::rate::core::rate::UNKNOWN_BURST)
}

/// The deficit of `limit` at `now_ms`, carried over from its stored state
/// (`None`: a new limit, full), and the ticks per token it is counted in:
/// the limit's rate's, or at rate inf the stored state's.
fn carry(
    stored: Option<&BucketState>,
    limit: &BucketLimit,
    keeps: Keeps,
    now_ms: i64,
) -> Result<(u128, u64), WardenError> {
    let (tpt, tpm) = ticks(limit.rate);
    let Some(s) = stored else {
        return Ok((0, tpt.max(1)));
    };
    let elapsed = elapsed_ms(s.last_ms, now_ms);
    let old_size = match keeps {
        Keeps::Tokens if s.burst != crate::rate::core::rate::UNKNOWN_BURST => s.burst,
        _ => limit.size,
    };
    let old_unit = unit_of(s);
    // Refill (or drain) at the stored rate up to now.
    let left = if s.ticks_per_token == 0 {
        // An infinite rate refills it to its (old) burst in any time at all.
        if elapsed > 0 {
            0
        } else {
            s.deficit
        }
    } else {
        let refill = elapsed
            .checked_mul(u128::from(s.ticks_per_ms))
            .ok_or_else(overflow)?;
        s.deficit.saturating_sub(refill)
    };
    let keeps_size = keeps == Keeps::Level || old_size == limit.size;
    if !params_changed(s, tpt, tpm, s.burst) && keeps_size {
        return Ok((left, old_unit));
    }
    // Then the new parameters from now on (inf counts in the old ticks).
    let new_unit = if tpt == 0 { old_unit } else { tpt };
    let deficit = match keeps {
        Keeps::Level => mul_div_ceil(left, new_unit, old_unit)?,
        Keeps::Tokens => {
            let full = i128::try_from(u128::from(old_size) * u128::from(old_unit))
                .map_err(|_| overflow())?;
            let tokens = full
                .checked_sub(i128::try_from(left).map_err(|_| overflow())?)
                .ok_or_else(overflow)?;
            let tokens = mul_div_floor(tokens, new_unit, old_unit)?;
            let capacity = i128::try_from(u128::from(limit.size) * u128::from(new_unit))
                .map_err(|_| overflow())?;
            // capacity - min(tokens, capacity) >= 0
            u128::try_from(capacity - tokens.min(capacity)).map_err(|_| overflow())?
        }
    };
    Ok((deficit, new_unit))
}

/// `⌊a / b⌋`, in 64 bits when both fit (128-bit division is a library call).
fn div(a: u128, b: u128) -> u128 {
    match (u64::try_from(a), u64::try_from(b)) {
        (Ok(a), Ok(b)) => u128::from(a / b),
        _ => a / b,
    }
}

/// Decides a call against `limits`, the i-th continuing `stored[i]`, and
/// writes each limit's new state to `out` (at least as long as `limits`).
///
/// A call that passes stores every limit with its cost taken. A call that
/// does not pass (or only looks) stores nothing — except that a denied call
/// that changed a live key's parameters stores what they carried over, as
/// x/time/rate's `SetLimitAt` / `SetBurstAt` do, so that the new parameters
/// apply from that call on. The reply describes the tightest limit: the
/// smallest remaining, the largest wait and reset (-1 when any is never).
fn decide(
    stored: &[BucketState],
    limits: &[BucketLimit],
    keeps: Keeps,
    (cost, max_wait_ms): (u64, u64),
    now_ms: i64,
    out: &mut [BucketState],
) -> Result<Decided, WardenError> {
    // No error is built (and dropped) on the usual path.
    let Some(out) = out.get_mut(..limits.len()) else {
        return Err(errors::too_many_limits());
    };
    // First every limit's state at now, and whether the call passes.
    let (mut allowed, mut never) = (true, false);
    let (mut wait, mut retry) = (0u128, 0u128);
    let mut changed = !stored.is_empty() && stored.len() != limits.len();
    let mut all_inf = true;
    for (i, (limit, new)) in limits.iter().zip(out.iter_mut()).enumerate() {
        let s = stored.get(i);
        let (tpt, tpm) = ticks(limit.rate);
        let burst = if keeps == Keeps::Tokens {
            limit.size
        } else {
            0
        };
        changed |= s.is_some_and(|s| params_changed(s, tpt, tpm, burst));
        if tpt == 0 {
            // Inf: everything passes; an unchanged inf limit is left as it is.
            *new = match s {
                Some(s) if !params_changed(s, tpt, tpm, burst) => *s,
                _ => {
                    let (deficit, unit) = carry(s, limit, keeps, now_ms)?;
                    BucketState {
                        last_ms: stored_time(s.map(|s| s.last_ms), now_ms),
                        deficit,
                        ticks_per_token: 0,
                        ticks_per_ms: unit,
                        burst,
                    }
                }
            };
            continue;
        }
        all_inf = false;
        let token = u128::from(tpt);
        let capacity = u128::from(limit.size)
            .checked_mul(token)
            .ok_or_else(overflow)?;
        let need = u128::from(cost).checked_mul(token).ok_or_else(overflow)?;
        let (deficit, _) = carry(s, limit, keeps, now_ms)?;
        let after = deficit.checked_add(need).ok_or_else(overflow)?;
        if cost > limit.size {
            (allowed, never) = (false, true);
        } else {
            match ms_for(after.saturating_sub(capacity), tpm) {
                None => (allowed, never) = (false, true),
                Some(w) => {
                    wait = wait.max(w);
                    if w > u128::from(max_wait_ms) {
                        allowed = false;
                        retry = retry.max(w - u128::from(max_wait_ms));
                    }
                }
            }
        }
        *new = BucketState {
            last_ms: stored_time(s.map(|s| s.last_ms), now_ms),
            deficit,
            ticks_per_token: tpt,
            ticks_per_ms: tpm,
            burst,
        };
    }
    // Inf limits alone change nothing unless their parameters did.
    let passes = allowed && cost > 0 && (changed || !all_inf);
    // Then the states that stay (the cost taken if the call passes): what the
    // reply describes, and when the key is full again.
    let mut remaining = i64::MAX;
    let (mut reset, mut expires) = (Some(0), Some(now_ms.saturating_add(1)));
    let later = |a: Option<i64>, b: Option<i64>| a.zip(b).map(|(a, b)| a.max(b));
    for (limit, new) in limits.iter().zip(out.iter_mut()) {
        if new.ticks_per_token == 0 {
            remaining = remaining.min(clamp(limit.size));
            expires = later(expires, full_at(new)?);
            continue;
        }
        let token = u128::from(new.ticks_per_token);
        if passes {
            let need = u128::from(cost) * token; // checked above
            new.deficit += need;
        }
        let capacity = u128::from(limit.size) * token; // checked above
        remaining = remaining.min(clamp128(div(capacity.saturating_sub(new.deficit), token)));
        let ms = match ms_for(new.deficit, new.ticks_per_ms) {
            Some(ms) => Some(to_i64(ms)?),
            None => None,
        };
        reset = later(reset, ms);
        let full = ms.map(|ms| new.last_ms.checked_add(ms).ok_or_else(overflow));
        expires = later(expires, full.transpose()?);
    }
    let wait_ms = if allowed {
        // A look too, as x/time/rate's reservation of 0 tokens: the wait for
        // the debt to clear, if any.
        to_i64(wait)?
    } else if never {
        -1
    } else {
        to_i64(retry)?
    };
    let reply = Decision {
        allowed,
        remaining,
        wait_ms,
        reset_ms: reset.unwrap_or(-1),
    };
    let store = (passes || (changed && cost > 0)).then_some(expires);
    Ok(Decided { reply, store })
}

/// Token bucket, golang.org/x/time/rate `ReserveN` semantics, on every
/// limit at once: starts full with `burst` tokens; a call for `cost` tokens
/// within every burst passes when they are there now, or — with
/// `max_wait_ms` — when they will be there within it (the buckets go into
/// debt). `cost` 0 only looks. New states go to `out` (see `Decided`).
pub fn token_buckets(
    stored: &[BucketState],
    limits: &[BucketLimit],
    cost: u64,
    max_wait_ms: u64,
    now_ms: i64,
    out: &mut [BucketState],
) -> Result<Decided, WardenError> {
    decide(
        stored,
        limits,
        Keeps::Tokens,
        (cost, max_wait_ms),
        now_ms,
        out,
    )
}

/// Leaky bucket as a meter: the level drains at `rate`; a call passes when
/// the level plus its cost fits in `capacity`. Never goes into debt.
pub fn leaky_bucket(
    state: Option<&BucketState>,
    rate: Rate,
    capacity: u64,
    cost: u64,
    now_ms: i64,
) -> Result<Outcome<BucketState, Decision>, WardenError> {
    let mut out = [BucketState::default()];
    let limit = BucketLimit {
        rate,
        size: capacity,
    };
    let stored = state.map(std::slice::from_ref).unwrap_or_default();
    let d = decide(stored, &[limit], Keeps::Level, (cost, 0), now_ms, &mut out)?;
    Ok(Outcome {
        reply: d.reply,
        store: d.store.map(|expires| (out[0], expires)),
    })
}

#[cfg(test)]
#[path = "bucket_tests.rs"]
mod tests;
