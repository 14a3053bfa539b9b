//! The packed in-memory form of one limit: 32 bytes holding a bucket or
//! window state whose fields fit narrower widths (the common case), with the
//! limiter's kind in the last byte. States that do not fit (huge rates or
//! deficits, a burst of a version 1 state) stay in their wide form; callers
//! choose on every write (`Pack::pack` answers `None`).
//!
//! Bucket: last_ms (64 bits), deficit (64), ticks per token and per ms (32
//! each), burst (56). Window: start_ms, window_ms, previous (64 each),
//! current (56).

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

/// Values of the 56-bit field are below this.
pub const TOP_LIMIT: u64 = 1 << 56;

/// One limit in 32 bytes. `repr(C)` keeps the kind in the last byte, whose
/// unused values let an enum around it keep other forms (a boxed slice) in
/// the first 24 bytes at no extra size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Packed {
    words: [u64; 3],
    low: u32,
    mid: u16,
    high: u8,
    kind: LimiterKind,
}

impl Packed {
    /// Packs `words` (the last below `TOP_LIMIT`) with `kind`.
    #[inline]
    fn new(kind: LimiterKind, words: Words) -> Packed {
        let [a, b, c, top] = words;
        debug_assert!(top < TOP_LIMIT);
        Packed {
            words: [a, b, c],
            low: top as u32,
            mid: (top >> 32) as u16,
            high: (top >> 48) as u8,
            kind,
        }
    }

    /// The four words, without the kind.
    #[inline]
    pub fn words(&self) -> Words {
        let top = u64::from(self.low) | u64::from(self.mid) << 32 | u64::from(self.high) << 48;
        let [a, b, c] = self.words;
        [a, b, c, top]
    }

    /// The kind of the limiter this limit belongs to.
    pub fn kind(&self) -> LimiterKind {
        self.kind
    }
}

/// The four words of a packed limit, without its kind.
pub type Words = [u64; 4];

/// A limit state that has a packed form.
pub trait Pack: Copy {
    /// A placeholder value (buffers).
    const EMPTY: Self;

    /// The packed words, `None` when a field is too wide for them (the
    /// last word is then below `TOP_LIMIT`).
    fn pack_words(&self) -> Option<Words>;

    /// The state `w` holds (packed from a state of this type).
    fn unpack_words(w: &Words) -> Self;

    /// The packed form, `None` when a field is too wide for it.
    #[inline]
    fn pack(&self, kind: LimiterKind) -> Option<Packed> {
        self.pack_words().map(|w| Packed::new(kind, w))
    }

    /// The state `p` holds (packed from a state of this type).
    #[inline]
    fn unpack(p: &Packed) -> Self {
        Self::unpack_words(&p.words())
    }
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
    fn pack_words(&self) -> Option<Words> {
        // One test for every width: any bit above a field's width.
        let (tpt, tpm) = (self.ticks_per_token, self.ticks_per_ms);
        let wide = (self.deficit >> 64) as u64 | (tpt | tpm) >> 32 | self.burst >> 56;
        if wide != 0 {
            return None;
        }
        let ticks = tpt | tpm << 32;
        Some([self.last_ms as u64, self.deficit as u64, ticks, self.burst])
    }

    #[inline]
    fn unpack_words(w: &Words) -> BucketState {
        let [last, deficit, ticks, burst] = *w;
        BucketState {
            last_ms: last as i64,
            deficit: u128::from(deficit),
            ticks_per_token: ticks & u64::from(u32::MAX),
            ticks_per_ms: ticks >> 32,
            burst,
        }
    }
}

impl Pack for WindowState {
    const EMPTY: WindowState = WindowState::NONE;

    #[inline]
    fn pack_words(&self) -> Option<Words> {
        if self.current >= TOP_LIMIT {
            return None;
        }
        let (start, window) = (self.start_ms as u64, self.window_ms as u64);
        Some([start, window, self.previous, self.current])
    }

