//! The value of a `warden-rl` key: which limiter it is and the state of each
//! of its limits, with the checks every stored or received state passes.

use crate::common::error::WardenError;
use crate::common::parse::MAX_EVENTS;
use crate::common::relocate::{self, Mover};
use crate::rate::core::packed::{Pack, Packed};
use crate::rate::core::params::PARAMS;
use crate::rate::core::rate::{BucketState, UNKNOWN_BURST};
use crate::rate::core::window::WindowState;

pub use crate::rate::core::packed::LimiterKind;

/// A stored limiter: one or two limits in the packed form when every field
/// fits (`core::packed`), else in their wide form on the heap. The form is
/// chosen on every write; what is saved, replicated and digested is the same.
/// A packed limit holds its parameters id in the shared table (`params`):
/// taken when packed, given back when the limiter changes form or drops.
#[derive(Debug, PartialEq, Eq)]
pub enum Limiter {
    /// One limit, packed: the whole value is 16 bytes (the common case).
    One(Packed),
    /// Two limits, packed, in a 32-byte block.
    Two(Box<[Packed; 2]>),
    /// Any count of limits, a field too wide to pack among them.
    Wide(Box<Wide>),
}

/// The limits of a limiter in their wide form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wide {
    /// Token bucket, leaky bucket or GCRA limits.
    Bucket(LimiterKind, Box<[BucketState]>),
    /// Sliding-window limits.
    Window(Box<[WindowState]>),
}

impl Wide {
    /// The command that owns these limits.
    fn kind(&self) -> LimiterKind {
        match self {
            Wide::Bucket(kind, _) => *kind,
            Wide::Window(_) => LimiterKind::Window,
        }
    }
}

impl Drop for Limiter {
    fn drop(&mut self) {
        self.release_ids();
    }
}

impl Clone for Limiter {
    fn clone(&self) -> Limiter {
        let copy = match self {
            Limiter::One(p) => Limiter::One(*p),
            Limiter::Two(two) => Limiter::Two(two.clone()),
            Limiter::Wide(wide) => Limiter::Wide(wide.clone()),
        };
        for p in copy.packed() {
            PARAMS.retain(p.params_id());
        }
        copy
    }
}

// A one-limit limiter is one 16-byte block (jemalloc's smallest class).
const _: () = assert!(std::mem::size_of::<Limiter>() == 16);

/// A state type a limiter holds, packed or wide.
pub trait Stored: Pack {
    /// Whether limiters of `kind` hold states of this type.
    fn holds(kind: LimiterKind) -> bool;

    /// The wide states of `w`, if it holds them.
    fn wide(w: &Wide) -> Option<&[Self]>;

    /// The same, to write in place.
    fn wide_mut(w: &mut Wide) -> Option<&mut [Self]>;

    /// Wide limits of `kind` holding `states`.
    fn wide_of(kind: LimiterKind, states: Box<[Self]>) -> Wide;
}

impl Stored for BucketState {
    fn holds(kind: LimiterKind) -> bool {
        kind != LimiterKind::Window
    }

    fn wide(w: &Wide) -> Option<&[BucketState]> {
        match w {
            Wide::Bucket(_, all) => Some(all),
            Wide::Window(_) => None,
        }
    }

    fn wide_mut(w: &mut Wide) -> Option<&mut [BucketState]> {
        match w {
            Wide::Bucket(_, all) => Some(all),
            Wide::Window(_) => None,
        }
    }

    fn wide_of(kind: LimiterKind, states: Box<[BucketState]>) -> Wide {
        Wide::Bucket(kind, states)
    }
}

impl Stored for WindowState {
    fn holds(kind: LimiterKind) -> bool {
        kind == LimiterKind::Window
    }

    fn wide(w: &Wide) -> Option<&[WindowState]> {
        match w {
            Wide::Window(all) => Some(all),
            Wide::Bucket(..) => None,
        }
    }

    fn wide_mut(w: &mut Wide) -> Option<&mut [WindowState]> {
        match w {
            Wide::Window(all) => Some(all),
            Wide::Bucket(..) => None,
        }
    }

    fn wide_of(_: LimiterKind, states: Box<[WindowState]>) -> Wide {
        Wide::Window(states)
    }
}

/// Room on the stack to read packed limits into.
pub struct Decoded<S> {
    two: [S; 2],
}

