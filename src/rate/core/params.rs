//! The parameters limiter keys share, each stored once: a packed limit
//! (`packed`) holds a 16-bit id in place of the three integers its rate,
//! burst or window length take. Most deployments use a handful of limits
//! for millions of keys; the table holds up to `CAPACITY` distinct ones,
//! and a limit whose parameters do not get an id stays in the wide form.
//!
//! Each id counts the limits that hold it (`retain`, `release`; a value is
//! released on whichever thread frees it). A full table reuses an id no
//! limit holds any more, so deleted keys give their parameter sets back.
//! The table takes at most `CAPACITY` entries (about 2.3 MiB of address
//! space, touched as it fills, and its index). Reading an id is one atomic
//! load; interning checks the id the key held and the last id handed out
//! before it takes the lock. Ids are handed out and reused on one thread
//! (the server's main thread); any thread may read and release them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

/// The parameters of one limit: for a bucket its ticks per token, ticks
/// per ms and burst; for a window its length and two zeros.
pub type Params = [u64; 3];

/// Distinct parameter sets the table holds (ids are `u16`).
pub const CAPACITY: usize = 1 << 16;

/// A table of up to `N` parameter sets.
pub struct Table<const N: usize> {
    /// Parameter sets by id, filled in order and never changed once `len`
    /// covers them (all zeros, so the table costs no bytes in the binary).
    slots: [[AtomicU64; 3]; N],
    /// Slots set: published after their contents.
    len: AtomicU32,
    /// Limits holding each id.
    holders: [AtomicU32; N],
    /// Ids whose last holder went (`release`): a full table looks for one
    /// to reuse only when this moved since it last found none.
    vacated: AtomicU64,
    /// `vacated` when a full table last found no id to reuse.
    scanned_at: AtomicU64,
    /// Ids by parameter set, for interning (under its lock slots are set).
    index: Mutex<BTreeMap<Params, u16>>,
    /// The id most recently handed out or found for a key's first limit and
    /// for its second: the usual answers for a key new to the table.
    recent: [AtomicU32; 2],
}

/// The table every limiter key uses.
pub static PARAMS: Table<CAPACITY> = Table::new();

impl<const N: usize> Table<N> {
    /// An empty table (`N` at most 65,536: ids are `u16`).
    pub const fn new() -> Self {
        assert!(N >= 1 && N <= 1 << 16);
        Table {
            slots: [const { [const { AtomicU64::new(0) }; 3] }; N],
            len: AtomicU32::new(0),
            holders: [const { AtomicU32::new(0) }; N],
            vacated: AtomicU64::new(0),
            scanned_at: AtomicU64::new(u64::MAX),
            index: Mutex::new(BTreeMap::new()),
            recent: [const { AtomicU32::new(0) }; 2],
        }
    }

    /// The parameters of `id` (an id `intern` gave; all zeros for any other).
    #[inline]
    pub fn params_of(&self, id: u16) -> Params {
        self.get(id).unwrap_or([0; 3])
    }

    /// The parameters of `id` if it was handed out.
    #[inline]
    fn get(&self, id: u16) -> Option<Params> {
        if u32::from(id) >= self.len.load(Ordering::Acquire) {
            return None;
        }
        let [a, b, c] = self.slots.get(usize::from(id))?;
        let read = |v: &AtomicU64| v.load(Ordering::Relaxed);
        Some([read(a), read(b), read(c)])
    }

    /// Whether `id` names `p`.
    #[inline]
    fn holds(&self, id: u16, p: &Params) -> bool {
        self.get(id).as_ref() == Some(p)
    }

    /// The id of `p`, added to the table if new, held once more for the
    /// caller (who `release`s it when its limit goes); `None` when the table
    /// is full of held ids. `hint`, the id the caller expects (the one its
    /// key held), is checked first, then the last id handed out for the same
    /// `position` in a key (0 or 1; later positions share 1), before the
    /// lock is taken.
    #[inline]
    pub fn intern(&self, p: &Params, hint: Option<u16>, position: usize) -> Option<u16> {
        if let Some(id) = hint {
            if self.holds(id, p) {
                self.retain(id);
                return Some(id);
            }
        }
        let recent = &self.recent[position.min(1)];
        let id = recent.load(Ordering::Relaxed) as u16;
        if self.holds(id, p) {
            self.retain(id);
            return Some(id);
        }
        self.intern_slow(p, recent)
    }

    /// `intern` past its two checks: under the lock.
    #[cold]
    fn intern_slow(&self, p: &Params, recent: &AtomicU32) -> Option<u16> {
        let mut index = self.index.lock().unwrap_or_else(|e| e.into_inner());
        let id = match index.get(p) {
            Some(id) => *id,
            None => {
                let next = index.len();
                let id = if next < N {
                    next
                } else {
                    let id = self.vacant()?;
                    index.remove(&self.params_of(id as u16));
                    id
                };
                let slot = &self.slots[id];
                // Slots past `len` are read by nobody, nor are slots no limit
                // holds: set, then publish.
                for (field, value) in slot.iter().zip(p) {
                    field.store(*value, Ordering::Relaxed);
                }
                self.len.fetch_max(id as u32 + 1, Ordering::Release);
                index.insert(*p, id as u16);
                id as u16
            }
        };
        // Held before the lock is let go, so no search can take it back.
        self.retain(id);
        recent.store(u32::from(id), Ordering::Relaxed);
        Some(id)
    }

