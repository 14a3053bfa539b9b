//! Count-min sketches: `depth` rows of `width` 32-bit counters; an item
//! counts in one cell of each row (`common::sketch::RowHash`) and its count
//! is the smallest of its cells. RedisBloom's sketch, with its limits and
//! its merge and overflow rules, and two differences:
//!
//! - **Conservative update.** An increment raises an item's cells only as
//!   far as its new estimate (the smallest cell plus the increment), never
//!   adding to a cell that already holds more. Every cell of an item still
//!   holds at least the item's count, so a count is never under-estimated,
//!   and the over-estimate (what other items sharing its cells add) is
//!   smaller than when every cell is incremented. A merge adds cells, which
//!   keeps that (a sum of upper bounds); a merge with a negative weight
//!   subtracts cells, which removes exactly a sketch that was merged in, as
//!   in RedisBloom, but a sketch counted by increments of its own may leave
//!   an item under-counted.
//! - **Windows.** A sketch made with a window keeps one sub-sketch per time
//!   slot (`common::sketch::Ring`): increments go to the current slot's,
//!   reads add up each row over the slots still live. Each sub-sketch is a
//!   sketch of its slot's items, so the sum is a sketch of the live slots'
//!   items, with the same guarantee: with probability at least
//!   1 − 2^−depth an item's count is at most its true count over the live
//!   slots plus 2/width of all counts there (`N`), and never below its
//!   count over the last window. Memory: the `RING` sub-sketches' counters
//!   in one block, at most (`RING` + 1) × a plain sketch's.
//!
//! A counter saturates at 2^32 − 1 (RedisBloom's `CMS: INCRBY overflow`
//! when an item's count reaches it); the total count saturates at 2^63 − 1
//! (what a signed 64-bit integer, as replies and the AOF carry it, holds).

use crate::common::error::WardenError;
use crate::common::relocate::{self, Mover};
use crate::common::sketch::{validate_window, Ring, RowHash, RING};

/// Largest width (RedisBloom's is a 64-bit integer; a 32-bit one is already
/// far past any memory cap).
pub const MAX_WIDTH: u64 = u32::MAX as u64;
/// Largest depth.
pub const MAX_DEPTH: u64 = u32::MAX as u64;

/// Largest total count.
pub const MAX_COUNT: u64 = i64::MAX as u64;

/// The stored code of how a sketch hashes and counts: XXH3-128 rows
/// (`RowHash`) with conservative update. The only kind so far.
pub const KIND: u64 = 1;

/// RedisBloom's error texts, after `ERR ` (which its users match on: a
/// client library that strips the code sees RedisBloom's own text).
pub mod text {
    /// The key already exists.
    pub const KEY_EXISTS: &str = "ERR CMS: key already exists";
    /// The key does not exist.
    pub const KEY_MISSING: &str = "ERR CMS: key does not exist";
    /// An increment that is not an integer.
    pub const NOT_A_NUMBER: &str = "ERR CMS: Cannot parse number";
    /// A negative increment.
    pub const NEGATIVE: &str = "ERR CMS: Number cannot be negative";
    /// An item whose count saturated.
    pub const INCRBY_OVERFLOW: &str = "ERR CMS: INCRBY overflow";
    /// A `numkeys` that is not an integer.
    pub const BAD_NUMKEYS: &str = "ERR CMS: invalid numkeys";
    /// A `numkeys` below 1.
    pub const NUMKEYS_NOT_POSITIVE: &str = "ERR CMS: Number of keys must be positive";
    /// `WEIGHTS` with another count than `numkeys`.
    pub const KEYS_WEIGHTS: &str = "ERR CMS: wrong number of keys/weights";
    /// A weight that is not an integer.
    pub const BAD_WEIGHT: &str = "ERR CMS: invalid weight value";
    /// Sketches of other sizes.
    pub const DIMS_DIFFER: &str = "ERR CMS: width/depth is not equal";
    /// Sketches of other windows (warden's own).
    pub const WINDOWS_DIFFER: &str = "ERR CMS: window is not equal";
    /// A merged counter outside 0 ..= 2^32 − 1, or a negative total.
    pub const MERGE_OVERFLOW: &str = "ERR CMS: MERGE overflow";
    /// Sizes from an error and probability that make no sketch.
    pub const BAD_INIT: &str = "ERR CMS: invalid init arguments";
}

