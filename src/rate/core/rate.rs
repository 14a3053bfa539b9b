//! Rate limiters on exact integer arithmetic: a token bucket with
//! golang.org/x/time/rate semantics, a leaky bucket (as a meter), GCRA with
//! redis-cell's replies, and a sliding-window counter.
//!
//! Time is Unix milliseconds passed in by the caller. Buckets keep their state
//! in "ticks": with a rate of `count` events per `period` ns, one token is
//! `period` ticks and one millisecond refills `count × 10^6` ticks, so every
//! refill is an exact integer and no partial refill is ever lost.

use crate::common::error::WardenError;
use crate::common::parse::{unit_ns, IntArg, MAX_DURATION_MS, MAX_EVENTS};
use crate::rate::core::errors;

/// `burst` of RL.TOKEN.
pub const BURST: IntArg = IntArg {
    name: "burst",
    min: 0,
    max: MAX_EVENTS,
    duration: false,
};
/// `capacity` of RL.LEAKY.
pub const LEAKY_CAPACITY: IntArg = IntArg {
    name: "capacity",
    min: 1,
    max: MAX_EVENTS,
    duration: false,
};
/// `limit` of RL.WINDOW.
pub const WINDOW_LIMIT: IntArg = IntArg {
    name: "limit",
    min: 1,
    max: MAX_EVENTS,
    duration: false,
};
/// `window_ms` of RL.WINDOW.
pub const WINDOW_MS: IntArg = IntArg {
    name: "window",
    min: 1,
    max: MAX_DURATION_MS,
    duration: true,
};
/// `COST n` of every RL.* command but RL.GCRA.
pub const COST: IntArg = IntArg {
    name: "cost",
    min: 0,
    max: MAX_EVENTS,
    duration: false,
};
/// `MAXWAIT ms` of RL.TOKEN.
pub const MAX_WAIT_MS: IntArg = IntArg {
    name: "maxwait",
    min: 0,
    max: MAX_DURATION_MS,
    duration: true,
};
/// `max_burst` of RL.GCRA.
pub const GCRA_MAX_BURST: IntArg = IntArg {
    name: "max_burst",
    min: 0,
    max: MAX_EVENTS,
    duration: false,
};
/// `count` of RL.GCRA (at most the largest count a rate takes).
pub const GCRA_COUNT: IntArg = IntArg {
    name: "count",
    min: 1,
    max: MAX_COUNT as i64,
    duration: false,
};
/// `period` of RL.GCRA, in seconds.
pub const GCRA_PERIOD_S: IntArg = IntArg {
    name: "period",
    min: 1,
    max: MAX_DURATION_MS / 1000,
    duration: false,
};
/// `QUANTITY n` of RL.GCRA.
pub const GCRA_QUANTITY: IntArg = IntArg {
    name: "quantity",
    min: 0,
    max: MAX_EVENTS,
    duration: false,
};

/// Largest event count in a rate.
const MAX_COUNT: u128 = 1_000_000_000_000;
/// Longest rate period: about 31 years, in ns.
const MAX_PERIOD_NS: u128 = 1_000_000_000_000_000_000;
/// Nanoseconds per millisecond.
const NS_PER_MS: u128 = 1_000_000;

/// An allowed rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rate {
    /// Everything passes; no state is kept.
    Inf,
    /// `ticks_per_ms` ticks refill each millisecond; one event costs `ticks_per_token`.
    /// `ticks_per_ms` is 0 for a rate of 0 (no refill).
    Finite {
        ticks_per_token: u64,
        ticks_per_ms: u64,
    },
}

