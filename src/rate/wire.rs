//! `RL._SET key state`: the one form in which a limiter's state travels to
//! replicas and the AOF (every write replicates it, in the call itself as
//! `arg@state` or as this command; AOF rewrite emits it). One packed
//! argument, cheap to build on the hot path:
//!
//! ```text
//! kind:n:<limit 1>:…:<limit n>:pxat_ms
//!   bucket limit (RL.TOKEN, RL.LEAKY, RL.GCRA): last_ms:deficit:ticks_per_token:ticks_per_ms:burst
//!   window limit (RL.WINDOW):                  start_ms:window_ms:previous:current
//! ```
//!
//! `pxat_ms` is the absolute expiry, -1 for none. The form of encoding
//! version 1 — `kind:f1:f2:f3:f4:pxat_ms`, one limit, a token bucket without
//! its burst — is still read (AOF files and masters from before); its six
//! fields are never a count the current form has (5n + 3 or 4n + 3).

use std::ffi::CStr;

use crate::common::error::WardenError;
use crate::common::parse::{parse_some_fields, Fields};
use crate::glue::host::{emit, RStr, Sink};
use crate::rate::core::rate::MAX_LIMITS;
use crate::rate::limiter::{Limiter, LimiterKind, LimiterRef};

/// The command's name.
pub const SET_LIMITER: &CStr = c"RL._SET";

/// Most fields a state has: kind, count, 5 per limit, expiry.
const MAX_FIELDS: usize = 3 + 5 * MAX_LIMITS;

/// Bytes the widest state of `limits` limits takes: a mark, kind and count
/// (a digit each) and 2 separators; per limit last_ms (19 digits), deficit
/// (below 2^127: 39), ticks per token, per ms and burst (20 each) and 5
/// separators; a separator and pxat (-1 or 19 digits).
pub const fn text_room(limits: usize) -> usize {
    5 + limits * 123 + 21
}

/// Room for a one-limit state (every call of RL.LEAKY and RL.GCRA, most of
/// RL.TOKEN and RL.WINDOW).
pub const ONE_LIMIT_TEXT: usize = text_room(1);

/// Room for up to three limits.
pub const FEW_LIMITS_TEXT: usize = text_room(3);

/// Room for any state.
pub const STATE_TEXT: usize = text_room(MAX_LIMITS);

/// `RL._SET`: a limiter's whole state, parsed and emitted here only.
pub struct SetLimiter;

fn bad() -> WardenError {
    WardenError::InvalidState("rate limiter state must be kind:n:limits…:pxat")
}

impl SetLimiter {
    /// Parses the state argument into the limiter and its absolute expiry
    /// (`None`: no expiry), checking every field like RDB input.
    pub fn parse(state: &[u8]) -> Result<(Limiter, Option<i64>), WardenError> {
        let (f, count) = parse_some_fields::<MAX_FIELDS>(state).ok_or_else(bad)?;
        let kind = i64::try_from(f[0])
            .ok()
            .and_then(LimiterKind::from_code)
            .ok_or_else(bad)?;
        let expires = i64::try_from(f[count - 1]).map_err(|_| bad())?;
        let expires = (expires >= 0).then_some(expires);
        if count == 6 {
            let limiter = Limiter::from_v1_fields(kind, [f[1], f[2], f[3], f[4]])?;
            return Ok((limiter, expires));
        }
        let n = Limiter::check_count(kind, *f.get(1).ok_or_else(bad)?)?;
        let per = if kind == LimiterKind::Window { 4 } else { 5 };
        if count != 3 + per * n {
            return Err(bad());
        }
        let limits = f[2..count - 1].chunks_exact(per);
        let limiter = if kind == LimiterKind::Window {
            let mut states = [crate::rate::core::window::WindowState::NONE; MAX_LIMITS];
            for (s, l) in states.iter_mut().zip(limits) {
                *s = Limiter::window_limit([l[0], l[1], l[2], l[3]])?;
            }
            LimiterRef::Window(&states[..n]).to_limiter()
        } else {
            let mut states = [crate::rate::core::rate::BucketState::default(); MAX_LIMITS];
            for (s, l) in states.iter_mut().zip(limits) {
                *s = Limiter::bucket_limit(kind, [l[0], l[1], l[2], l[3], l[4]])?;
            }
            LimiterRef::Bucket(kind, &states[..n]).to_limiter()
        };
        Ok((limiter, expires))
    }