/// The refusal with the whole message `text` (one of `text`'s).
pub fn error(text: &'static str) -> WardenError {
    WardenError::Refused(text)
}

/// A width or depth outside `1..=max`: RedisBloom's text and the range.
fn bad_dimension(name: &str, max: u64) -> WardenError {
    WardenError::RefusedWith(format!(
        "ERR CMS: invalid {name} (an integer from 1 to {max})"
    ))
}

/// A sketch's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    /// Counters per row.
    pub width: u32,
    /// Rows.
    pub depth: u32,
}

impl Dims {
    /// `CMS.INITBYDIMX`'s sizes, as given: each from 1 to its maximum.
    pub fn new(width: Option<i64>, depth: Option<i64>) -> Result<Dims, WardenError> {
        let check = |v: Option<i64>, name, max| match v {
            Some(v) if v >= 1 && v as u64 <= max => Ok(v as u32),
            _ => Err(bad_dimension(name, max)),
        };
        Ok(Dims {
            width: check(width, "width", MAX_WIDTH)?,
            depth: check(depth, "depth", MAX_DEPTH)?,
        })
    }

    /// `CMS.INITBYPROBX`'s sizes, as RedisBloom works them out: width
    /// ⌈2 / error⌉, depth ⌈log10(probability) / log10(0.5)⌉ in single
    /// precision (so the same arguments make the same sketch).
    pub fn from_error(error_rate: f64, probability: f64) -> Result<Dims, WardenError> {
        let width = (2.0 / error_rate).ceil();
        let depth = ((probability as f32).log10() / 0.5f32.log10()).ceil();
        let fits = |v: f64, max: u64| v >= 1.0 && v <= max as f64;
        if !fits(width, MAX_WIDTH) || !fits(f64::from(depth), MAX_DEPTH) {
            return Err(error(text::BAD_INIT));
        }
        Ok(Dims {
            width: width as u32,
            depth: depth as u32,
        })
    }

    /// Counters of one sub-sketch.
    pub fn cells(self) -> u64 {
        u64::from(self.width) * u64::from(self.depth)
    }
}

/// A count and whether it saturated (every row's cell at 2^32 − 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    /// The count: at least the item's.
    pub value: u64,
    /// Whether counting may have stopped short (RedisBloom's overflow).
    pub overflow: bool,
}

/// A sketch without a window: its counters and the total of its increments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    cells: Box<[u32]>,
    width: u32,
    depth: u32,
    count: u64,
}

/// A sketch over a window: `RING` sub-sketches' counters (position `p` at
/// `p × width × depth`), each one's total, and the slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Windowed {
    cells: Box<[u32]>,
    width: u32,
    depth: u32,
    counts: [u64; RING],
    ring: Ring,
}

/// A count-min sketch, over all time or over a window. A plain one takes
/// what RedisBloom's takes: 32 bytes and 4 per counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CountMin {
    /// Counts since creation.
    Plain(Grid),
    /// Counts over the last window.
    Windowed(Box<Windowed>),
}

/// Bytes of a sketch of `dims`, with a window or not, or `None` when that
/// does not fit a 64-bit count.
pub fn bytes_for(dims: Dims, windowed: bool) -> Option<u64> {
    let subs = if windowed { RING as u64 } else { 1 };
    let head = std::mem::size_of::<CountMin>() as u64;
    let extra = if windowed {
        std::mem::size_of::<Windowed>() as u64
    } else {
        0
    };
    dims.cells()
        .checked_mul(subs)?
        .checked_mul(4)?
        .checked_add(head + extra)
}