/// Stein's (binary) gcd for one width: shifts and subtractions only, since
/// 128-bit division is a slow library call and this runs on every RL.* call.
macro_rules! stein_gcd {
    ($(#[$doc:meta])* $name:ident, $t:ty) => {
        $(#[$doc])*
        fn $name(mut a: $t, mut b: $t) -> $t {
            if a == 0 || b == 0 {
                return a | b;
            }
            let shift = (a | b).trailing_zeros();
            a >>= a.trailing_zeros();
            loop {
                b >>= b.trailing_zeros();
                if a > b {
                    (a, b) = (b, a);
                }
                b -= a;
                if b == 0 {
                    return a << shift;
                }
            }
        }
    };
}

stein_gcd!(
    /// The gcd of two 128-bit values.
    gcd, u128
);
stein_gcd!(
    /// The gcd in 64 bits, for the common rates.
    gcd64, u64
);

impl Rate {
    /// The most common rates, a whole number of events (1 to 12 digits) per
    /// second or per period (`100`, `1000/h`, `300/15m`), without the general
    /// parse: the same ratio, in 64-bit arithmetic, where every such rate up
    /// to the longest period fits (`None`: any other form, 0, or a period
    /// beyond the longest, which the general parse refuses).
    fn whole_per_period(text: &[u8]) -> Option<Rate> {
        // The count's digits, read in the same pass that finds the period.
        let (mut count, mut digits) = (0u64, 0);
        for &b in text {
            let digit = b.wrapping_sub(b'0');
            if digit > 9 {
                break;
            }
            count = count * 10 + u64::from(digit);
            digits += 1;
            if digits > 12 {
                return None;
            }
        }
        let period_ns = match &text[digits..] {
            [] => 1_000_000_000,
            [b'/', period @ ..] => parse_period_ns(period).ok()?,
            _ => return None,
        };
        if digits == 0 {
            return None;
        }
        // `parse_period_ns` keeps the period within 10^6..=MAX_PERIOD_NS;
        // checked again here because the cast below relies on it.
        if count == 0 || period_ns > MAX_PERIOD_NS {
            return None;
        }
        // count × 10^6 ticks per ms against period_ns per token, reduced:
        // both below 10^18.
        let (per_ms, per_token) = (count * 1_000_000, period_ns as u64);
        // Most rates divide their period evenly: no gcd loop for them.
        let g = if per_token % per_ms == 0 {
            per_ms
        } else {
            gcd64(per_ms, per_token)
        };
        Some(Rate::Finite {
            ticks_per_token: per_token / g,
            ticks_per_ms: per_ms / g,
        })
    }

    /// `count` events per `period_ns` nanoseconds, reduced to small ticks.
    pub fn per_period(count: u128, period_ns: u128) -> Result<Rate, WardenError> {
        if period_ns == 0 || period_ns > MAX_PERIOD_NS || count > MAX_COUNT {
            return Err(errors::BAD_RATE);
        }
        if count == 0 {
            return Ok(Rate::Finite {
                ticks_per_token: 1,
                ticks_per_ms: 0,
            });
        }
        let per_ms = count * NS_PER_MS;
        let (token, ms) = match (u64::try_from(period_ns), u64::try_from(per_ms)) {
            // The common case in 64 bits: 128-bit division is a library call.
            (Ok(period), Ok(per)) => {
                // The gcd of two 64-bit numbers fits in 64 bits.
                let g = gcd(period_ns, per_ms) as u64;
                (u128::from(period / g), u128::from(per / g))
            }
            _ => {
                let g = gcd(period_ns, per_ms);
                (period_ns / g, per_ms / g)
            }
        };
        match (u64::try_from(token), u64::try_from(ms)) {
            (Ok(t), Ok(m)) => Ok(Rate::Finite {
                ticks_per_token: t,
                ticks_per_ms: m,
            }),
            _ => Err(errors::BAD_RATE),
        }
    }

    /// Parses `100`, `0.5`, `inf`, `100/s`, `100/m`, `300/15m`, `5/ms`, `2/h`,
    /// `1/d`, and the count in any form a program prints (`0.6666666666666666`,
    /// `.5`, `5.`, `1e-3`, `2.5E+2`). The rate is held as a ratio of two
    /// integers up to `MAX_TICKS`: exact when the reduced ratio fits, else the
    /// nearest one that does. Rates above 10^12 events per ms or below one
    /// event per 10^12 ms (about 31.7 years) are out of range.
    pub fn parse(text: &[u8]) -> Result<Rate, WardenError> {
        if let Some(rate) = Rate::whole_per_period(text) {
            return Ok(rate);
        }
        if text.eq_ignore_ascii_case(b"inf") {
            return Ok(Rate::Inf);
        }
        let (count, period) = match text.iter().position(|b| *b == b'/') {
            Some(at) => (&text[..at], Some(&text[at + 1..])),
            None => (text, None),
        };
        let (digits, exp10) = parse_decimal(count).ok_or(errors::BAD_RATE)?;
        let period_ns = match period {
            None => 1_000_000_000,
            Some(p) => parse_period_ns(p)?,
        };
        if digits == 0 {
            return Rate::per_period(0, period_ns);
        }
        // digits × 10^exp10 events per period: num / den events per ms.
        let out_of_range = WardenError::OutOfRange(RATE);
        if !(-80..=40).contains(&exp10) {
            return Err(out_of_range); // far outside, whatever the digits
        }
        let (mut num, mut den) = (digits * NS_PER_MS, period_ns);
        for _ in 0..exp10.max(0) {
            num = num.checked_mul(10).ok_or(out_of_range.clone())?;
        }
        for _ in 0..(-exp10).max(0) {
            match den.checked_mul(10) {
                Some(d) => den = d,
                // Beyond 128 bits: drop a digit of precision instead.
                None => num /= 10,
            }
        }
        let above = MAX_COUNT.checked_mul(den).is_some_and(|max| num > max);
        let below = num
            .checked_mul(MAX_PERIOD_NS / NS_PER_MS)
            .is_some_and(|n| n < den);
        if above || below || num == 0 {
            return Err(out_of_range);
        }
        let g = gcd(num, den);
        let (ms, token) = match (num / g, den / g) {
            (n, d) if n <= MAX_TICKS && d <= MAX_TICKS => (n, d),
            (n, d) => nearest_ratio(n, d, MAX_TICKS),
        };
        match (u64::try_from(token), u64::try_from(ms)) {
            (Ok(t), Ok(m)) if t > 0 && m > 0 => Ok(Rate::Finite {
                ticks_per_token: t,
                ticks_per_ms: m,
            }),
            _ => Err(out_of_range),
        }
    }
}

/// The argument name in a rate's range error.
const RATE: &str = "rate";

/// Largest tick count on either side of a rate's ratio: what `per_period`
/// yields for its largest count and period, and what the bucket arithmetic
/// is checked against.
const MAX_TICKS: u128 = 1_000_000_000_000_000_000;

/// The ratio `p / q` nearest to `num / den` with `p, q <= bound`, by
/// continued fractions: convergents while they fit, then the better of the
/// last convergent and the largest semiconvergent that fits.
fn nearest_ratio(num: u128, den: u128, bound: u128) -> (u128, u128) {
    let (mut p0, mut q0, mut p1, mut q1) = (0u128, 1u128, 1u128, 0u128);
    let (mut n, mut d) = (num, den);
    while d != 0 {
        let a = n / d;
        let step = |x1: u128, x0: u128| a.checked_mul(x1).and_then(|v| v.checked_add(x0));
        match (step(p1, p0), step(q1, q0)) {
            (Some(p2), Some(q2)) if p2 <= bound && q2 <= bound => {
                (p0, q0, p1, q1) = (p1, q1, p2, q2);
                (n, d) = (d, n - a * d);
            }
            _ => {
                // The largest t < a that keeps t·p1 + p0 and t·q1 + q0 in bound.
                // With x = n/d the tail of the fraction, the semiconvergent's
                // error is (x - t) / ((x·q1 + q0)(t·q1 + q0)) and the
                // convergent's 1 / (q1·(x·q1 + q0)): the semiconvergent is
                // nearer when x·q1 < (2t·q1 + q0), i.e. n·q1 < (2t·q1 + q0)·d.
                let fits = |x1: u128, x0: u128| (bound - x0).checked_div(x1).unwrap_or(u128::MAX);
                let t = fits(p1, p0).min(fits(q1, q0)).min(a);
                let better = wide_mul(n, q1) < wide_mul(2 * t * q1 + q0, d);
                return if better && t > 0 {
                    (t * p1 + p0, t * q1 + q0)
                } else {
                    (p1, q1)
                };
            }
        }
    }
    (p1, q1)
}

/// `a · b` as (high, low) 128-bit halves, compared as a 256-bit number.
fn wide_mul(a: u128, b: u128) -> (u128, u128) {
    let (a1, a0) = (a >> 64, a & u128::from(u64::MAX));
    let (b1, b0) = (b >> 64, b & u128::from(u64::MAX));
    let (lo, mid1, mid2, hi) = (a0 * b0, a1 * b0, a0 * b1, a1 * b1);
    let (mid, mid_carry) = mid1.overflowing_add(mid2);
    let (low, low_carry) = lo.overflowing_add(mid << 64);
    let high = hi + (mid >> 64) + (u128::from(mid_carry) << 64) + u128::from(low_carry);
    (high, low)
}

/// A non-negative decimal in any form a program prints (`100`, `0.5`, `.5`,
/// `5.`, `1e-3`, `2.5E+2`, `+3`), as digits × 10^exp10 with at most 30
/// significant digits (further ones are dropped: they are far below what a
/// rate holds).
fn parse_decimal(text: &[u8]) -> Option<(u128, i32)> {
    let text = text.strip_prefix(b"+").unwrap_or(text);
    let (mantissa, exponent) = match text.iter().position(|b| *b == b'e' || *b == b'E') {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    let (int, frac) = match mantissa.iter().position(|b| *b == b'.') {
        Some(at) => (&mantissa[..at], &mantissa[at + 1..]),
        None => (mantissa, &b""[..]),
    };
    let digits_ok = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    if int.len() + frac.len() == 0 || !digits_ok(int) || !digits_ok(frac) {
        return None;
    }
    let mut exp10: i32 = match exponent {
        None => 0,
        Some(e) => {
            let (negative, e) = match e {
                [b'-', rest @ ..] => (true, rest),
                [b'+', rest @ ..] => (false, rest),
                _ => (false, e),
            };
            if e.is_empty() || e.len() > 5 || !digits_ok(e) {
                return None;
            }
            let v = e.iter().fold(0i32, |v, d| v * 10 + i32::from(d - b'0'));
            if negative {
                -v
            } else {
                v
            }
        }
    };
    exp10 -= frac.len() as i32;
    let (mut value, mut kept) = (0u128, 0);
    for d in int.iter().chain(frac) {
        if kept == 30 {
            exp10 += 1; // a dropped digit
            continue;
        }
        value = value * 10 + u128::from(d - b'0');
        if value > 0 {
            kept += 1;
        }
    }
    Some((value, exp10))
}

/// `[k]unit` with unit ms, s, m, h or d, in nanoseconds (never 0: `k` has
/// no leading zero): `BadRate` when it is malformed, out of range when it is
/// well formed but longer than `MAX_PERIOD_NS` (10^9 s), whatever the count.
fn parse_period_ns(text: &[u8]) -> Result<u128, WardenError> {
    // Early returns only: the usual path builds (and drops) no error.
    let Some(split) = text.iter().position(|b| !b.is_ascii_digit()) else {
        return Err(errors::BAD_RATE);
    };
    let (k, unit) = text.split_at(split);
    let Some(unit) = unit_ns(unit) else {
        return Err(errors::BAD_RATE);
    };
    if k.first() == Some(&b'0') {
        return Err(errors::BAD_RATE);
    }
    let k: u128 = match k.len() {
        0 => 1,
        // 38 digits always fit in a u128.
        1..=38 => match std::str::from_utf8(k).ok().and_then(|t| t.parse().ok()) {
            Some(k) => k,
            None => return Err(errors::BAD_RATE),
        },
        _ => return Err(WardenError::OutOfRange(RATE)),
    };
    match k.checked_mul(unit) {
        Some(ns) if ns <= MAX_PERIOD_NS => Ok(ns),
        _ => Err(WardenError::OutOfRange(RATE)),
    }
}

pub use crate::rate::core::errors::MAX_LIMITS;

/// `BucketState::burst` of a token bucket saved before bursts were stored
/// (encoding version 1): its deficit is read against the burst of the next
/// call, as that version did.
pub const UNKNOWN_BURST: u64 = u64::MAX;

/// Stored state of one bucket limit (token, leaky, GCRA): how far from full
/// it was at `last_ms`, in the ticks of the rate it was written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BucketState {
    /// When the state was written (never moves backwards).
    pub last_ms: i64,
    /// Ticks missing to a full bucket at `last_ms`. Above
    /// `burst × ticks_per_token` the bucket is in debt.
    pub deficit: u128,
    /// `ticks_per_token` of the rate the deficit is measured in; 0 for a
    /// rate of inf (token and leaky buckets only).
    pub ticks_per_token: u64,
    /// `ticks_per_ms` of that rate (0 = no refill). At rate inf, which
    /// refills at once, the ticks per token the deficit is counted in (those
    /// of the rate before, or 1).
    pub ticks_per_ms: u64,
    /// RL.TOKEN: the burst the deficit is measured from (`UNKNOWN_BURST`
    /// for a state from encoding version 1). 0 for RL.LEAKY and RL.GCRA,
    /// whose level does not depend on their capacity.
    pub burst: u64,
}

/// The four-integer reply of RL.TOKEN, RL.LEAKY and RL.WINDOW.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// Whether the call may proceed.
    pub allowed: bool,
    /// Whole events that could still pass right now.
    pub remaining: i64,
    /// Allowed: 0 or the reserved wait; denied: retry after this; -1 never.
    pub wait_ms: i64,
    /// Until the limiter is full and idle again; -1 never.
    pub reset_ms: i64,
}

/// What a limiter call decided and the state to store (`None`: write nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome<S, R> {
    /// The reply.
    pub reply: R,
    /// New state and its absolute expiry (`None`: never expires).
    pub store: Option<(S, Option<i64>)>,
}