impl<S: Stored> Decoded<S> {
    /// Empty room.
    pub fn new() -> Decoded<S> {
        Decoded { two: [S::EMPTY; 2] }
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
    /// Offers the limits' heap blocks, if any, to `m`.
    pub fn relocate(&mut self, m: &mut dyn Mover) {
        match self {
            Limiter::One(_) => {}
            Limiter::Two(two) => relocate::boxed(two, m),
            Limiter::Wide(wide) => {
                relocate::boxed(wide, m);
                match &mut **wide {
                    Wide::Bucket(_, all) => relocate::boxed_slice(all, m),
                    Wide::Window(all) => relocate::boxed_slice(all, m),
                }
            }
        }
    }

    /// The command that owns this limiter.
    #[inline]
    pub fn kind(&self) -> LimiterKind {
        match self {
            Limiter::One(p) => p.kind(),
            Limiter::Two(two) => two[0].kind(),
            Limiter::Wide(wide) => wide.kind(),
        }
    }

    /// The wide states of type `S`, if this limiter holds them.
    fn wide<S: Stored>(&self) -> Option<&[S]> {
        match self {
            Limiter::Wide(wide) => S::wide(wide),
            _ => None,
        }
    }

    /// The packed limits (none in the wide form).
    fn packed(&self) -> &[Packed] {
        match self {
            Limiter::One(p) => std::slice::from_ref(p),
            Limiter::Two(two) => &two[..],
            Limiter::Wide(_) => &[],
        }
    }

    /// Gives back the parameters ids of the packed limits.
    fn release_ids(&self) {
        for p in self.packed() {
            PARAMS.release(p.params_id());
        }
    }

    /// Two limits packed, holding their ids; `None` (holding nothing) when
    /// either does not pack. `hints` as in `Pack::pack`.
    #[inline]
    fn pack_two<S: Stored>(
        kind: LimiterKind,
        (a, b): (&S, &S),
        hints: (Option<u16>, Option<u16>),
    ) -> Option<[Packed; 2]> {
        let pa = a.pack(kind, hints.0, 0)?;
        match b.pack(kind, hints.1, 1) {
            Some(pb) => Some([pa, pb]),
            None => {
                PARAMS.release(pa.params_id());
                None
            }
        }
    }

    /// A limiter of `kind` holding `states`: packed when every one fits.
    #[inline]
    pub fn from_states<S: Stored>(kind: LimiterKind, states: &[S]) -> Limiter {
        match states {
            [one] => {
                if let Some(p) = one.pack(kind, None, 0) {
                    return Limiter::One(p);
                }
            }
            [a, b] => {
                if let Some(two) = Limiter::pack_two(kind, (a, b), (None, None)) {
                    return Limiter::Two(Box::new(two));
                }
            }
            _ => {}
        }
        Limiter::Wide(Box::new(S::wide_of(kind, states.into())))
    }

    /// The states of type `S` this limiter holds (none when it holds the
    /// other type), read into `room` when packed.
    #[inline]
    pub fn states<'a, S: Stored>(&'a self, room: &'a mut Decoded<S>) -> &'a [S] {
        match self {
            Limiter::One(p) if S::holds(p.kind()) => {
                room.two[0] = S::unpack(p);
                &room.two[..1]
            }
            Limiter::Two(two) if S::holds(two[0].kind()) => {
                room.two = [S::unpack(&two[0]), S::unpack(&two[1])];
                &room.two
            }
            _ => self.wide().unwrap_or(&[]),
        }
    }

    /// The first state of type `S` (RL.GCRA and RL.LEAKY hold one), read
    /// without a room.
    #[inline]
    pub fn first<S: Stored>(&self) -> Option<S> {
        match self {
            Limiter::One(p) if S::holds(p.kind()) => Some(S::unpack(p)),
            Limiter::Two(two) if S::holds(two[0].kind()) => Some(S::unpack(&two[0])),
            _ => self.wide().and_then(|all: &[S]| all.first().copied()),
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
    #[inline]
    pub fn set(&mut self, new: LimiterRef) {
        match new {
            LimiterRef::Bucket(kind, s) => self.set_states(kind, s),
            LimiterRef::Window(s) => self.set_states(LimiterKind::Window, s),
        }
    }

    #[inline]
    fn set_states<S: Stored>(&mut self, kind: LimiterKind, states: &[S]) {
        match (&mut *self, states) {
            // The parameters id the key held is the likely one again.
            (Limiter::One(p), [one]) => {
                let old = p.params_id();
                if let Some(new) = one.pack(kind, Some(old), 0) {
                    *p = new;
                    PARAMS.release(old);
                    return;
                }
            }
            (Limiter::Two(two), [a, b]) => {
                let old = (two[0].params_id(), two[1].params_id());
                if let Some(new) = Limiter::pack_two(kind, (a, b), (Some(old.0), Some(old.1))) {
                    **two = new;
                    PARAMS.release(old.0);
                    PARAMS.release(old.1);
                    return;
                }
            }
            (Limiter::Wide(wide), _) if wide.kind() == kind => {
                if let Some(all) = S::wide_mut(wide).filter(|all| all.len() == states.len()) {
                    if !Limiter::packs(kind, states) {
                        all.copy_from_slice(states);
                        return;
                    }
                }
            }
            _ => {}
        }
        *self = Limiter::from_states(kind, states);
    }

    /// Whether `states` have a packed form (one or two limits, every field
    /// narrow enough, their parameters in the table).
    fn packs<S: Stored>(kind: LimiterKind, states: &[S]) -> bool {
        let release = |p: &Packed| PARAMS.release(p.params_id());
        match states {
            [one] => one.pack(kind, None, 0).map(|p| release(&p)).is_some(),
            [a, b] => Limiter::pack_two(kind, (a, b), (None, None))
                .map(|two| two.iter().for_each(release))
                .is_some(),
            _ => false,
        }
    }

    /// Bytes the value uses (`MEMORY USAGE`).
    pub fn mem_usage(&self) -> usize {
        std::mem::size_of::<Limiter>()
            + match self {
                Limiter::One(_) => 0,
                Limiter::Two(two) => std::mem::size_of_val(&**two),
                Limiter::Wide(wide) => {
                    std::mem::size_of::<Wide>()
                        + match &**wide {
                            Wide::Bucket(_, all) => std::mem::size_of_val::<[BucketState]>(all),
                            Wide::Window(all) => std::mem::size_of_val::<[WindowState]>(all),
                        }
                }
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
        assert_eq!(l.mem_usage(), 16);
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[huge]));
        assert!(matches!(l, Limiter::Wide(_)));
        assert_eq!(read(&l), (LimiterKind::Token, vec![huge], vec![]));
        assert_eq!(l.mem_usage(), 16 + 24 + 48);
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[small]));
        assert!(matches!(l, Limiter::One(_)));
        assert_eq!(read(&l), (LimiterKind::Token, vec![small], vec![]));
        l.set(LimiterRef::Bucket(
            LimiterKind::Token,
            &[small, bucket(7, 20)],
        ));
        assert!(matches!(l, Limiter::Two(_)));
        assert_eq!(l.mem_usage(), 16 + 32);
        assert_eq!(read(&l).1, vec![small, bucket(7, 20)]);
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[small, huge]));
        assert!(matches!(l, Limiter::Wide(_)));
        assert_eq!(read(&l).1, vec![small, huge]);
        assert_eq!(l.mem_usage(), 16 + 24 + 96);
        let unknown = bucket(5, UNKNOWN_BURST);
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[unknown, huge]));
        assert_eq!(read(&l).1, vec![unknown, huge]);
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[small, small]));
        assert!(
            matches!(l, Limiter::Two(_)),
            "a wide key packs when it fits again"
        );
        assert_eq!(read(&l).1, vec![small, small]);
        let three = [small, bucket(1, 1), bucket(2, 2)];
        l.set(LimiterRef::Bucket(LimiterKind::Token, &three));
        assert!(matches!(l, Limiter::Wide(_)));
        assert_eq!(read(&l).1, three.to_vec());
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[small]));
        assert!(matches!(l, Limiter::One(_)));
        assert_eq!(read(&l), (LimiterKind::Token, vec![small], vec![]));
        l.set(LimiterRef::Bucket(LimiterKind::Leaky, &[bucket(3, 0)]));
        assert_eq!(read(&l), (LimiterKind::Leaky, vec![bucket(3, 0)], vec![]));
    }

    #[test]
    fn every_form_change_copy_and_drop_keeps_the_parameter_counts() {
        // Parameters no other test uses, so the shared counts are this test's.
        let own = |n: u64| BucketState {
            ticks_per_token: 0x5eed_0000 + n,
            ..bucket(5, 10)
        };
        let id = |s: BucketState| {
            let p = s.pack(LimiterKind::Token, None, 0).unwrap();
            PARAMS.release(p.params_id());
            p.params_id()
        };
        let (a, b, c) = (own(1), own(2), own(3));
        let (ia, ib, ic) = (id(a), id(b), id(c));
        let held = || {
            (
                PARAMS.holders_of(ia),
                PARAMS.holders_of(ib),
                PARAMS.holders_of(ic),
            )
        };
        assert_eq!(held(), (0, 0, 0));
        let mut l = Limiter::from_states(LimiterKind::Token, &[a]);
        assert_eq!(held(), (1, 0, 0));
        let copy = l.clone();
        assert_eq!(held(), (2, 0, 0));
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[b]));
        assert_eq!(held(), (1, 1, 0));
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[b, c]));
        assert_eq!(held(), (1, 1, 1));
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[a, c]));
        assert_eq!(held(), (2, 0, 1));
        let huge = BucketState {
            deficit: u128::MAX >> 1,
            ..a
        };
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[c, huge]));
        assert!(matches!(l, Limiter::Wide(_)));
        assert_eq!(held(), (1, 0, 0), "the wide form holds no id");
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[c, b]));
        assert_eq!(held(), (1, 1, 1));
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[a, b, c]));
        assert_eq!(held(), (1, 0, 0));
        l.set(LimiterRef::Bucket(LimiterKind::Token, &[c]));
        drop(copy);
        assert_eq!(held(), (0, 0, 1));
        drop(l);
        assert_eq!(held(), (0, 0, 0));
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
        assert!(matches!(forms[1], Limiter::Two(_)));
        let before: Vec<_> = forms.iter().map(read).collect();
        for l in &mut forms {
            l.relocate(&mut m);
        }
        // The two-limit block, and each wide form's box and slice.
        assert_eq!(m.moved, 5);
        assert_eq!(forms.iter().map(read).collect::<Vec<_>>(), before);
    }
}