impl CountMin {
    /// An empty sketch of `dims`, over `window_ms` when given, within
    /// `max_bytes` (RedisBloom's "Insufficient memory" otherwise).
    pub fn new(
        dims: Dims,
        window_ms: Option<u64>,
        max_bytes: u64,
    ) -> Result<CountMin, WardenError> {
        if let Some(w) = window_ms {
            validate_window(w)?;
        }
        let fits = bytes_for(dims, window_ms.is_some()).is_some_and(|b| b <= max_bytes);
        if !fits {
            return Err(error(
                "ERR CMS: Insufficient memory to create the key (it would exceed cms-max-bytes)",
            ));
        }
        let subs = if window_ms.is_some() { RING } else { 1 };
        let cells = vec![0u32; dims.cells() as usize * subs].into_boxed_slice();
        Ok(match window_ms {
            None => CountMin::Plain(Grid {
                cells,
                width: dims.width,
                depth: dims.depth,
                count: 0,
            }),
            Some(w) => CountMin::Windowed(Box::new(Windowed {
                cells,
                width: dims.width,
                depth: dims.depth,
                counts: [0; RING],
                ring: Ring::new(w)?,
            })),
        })
    }

    /// Rebuilds a stored sketch, every part checked: the sizes, the window
    /// and its head, one total per sub-sketch and exactly their counters.
    pub fn from_stored(
        dims: Dims,
        window: Option<(u64, u64)>,
        counts: &[u64],
        cells: Vec<u32>,
    ) -> Result<CountMin, WardenError> {
        let bad = || WardenError::BadFilterData;
        if dims.width == 0 || dims.depth == 0 {
            return Err(bad());
        }
        let subs = if window.is_some() { RING } else { 1 };
        let too_many = counts.iter().any(|c| *c > MAX_COUNT);
        if too_many || counts.len() != subs || cells.len() as u64 != dims.cells() * subs as u64 {
            return Err(bad());
        }
        let cells = cells.into_boxed_slice();
        Ok(match window {
            None => CountMin::Plain(Grid {
                cells,
                width: dims.width,
                depth: dims.depth,
                count: counts[0],
            }),
            Some((window_ms, head_ms)) => CountMin::Windowed(Box::new(Windowed {
                cells,
                width: dims.width,
                depth: dims.depth,
                counts: counts.try_into().map_err(|_| bad())?,
                ring: Ring::from_parts(window_ms, head_ms)?,
            })),
        })
    }

    /// Its size.
    pub fn dims(&self) -> Dims {
        let (width, depth) = match self {
            CountMin::Plain(g) => (g.width, g.depth),
            CountMin::Windowed(w) => (w.width, w.depth),
        };
        Dims { width, depth }
    }

    /// Its slots, for a sketch over a window.
    pub fn ring(&self) -> Option<&Ring> {
        match self {
            CountMin::Plain(_) => None,
            CountMin::Windowed(w) => Some(&w.ring),
        }
    }

    /// Every counter, sub-sketch by sub-sketch.
    pub fn cells(&self) -> &[u32] {
        match self {
            CountMin::Plain(g) => &g.cells,
            CountMin::Windowed(w) => &w.cells,
        }
    }

    /// Each sub-sketch's total (one for a plain sketch).
    pub fn counts(&self) -> &[u64] {
        match self {
            CountMin::Plain(g) => std::slice::from_ref(&g.count),
            CountMin::Windowed(w) => &w.counts,
        }
    }

    fn parts_mut(&mut self) -> (&mut [u32], &mut [u64]) {
        match self {
            CountMin::Plain(g) => (&mut g.cells, std::slice::from_mut(&mut g.count)),
            CountMin::Windowed(w) => (&mut w.cells, &mut w.counts),
        }
    }

    /// Bytes it takes (MEMORY USAGE; the cap).
    pub fn size(&self) -> u64 {
        bytes_for(self.dims(), self.ring().is_some()).unwrap_or(u64::MAX)
    }

    /// The sub-sketches live at `now` (bits by position; 1 for a plain sketch).
    fn live(&self, now: u64) -> u8 {
        self.ring().map_or(1, |r| r.live(now))
    }

    /// The sub-sketch increments go to.
    fn current(&self) -> usize {
        self.ring().map_or(0, Ring::current)
    }

    /// Moves a windowed sketch to the slot starting at `slot_ms`, clearing
    /// the sub-sketches it reuses: whether it moved. A plain sketch has no slots.
    pub fn rotate_to(&mut self, slot_ms: u64) -> Result<bool, WardenError> {
        let CountMin::Windowed(w) = self else {
            return Err(WardenError::InvalidState("not a windowed sketch"));
        };
        let cleared = w.ring.rotate_to(slot_ms)?;
        let size = w.width as usize * w.depth as usize;
        for p in (0..RING).filter(|p| cleared & (1 << p) != 0) {
            w.cells[p * size..(p + 1) * size].fill(0);
            w.counts[p] = 0;
        }
        Ok(cleared != 0)
    }

