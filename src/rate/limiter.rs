//! The value of a `warden-rl` key: which limiter it is and the state of each
//! of its limits, with the checks every stored or received state passes.

use crate::common::error::WardenError;
use crate::common::parse::MAX_EVENTS;
use crate::common::relocate::{self, Mover};
use crate::rate::core::packed::{Pack, Packed};
use crate::rate::core::rate::{BucketState, UNKNOWN_BURST};
use crate::rate::core::window::WindowState;

pub use crate::rate::core::packed::LimiterKind;

/// A stored limiter: its limits in the packed form when every field fits
/// (`core::packed`), else in their wide form on the heap. The form is chosen
/// on every write; what is saved, replicated and digested is the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Limiter {
    /// One limit, packed: the whole value is 32 bytes (the common case).
    One(Packed),
    /// Token bucket, leaky bucket or GCRA limits with a field too wide to pack.
    Bucket(LimiterKind, Box<[BucketState]>),
    /// Sliding-window limits with a field too wide to pack.
    Window(Box<[WindowState]>),
}

// A one-limit limiter is one 32-byte block (jemalloc's 32 B class).
const _: () = assert!(std::mem::size_of::<Limiter>() == 32);

/// A state type a limiter holds, packed or wide.
pub trait Stored: Pack {
    /// Whether limiters of `kind` hold states of this type.
    fn holds(kind: LimiterKind) -> bool;

    /// The wide states of `l`, if it holds them.
    fn wide(l: &Limiter) -> Option<&[Self]>;

    /// The same, to write in place.
    fn wide_mut(l: &mut Limiter) -> Option<&mut [Self]>;

    /// A limiter of `kind` holding `states` in the wide form.
    fn wide_limiter(kind: LimiterKind, states: Box<[Self]>) -> Limiter;
}

impl Stored for BucketState {
    fn holds(kind: LimiterKind) -> bool {
        kind != LimiterKind::Window
    }

    fn wide(l: &Limiter) -> Option<&[BucketState]> {
        match l {
            Limiter::Bucket(_, all) => Some(all),
            _ => None,
        }
    }

    fn wide_mut(l: &mut Limiter) -> Option<&mut [BucketState]> {
        match l {
            Limiter::Bucket(_, all) => Some(all),
            _ => None,
        }
    }

    fn wide_limiter(kind: LimiterKind, states: Box<[BucketState]>) -> Limiter {
        Limiter::Bucket(kind, states)
    }
}

impl Stored for WindowState {
    fn holds(kind: LimiterKind) -> bool {
        kind == LimiterKind::Window
    }

    fn wide(l: &Limiter) -> Option<&[WindowState]> {
        match l {
            Limiter::Window(all) => Some(all),
            _ => None,
        }
    }

    fn wide_mut(l: &mut Limiter) -> Option<&mut [WindowState]> {
        match l {
            Limiter::Window(all) => Some(all),
            _ => None,
        }
    }

    fn wide_limiter(_: LimiterKind, states: Box<[WindowState]>) -> Limiter {
        Limiter::Window(states)
    }
}

/// Room on the stack to read a packed limit into.
pub struct Decoded<S> {
    one: Option<S>,
}

impl<S: Stored> Decoded<S> {
    /// Empty room.
    pub fn new() -> Decoded<S> {
        Decoded { one: None }
    }
}

impl<S: Stored> Default for Decoded<S> {
    fn default() -> Decoded<S> {
        Decoded::new()
    }
}

