//! `RL._SET key kind:f1:f2:f3:f4:pxat_ms`: the one form in which a limiter's
//! state travels to replicas and the AOF (every write replicates it; AOF
//! rewrite emits it). One packed argument, cheap to build on the hot path;
//! `pxat_ms` is the absolute expiry, -1 for none.

use std::ffi::CStr;

use crate::core::error::WardenError;
use crate::core::parse::{parse_fields, FieldText};
use crate::host::{emit, RString, Sink};
use crate::rate::limiter::{Limiter, LimiterKind};

/// The command's name.
pub const SET_LIMITER: &CStr = c"RL._SET";

/// `RL._SET`: a limiter's whole state, parsed and emitted here only.
pub struct SetLimiter;

impl SetLimiter {
    /// Parses the state argument into the limiter and its absolute expiry
    /// (`None`: no expiry), checking every field like RDB input.
    pub fn parse(state: &[u8]) -> Result<(Limiter, Option<i64>), WardenError> {
        let bad = || WardenError::InvalidState("rate limiter state must be kind:f1:f2:f3:f4:pxat");
        let [kind, f0, f1, f2, f3, expires] = parse_fields::<6>(state).ok_or_else(bad)?;
        let kind = i64::try_from(kind)
            .ok()
            .and_then(LimiterKind::from_code)
            .ok_or_else(bad)?;
        let expires = i64::try_from(expires).map_err(|_| bad())?;
        let limiter = Limiter::from_fields(kind, [f0, f1, f2, f3])?;
        Ok((limiter, (expires >= 0).then_some(expires)))
    }

    /// The state argument: kind, the four fields and the expiry, joined by ':'.
    pub fn state_text(limiter: &Limiter, expires: Option<i64>) -> FieldText {
        let f = limiter.fields();
        FieldText::new(&[
            limiter.kind() as i128,
            f[0],
            f[1],
            f[2],
            f[3],
            i128::from(expires.unwrap_or(-1)),
        ])
    }

    /// Writes `RL._SET key state` to `sink`.
    pub fn emit(limiter: &Limiter, expires: Option<i64>, sink: Sink, key: *mut RString) {
        let state = SetLimiter::state_text(limiter, expires);
        let state = state.as_bytes();
        emit!(sink, SET_LIMITER, c"sb", key, state.as_ptr(), state.len());
    }
}