    /// Adds `by` to the item hashed `h` in the current sub-sketch
    /// (conservatively) and returns its count as of the current slot.
    pub fn incr(&mut self, h: &RowHash, by: u64) -> Estimate {
        let Dims { width, depth } = self.dims();
        let sub = self.current();
        let base = sub * width as usize * depth as usize;
        let (cells, counts) = self.parts_mut();
        let cell = |row: u32| base + row as usize * width as usize + h.column(row, width);
        let smallest = (0..depth).map(|row| cells[cell(row)]).min().unwrap_or(0);
        let target = u64::from(smallest)
            .saturating_add(by)
            .min(u64::from(u32::MAX)) as u32;
        if by > 0 {
            for row in 0..depth {
                let c = &mut cells[cell(row)];
                *c = (*c).max(target);
            }
        }
        counts[sub] = counts[sub].saturating_add(by).min(MAX_COUNT);
        match self.ring() {
            None => Estimate {
                value: u64::from(target),
                overflow: target == u32::MAX,
            },
            Some(r) => self.estimate(h, r.live(r.head_ms())),
        }
    }

    /// The count of the item hashed `h` at `now`.
    pub fn query(&self, h: &RowHash, now: u64) -> Estimate {
        self.estimate(h, self.live(now))
    }

    /// The smallest over the rows of the sum of the sub-sketches in `live`.
    fn estimate(&self, h: &RowHash, live: u8) -> Estimate {
        let Dims { width, depth } = self.dims();
        let cells = self.cells();
        let size = width as usize * depth as usize;
        if live == 0 {
            return Estimate {
                value: 0,
                overflow: false,
            };
        }
        let mut best = Estimate {
            value: u64::MAX,
            overflow: true,
        };
        for row in 0..depth {
            let at = row as usize * width as usize + h.column(row, width);
            let (mut sum, mut saturated) = (0u64, false);
            for p in (0..RING).filter(|p| live & (1 << p) != 0) {
                let c = cells[p * size + at];
                saturated |= c == u32::MAX;
                sum += u64::from(c);
            }
            best.value = best.value.min(sum);
            best.overflow &= saturated;
        }
        best
    }

    /// The total of the increments at `now` (over the live slots).
    pub fn count(&self, now: u64) -> u64 {
        let live = self.live(now);
        self.counts()
            .iter()
            .enumerate()
            .filter(|(p, _)| live & (1 << p) != 0)
            .fold(0u64, |sum, (_, c)| sum.saturating_add(*c).min(MAX_COUNT))
    }

    /// Overwrites sub-sketch `sub`'s total and its counters from `offset`
    /// (the AOF form of a sketch).
    pub fn load_chunk(
        &mut self,
        sub: usize,
        count: u64,
        offset: usize,
        values: &[u32],
    ) -> Result<(), WardenError> {
        let size = self.dims().cells() as usize;
        let (cells, counts) = self.parts_mut();
        let end = offset.checked_add(values.len()).filter(|e| *e <= size);
        let (Some(end), Some(total)) = (end, counts.get_mut(sub).filter(|_| count <= MAX_COUNT))
        else {
            return Err(WardenError::BadFilterData);
        };
        *total = count;
        cells[sub * size + offset..sub * size + end].copy_from_slice(values);
        Ok(())
    }

    /// Offers its heap blocks to `m` (active defragmentation).
    pub fn relocate(&mut self, m: &mut dyn Mover) {
        match self {
            CountMin::Plain(g) => relocate::boxed_slice(&mut g.cells, m),
            CountMin::Windowed(w) => {
                relocate::boxed(w, m);
                relocate::boxed_slice(&mut w.cells, m);
            }
        }
    }
}

/// What a merge writes to its destination: every counter and total, and
/// the slot it was made in (for a windowed sketch).
#[derive(Debug)]
pub struct Merged {
    cells: Vec<u32>,
    counts: Vec<u64>,
    slot_ms: Option<u64>,
}

