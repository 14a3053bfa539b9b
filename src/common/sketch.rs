//! What counting sketches (arrays of `depth` rows of `width` cells) share:
//! the hash that picks an item's cell in each row, and the time slots of a
//! sketch that counts over a sliding window.
//!
//! **Hash.** One XXH3-128 of the item (a frozen format: stored sketches
//! depend on it); row `i` takes the column `fastrange(h1 + i·h2, width)`,
//! the two halves combined as in double hashing, and the fingerprint is the
//! high half's top 32 bits.
//!
//! **Window.** A window of `window_ms` is cut into `SUB_WINDOWS` slots of
//! `slot_ms = ⌈window_ms / SUB_WINDOWS⌉`, aligned to multiples of `slot_ms`
//! since the Unix epoch; a sketch keeps `RING` sub-sketches, one per slot: the
//! current slot's and the `SUB_WINDOWS` before it. At `now` in slot `n` the
//! live slots `n − SUB_WINDOWS ..= n` cover at least the last `window_ms`
//! and less than `window_ms + slot_ms` (at most 1.25 × the window, plus
//! rounding). Nothing runs per key: a read ignores the slots that have aged
//! out (`Ring::live`), a write first moves the ring to its slot
//! (`Ring::rotate_to`), clearing the positions it reuses. Time is the
//! caller's; stored times only move forward (a clock behind the newest slot
//! counts as that slot).

use crate::common::error::WardenError;
use crate::common::parse::{IntArg, MAX_DURATION_MS};

/// An item's hash: the column of each row and the fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowHash {
    h1: u64,
    h2: u64,
}

impl RowHash {
    /// Hashes `item`.
    #[inline]
    pub fn of(item: &[u8]) -> RowHash {
        let h = xxhash_rust::xxh3::xxh3_128(item);
        RowHash {
            h1: h as u64,
            // Odd, so the rows' columns never all coincide.
            h2: (h >> 64) as u64 | 1,
        }
    }

    /// The column of row `row` in rows of `width` cells (`< width`).
    #[inline(always)]
    pub fn column(&self, row: u32, width: u32) -> usize {
        let x = self.h1.wrapping_add(u64::from(row).wrapping_mul(self.h2));
        ((u128::from(x) * u128::from(width)) >> 64) as usize
    }

    /// A 32-bit fingerprint of the item.
    #[inline(always)]
    pub fn fingerprint(&self) -> u32 {
        (self.h2 >> 32) as u32
    }
}

/// Slots a window is cut into.
pub const SUB_WINDOWS: u64 = 4;

/// Sub-sketches a windowed sketch keeps: the current slot and `SUB_WINDOWS` before it.
pub const RING: usize = SUB_WINDOWS as usize + 1;

/// Shortest window in ms.
pub const MIN_WINDOW_MS: u64 = 100;

/// `WINDOW ms` at creation: 100 ms to 10 years (units allowed: `5m`).
pub const WINDOW: IntArg = IntArg {
    name: "window",
    min: 1,
    max: MAX_DURATION_MS,
    duration: true,
};

/// Latest slot a ring may start (Unix ms that fit a signed integer, as the AOF writes them).
const LATEST_SLOT_MS: u64 = i64::MAX as u64;

/// A window outside 100 ms to 10 years (the text the aging Bloom filter's
/// `AGE` answers too).
pub const BAD_WINDOW: WardenError =
    WardenError::Refused("ERR window must be from 100 ms to 10 years (3650 days)");

/// Checks a window in ms against its range.
pub fn validate_window(window_ms: u64) -> Result<(), WardenError> {
    if (MIN_WINDOW_MS..=MAX_DURATION_MS as u64).contains(&window_ms) {
        Ok(())
    } else {
        Err(BAD_WINDOW)
    }
}

/// `WINDOW ms` as a call gives it: a duration in range (units allowed).
pub fn parse_window(word: &[u8]) -> Result<u64, WardenError> {
    let ms = WINDOW.parse(word).map_err(|_| BAD_WINDOW)? as u64;
    validate_window(ms)?;
    Ok(ms)
}

/// The time state of a windowed sketch: its window and the start of the
/// newest slot written (0 before the first write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ring {
    window_ms: u64,
    head_ms: u64,
}

impl Ring {
    /// A ring for `window_ms`, never written.
    pub fn new(window_ms: u64) -> Result<Ring, WardenError> {
        Ring::from_parts(window_ms, 0)
    }

