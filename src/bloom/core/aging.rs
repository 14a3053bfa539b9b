//! Aging Bloom filters: "seen in the last window_ms" as blocks of time.
//!
//! An aging filter is a queue of **blocks**, each an ordinary Bloom layer of
//! `capacity / 4` items at `error_rate / 9`. A block opens at the first add
//! after the previous one closed, takes adds for one **slot** (window / 4) or
//! until it is full, and is retired once `opened + slot + window` has passed.
//!
//! - An item added at `t` sits in a block opened at or before `t` whose slot
//!   ends after `t`, so it is reported present until at least `t + window`,
//!   and is gone (bar false positives) by `t + window × (1 + 1/4)`.
//! - Live blocks hold only items added in the last `window + slot`, which two
//!   windows cover: at most `2 × capacity` items while at most `capacity`
//!   arrive per window. A block's false-positive rate is convex in its fill,
//!   so the blocks together answer a false positive with probability at most
//!   (items / block capacity) × block rate ≤ 8 × error_rate / 9.
//! - Full blocks number at most 8 and blocks closed by time at most 5 (their
//!   openings are a slot apart), so 13 blocks bound the memory: `BF.RESERVEX`
//!   checks that bound against `bf-max-bytes`, and an add that would need a
//!   14th block (more than `capacity` items in a window) is refused as full.
//!
//! Time is the caller's: reads skip retired blocks, adds retire them first.
//! Stored times only move forward: a clock behind the newest block's opening
//! counts as that opening.

use crate::bloom::core::errors;
use crate::common::error::WardenError;
use crate::common::parse::IntArg;
use crate::common::relocate::{self, Mover};

/// Slots per window: the slack past the window is window / GENERATIONS.
pub const GENERATIONS: u64 = 4;

/// Most live blocks: 2·GENERATIONS full ones and GENERATIONS + 1 closed by time.
pub const MAX_BLOCKS: usize = 3 * GENERATIONS as usize + 1;

/// Shortest window in ms.
pub const MIN_WINDOW_MS: u64 = 100;

/// Largest capacity any filter may ask for (`BF.RESERVEX`'s range).
pub const MAX_ASKED_CAPACITY: u64 = 1_000_000_000_000;

/// Latest opening time a block may have (Unix ms that fit a signed integer,
/// as the AOF writes them).
const LATEST_OPENING: u64 = i64::MAX as u64;

/// `window_ms` of `BF.RESERVEX … AGE`: 100 ms to 10 × 365 days (units allowed).
pub const WINDOW: IntArg = IntArg {
    name: "window_ms",
    min: 1,
    max: 10 * 365 * 86_400_000,
    duration: true,
};

/// Checks a window in ms against its range.
pub fn validate_window(window_ms: u64) -> Result<(), WardenError> {
    if (MIN_WINDOW_MS..=WINDOW.max as u64).contains(&window_ms) {
        Ok(())
    } else {
        Err(errors::BAD_WINDOW)
    }
}

/// Items one block holds for a filter of `capacity` items per window.
pub fn block_capacity(capacity: u64) -> u64 {
    capacity.div_ceil(GENERATIONS)
}

/// Error rate of one block for a filter of `error_rate`: the 2·GENERATIONS
/// full blocks of the worst case stay at 8/9 of the rate, leaving a ninth as
/// margin for double hashing's small excess over the textbook rate.
pub fn block_rate(error_rate: f64) -> f64 {
    error_rate / (2 * GENERATIONS + 1) as f64
}

/// The time state of an aging filter: its window and when each block opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aging {
    window_ms: u64,
    capacity: u64,
    /// Opening time (Unix ms) of each block, oldest first, non-decreasing.
    opened: Vec<u64>,
}

/// Where an add goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Into the newest block, which still takes adds.
    Newest,
    /// Into a new block opened now.
    NewBlock,
}

impl Aging {
    /// Offers the blocks' opening times to `m` (active defragmentation).
    pub fn relocate(&mut self, m: &mut dyn Mover) {
        relocate::vec(&mut self.opened, m);
    }

    /// A new filter's state: no blocks yet.
    pub fn new(window_ms: u64, capacity: u64) -> Result<Aging, WardenError> {
        Aging::from_parts(window_ms, capacity, Vec::new())
    }

    /// Rebuilds stored state, checking the window, the capacity (1 to
    /// MAX_ASKED_CAPACITY) and that the openings are in order, at most
    /// MAX_BLOCKS and no later than a signed 64-bit ms.
    pub fn from_parts(
        window_ms: u64,
        capacity: u64,
        opened: Vec<u64>,
    ) -> Result<Aging, WardenError> {
        validate_window(window_ms)?;
        if !(1..=MAX_ASKED_CAPACITY).contains(&capacity) {
            return Err(WardenError::BadFilterData);
        }
        let in_order = opened.windows(2).all(|w| w[0] <= w[1]);
        let in_range = opened.last().is_none_or(|&newest| newest <= LATEST_OPENING);
        if opened.len() > MAX_BLOCKS || !in_order || !in_range {
            return Err(WardenError::BadFilterData);
        }
        Ok(Aging {
            window_ms,
            capacity,
            opened,
        })
    }

