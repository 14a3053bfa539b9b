//! A plain lock's stored value: owner, fencing token and hold count in one
//! heap block of 8 + owner bytes (rounded to 8), so a lock costs one
//! allocation of the smallest size class its owner allows. The lease is the
//! key's expiry and is not stored here. A lock just freed (its last hold
//! released) holds 0 until the command deletes or replaces it.
//!
//! The block starts with one 64-bit word. Compact form (the usual one: a
//! token below 2^53, which the clock-based tokens stay under until the year
//! 2255, an owner of at most 127 bytes, at most 7 holds): bits 0–52 the
//! token, bits 53–55 the holds, bits 56–62 the owner's length,
//! bit 63 clear; the owner follows. Wide form (anything else): bit 63 set,
//! bits 0–62 the owner's length; then the token and the holds (8 bytes each,
//! little-endian), then the owner.

use std::alloc::{alloc, handle_alloc_error, Layout};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use crate::common::relocate::Mover;
use crate::lock::core::plain::LockState;

/// The word's flag for the wide form.
const WIDE: u64 = 1 << 63;
/// Bits of the token in the compact form.
const TOKEN_BITS: u32 = 53;
/// Mask of the compact token.
const TOKEN_MASK: u64 = (1 << TOKEN_BITS) - 1;
/// Where the compact form keeps its holds (3 bits).
const HOLDS_SHIFT: u32 = TOKEN_BITS;
/// Most holds of the compact form.
const COMPACT_MAX_HOLDS: i64 = 7;
/// Where the compact form keeps the owner's length (7 bits).
const LEN_SHIFT: u32 = 56;
/// Longest owner of the compact form.
const COMPACT_MAX_OWNER: usize = 127;
/// Bytes of token and holds in front of a wide form's owner.
const WIDE_FIELDS: usize = 16;

/// One held lock in one block: a header word, then the tail (the wide form's
/// token and holds, then the owner). Only ever behind a `Box` made by `new`.
#[repr(C)]
pub struct PackedLock {
    /// The header word (see the module's doc).
    word: u64,
    /// The wide fields, if any, and the owner.
    tail: [u8],
}

/// Bytes after the header word, as the word says.
fn tail_len(word: u64) -> usize {
    if word & WIDE != 0 {
        WIDE_FIELDS + (word & !WIDE) as usize
    } else {
        ((word >> LEN_SHIFT) & COMPACT_MAX_OWNER as u64) as usize
    }
}

/// The compact word for these fields, if they fit it.
fn compact_word(owner_len: usize, token: i64, holds: i64) -> Option<u64> {
    let fits = owner_len <= COMPACT_MAX_OWNER
        && (0..=TOKEN_MASK as i64).contains(&token)
        && (0..=COMPACT_MAX_HOLDS).contains(&holds);
    fits.then_some(token as u64 | (holds as u64) << HOLDS_SHIFT | (owner_len as u64) << LEN_SHIFT)
}

impl PackedLock {
    /// A block holding `owner`, `token` and `holds` (any values: those the
    /// compact form cannot hold take the wide one).
    pub fn new(owner: &[u8], token: i64, holds: i64) -> Box<PackedLock> {
        let (word, fields) = match compact_word(owner.len(), token, holds) {
            Some(word) => (word, None),
            None => (WIDE | owner.len() as u64, Some((token, holds))),
        };
        let n = tail_len(word);
        let layout = Layout::from_size_align(8 + n, 8)
            .unwrap_or_else(|_| handle_alloc_error(Layout::new::<u64>()))
            .pad_to_align();
        // SAFETY: the layout is at least 8 bytes (non-zero).
        let raw = unsafe { alloc(layout) };
        let Some(block) = NonNull::new(raw) else {
            handle_alloc_error(layout)
        };
        // SAFETY: `block` holds 8 + n bytes, aligned for a u64; the sources
        // do not overlap a fresh allocation.
        unsafe {
            block.as_ptr().cast::<u64>().write(word);
            let mut at = block.as_ptr().add(8);
            if let Some((token, holds)) = fields {
                at.copy_from_nonoverlapping(token.to_le_bytes().as_ptr(), 8);
                at.add(8)
                    .copy_from_nonoverlapping(holds.to_le_bytes().as_ptr(), 8);
                at = at.add(WIDE_FIELDS);
            }
            at.copy_from_nonoverlapping(owner.as_ptr(), owner.len());
        }
        // SAFETY: `block` is a live allocation with the layout of a
        // `PackedLock` whose tail is `n` bytes (`Layout::for_value` of it is
        // this layout), every byte of the word and tail written above.
        unsafe { Box::from_raw(PackedLock::from_raw(block).as_ptr()) }
    }

