//! The value of a `warden-rl` key: which limiter it is and the state of each
//! of its limits, with the checks every stored or received state passes.

use crate::common::error::WardenError;
use crate::common::parse::MAX_EVENTS;
use crate::common::relocate::{self, Mover};
use crate::rate::core::rate::{BucketState, MAX_LIMITS, UNKNOWN_BURST};
use crate::rate::core::window::WindowState;

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

    /// Most limits a key of this kind holds: RL.TOKEN and RL.WINDOW take
    /// several, RL.LEAKY and RL.GCRA one.
    pub fn max_limits(self) -> usize {
        match self {
            LimiterKind::Token | LimiterKind::Window => MAX_LIMITS,
            LimiterKind::Leaky | LimiterKind::Gcra => 1,
        }
    }
}

/// The limits of one key: one inline (a one-limit key allocates nothing
/// more), or several on the heap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Limits<S> {
    /// The common case.
    One(S),
    /// Two to `MAX_LIMITS`.
    Many(Box<[S]>),
}

impl<S: Copy> Limits<S> {
    /// Offers the heap block of several limits to `m` (active defragmentation).
    pub fn relocate(&mut self, m: &mut dyn Mover) {
        if let Limits::Many(all) = self {
            relocate::boxed_slice(all, m);
        }
    }

    /// The limits of `states` (one or more).
    pub fn from_slice(states: &[S]) -> Limits<S> {
        match states {
            [one] => Limits::One(*one),
            _ => Limits::Many(states.into()),
        }
    }

    /// Every limit, in order.
    pub fn as_slice(&self) -> &[S] {
        match self {
            Limits::One(s) => std::slice::from_ref(s),
            Limits::Many(all) => all,
        }
    }

    /// Replaces the limits, in place when their count is the same.
    pub fn set(&mut self, states: &[S]) {
        match self {
            Limits::One(s) if states.len() == 1 => *s = states[0],
            Limits::Many(all) if all.len() == states.len() => all.copy_from_slice(states),
            _ => *self = Limits::from_slice(states),
        }
    }

    /// Bytes held outside the value itself.
    pub fn heap_bytes(&self) -> usize {
        match self {
            Limits::One(_) => 0,
            Limits::Many(all) => std::mem::size_of_val::<[S]>(all),
        }
    }
}

/// A stored limiter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Limiter {
    /// Token bucket, leaky bucket or GCRA.
    Bucket(LimiterKind, Limits<BucketState>),
    /// Sliding-window counter.
    Window(Limits<WindowState>),
}

/// The states of a limiter, borrowed: what is written to RDB, `RL._SET`
/// and the digest, whether or not a key holds it yet.
#[derive(Debug, Clone, Copy)]
pub enum LimiterRef<'a> {
    /// Token bucket, leaky bucket or GCRA.
    Bucket(LimiterKind, &'a [BucketState]),
    /// Sliding-window counter.
    Window(&'a [WindowState]),
}

impl LimiterRef<'_> {
    /// The command that owns the limiter.
    pub fn kind(&self) -> LimiterKind {
        match self {
            LimiterRef::Bucket(kind, _) => *kind,
            LimiterRef::Window(_) => LimiterKind::Window,
        }
    }

    /// How many limits it holds.
    pub fn count(&self) -> usize {
        match self {
            LimiterRef::Bucket(_, s) => s.len(),
            LimiterRef::Window(s) => s.len(),
        }
    }

    /// An owned limiter with these states.
    pub fn to_limiter(self) -> Limiter {
        match self {
            LimiterRef::Bucket(kind, s) => Limiter::Bucket(kind, Limits::from_slice(s)),
            LimiterRef::Window(s) => Limiter::Window(Limits::from_slice(s)),
        }
    }
}

fn bad() -> WardenError {
    WardenError::InvalidState("rate limiter field out of range")
}

impl Limiter {
    /// Offers the limits' heap block, if any, to `m`.
    pub fn relocate(&mut self, m: &mut dyn Mover) {
        match self {
            Limiter::Bucket(_, limits) => limits.relocate(m),
            Limiter::Window(limits) => limits.relocate(m),
        }
    }

    /// The command that owns this limiter.
    pub fn kind(&self) -> LimiterKind {
        self.view().kind()
    }