/// What a call on several limits decided. The new state of each limit is
/// written to the caller's buffer; it is to be stored only when `store` is
/// `Some(expiry)` (`Some(None)`: never expires).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decided {
    /// The reply: the tightest of the limits.
    pub reply: Decision,
    /// Whether to store the buffer, and the key's absolute expiry.
    pub store: Option<Option<i64>>,
}

pub(crate) fn overflow() -> WardenError {
    errors::OVERFLOW
}

/// `⌈a / b⌉`, in 64 bits when both fit (128-bit division is a library call).
fn ceil_div(a: u128, b: u128) -> u128 {
    match (u64::try_from(a), u64::try_from(b)) {
        (Ok(a), Ok(b)) => u128::from(a.div_ceil(b)),
        _ => a.div_ceil(b),
    }
}

pub(crate) fn to_i64(v: u128) -> Result<i64, WardenError> {
    i64::try_from(v).map_err(|_| overflow())
}

/// Milliseconds since `last_ms` (0 when the clock stepped back).
pub(crate) fn elapsed_ms(last_ms: i64, now_ms: i64) -> u128 {
    u128::try_from(now_ms.saturating_sub(last_ms).max(0)).unwrap_or(0)
}

/// `⌈a · b / c⌉` for `c > 0`, exact where the result fits (the product may not).
pub(crate) fn mul_div_ceil(a: u128, b: u64, c: u64) -> Result<u128, WardenError> {
    let (b, c) = (u128::from(b), u128::from(c.max(1)));
    let (q, r) = (a / c, a % c);
    // r < c < 2^64 and b < 2^64: the product fits in 128 bits.
    q.checked_mul(b)
        .and_then(|v| v.checked_add(ceil_div(r * b, c)))
        .ok_or_else(overflow)
}