    /// The lock whose block starts at `block`.
    ///
    /// # Safety
    /// `block` is the start of a live block made by `new` (as returned by
    /// `Box::into_raw` of one, cast to a thin pointer).
    pub unsafe fn from_raw(block: NonNull<u8>) -> NonNull<PackedLock> {
        // SAFETY: per the contract, the block starts with its header word.
        let word = unsafe { block.as_ptr().cast::<u64>().read() };
        let fat = std::ptr::slice_from_raw_parts_mut(block.as_ptr(), tail_len(word));
        // SAFETY: a pointer cast keeps the address (non-null) and takes the
        // slice's length as the tail's.
        unsafe { NonNull::new_unchecked(fat as *mut PackedLock) }
    }

    /// Whether the block has the wide form.
    fn is_wide(&self) -> bool {
        self.word & WIDE != 0
    }

    /// The 8 little-endian bytes of the wide form at `at`.
    fn wide_field(&self, at: usize) -> i64 {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&self.tail[at..at + 8]);
        i64::from_le_bytes(bytes)
    }

    /// Owner, token and holds, decoded with one look at the form: every
    /// accessor reads through here.
    #[inline]
    fn fields(&self) -> (&[u8], i64, i64) {
        if self.is_wide() {
            let owner = &self.tail[WIDE_FIELDS..];
            (owner, self.wide_field(0), self.wide_field(8))
        } else {
            let token = (self.word & TOKEN_MASK) as i64;
            let holds = ((self.word >> HOLDS_SHIFT) & COMPACT_MAX_HOLDS as u64) as i64;
            (&self.tail, token, holds)
        }
    }

    /// The holder.
    pub fn owner(&self) -> &[u8] {
        self.fields().0
    }

    /// The grant's fencing token.
    pub fn token(&self) -> i64 {
        self.fields().1
    }

    /// The hold count.
    pub fn holds(&self) -> i64 {
        self.fields().2
    }

    /// Sets the hold count in place; false (and nothing changed) when the
    /// block cannot hold it: the caller makes a new block (`new`).
    pub fn set_holds(&mut self, holds: i64) -> bool {
        if self.is_wide() {
            self.tail[8..WIDE_FIELDS].copy_from_slice(&holds.to_le_bytes());
            return true;
        }
        if !(0..=COMPACT_MAX_HOLDS).contains(&holds) {
            return false;
        }
        let mask = (COMPACT_MAX_HOLDS as u64) << HOLDS_SHIFT;
        self.word = (self.word & !mask) | (holds as u64) << HOLDS_SHIFT;
        true
    }

    /// The lock as the state machine sees it, with the lease end
    /// `deadline_ms` (the key's expiry).
    #[inline]
    pub fn state(&self, deadline_ms: i64) -> LockState<&[u8]> {
        let (owner, token, holds) = self.fields();
        LockState {
            owner,
            token,
            holds,
            deadline_ms,
        }
    }

    /// Bytes of the block (before the allocator rounds it to its class).
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(self)
    }

    /// A new block with the same fields.
    pub fn boxed_copy(&self) -> Box<PackedLock> {
        let (owner, token, holds) = self.fields();
        PackedLock::new(owner, token, holds)
    }
}

impl PartialEq for PackedLock {
    fn eq(&self, other: &Self) -> bool {
        self.state(0) == other.state(0)
    }
}

impl fmt::Debug for PackedLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PackedLock")
            .field("owner", &String::from_utf8_lossy(self.owner()))
            .field("token", &self.token())
            .field("holds", &self.holds())
            .finish()
    }
}

/// A `PackedLock` owned through a thin pointer: 8 bytes where a
/// `Box<PackedLock>` takes 16 (the block's header word gives its length).
/// Each holder of a lock set keeps its grant in one.
pub struct ThinLock(NonNull<u8>);

impl ThinLock {
    /// A block holding `owner`, `token` and `holds` (see `PackedLock::new`).
    pub fn new(owner: &[u8], token: i64, holds: i64) -> ThinLock {
        ThinLock::from(PackedLock::new(owner, token, holds))
    }

    /// Offers the block to `m` (active defragmentation).
    pub fn relocate(&mut self, m: &mut dyn Mover) {
        let layout = Layout::for_value::<PackedLock>(self);
        if let Some(new) = m.relocate(self.0, layout) {
            // `Mover` guarantees the block's bytes were copied there.
            self.0 = new;
        }
    }
}

impl From<Box<PackedLock>> for ThinLock {
    fn from(lock: Box<PackedLock>) -> ThinLock {
        ThinLock(NonNull::from(Box::leak(lock)).cast())
    }
}

impl Deref for ThinLock {
    type Target = PackedLock;
    fn deref(&self) -> &PackedLock {
        // SAFETY: `self.0` is the start of the live block of a boxed
        // `PackedLock` made by `new` (`From<Box<PackedLock>>`), owned by
        // this `ThinLock` alone and borrowed here with `&self`.
        unsafe { PackedLock::from_raw(self.0).as_ref() }
    }
}