    /// The states, borrowed.
    pub fn view(&self) -> LimiterRef<'_> {
        match self {
            Limiter::Bucket(kind, l) => LimiterRef::Bucket(*kind, l.as_slice()),
            Limiter::Window(l) => LimiterRef::Window(l.as_slice()),
        }
    }

    /// Takes the states of `new` (of the same kind), in place when the
    /// count of limits is the same.
    pub fn set(&mut self, new: LimiterRef) {
        match (self, new) {
            (Limiter::Bucket(kind, l), LimiterRef::Bucket(k, s)) if *kind == k => l.set(s),
            (Limiter::Window(l), LimiterRef::Window(s)) => l.set(s),
            (this, new) => *this = new.to_limiter(),
        }
    }

    /// Bytes the value uses (`MEMORY USAGE`).
    pub fn mem_usage(&self) -> usize {
        std::mem::size_of::<Limiter>()
            + match self {
                Limiter::Bucket(_, l) => l.heap_bytes(),
                Limiter::Window(l) => l.heap_bytes(),
            }
    }

    /// Checks a limit count read from RDB or `RL._SET` for `kind`.
    pub fn check_count(kind: LimiterKind, count: i128) -> Result<usize, WardenError> {
        match usize::try_from(count) {
            Ok(n) if (1..=kind.max_limits()).contains(&n) => Ok(n),
            _ => Err(bad()),
        }
    }

    /// One bucket limit of `kind` from its fields (last_ms, deficit, ticks
    /// per token, ticks per ms, burst), checking every range: a time not
    /// before 1970; ticks per token 0 (a rate of inf) only for token and
    /// leaky buckets, with the ticks per token of its deficit (in the ticks
    /// per ms field) non-zero; GCRA with both ticks non-zero (its
    /// count is positive); RL.TOKEN's burst within range or unknown (a
    /// version 1 state), 0 for the others.
    pub fn bucket_limit(kind: LimiterKind, f: [i128; 5]) -> Result<BucketState, WardenError> {
        let u64_of = |v: i128| u64::try_from(v).map_err(|_| bad());
        let s = BucketState {
            last_ms: i64::try_from(f[0]).map_err(|_| bad())?,
            deficit: u128::try_from(f[1]).map_err(|_| bad())?,
            ticks_per_token: u64_of(f[2])?,
            ticks_per_ms: u64_of(f[3])?,
            burst: u64_of(f[4])?,
        };
        let inf = s.ticks_per_token == 0;
        let valid = s.last_ms >= 0
            && match kind {
                LimiterKind::Token => {
                    (!inf || s.ticks_per_ms > 0)
                        && (s.burst <= MAX_EVENTS as u64 || s.burst == UNKNOWN_BURST)
                }
                LimiterKind::Leaky => (!inf || s.ticks_per_ms > 0) && s.burst == 0,
                LimiterKind::Gcra => !inf && s.ticks_per_ms > 0 && s.burst == 0,
                LimiterKind::Window => false,
            };
        if valid {
            Ok(s)
        } else {
            Err(bad())
        }
    }

    /// One window limit from its fields (start_ms, window_ms, previous,
    /// current): a start not before 1970 and a positive length.
    pub fn window_limit(f: [i128; 4]) -> Result<WindowState, WardenError> {
        let u64_of = |v: i128| u64::try_from(v).map_err(|_| bad());
        let w = WindowState {
            start_ms: i64::try_from(f[0]).map_err(|_| bad())?,
            window_ms: i64::try_from(f[1]).map_err(|_| bad())?,
            previous: u64_of(f[2])?,
            current: u64_of(f[3])?,
        };
        if w.window_ms <= 0 || w.start_ms < 0 {
            return Err(bad());
        }
        Ok(w)
    }

    /// A limiter of encoding version 1 (one limit, four fields; a token
    /// bucket without its burst), checked like the current form.
    pub fn from_v1_fields(kind: LimiterKind, f: [i128; 4]) -> Result<Limiter, WardenError> {
        match kind {
            LimiterKind::Window => Ok(Limiter::Window(Limits::One(Limiter::window_limit(f)?))),
            _ => {
                if f[2] == 0 {
                    return Err(bad()); // version 1 had no rate of inf
                }
                let burst = if kind == LimiterKind::Token {
                    i128::from(UNKNOWN_BURST)
                } else {
                    0
                };
                let s = Limiter::bucket_limit(kind, [f[0], f[1], f[2], f[3], burst])?;
                Ok(Limiter::Bucket(kind, Limits::One(s)))
            }
        }
    }
}
