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

use crate::core::error::WardenError;
use crate::core::parse::{parse_some_fields, Fields};
use crate::core::rate::MAX_LIMITS;
use crate::host::{emit, RString, Sink};
use crate::rate::limiter::{Limiter, LimiterKind, LimiterRef};

/// The command's name.
pub const SET_LIMITER: &CStr = c"RL._SET";

/// Most fields a state has: kind, count, 5 per limit, expiry.
const MAX_FIELDS: usize = 3 + 5 * MAX_LIMITS;

/// Room for a one-limit state (8 fields of at most 40 characters, a mark).
pub const ONE_LIMIT_TEXT: usize = 384;

/// Room for any state: `MAX_FIELDS` fields of at most 40 characters (39
/// digits and a sign) and their separators, and a mark.
pub const STATE_TEXT: usize = MAX_FIELDS * 41 + 1;

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
            let mut states = [crate::core::window::WindowState::NONE; MAX_LIMITS];
            for (s, l) in states.iter_mut().zip(limits) {
                *s = Limiter::window_limit([l[0], l[1], l[2], l[3]])?;
            }
            LimiterRef::Window(&states[..n]).to_limiter()
        } else {
            let mut states = [crate::core::rate::BucketState::default(); MAX_LIMITS];
            for (s, l) in states.iter_mut().zip(limits) {
                *s = Limiter::bucket_limit(kind, [l[0], l[1], l[2], l[3], l[4]])?;
            }
            LimiterRef::Bucket(kind, &states[..n]).to_limiter()
        };
        Ok((limiter, expires))
    }

    /// The state argument, led by `mark` if given (the in-place effect's
    /// separator). `N` must hold it: `ONE_LIMIT_TEXT` for one limit,
    /// `STATE_TEXT` for any.
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
    pub fn emit(limiter: LimiterRef, expires: Option<i64>, sink: Sink, key: *mut RString) {
        let state = SetLimiter::state_text::<STATE_TEXT>(limiter, expires, None);
        let state = state.as_bytes();
        emit!(sink, SET_LIMITER, c"sb", key, state.as_ptr(), state.len());
    }
}
