//! Sliding-window counters (RL.WINDOW) with one or several limits per key.
//!
//! Each limit counts events in windows of its own length, aligned to the
//! first call that counted against it; the previous window's count weighs
//! by the share of it still inside the sliding window. A call passes only
//! when every limit lets it, and then counts against all of them; the reply
//! is the tightest. The i-th limit of a call continues the i-th the key
//! holds (a limit beyond those starts empty; stored ones beyond the call's
//! are dropped).
//!
//! A change of a live limit keeps what was counted: a new `limit` is only a
//! new threshold for the same counts; a new window length keeps both counts
//! and the current window's start, and the current window then ends at its
//! start plus the new length.

use crate::common::error::WardenError;
use crate::rate::core::errors;
use crate::rate::core::rate::{clamp128, overflow, Decided, Decision};

/// Stored state of a sliding-window counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowState {
    /// Start of the current window (windows are aligned to the first call).
    pub start_ms: i64,
    /// Window length the state was written with.
    pub window_ms: i64,
    /// Events counted in the previous window.
    pub previous: u64,
    /// Events counted in the current window.
    pub current: u64,
}

/// One limit of a window call: at most `limit` events per `window_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowLimit {
    /// Events allowed in any window.
    pub limit: u64,
    /// The window's length.
    pub window_ms: u64,
}

impl WindowLimit {
    /// A placeholder to fill a buffer of limits with.
    pub const NONE: WindowLimit = WindowLimit {
        limit: 0,
        window_ms: 0,
    };
}

impl WindowState {
    /// A placeholder to fill a buffer of states with.
    pub const NONE: WindowState = WindowState {
        start_ms: 0,
        window_ms: 1,
        previous: 0,
        current: 0,
    };
}

/// The state of one limit at `now_ms` (never before its window's start):
/// the stored counts (none for a new limit) on the limit's window length,
/// rolled forward over the windows that ended.
fn rolled(stored: Option<&WindowState>, window: i64, now_ms: i64) -> (WindowState, i64) {
    let mut s = match stored {
        Some(s) => WindowState {
            window_ms: window,
            ..*s
        },
        None => WindowState {
            start_ms: now_ms,
            window_ms: window,
            previous: 0,
            current: 0,
        },
    };
    let now = now_ms.max(s.start_ms);
    let passed = (now - s.start_ms) / window;
    if passed >= 2 {
        s = WindowState {
            start_ms: s.start_ms + passed * window,
            previous: 0,
            current: 0,
            ..s
        };
    } else if passed == 1 {
        s = WindowState {
            start_ms: s.start_ms + window,
            previous: s.current,
            current: 0,
            ..s
        };
    }
    (s, now)
}

/// Milliseconds until the window state is empty again.
fn reset_of(s: &WindowState, now: i64) -> i64 {
    if s.current > 0 {
        s.start_ms + 2 * s.window_ms - now
    } else if s.previous > 0 {
        s.start_ms + s.window_ms - now
    } else {
        0
    }
}