/// `⌊a · b / c⌋` for `c > 0` (rounded towards minus infinity), exact where
/// the result fits.
pub(crate) fn mul_div_floor(a: i128, b: u64, c: u64) -> Result<i128, WardenError> {
    let c = i128::from(c.max(1));
    let (q, r) = (a.div_euclid(c), a.rem_euclid(c));
    // 0 <= r < c < 2^64 and b < 2^64: the product fits in 128 unsigned bits,
    // and its quotient by c (< b) in an i128.
    let frac = (r as u128 * u128::from(b) / c as u128) as i128;
    q.checked_mul(i128::from(b))
        .and_then(|v| v.checked_add(frac))
        .ok_or_else(overflow)
}

/// GCRA's deficit at `now` in the ticks of its current rate: the stored one
/// drained at the rate it was written with, so its theoretical arrival time
/// (TAT) stays where it was, and re-expressed in the new ticks (rounded up)
/// when the rate changed.
fn gcra_deficit(
    state: Option<&BucketState>,
    now_ms: i64,
    tpt: u64,
    tpm: u64,
) -> Result<u128, WardenError> {
    let Some(s) = state else { return Ok(0) };
    let drained = elapsed_ms(s.last_ms, now_ms)
        .checked_mul(u128::from(s.ticks_per_ms))
        .ok_or_else(overflow)?;
    let left = s.deficit.saturating_sub(drained);
    if s.ticks_per_token == tpt && s.ticks_per_ms == tpm {
        return Ok(left);
    }
    // The same time to the TAT, in ticks of the new rate.
    mul_div_ceil(left, tpm, s.ticks_per_ms)
}