/// RedisBloom's `CMS.MERGE`: `dest` becomes the sum of `sources` times their
/// weights, counter by counter; every source has `dest`'s size (and window),
/// every sum stays within 0 ..= 2^32 − 1 (computed in signed 64 bits,
/// in order) and every total non-negative, else nothing changes. A windowed
/// merge is made as of `dest`'s slot at `now`: each source's sub-sketch of
/// the same slot, if it still holds it, adds to `dest`'s.
pub fn merge(
    dest: &CountMin,
    sources: &[(&CountMin, i64)],
    now: u64,
) -> Result<Merged, WardenError> {
    let dims = dest.dims();
    for (s, _) in sources {
        if s.dims() != dims {
            return Err(error(text::DIMS_DIFFER));
        }
        if s.ring().map(Ring::window_ms) != dest.ring().map(Ring::window_ms) {
            return Err(error(text::WINDOWS_DIFFER));
        }
    }
    let slot_ms = dest.ring().map(|r| r.slot_of(now));
    // For each source, the positions that hold the slots `dest` will hold.
    let kept: Vec<u8> = sources
        .iter()
        .map(|(s, _)| match (s.ring(), slot_ms) {
            (Some(r), Some(at)) => same_slots(r, at),
            _ => 1,
        })
        .collect();
    let overflow = || error(text::MERGE_OVERFLOW);
    let size = dims.cells() as usize;
    let subs = dest.counts().len();
    let mut cells = vec![0u32; size * subs];
    for (i, out) in cells.iter_mut().enumerate() {
        let p = i / size;
        let mut sum = 0i64;
        for ((s, w), keep) in sources.iter().zip(&kept) {
            let c = if keep & (1 << p) != 0 {
                s.cells()[i]
            } else {
                0
            };
            sum = i64::from(c)
                .checked_mul(*w)
                .and_then(|x| sum.checked_add(x))
                .ok_or_else(overflow)?;
        }
        *out = u32::try_from(sum).map_err(|_| overflow())?;
    }
    let mut counts = vec![0u64; subs];
    for (p, out) in counts.iter_mut().enumerate() {
        let mut sum = 0i64;
        for ((s, w), keep) in sources.iter().zip(&kept) {
            let c = if keep & (1 << p) != 0 {
                s.counts()[p]
            } else {
                0
            };
            sum = i64::try_from(c)
                .ok()
                .and_then(|c| c.checked_mul(*w))
                .and_then(|x| sum.checked_add(x))
                .ok_or_else(overflow)?;
        }
        *out = u64::try_from(sum).map_err(|_| overflow())?;
    }
    Ok(Merged {
        cells,
        counts,
        slot_ms,
    })
}

/// The slot position `p` of ring `r` holds: the latest at or before its
/// head at that position (`None` before the epoch).
fn held_at(r: &Ring, p: usize) -> Option<u64> {
    let back = (r.current() + RING - p) % RING;
    r.head_ms().checked_sub(back as u64 * r.slot_ms())
}

/// The positions of ring `r` that hold the slots a ring of the same window
/// holds once its head is at `at` (bits by position).
fn same_slots(r: &Ring, at: u64) -> u8 {
    let mut mask = 0;
    for age in 0..RING as u64 {
        let Some(start) = at.checked_sub(age * r.slot_ms()) else {
            break;
        };
        let p = r.position(start);
        if held_at(r, p) == Some(start) {
            mask |= 1 << p;
        }
    }
    mask
}

impl CountMin {
    /// Stores what `merge` made (the destination is the sketch it was made for).
    pub fn apply(&mut self, merged: Merged) -> Result<(), WardenError> {
        if let Some(at) = merged.slot_ms {
            self.rotate_to(at)?;
        }
        let (cells, counts) = self.parts_mut();
        if cells.len() != merged.cells.len() || counts.len() != merged.counts.len() {
            return Err(WardenError::BadFilterData);
        }
        cells.copy_from_slice(&merged.cells);
        counts.copy_from_slice(&merged.counts);
        Ok(())
    }
}

#[cfg(test)]
#[path = "sketch_tests.rs"]
mod tests;