    /// Rebuilds a stored ring: the window in range, the head the start of a
    /// slot and no later than a signed 64-bit ms.
    pub fn from_parts(window_ms: u64, head_ms: u64) -> Result<Ring, WardenError> {
        validate_window(window_ms)?;
        let ring = Ring { window_ms, head_ms };
        if !head_ms.is_multiple_of(ring.slot_ms()) || head_ms > LATEST_SLOT_MS {
            return Err(WardenError::BadFilterData);
        }
        Ok(ring)
    }

    /// The window in ms.
    pub fn window_ms(&self) -> u64 {
        self.window_ms
    }

    /// Start of the newest slot written (0 before the first write).
    pub fn head_ms(&self) -> u64 {
        self.head_ms
    }

    /// Length of a slot.
    pub fn slot_ms(&self) -> u64 {
        self.window_ms.div_ceil(SUB_WINDOWS)
    }

    /// Start of the slot `now` falls in, never before the head.
    pub fn slot_of(&self, now: u64) -> u64 {
        let now = now.clamp(self.head_ms, LATEST_SLOT_MS);
        now - now % self.slot_ms()
    }

    /// The ring position of the slot starting at `slot_ms`.
    pub fn position(&self, slot_start: u64) -> usize {
        (slot_start / self.slot_ms() % RING as u64) as usize
    }

    /// The position writes go to (the head's).
    pub fn current(&self) -> usize {
        self.position(self.head_ms)
    }

    /// The positions live at `now`, as bits (bit `p` for position `p`).
    pub fn live(&self, now: u64) -> u8 {
        let slot = self.slot_ms();
        let behind = (self.slot_of(now) - self.head_ms) / slot;
        let mut mask = 0u8;
        for age in 0..RING as u64 {
            let Some(start) = self.head_ms.checked_sub(age * slot) else {
                break;
            };
            if behind.saturating_add(age) <= SUB_WINDOWS {
                mask |= 1 << self.position(start);
            }
        }
        mask
    }