/// Milliseconds for `ticks` to refill at `tpm` ticks/ms (rounded up); `None` if never.
#[inline]
pub(crate) fn ms_for(ticks: u128, tpm: u64) -> Option<u128> {
    if ticks == 0 {
        Some(0)
    } else if tpm == 0 {
        None
    } else {
        Some(ceil_div(ticks, u128::from(tpm)))
    }
}

/// Expiry of a bucket state: when it would be full again (`None`: never).
/// A limit at rate inf is full one millisecond after it was written.
#[inline(always)]
pub(crate) fn full_at(state: &BucketState) -> Result<Option<i64>, WardenError> {
    if state.ticks_per_token == 0 {
        return Ok(Some(
            state.last_ms.saturating_add(i64::from(state.deficit > 0)),
        ));
    }
    match ms_for(state.deficit, state.ticks_per_ms) {
        None => Ok(None),
        Some(ms) => Ok(Some(
            state
                .last_ms
                .checked_add(to_i64(ms)?)
                .ok_or_else(overflow)?,
        )),
    }
}

/// The time a state is written at: never earlier than the previous one.
pub(crate) fn stored_time(last_ms: Option<i64>, now_ms: i64) -> i64 {
    last_ms.map_or(now_ms, |last| last.max(now_ms))
}