impl DerefMut for ThinLock {
    fn deref_mut(&mut self) -> &mut PackedLock {
        // SAFETY: as in `deref`, borrowed uniquely with `&mut self`.
        unsafe { PackedLock::from_raw(self.0).as_mut() }
    }
}

impl Drop for ThinLock {
    fn drop(&mut self) {
        // SAFETY: the block of a boxed `PackedLock` made by `new` that this
        // `ThinLock` owns; the box is taken back once and dropped.
        drop(unsafe { Box::from_raw(PackedLock::from_raw(self.0).as_ptr()) });
    }
}

impl Clone for ThinLock {
    fn clone(&self) -> ThinLock {
        ThinLock::from(self.boxed_copy())
    }
}

impl PartialEq for ThinLock {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for ThinLock {}

impl fmt::Debug for ThinLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::fence_clock::MAX_TOKEN;

    #[test]
    fn fields_round_trip_in_both_forms() {
        let long = vec![b'x'; 300];
        let cases: [(&[u8], i64, i64); 9] = [
            (b"owner", 1_796_000_000_000_000, 1),
            (b"o", 1, 7),
            (&[7u8; 127], TOKEN_MASK as i64, 3),
            (&[7u8; 128], 5, 1),
            (b"o", TOKEN_MASK as i64 + 1, 1),
            (b"o", MAX_TOKEN, 8),
            (b"o", 5, i64::MAX),
            (&long, 5, 2),
            (b"", 0, 1),
        ];
        for (owner, token, holds) in cases {
            let lock = PackedLock::new(owner, token, holds);
            assert_eq!(
                (lock.owner(), lock.token(), lock.holds()),
                (owner, token, holds)
            );
            assert_eq!(
                lock.state(7),
                LockState {
                    owner,
                    token,
                    holds,
                    deadline_ms: 7
                }
            );
            assert_eq!(*lock.boxed_copy(), *lock);
            let wide = owner.len() > 127 || token > TOKEN_MASK as i64 || holds > 7;
            let n = if wide { 16 } else { 0 } + owner.len();
            assert_eq!(lock.heap_bytes(), (8 + n).div_ceil(8) * 8, "{owner:?}");
            // The thin address alone finds the whole block again.
            let raw = Box::into_raw(lock);
            // SAFETY: `raw` came from `Box::into_raw` of a block made by `new`.
            let again = unsafe {
                Box::from_raw(
                    PackedLock::from_raw(NonNull::new(raw.cast::<u8>()).unwrap()).as_ptr(),
                )
            };
            assert_eq!(again.owner(), owner);
        }
    }

    #[test]
    fn a_common_lock_fits_the_smallest_classes() {
        let uuid = b"0b9f6c1e-7d2a-4c55-9e3b-5a1f2d8c7e40";
        let token = 1_796_000_000_000_000;
        assert_eq!(PackedLock::new(b"owner", token, 1).heap_bytes(), 16);
        assert_eq!(PackedLock::new(&[b'o'; 24], token, 1).heap_bytes(), 32);
        assert_eq!(PackedLock::new(uuid, token, 1).heap_bytes(), 48);
    }

    #[test]
    fn holds_change_in_place_until_the_compact_form_is_full() {
        let mut lock = PackedLock::new(b"owner", 42, 1);
        for holds in [2, 7, 0] {
            assert!(lock.set_holds(holds));
            assert_eq!(
                (lock.holds(), lock.token(), lock.owner()),
                (holds, 42, &b"owner"[..])
            );
        }
        assert!(!lock.set_holds(8), "the compact form holds at most 7");
        assert_eq!(lock.holds(), 0);
        let mut wide = PackedLock::new(b"owner", 42, 8);
        assert!(wide.set_holds(1));
        assert_eq!((wide.holds(), wide.token()), (1, 42));
    }

    #[test]
    fn a_thin_lock_owns_its_block_through_8_bytes() {
        use crate::common::relocate::tests::TestMover;
        assert_eq!(std::mem::size_of::<ThinLock>(), 8);
        for (owner, token, holds) in [(&b"owner"[..], 42, 1), (&[b'w'; 200][..], 1 << 60, 9)] {
            let mut lock = ThinLock::new(owner, token, holds);
            let copy = lock.clone();
            assert!(lock.set_holds(2));
            assert_eq!(
                (lock.owner(), lock.token(), lock.holds()),
                (owner, token, 2)
            );
            assert_eq!(copy.holds(), holds, "a clone has its own block");
            let mut m = TestMover::default();
            lock.relocate(&mut m);
            assert_eq!(m.moved, 1);
            assert_eq!(
                (lock.owner(), lock.token(), lock.holds()),
                (owner, token, 2)
            );
        }
    }
}