/// Sliding-window counters on every limit at once: a call passes when, in
/// each limit, the previous window's count weighted by the part of it still
/// inside the sliding window plus the current count plus `cost` stays within
/// `limit`. `cost` 0 only looks. New states go to `out` (see `Decided`).
pub fn sliding_windows(
    stored: &[WindowState],
    limits: &[WindowLimit],
    cost: u64,
    now_ms: i64,
    out: &mut [WindowState],
) -> Result<Decided, WardenError> {
    // No error is built (and dropped) on the usual path.
    let Some(out) = out.get_mut(..limits.len()) else {
        return Err(errors::too_many_limits());
    };
    let (mut allowed, mut never) = (true, false);
    let (mut remaining, mut remaining_after) = (i64::MAX, i64::MAX);
    let (mut retry, mut reset, mut reset_after) = (0i64, 0i64, 0i64);
    let mut expires = i64::MIN;
    for (i, (l, new)) in limits.iter().zip(out.iter_mut()).enumerate() {
        let window = i64::try_from(l.window_ms).map_err(|_| overflow())?;
        if window == 0 {
            return Err(WardenError::NotPositive("window"));
        }
        // Every time below is at most two windows past now.
        window
            .checked_mul(2)
            .and_then(|w2| now_ms.checked_add(w2))
            .ok_or_else(overflow)?;
        let (s, now) = rolled(stored.get(i), window, now_ms);
        let w = u128::from(l.window_ms);
        let elapsed = (now - s.start_ms) as u128;
        // Everything below is scaled by the window length to stay in integers.
        let cap = u128::from(l.limit) * w;
        let load = u128::from(s.previous) * (w - elapsed) + u128::from(s.current) * w;
        let after = load
            .checked_add(u128::from(cost).checked_mul(w).ok_or_else(overflow)?)
            .ok_or_else(overflow)?;
        remaining = remaining.min(clamp128(cap.saturating_sub(load) / w));
        remaining_after = remaining_after.min(clamp128(cap.saturating_sub(after) / w));
        reset = reset.max(reset_of(&s, now));
        if cost > l.limit {
            (allowed, never) = (false, true);
        } else if after > cap {
            allowed = false;
            retry = retry.max(window_wait(&s, l.limit, cost, window, now));
        }
        *new = WindowState {
            current: s.current.checked_add(cost).ok_or_else(overflow)?,
            ..s
        };
        reset_after = reset_after.max(reset_of(new, now));
        expires = expires.max(new.start_ms + 2 * window);
    }
    if !allowed {
        let reply = Decision {
            allowed,
            remaining,
            wait_ms: if never { -1 } else { retry },
            reset_ms: reset,
        };
        return Ok(Decided { reply, store: None });
    }
    let reply = Decision {
        allowed,
        remaining: remaining_after,
        wait_ms: 0,
        reset_ms: reset_after,
    };
    Ok(Decided {
        reply,
        store: (cost > 0).then_some(Some(expires)),
    })
}