    /// An id of a full table that no limit holds, if one was vacated since
    /// the last search found none (a table full of held ids is not searched
    /// again on every call).
    fn vacant(&self) -> Option<usize> {
        let vacated = self.vacated.load(Ordering::Acquire);
        if self.scanned_at.load(Ordering::Relaxed) == vacated {
            return None;
        }
        let found = self
            .holders
            .iter()
            .position(|h| h.load(Ordering::Acquire) == 0);
        if found.is_none() {
            self.scanned_at.store(vacated, Ordering::Relaxed);
        }
        found
    }

    /// Counts one more limit holding `id` (one `intern` gave; a copy of a
    /// limit).
    #[inline]
    pub fn retain(&self, id: u16) {
        if let Some(h) = self.holders.get(usize::from(id)) {
            h.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts one limit fewer holding `id`; the id may be reused once none
    /// holds it.
    #[inline]
    pub fn release(&self, id: u16) {
        if let Some(h) = self.holders.get(usize::from(id)) {
            if h.fetch_sub(1, Ordering::Release) == 1 {
                self.vacated.fetch_add(1, Ordering::Release);
            }
        }
    }

    /// Limits holding `id` (tests).
    #[cfg(test)]
    pub fn holders_of(&self, id: u16) -> u32 {
        self.holders[usize::from(id)].load(Ordering::Relaxed)
    }

    /// Distinct parameter sets held (`INFO warden`).
    pub fn len(&self) -> usize {
        self.index
            .lock()
            .map_or_else(|e| e.into_inner().len(), |i| i.len())
    }

    /// Whether no parameter set was interned yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<const N: usize> Default for Table<N> {
    fn default() -> Self {
        Table::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_parameters_get_the_same_id_and_read_back() {
        let t = Table::<8>::new();
        assert!(t.is_empty());
        let a = [3_600_000, 1, 10];
        let b = [100, 1, 0];
        let ia = t.intern(&a, None, 0).unwrap();
        let ib = t.intern(&b, None, 0).unwrap();
        assert_eq!((ia, ib), (0, 1));
        assert_eq!(t.intern(&a, None, 0), Some(ia));
        assert_eq!(
            t.intern(&a, Some(ib), 0),
            Some(ia),
            "a wrong hint is checked"
        );
        assert_eq!(t.intern(&b, Some(ib), 0), Some(ib));
        assert_eq!(
            t.intern(&b, Some(7), 0),
            Some(ib),
            "an id not handed out is no match"
        );
        assert_eq!((t.params_of(ia), t.params_of(ib)), (a, b));
        assert_eq!(t.params_of(5), [0; 3]);
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn a_full_table_refuses_new_parameters_and_keeps_its_own() {
        let t = Table::<3>::new();
        let sets: Vec<Params> = (1..=4u64).map(|i| [i, i, i]).collect();
        let ids: Vec<_> = sets.iter().map(|p| t.intern(p, None, 0)).collect();
        assert_eq!(ids, [Some(0), Some(1), Some(2), None]);
        assert_eq!(t.len(), 3);
        for (p, id) in sets.iter().zip(0..3u16) {
            assert_eq!(t.intern(p, None, 0), Some(id));
            assert_eq!(t.params_of(id), *p);
        }
        assert_eq!(t.intern(&sets[3], Some(2), 0), None);
    }

    #[test]
    fn a_full_table_reuses_an_id_no_limit_holds() {
        let t = Table::<2>::new();
        let (a, b, c) = ([1, 1, 1], [2, 2, 2], [3, 3, 3]);
        let ia = t.intern(&a, None, 0).unwrap();
        let ib = t.intern(&b, None, 0).unwrap();
        assert_eq!(t.intern(&b, Some(ib), 0), Some(ib), "b held twice");
        assert_eq!(t.intern(&c, None, 0), None, "every id held");
        t.release(ib);
        assert_eq!(t.intern(&c, None, 1), None, "b is still held once");
        t.release(ib);
        let ic = t.intern(&c, None, 0).expect("b's id is free again");
        assert_eq!(ic, ib);
        assert_eq!(t.params_of(ic), c);
        assert_eq!(t.intern(&a, None, 1), Some(ia), "a is untouched");
        assert_eq!(t.intern(&b, None, 0), None, "b is gone and the table full");
        assert_eq!(t.len(), 2);
        // Two new sets in a row never get the same vacated id.
        t.release(ic);
        for _ in 0..2 {
            t.release(ia);
        }
        let (d, e) = ([4, 4, 4], [5, 5, 5]);
        let (id_d, id_e) = (
            t.intern(&d, None, 0).unwrap(),
            t.intern(&e, None, 1).unwrap(),
        );
        assert_ne!(id_d, id_e);
        assert_eq!((t.params_of(id_d), t.params_of(id_e)), (d, e));
    }

    #[test]
    fn ids_are_the_same_for_every_thread() {
        let t = Table::<256>::new();
        let sets: Vec<Params> = (0..200u64).map(|i| [i + 7_000_000, 3, i]).collect();
        let ids: Vec<Vec<u16>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| sets.iter().map(|p| t.intern(p, None, 0).unwrap()).collect()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for other in &ids[1..] {
            assert_eq!(other, &ids[0]);
        }
        for (p, id) in sets.iter().zip(&ids[0]) {
            assert_eq!(t.params_of(*id), *p);
        }
        assert_eq!(t.len(), 200);
    }
}
