//! The packed in-memory form of one limit: 16 bytes holding a bucket or
//! window state whose fields fit narrower widths (the common case), its
//! parameters as an id in the shared table (`params`), and the limiter's
//! kind in the last byte. States that do not fit (huge deficits or counts,
//! times past the year 2527, a table full of other parameters) stay in
//! their wide form; callers choose on every write (`Pack::pack` answers
//! `None`).
//!
//! Bucket: last_ms (44 bits), deficit (60), parameters id (16): ticks per
//! token, ticks per ms and burst. Window: start_ms (44), previous (30),
//! current (30), parameters id (16): the window's length.

use crate::rate::core::params::{Params, PARAMS};
use crate::rate::core::rate::{BucketState, MAX_LIMITS};
use crate::rate::core::window::WindowState;

/// Which command owns a limiter key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
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

/// Times (last_ms, start_ms) are below this: 2^44 ms, the year 2527.
pub const TOP_TIME: u64 = 1 << 44;

/// A bucket's deficit is below this.
pub const TOP_DEFICIT: u64 = 1 << 60;

/// A window's counts are below this.
pub const TOP_COUNT: u64 = 1 << 30;

/// One limit in 16 bytes: 104 bits of state, a 16-bit parameters id and
/// the kind. `repr(C)` keeps the kind in the last byte, whose unused values
/// let an enum around it keep a pointer in the first 8 bytes at no extra
/// size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Packed {
    low: u64,
    mid: u32,
    id: u16,
    high: u8,
    kind: LimiterKind,
}

impl Packed {
    /// Packs `time` (below `TOP_TIME`) and `rest` (below 2^60) with the
    /// parameters `id` and `kind`.
    #[inline]
    fn new(kind: LimiterKind, id: u16, time: u64, rest: u64) -> Packed {
        debug_assert!(time < TOP_TIME && rest < 1 << 60);
        Packed {
            low: time | rest << 44,
            mid: (rest >> 20) as u32,
            high: (rest >> 52) as u8,
            id,
            kind,
        }
    }

    /// The time field (44 bits).
    #[inline]
    fn time(&self) -> u64 {
        self.low & (TOP_TIME - 1)
    }

    /// The other 60 bits of state.
    #[inline]
    fn rest(&self) -> u64 {
        self.low >> 44 | u64::from(self.mid) << 20 | u64::from(self.high) << 52
    }

    /// The kind of the limiter this limit belongs to.
    #[inline]
    pub fn kind(&self) -> LimiterKind {
        self.kind
    }

    /// The id of its parameters in the shared table.
    #[inline]
    pub fn params_id(&self) -> u16 {
        self.id
    }
}

/// A limit state that has a packed form.
pub trait Pack: Copy {
    /// A placeholder value (buffers).
    const EMPTY: Self;

    /// The packed form, `None` when a field is too wide for it or its
    /// parameters get no id. `hint` is the parameters id the caller
    /// expects (the one the key held), checked first; `position` is the
    /// limit's place in its key (`Table::intern`).
    fn pack(&self, kind: LimiterKind, hint: Option<u16>, position: usize) -> Option<Packed>;

    /// The state `p` holds (packed from a state of this type).
    fn unpack(p: &Packed) -> Self;
}

impl Pack for BucketState {
    const EMPTY: BucketState = BucketState {
        last_ms: 0,
        deficit: 0,
        ticks_per_token: 0,
        ticks_per_ms: 0,
        burst: 0,
    };

    #[inline]
    fn pack(&self, kind: LimiterKind, hint: Option<u16>, position: usize) -> Option<Packed> {
        let time = self.last_ms as u64;
        if time >= TOP_TIME || self.deficit >= u128::from(TOP_DEFICIT) {
            return None;
        }
        let params: Params = [self.ticks_per_token, self.ticks_per_ms, self.burst];
        let id = PARAMS.intern(&params, hint, position)?;
        Some(Packed::new(kind, id, time, self.deficit as u64))
    }

    #[inline]
    fn unpack(p: &Packed) -> BucketState {
        let [ticks_per_token, ticks_per_ms, burst] = PARAMS.params_of(p.id);
        BucketState {
            last_ms: p.time() as i64,
            deficit: u128::from(p.rest()),
            ticks_per_token,
            ticks_per_ms,
            burst,
        }
    }
}

impl Pack for WindowState {
    const EMPTY: WindowState = WindowState::NONE;

    #[inline]
    fn pack(&self, kind: LimiterKind, hint: Option<u16>, position: usize) -> Option<Packed> {
        let time = self.start_ms as u64;
        if time >= TOP_TIME || (self.previous | self.current) >= TOP_COUNT {
            return None;
        }
        let id = PARAMS.intern(&[self.window_ms as u64, 0, 0], hint, position)?;
        Some(Packed::new(
            kind,
            id,
            time,
            self.previous | self.current << 30,
        ))
    }

