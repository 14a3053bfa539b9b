//! The value of a `warden-rl` key: which limiter it is and its state.

use crate::core::error::WardenError;
use crate::core::rate::{BucketState, WindowState};

/// Which command owns a limiter key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimiterKind {
    /// RL.TOKEN
    Token = 1,
    /// RL.LEAKY
    Leaky = 2,
    /// RL.GCRA
    Gcra = 3,
    /// RL.WINDOW
    Window = 4,
}

impl LimiterKind {
    /// The kind stored as `code`.
    pub fn from_code(code: i64) -> Option<LimiterKind> {
        match code {
            1 => Some(LimiterKind::Token),
            2 => Some(LimiterKind::Leaky),
            3 => Some(LimiterKind::Gcra),
            4 => Some(LimiterKind::Window),
            _ => None,
        }
    }
}

/// A stored limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limiter {
    /// Token bucket, leaky bucket or GCRA.
    Bucket(LimiterKind, BucketState),
    /// Sliding-window counter.
    Window(WindowState),
}

impl Limiter {
    /// The command that owns this limiter.
    pub fn kind(&self) -> LimiterKind {
        match self {
            Limiter::Bucket(kind, _) => *kind,
            Limiter::Window(_) => LimiterKind::Window,
        }
    }

    /// The four integers that follow the kind in `RL._SET` and the RDB.
    pub fn fields(&self) -> [i128; 4] {
        match self {
            Limiter::Bucket(_, s) => [
                i128::from(s.last_ms),
                s.deficit as i128,
                i128::from(s.ticks_per_token),
                i128::from(s.ticks_per_ms),
            ],
            Limiter::Window(w) => [
                i128::from(w.start_ms),
                i128::from(w.window_ms),
                i128::from(w.previous),
                i128::from(w.current),
            ],
        }
    }

    /// Rebuilds a limiter from its kind and fields, checking every range.
    pub fn from_fields(kind: LimiterKind, f: [i128; 4]) -> Result<Limiter, WardenError> {
        let bad = || WardenError::InvalidState("rate limiter field out of range");
        let i64_of = |v: i128| i64::try_from(v).map_err(|_| bad());
        let u64_of = |v: i128| u64::try_from(v).map_err(|_| bad());
        match kind {
            LimiterKind::Window => {
                let w = WindowState {
                    start_ms: i64_of(f[0])?,
                    window_ms: i64_of(f[1])?,
                    previous: u64_of(f[2])?,
                    current: u64_of(f[3])?,
                };
                if w.window_ms <= 0 || w.start_ms < 0 {
                    return Err(bad());
                }
                Ok(Limiter::Window(w))
            }
            _ => {
                let s = BucketState {
                    last_ms: i64_of(f[0])?,
                    deficit: u128::try_from(f[1]).map_err(|_| bad())?,
                    ticks_per_token: u64_of(f[2])?,
                    ticks_per_ms: u64_of(f[3])?,
                };
                if s.ticks_per_token == 0 || s.last_ms < 0 {
                    return Err(bad());
                }
                Ok(Limiter::Bucket(kind, s))
            }
        }
    }
}