/// Milliseconds until `cost` more events fit in a sliding window (cost ≤ limit).
fn window_wait(s: &WindowState, limit: u64, cost: u64, window: i64, now: i64) -> i64 {
    let w = i128::from(window);
    let (prev, cur, lim, cost) = (
        i128::from(s.previous),
        i128::from(s.current),
        i128::from(limit),
        i128::from(cost),
    );
    let elapsed = i128::from(now - s.start_ms);
    // Within the current window: prev·(w−e) + (cur+cost)·w ≤ lim·w.
    let room = (lim - cur - cost) * w;
    if room >= 0 && prev > 0 {
        let e_min = w - room / prev; // smallest e with prev·(w−e) ≤ room
        let e_min = if (w - e_min) * prev > room {
            e_min + 1
        } else {
            e_min
        };
        if e_min < w {
            return (e_min - elapsed).max(1) as i64;
        }
    }
    // Next window: cur·(w−e) + cost·w ≤ lim·w.
    let room = (lim - cost) * w;
    let e_min = if cur == 0 { 0 } else { (w - room / cur).max(0) };
    let e_min = if cur > 0 && (w - e_min) * cur > room {
        e_min + 1
    } else {
        e_min
    };
    ((w - elapsed) + e_min).max(1) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::core::rate::Outcome;

    /// A one-limit window call, as RL.WINDOW with one limit and window.
    fn sliding_window(
        state: Option<&WindowState>,
        limit: u64,
        window_ms: u64,
        cost: u64,
        now: i64,
    ) -> Result<Outcome<WindowState, Decision>, WardenError> {
        let mut out = [WindowState::NONE];
        let stored = state.map(std::slice::from_ref).unwrap_or_default();
        let l = WindowLimit { limit, window_ms };
        let d = sliding_windows(stored, &[l], cost, now, &mut out)?;
        Ok(Outcome {
            reply: d.reply,
            store: d.store.map(|expires| (out[0], expires)),
        })
    }

    /// A key holding several windows, called with a manual clock.
    fn call(states: &mut Vec<WindowState>, limits: &[(u64, u64)], cost: u64, now: i64) -> Decision {
        let limits: Vec<WindowLimit> = limits
            .iter()
            .map(|(limit, window_ms)| WindowLimit {
                limit: *limit,
                window_ms: *window_ms,
            })
            .collect();
        let mut out = [WindowState::NONE; crate::rate::core::rate::MAX_LIMITS];
        let d = sliding_windows(states, &limits, cost, now, &mut out).expect("ok");
        if d.store.is_some() {
            *states = out[..limits.len()].to_vec();
        }
        d.reply
    }

    #[test]
    fn sliding_window_weights_the_previous_window() {
        let mut state = None;
        let mut call = |cost, now| {
            let out = sliding_window(state.as_ref(), 10, 1000, cost, now).expect("ok");
            if let Some((s, _)) = out.store {
                state = Some(s);
            }
            out.reply
        };
        for _ in 0..10 {
            assert!(call(1, 0).allowed);
        }
        let d = call(1, 500);
        assert!(!d.allowed);
        assert_eq!(
            d.wait_ms, 600,
            "at 1100 ms the previous window weighs 9 events"
        );
        // Half way into the next window the previous 10 count as 5.
        let half = call(5, 1500);
        assert!(half.allowed);
        assert_eq!(half.remaining, 0);
        assert!(!call(1, 1500).allowed);
        assert_eq!(call(11, 1500).wait_ms, -1);
    }

    #[test]
    fn sliding_window_too_long_to_expire_is_an_overflow() {
        for window in [u64::MAX, i64::MAX as u64, 1 << 62] {
            let out = sliding_window(None, 5, window, 1, 1_000);
            assert_eq!(out, Err(errors::OVERFLOW), "{window}");
        }
    }

    #[test]
    fn sliding_window_state_expires_after_two_windows() {
        let out = sliding_window(None, 5, 1000, 1, 7_000).expect("ok");
        let (_, expires) = out.store.expect("stored");
        assert_eq!(expires, Some(9_000));
        assert_eq!(out.reply.reset_ms, 2000);
        assert!(sliding_window(None, 5, 1000, 0, 7_000)
            .expect("ok")
            .store
            .is_none());
    }

    /// Reference model of x/time/rate's ReserveN (float64, as in Go) checked

    #[test]
    fn several_windows_pass_together_and_reply_with_the_tightest() {
        let mut s = Vec::new();
        let limits = [(10, 1_000), (3, 60_000)];
        for left in [2, 1, 0] {
            let d = call(&mut s, &limits, 1, 0);
            assert_eq!((d.allowed, d.remaining), (true, left), "{d:?}");
        }
        let d = call(&mut s, &limits, 1, 500);
        assert!(!d.allowed);
        assert_eq!(d.reset_ms, 119_500, "the largest reset: {d:?}");
        assert_eq!(d.wait_ms, 79_500, "the per-minute window decides: {d:?}");
        // The per-second window alone has room: the denied call counted nowhere.
        let d = call(&mut s, &[(10, 1_000)], 0, 500);
        assert_eq!(d.remaining, 7);
    }

    #[test]
    fn a_window_change_keeps_the_counts() {
        let mut s = Vec::new();
        call(&mut s, &[(10, 60_000)], 6, 0);
        // A lower limit is only a lower threshold for the same 6 events.
        let d = call(&mut s, &[(5, 60_000)], 1, 1_000);
        assert_eq!((d.allowed, d.remaining), (false, 0));
        // A shorter window: the current window now ends at 10 s, and the 6
        // events weigh as the previous window's until 20 s.
        let d = call(&mut s, &[(10, 10_000)], 4, 1_000);
        assert_eq!((d.allowed, d.remaining), (true, 0), "{d:?}");
        let d = call(&mut s, &[(10, 10_000)], 0, 15_000);
        assert_eq!(d.remaining, 5, "10 counted, half of them weigh: {d:?}");
        // An added limit starts empty, a removed one is dropped.
        let d = call(&mut s, &[(10, 10_000), (100, 1_000)], 1, 15_000);
        assert_eq!((d.allowed, d.remaining), (true, 4), "{d:?}");
        assert_eq!(s.len(), 2);
        call(&mut s, &[(10, 10_000)], 1, 15_000);
        assert_eq!(s.len(), 1);
    }
}