    #[inline]
    fn unpack(p: &Packed) -> WindowState {
        let rest = p.rest();
        WindowState {
            start_ms: p.time() as i64,
            window_ms: PARAMS.params_of(p.id)[0] as i64,
            previous: rest & (TOP_COUNT - 1),
            current: rest >> 30,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KINDS: [LimiterKind; 4] = [
        LimiterKind::Token,
        LimiterKind::Leaky,
        LimiterKind::Gcra,
        LimiterKind::Window,
    ];

    /// xorshift64*: deterministic random fields.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        /// A value around a width boundary (2^bits - 2 ..= 2^bits + 1), or
        /// any value below 2^bits.
        fn around(&mut self, bits: u32) -> u64 {
            let edge = if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            match self.next() % 4 {
                0 => edge.wrapping_sub(self.next() % 2),
                1 => edge.saturating_add(1 + self.next() % 2),
                2 => self.next() % 3,
                _ => self.next() & edge,
            }
        }
        /// One of a few parameter values, so the shared table stays small.
        fn param(&mut self) -> u64 {
            [0, 1, 7, 1000, 3_600_000, u64::MAX][(self.next() % 6) as usize]
        }
    }

    #[test]
    fn one_limit_fits_the_smallest_size_class() {
        assert_eq!(std::mem::size_of::<Packed>(), 16);
        assert_eq!(std::mem::size_of::<Option<Packed>>(), 16);
    }

    #[test]
    fn bucket_states_round_trip_or_stay_wide_exactly_past_the_widths() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for i in 0..200_000u32 {
            let deficit = match i % 3 {
                0 => u128::from(rng.around(60)),
                1 => u128::from(u64::MAX) + 1 + u128::from(rng.next() % 4),
                _ => u128::from(rng.around(64)),
            };
            let s = BucketState {
                last_ms: rng.around(44) as i64,
                deficit,
                ticks_per_token: rng.param(),
                ticks_per_ms: rng.param(),
                burst: rng.param(),
            };
            let kind = KINDS[i as usize % 3];
            let fits = (s.last_ms as u64) < TOP_TIME && s.deficit < u128::from(TOP_DEFICIT);
            match s.pack(kind, None, 0) {
                Some(p) => {
                    assert!(fits, "{s:?} packed");
                    assert_eq!(p.kind(), kind);
                    assert_eq!(BucketState::unpack(&p), s);
                }
                None => assert!(!fits, "{s:?} not packed"),
            }
        }
    }

    #[test]
    fn bucket_limits_at_the_edges() {
        let s = BucketState {
            last_ms: (TOP_TIME - 1) as i64,
            deficit: u128::from(TOP_DEFICIT - 1),
            ticks_per_token: u64::MAX,
            ticks_per_ms: u64::MAX,
            burst: crate::rate::core::rate::UNKNOWN_BURST,
        };
        let p = s.pack(LimiterKind::Token, None, 0).expect("widest packed");
        assert_eq!(BucketState::unpack(&p), s);
        assert_eq!(
            s.pack(LimiterKind::Token, Some(p.params_id()), 0),
            Some(p),
            "the hint gives the same id"
        );
        let wider = [
            BucketState {
                deficit: s.deficit + 1,
                ..s
            },
            BucketState {
                last_ms: TOP_TIME as i64,
                ..s
            },
            BucketState { last_ms: -1, ..s },
            BucketState {
                last_ms: i64::MIN,
                ..s
            },
        ];
        for w in wider {
            assert_eq!(w.pack(LimiterKind::Token, None, 0), None, "{w:?}");
        }
        let zero = BucketState::EMPTY;
        assert_eq!(
            BucketState::unpack(&zero.pack(LimiterKind::Gcra, None, 0).unwrap()),
            zero
        );
    }

    #[test]
    fn window_states_round_trip_or_stay_wide_exactly_past_the_widths() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..200_000 {
            let w = WindowState {
                start_ms: rng.around(44) as i64,
                window_ms: rng.param() as i64,
                previous: rng.around(30),
                current: rng.around(30),
            };
            let fits =
                (w.start_ms as u64) < TOP_TIME && w.previous < TOP_COUNT && w.current < TOP_COUNT;
            match w.pack(LimiterKind::Window, None, 0) {
                Some(p) => {
                    assert!(fits, "{w:?}");
                    assert_eq!(p.kind(), LimiterKind::Window);
                    assert_eq!(WindowState::unpack(&p), w);
                }
                None => assert!(!fits, "{w:?}"),
            }
        }
        let edge = WindowState {
            start_ms: (TOP_TIME - 1) as i64,
            window_ms: i64::MAX,
            previous: TOP_COUNT - 1,
            current: TOP_COUNT - 1,
        };
        let p = edge.pack(LimiterKind::Window, None, 0).unwrap();
        assert_eq!(WindowState::unpack(&p), edge);
        for over in [
            WindowState {
                current: TOP_COUNT,
                ..edge
            },
            WindowState {
                previous: TOP_COUNT,
                ..edge
            },
        ] {
            assert_eq!(over.pack(LimiterKind::Window, None, 0), None);
        }
    }
}