    #[inline]
    fn unpack_words(w: &Words) -> WindowState {
        let [start, window, previous, current] = *w;
        WindowState {
            start_ms: start as i64,
            window_ms: window as i64,
            previous,
            current,
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
    }

    #[test]
    fn one_limit_fits_one_small_size_class() {
        assert_eq!(std::mem::size_of::<Packed>(), 32);
        assert_eq!(std::mem::size_of::<Option<Packed>>(), 32);
    }

    #[test]
    fn bucket_states_round_trip_or_stay_wide_exactly_past_the_widths() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for i in 0..200_000u32 {
            let deficit = match i % 3 {
                0 => u128::from(rng.around(64)),
                1 => u128::from(u64::MAX) + 1 + u128::from(rng.next() % 4),
                _ => u128::from(rng.next()) << 64 | u128::from(rng.next()),
            };
            let s = BucketState {
                last_ms: rng.next() as i64,
                deficit,
                ticks_per_token: rng.around(32),
                ticks_per_ms: rng.around(32),
                burst: match rng.next() % 5 {
                    0 => u64::MAX,
                    _ => rng.around(56),
                },
            };
            let kind = KINDS[i as usize % 3];
            let fits = s.deficit <= u128::from(u64::MAX)
                && s.ticks_per_token <= u64::from(u32::MAX)
                && s.ticks_per_ms <= u64::from(u32::MAX)
                && s.burst < TOP_LIMIT;
            match s.pack(kind) {
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
            last_ms: i64::MAX,
            deficit: u128::from(u64::MAX),
            ticks_per_token: u64::from(u32::MAX),
            ticks_per_ms: u64::from(u32::MAX),
            burst: TOP_LIMIT - 1,
        };
        let p = s.pack(LimiterKind::Token).expect("widest packed");
        assert_eq!(BucketState::unpack(&p), s);
        let wider = [
            BucketState {
                deficit: s.deficit + 1,
                ..s
            },
            BucketState {
                ticks_per_token: s.ticks_per_token + 1,
                ..s
            },
            BucketState {
                ticks_per_ms: s.ticks_per_ms + 1,
                ..s
            },
            BucketState {
                burst: TOP_LIMIT,
                ..s
            },
            BucketState {
                burst: crate::rate::core::rate::UNKNOWN_BURST,
                ..s
            },
        ];
        for w in wider {
            assert_eq!(w.pack(LimiterKind::Token), None, "{w:?}");
        }
        let zero = BucketState::EMPTY;
        assert_eq!(
            BucketState::unpack(&zero.pack(LimiterKind::Gcra).unwrap()),
            zero
        );
        let negative = BucketState {
            last_ms: i64::MIN,
            ..zero
        };
        assert_eq!(
            BucketState::unpack(&negative.pack(LimiterKind::Leaky).unwrap()),
            negative
        );
    }

    #[test]
    fn window_states_round_trip_or_stay_wide_exactly_past_the_widths() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..200_000 {
            let w = WindowState {
                start_ms: rng.next() as i64,
                window_ms: rng.next() as i64,
                previous: rng.around(64),
                current: rng.around(56),
            };
            match w.pack(LimiterKind::Window) {
                Some(p) => {
                    assert!(w.current < TOP_LIMIT, "{w:?}");
                    assert_eq!(p.kind(), LimiterKind::Window);
                    assert_eq!(WindowState::unpack(&p), w);
                }
                None => assert!(w.current >= TOP_LIMIT, "{w:?}"),
            }
        }
        let edge = WindowState {
            start_ms: i64::MAX,
            window_ms: i64::MAX,
            previous: u64::MAX,
            current: TOP_LIMIT - 1,
        };
        assert_eq!(
            WindowState::unpack(&edge.pack(LimiterKind::Window).unwrap()),
            edge
        );
        let over = WindowState {
            current: TOP_LIMIT,
            ..edge
        };
        assert_eq!(over.pack(LimiterKind::Window), None);
    }
}