/// redis-cell's `CL.THROTTLE` reply: limited, limit, remaining, retry after
/// (s, -1 when allowed or never), reset after (s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcraReply {
    /// 1 when limited.
    pub limited: i64,
    /// max_burst + 1.
    pub limit: i64,
    /// Requests that would still pass now.
    pub remaining: i64,
    /// Seconds until a retry can pass (rounded up), -1 when allowed or never.
    pub retry_after_s: i64,
    /// Seconds until the limiter is full (rounded up).
    pub reset_after_s: i64,
}

/// GCRA with redis-cell's parameters: `count` per `period_s` seconds, bursts
/// of `max_burst + 1`, `quantity` per call (0 only looks).
pub fn gcra(
    state: Option<&BucketState>,
    max_burst: u64,
    count: u64,
    period_s: u64,
    quantity: u64,
    now_ms: i64,
) -> Result<Outcome<BucketState, GcraReply>, WardenError> {
    if count == 0 {
        return Err(WardenError::NotPositive(GCRA_COUNT.name));
    }
    if period_s == 0 {
        return Err(WardenError::NotPositive(GCRA_PERIOD_S.name));
    }
    let period_ns = u128::from(period_s)
        .checked_mul(1_000_000_000)
        .ok_or(errors::BAD_RATE)?;
    let Rate::Finite {
        ticks_per_token: tpt,
        ticks_per_ms: tpm,
    } = Rate::per_period(u128::from(count), period_ns)?
    else {
        return Err(errors::BAD_RATE);
    };
    let interval = u128::from(tpt);
    let limit = max_burst.checked_add(1).ok_or_else(overflow)?;
    let tolerance = u128::from(limit)
        .checked_mul(interval)
        .ok_or_else(overflow)?;
    let increment = u128::from(quantity)
        .checked_mul(interval)
        .ok_or_else(overflow)?;
    let deficit = gcra_deficit(state, now_ms, tpt, tpm)?;
    let after = deficit.checked_add(increment).ok_or_else(overflow)?;
    let ms_to_s = |ms: u128| ms.div_ceil(1000);
    let ticks_to_s = |ticks: u128| -> Result<i64, WardenError> {
        to_i64(ms_to_s(ms_for(ticks, tpm).ok_or_else(overflow)?))
    };
    let remaining = |ttl: u128| clamp128(tolerance.saturating_sub(ttl) / interval);
    if after > tolerance {
        let retry = if increment <= tolerance {
            ticks_to_s(after - tolerance)?
        } else {
            -1
        };
        let reply = GcraReply {
            limited: 1,
            limit: clamp(limit),
            remaining: remaining(deficit),
            retry_after_s: retry,
            reset_after_s: ticks_to_s(deficit)?,
        };
        return Ok(Outcome { reply, store: None });
    }
    let reply = GcraReply {
        limited: 0,
        limit: clamp(limit),
        remaining: remaining(after),
        retry_after_s: -1,
        reset_after_s: ticks_to_s(after)?,
    };
    if quantity == 0 {
        return Ok(Outcome { reply, store: None });
    }
    let new_state = BucketState {
        last_ms: stored_time(state.map(|s| s.last_ms), now_ms),
        deficit: after,
        ticks_per_token: tpt,
        ticks_per_ms: tpm,
        burst: 0,
    };
    let expires = full_at(&new_state)?;
    Ok(Outcome {
        reply,
        store: Some((new_state, expires)),
    })
}

pub(crate) fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(crate) fn clamp128(v: u128) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod redis_cell_recorded;

#[cfg(test)]
#[path = "rate_tests.rs"]
mod tests;