/// Room for the states of any limiter (`Limiter::view`).
#[derive(Default)]
pub struct Scratch {
    buckets: Decoded<BucketState>,
    windows: Decoded<WindowState>,
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
            LimiterRef::Bucket(kind, s) => Limiter::from_states(kind, s),
            LimiterRef::Window(s) => Limiter::from_states(LimiterKind::Window, s),
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
            Limiter::One(_) => {}
            Limiter::Bucket(_, all) => relocate::boxed_slice(all, m),
            Limiter::Window(all) => relocate::boxed_slice(all, m),
        }
    }

    /// The command that owns this limiter.
    pub fn kind(&self) -> LimiterKind {
        match self {
            Limiter::One(p) => p.kind(),
            Limiter::Bucket(kind, _) => *kind,
            Limiter::Window(_) => LimiterKind::Window,
        }
    }

    /// A limiter of `kind` holding `states`: packed when every one fits.
    #[inline]
    pub fn from_states<S: Stored>(kind: LimiterKind, states: &[S]) -> Limiter {
        if let [one] = states {
            if let Some(p) = one.pack(kind) {
                return Limiter::One(p);
            }
        }
        Limiter::from_several(kind, states)
    }

    /// `from_states` for what does not pack into one limit: several limits
    /// (copied as they are: packing each costs more instructions than the
    /// copy), or one too wide to pack.
    fn from_several<S: Stored>(kind: LimiterKind, states: &[S]) -> Limiter {
        S::wide_limiter(kind, states.into())
    }

    /// The states of type `S` this limiter holds (none when it holds the
    /// other type), read into `room` when packed.
    pub fn states<'a, S: Stored>(&'a self, room: &'a mut Decoded<S>) -> &'a [S] {
        match self {
            Limiter::One(p) if S::holds(p.kind()) => {
                std::slice::from_ref(room.one.insert(S::unpack(p)))
            }
            _ => S::wide(self).unwrap_or(&[]),
        }
    }

    /// The first state of type `S` (RL.GCRA and RL.LEAKY hold one), read
    /// without a room.
    #[inline]
    pub fn first<S: Stored>(&self) -> Option<S> {
        match self {
            Limiter::One(p) if S::holds(p.kind()) => Some(S::unpack(p)),
            _ => S::wide(self).and_then(|all| all.first().copied()),
        }
    }

    /// The states, read into `room` where packed.
    pub fn view<'a>(&'a self, room: &'a mut Scratch) -> LimiterRef<'a> {
        match self.kind() {
            LimiterKind::Window => LimiterRef::Window(self.states(&mut room.windows)),
            kind => LimiterRef::Bucket(kind, self.states(&mut room.buckets)),
        }
    }

    /// Takes the states of `new`, in place when the form and count of
    /// limits stay the same.
    pub fn set(&mut self, new: LimiterRef) {
        match new {
            LimiterRef::Bucket(kind, s) => self.set_states(kind, s),
            LimiterRef::Window(s) => self.set_states(LimiterKind::Window, s),
        }
    }

    fn set_states<S: Stored>(&mut self, kind: LimiterKind, states: &[S]) {
        let packed = match states {
            [one] => one.pack(kind),
            _ => None,
        };
        let same_kind = self.kind() == kind;
        match (&mut *self, packed) {
            (Limiter::One(p), Some(new)) => *p = new,
            (_, Some(new)) => *self = Limiter::One(new),
            (this, None) => match S::wide_mut(this) {
                Some(wide) if same_kind && wide.len() == states.len() => {
                    wide.copy_from_slice(states)
                }
                _ => *this = Limiter::from_several(kind, states),
            },
        }
    }

    /// Bytes the value uses (`MEMORY USAGE`).
    pub fn mem_usage(&self) -> usize {
        std::mem::size_of::<Limiter>()
            + match self {
                Limiter::One(_) => 0,
                Limiter::Bucket(_, all) => std::mem::size_of_val::<[BucketState]>(all),
                Limiter::Window(all) => std::mem::size_of_val::<[WindowState]>(all),
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
            LimiterKind::Window => Ok(Limiter::from_states(kind, &[Limiter::window_limit(f)?])),
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
                Ok(Limiter::from_states(kind, &[s]))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(deficit: u128, burst: u64) -> BucketState {
        BucketState {
            last_ms: 1_796_104_473_859,
            deficit,
            ticks_per_token: 10,
            ticks_per_ms: 1,
            burst,
        }
    }

    fn window(current: u64) -> WindowState {
        WindowState {
            start_ms: 1_796_104_473_000,
            window_ms: 60_000,
            previous: 3,
            current,
        }
    }

    /// The states `l` holds, read back through `view`.
    fn read(l: &Limiter) -> (LimiterKind, Vec<BucketState>, Vec<WindowState>) {
        let mut room = Scratch::default();
        match l.view(&mut room) {
            LimiterRef::Bucket(kind, s) => (kind, s.to_vec(), vec![]),
            LimiterRef::Window(s) => (LimiterKind::Window, vec![], s.to_vec()),
        }
    }

    #[test]
    fn every_write_chooses_the_packed_form_when_the_states_fit() {
        let small = bucket(5, 10);
        let huge = bucket(u128::from(u64::MAX) + 1, 10);
        let mut l = Limiter::from_states(LimiterKind::Token, &[small]);
        assert!(matches!(l, Limiter::One(_)));
        assert_eq!(l.mem_usage(), 32);
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[huge]));
        assert!(matches!(l, Limiter::Bucket(LimiterKind::Token, _)));
        assert_eq!(read(&l), (LimiterKind::Token, vec![huge], vec![]));
        assert_eq!(l.mem_usage(), 32 + 48);
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[small]));
        assert!(matches!(l, Limiter::One(_)));
        assert_eq!(read(&l), (LimiterKind::Token, vec![small], vec![]));
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[small, small]));
        assert!(matches!(l, Limiter::Bucket(..)));
        assert_eq!(l.mem_usage(), 32 + 96);
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[small, huge]));
        assert!(matches!(l, Limiter::Bucket(_, _)));
        assert_eq!(read(&l).1, vec![small, huge]);
        assert_eq!(l.mem_usage(), 32 + 96);
        let unknown = bucket(5, UNKNOWN_BURST);
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[unknown, huge]));
        assert_eq!(read(&l).1, vec![unknown, huge]);
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[small, small]));
        assert_eq!(read(&l).1, vec![small, small]);
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[small]));
        assert!(matches!(l, Limiter::One(_)));
        assert_eq!(read(&l), (LimiterKind::Token, vec![small], vec![]));
    }

    #[test]
    fn windows_and_kinds_read_back_as_written() {
        let w = [window(7), window(1 << 56), window(0)];
        for n in 1..=3 {
            let l = LimiterRef::Window(&w[..n]).to_limiter();
            assert_eq!(l.kind(), LimiterKind::Window);
            assert_eq!(read(&l), (LimiterKind::Window, vec![], w[..n].to_vec()));
            let mut room = Decoded::<BucketState>::new();
            assert!(l.states(&mut room).is_empty(), "no bucket states");
        }
        for kind in [LimiterKind::Token, LimiterKind::Leaky, LimiterKind::Gcra] {
            let l = Limiter::from_states(kind, &[bucket(1, 0)]);
            assert_eq!(read(&l), (kind, vec![bucket(1, 0)], vec![]));
            let mut room = Decoded::<WindowState>::new();
            assert!(l.states(&mut room).is_empty(), "no window states");
        }
        let mut l = Limiter::from_states(LimiterKind::Token, &[bucket(1, 0)]);
        l.set(LimiterRef::Window(&[window(1)]));
        assert_eq!(read(&l), (LimiterKind::Window, vec![], vec![window(1)]));
    }

    #[test]
    fn every_heap_block_is_offered_to_the_mover() {
        let mut m = relocate::tests::TestMover::default();
        let huge = bucket(u128::MAX >> 1, 0);
        let mut forms = [
            Limiter::from_states(LimiterKind::Token, &[bucket(1, 1)]),
            Limiter::from_states(LimiterKind::Token, &[bucket(1, 1), bucket(2, 2)]),
            Limiter::from_states(LimiterKind::Leaky, &[huge]),
            Limiter::from_states(LimiterKind::Window, &[window(1 << 60)]),
        ];
        let before: Vec<_> = forms.iter().map(read).collect();
        for l in &mut forms {
            l.relocate(&mut m);
        }
        assert_eq!(m.moved, 3);
        assert_eq!(forms.iter().map(read).collect::<Vec<_>>(), before);
    }
}