    /// The window in ms.
    pub fn window_ms(&self) -> u64 {
        self.window_ms
    }

    /// Items per window the error rate holds for.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Opening time of each block, oldest first.
    pub fn opened(&self) -> &[u64] {
        &self.opened
    }

    /// Adds take a block for this long.
    pub fn slot_ms(&self) -> u64 {
        self.window_ms / GENERATIONS
    }

    /// `now`, never before the newest block's opening.
    pub fn clock(&self, now: u64) -> u64 {
        self.opened.last().map_or(now, |&newest| now.max(newest))
    }

    /// Whether block `index` still takes adds by time at `now` (its slot has
    /// not ended): an item in it lives at least a window from `now`.
    pub fn in_slot(&self, index: usize, now: u64) -> bool {
        let now = self.clock(now);
        self.opened
            .get(index)
            .is_some_and(|&opened| now < opened.saturating_add(self.slot_ms()))
    }

    /// Index of the oldest block still live at `now` (blocks before it are retired).
    pub fn first_live(&self, now: u64) -> usize {
        let now = self.clock(now);
        let life = self.slot_ms().saturating_add(self.window_ms);
        self.opened
            .partition_point(|&opened| opened.saturating_add(life) <= now)
    }

    /// Where an add at `now` goes, given whether the newest block is full;
    /// `ERR aging filter is full` when that needs a block past MAX_BLOCKS.
    pub fn target(&self, now: u64, newest_full: bool) -> Result<Target, WardenError> {
        let now = self.clock(now);
        let open = self.in_slot(self.opened.len().wrapping_sub(1), now);
        if open && !newest_full {
            return Ok(Target::Newest);
        }
        if self.opened.len() - self.first_live(now) >= MAX_BLOCKS {
            return Err(errors::AGING_FULL);
        }
        Ok(Target::NewBlock)
    }

    /// Forgets the first `count` blocks (retired).
    pub fn retire(&mut self, count: usize) {
        self.opened.drain(..count);
    }

    /// Records a block opened at `now`.
    pub fn open(&mut self, now: u64) {
        let now = self.clock(now);
        self.opened.push(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aging(window: u64) -> Aging {
        Aging::new(window, 1000).expect("aging")
    }

    #[test]
    fn windows_are_checked() {
        assert_eq!(validate_window(99), Err(errors::BAD_WINDOW));
        assert_eq!(validate_window(100), Ok(()));
        assert_eq!(validate_window(WINDOW.max as u64), Ok(()));
        assert_eq!(
            validate_window(WINDOW.max as u64 + 1),
            Err(errors::BAD_WINDOW)
        );
        assert_eq!(WINDOW.parse(b"7d"), Ok(7 * 86_400_000));
    }

    #[test]
    fn blocks_open_take_a_slot_and_retire_after_window_and_slot() {
        let mut a = aging(1000);
        assert_eq!(a.target(5000, false), Ok(Target::NewBlock));
        a.open(5000);
        assert_eq!(a.target(5249, false), Ok(Target::Newest));
        assert_eq!(a.target(5249, true), Ok(Target::NewBlock));
        assert_eq!(a.target(5250, false), Ok(Target::NewBlock));
        assert_eq!(a.first_live(6249), 0);
        assert_eq!(a.first_live(6250), 1);
    }

    #[test]
    fn a_clock_behind_the_newest_block_counts_as_its_opening() {
        let mut a = aging(1000);
        a.open(5000);
        assert_eq!(a.clock(10), 5000);
        a.open(10);
        assert_eq!(a.opened(), &[5000, 5000]);
    }

    #[test]
    fn more_than_max_blocks_live_is_full() {
        let mut a = aging(1000);
        for _ in 0..MAX_BLOCKS {
            assert_eq!(a.target(0, true), Ok(Target::NewBlock));
            a.open(0);
        }
        assert_eq!(a.target(0, true), Err(errors::AGING_FULL));
        assert_eq!(
            a.target(1250, true),
            Ok(Target::NewBlock),
            "all retired by then"
        );
    }

    #[test]
    fn stored_state_is_checked() {
        assert!(Aging::from_parts(1000, 10, vec![3, 2]).is_err());
        assert!(Aging::from_parts(1000, 0, vec![]).is_err());
        assert!(Aging::from_parts(50, 10, vec![]).is_err());
        assert!(Aging::from_parts(1000, 10, vec![0; MAX_BLOCKS + 1]).is_err());
        assert!(Aging::from_parts(1000, 10, vec![1, 1, 2]).is_ok());
        assert!(Aging::from_parts(1000, MAX_ASKED_CAPACITY + 1, vec![]).is_err());
        assert!(Aging::from_parts(1000, MAX_ASKED_CAPACITY, vec![]).is_ok());
        assert!(Aging::from_parts(1000, 10, vec![1, 1 << 63]).is_err());
        assert!(Aging::from_parts(1000, 10, vec![1, i64::MAX as u64]).is_ok());
    }
}