    /// Moves the head to `slot_start` (a slot start at or after the head)
    /// and returns the positions to clear (bits, as `live`): those the slots
    /// after the old head reuse. 0 when the head does not move.
    pub fn rotate_to(&mut self, slot_start: u64) -> Result<u8, WardenError> {
        if !slot_start.is_multiple_of(self.slot_ms()) || slot_start > LATEST_SLOT_MS {
            return Err(WardenError::BadFilterData);
        }
        if slot_start <= self.head_ms {
            return Ok(0);
        }
        let slot = self.slot_ms();
        let gap = (slot_start - self.head_ms) / slot;
        let mut mask = 0u8;
        if gap >= RING as u64 {
            mask = (1 << RING) - 1;
        } else {
            for j in 1..=gap {
                mask |= 1 << self.position(self.head_ms + j * slot);
            }
        }
        self.head_ms = slot_start;
        Ok(mask)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_stay_in_range_and_spread() {
        for width in [1u32, 2, 7, 1000, u32::MAX] {
            for i in 0..200u32 {
                let h = RowHash::of(format!("item-{i}").as_bytes());
                for row in [0, 1, 5, 63] {
                    assert!(h.column(row, width) < width as usize);
                }
            }
        }
        // 100,000 items over 100 columns: each within 15 % of 1,000 in every row.
        for row in [0u32, 1, 9] {
            let mut cells = [0u32; 100];
            for i in 0..100_000u32 {
                cells[RowHash::of(&i.to_le_bytes()).column(row, 100)] += 1;
            }
            assert!(cells.iter().all(|c| (850..=1150).contains(c)), "{cells:?}");
        }
    }

    /// Stored sketches depend on these values: a change of hash would move
    /// every item to other cells.
    #[test]
    fn the_hash_is_frozen() {
        let h = RowHash::of(b"hello");
        let full = xxhash_rust::xxh3::xxh3_128(b"hello");
        assert_eq!(full, 0xb5e9_c1ad_071b_3e7f_c779_cfaa_5e52_3818);
        let columns: Vec<usize> = (0..4).map(|row| h.column(row, 1000)).collect();
        assert_eq!(columns, [779, 489, 200, 910]);
        assert_eq!(h.fingerprint(), 0xb5e9_c1ad);
    }

    /// Two items that share a column in one row rarely share it in another:
    /// about 1 in `width` of the pairs that meet in row 0 meet in row 1.
    #[test]
    fn rows_are_close_to_independent() {
        let width = 64u32;
        let hashes: Vec<RowHash> = (0..2000u32)
            .map(|i| RowHash::of(&i.to_be_bytes()))
            .collect();
        let (mut both, mut first) = (0u64, 0u64);
        for (a, x) in hashes.iter().enumerate() {
            for y in &hashes[a + 1..] {
                if x.column(0, width) == y.column(0, width) {
                    first += 1;
                    both += u64::from(x.column(1, width) == y.column(1, width));
                }
            }
        }
        // ~31,000 pairs meet in row 0; ~490 of them again in row 1.
        assert!((25_000..38_000).contains(&first), "{first}");
        assert!((350..650).contains(&both), "{both} of {first}");
    }

    #[test]
    fn windows_are_checked() {
        assert_eq!(validate_window(99), Err(BAD_WINDOW));
        assert_eq!(validate_window(100), Ok(()));
        assert_eq!(validate_window(MAX_DURATION_MS as u64), Ok(()));
        assert!(validate_window(MAX_DURATION_MS as u64 + 1).is_err());
        assert_eq!(WINDOW.parse(b"5m"), Ok(300_000));
        assert!(Ring::from_parts(1000, 250).is_ok());
        assert!(Ring::from_parts(1000, 251).is_err());
        assert!(Ring::from_parts(1000, 1 << 63).is_err());
        assert!(Ring::from_parts(50, 0).is_err());
    }

    #[test]
    fn live_slots_cover_at_least_the_window() {
        // Slots of 250 ms; head at slot 40 (10,000 ms).
        let mut r = Ring::new(1000).unwrap();
        assert_eq!(r.slot_ms(), 250);
        assert_eq!(r.rotate_to(10_000).unwrap(), 0b11111);
        assert_eq!(r.live(10_000).count_ones(), 5);
        assert_eq!(r.live(10_249).count_ones(), 5);
        // One slot later the oldest position (the one the next slot reuses) is out.
        let next = r.position(10_250);
        assert_eq!(r.live(10_250), 0b11111 & !(1 << next));
        assert_eq!(r.live(10_000 + 5 * 250), 0, "the head slot itself aged out");
        assert_eq!(r.live(10_000 + 4 * 250), 1 << r.current());
        // A clock behind the head counts as the head.
        assert_eq!(r.live(5), 0b11111);
        assert_eq!(r.slot_of(5), 10_000);
    }

    #[test]
    fn rotation_clears_exactly_the_reused_positions() {
        let mut r = Ring::new(1000).unwrap();
        r.rotate_to(10_000).unwrap();
        assert_eq!(r.rotate_to(10_000).unwrap(), 0, "same slot");
        assert_eq!(r.rotate_to(9_750).unwrap(), 0, "never backwards");
        assert_eq!(r.head_ms(), 10_000);
        let cleared = r.rotate_to(10_500).unwrap();
        assert_eq!(
            cleared,
            (1 << r.position(10_250)) | (1 << r.position(10_500))
        );
        assert_eq!(r.current(), r.position(10_500));
        // Live after the move: all but nothing (the cleared ones are empty and live).
        assert_eq!(r.live(10_500), 0b11111);
        assert_eq!(
            r.rotate_to(10_500 + 5 * 250).unwrap(),
            0b11111,
            "a whole ring later"
        );
        assert!(r.rotate_to(10_501 + 5 * 250).is_err(), "not a slot start");
    }

    /// Property: for any sequence of writes at increasing times, a count
    /// written at `t` is live at every `now` in `[t, t + window]`, and never
    /// at `now ≥ t + window + slot`.
    #[test]
    fn a_write_stays_live_for_the_window_and_leaves_within_a_slot() {
        let mut rng = crate::common::test_rng::Rng(7);
        for window in [100u64, 1000, 999, 60_000, 3_600_000] {
            let mut r = Ring::new(window).unwrap();
            let mut t = 1_700_000_000_000u64;
            for _ in 0..300 {
                t += rng.below(window * 2);
                r.rotate_to(r.slot_of(t)).unwrap();
                let p = r.current();
                let slot = r.slot_ms();
                for dt in [0, 1, window / 2, window - 1, window] {
                    assert!(r.live(t + dt) & (1 << p) != 0, "{window} {t} +{dt}");
                }
                assert_eq!(r.live(t + window + slot) & (1 << p), 0, "{window}");
            }
        }
    }
}