    /// The state argument, led by `mark` if given (the in-place effect's
    /// separator). `N` must hold it: `text_room` of its count of limits.
    #[inline]
    pub fn state_text<const N: usize>(
        limiter: LimiterRef,
        expires: Option<i64>,
        mark: Option<u8>,
    ) -> Fields<N> {
        let mut text = match mark {
            Some(m) => Fields::marked(m),
            None => Fields::empty(),
        };
        text.push_field(limiter.kind() as i128);
        text.push_field(limiter.count() as i128);
        match limiter {
            LimiterRef::Bucket(_, states) => {
                for s in states {
                    text.push_field(i128::from(s.last_ms));
                    // A deficit beyond i128 cannot be built: calls check overflow.
                    text.push_field(s.deficit as i128);
                    text.push_field(i128::from(s.ticks_per_token));
                    text.push_field(i128::from(s.ticks_per_ms));
                    text.push_field(i128::from(s.burst));
                }
            }
            LimiterRef::Window(states) => {
                for s in states {
                    text.push_field(i128::from(s.start_ms));
                    text.push_field(i128::from(s.window_ms));
                    text.push_field(i128::from(s.previous));
                    text.push_field(i128::from(s.current));
                }
            }
        }
        text.push_field(i128::from(expires.unwrap_or(-1)));
        text
    }

    /// Writes `RL._SET key state` to `sink`.
    pub fn emit(limiter: LimiterRef, expires: Option<i64>, sink: Sink, key: RStr) {
        let state = SetLimiter::state_text::<STATE_TEXT>(limiter, expires, None);
        let state = state.as_bytes();
        emit(sink, SET_LIMITER, (key, state));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::core::rate::BucketState;
    use crate::rate::core::window::WindowState;

    /// The longest bucket limit a state can hold.
    const WIDEST: BucketState = BucketState {
        last_ms: i64::MAX,
        deficit: i128::MAX as u128,
        ticks_per_token: u64::MAX,
        ticks_per_ms: u64::MAX,
        burst: u64::MAX,
    };

    /// The widest state of `n` limits with expiry `expires`, marked.
    fn widest<const N: usize>(n: usize, expires: Option<i64>) -> (Vec<u8>, Limiter) {
        let all = [WIDEST; MAX_LIMITS];
        let view = LimiterRef::Bucket(LimiterKind::Token, &all[..n]);
        let text = SetLimiter::state_text::<N>(view, expires, Some(b'@'));
        (text.as_bytes().to_vec(), view.to_limiter())
    }

    #[test]
    fn the_widest_states_fit_their_buffers_and_read_back() {
        for expires in [Some(i64::MAX), None] {
            for n in 1..=MAX_LIMITS {
                let (text, limiter) = match n {
                    1 => widest::<ONE_LIMIT_TEXT>(n, expires),
                    2..=3 => widest::<FEW_LIMITS_TEXT>(n, expires),
                    _ => widest::<STATE_TEXT>(n, expires),
                };
                assert!(text.len() <= text_room(n), "{n}: {} bytes", text.len());
                let (back, e) = SetLimiter::parse(&text[1..]).expect("parse");
                assert_eq!((back, e), (limiter, expires), "{n} limits");
            }
        }
    }

    #[test]
    fn states_of_version_1_and_2_read_alike() {
        let (old, e) = SetLimiter::parse(b"2:1796104473859:1261440000000:315360000000:1:-1")
            .expect("version 1");
        let (new, _) = SetLimiter::parse(b"2:1:1796104473859:1261440000000:315360000000:1:0:-1")
            .expect("version 2");
        assert_eq!((old, e), (new, None));
        let w = [WindowState {
            start_ms: 5,
            window_ms: 1000,
            previous: 1,
            current: 2,
        }];
        let (window, _) = SetLimiter::parse(b"4:1:5:1000:1:2:9").expect("window");
        assert_eq!(window, LimiterRef::Window(&w).to_limiter());
        for bad in [
            &b"1:0:-1"[..],
            b"1:2:1:1:1:1:5:-1",
            b"2:2:1:1:1:1:0:1:1:1:1:0:-1",
            b"4:9:1:1:1:1:-1",
            b"5:1:1:1:1:1:1:-1",
            b"1:1:1:1:0:0:5:-1",
            b"3:1:1:1:1:0:0:-1",
            b"",
        ] {
            assert!(
                SetLimiter::parse(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
