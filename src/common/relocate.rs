//! Moving a value's heap blocks where the allocator wants them (Redis's
//! active defragmentation): the pointer surgery on a `Box`, a boxed slice and
//! a `Vec`, over a `Mover` the glue implements with `RedisModule_DefragAlloc`.
//! Each helper leaves its owner valid whatever the mover answers: the owner
//! either keeps its block or points at the moved copy, never at a freed one.

use std::alloc::Layout;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;

/// Something that may move blocks of the global allocator.
///
/// # Safety
/// `relocate(block, layout)`, for `block` a live block of the global
/// allocator allocated with `layout`, either returns `None` and leaves the
/// block alone, or copies the block's bytes into a new block of the global
/// allocator that is valid wherever the old one was (reading, writing,
/// reallocating and freeing with `layout`), frees `block` and returns the new
/// block.
pub unsafe trait Mover {
    /// Offers `block` (allocated with `layout`) to be moved: its new address,
    /// or `None` when it stays where it is.
    fn relocate(&mut self, block: NonNull<u8>, layout: Layout) -> Option<NonNull<u8>>;

    /// Whether a walk over a large value should stop here and resume at a
    /// later call (incremental defragmentation).
    fn should_stop(&mut self) -> bool;
}

/// Offers the block of `b` to `m`; `b` points at it wherever it ends up.
pub fn boxed<T>(b: &mut Box<T>, m: &mut dyn Mover) {
    let layout = Layout::new::<T>();
    if layout.size() == 0 {
        return; // a dangling pointer, no block
    }
    // SAFETY: the copy read out of `b` is turned into a raw pointer at once
    // (never dropped), and `b` itself is only overwritten, below, with the
    // moved block, so the block has one owner throughout.
    let old = Box::into_raw(unsafe { std::ptr::read(b) });
    // SAFETY: a non-empty box's pointer is a live block with `layout`.
    let block = unsafe { NonNull::new_unchecked(old.cast::<u8>()) };
    if let Some(new) = m.relocate(block, layout) {
        // SAFETY: per `Mover`, `new` holds the `T` the old block held, in a
        // block valid for `Box<T>`; the old block is freed, so `b` (whose
        // pointer is now dangling) is overwritten without being dropped.
        unsafe { std::ptr::write(b, Box::from_raw(new.as_ptr().cast::<T>())) };
    }
}

/// Offers the block of the boxed slice `b` to `m`.
pub fn boxed_slice<T>(b: &mut Box<[T]>, m: &mut dyn Mover) {
    let layout = Layout::for_value::<[T]>(b);
    if layout.size() == 0 {
        return; // empty, or zero-sized items: no block
    }
    let len = b.len();
    // SAFETY: as in `boxed`: the copy becomes a raw pointer, `b` is only overwritten.
    let old = Box::into_raw(unsafe { std::ptr::read(b) });
    // SAFETY: a non-empty boxed slice's pointer is a live block with `layout`.
    let block = unsafe { NonNull::new_unchecked(old.cast::<u8>()) };
    if let Some(new) = m.relocate(block, layout) {
        let moved = std::ptr::slice_from_raw_parts_mut(new.as_ptr().cast::<T>(), len);
        // SAFETY: per `Mover`, `new` holds the `len` items, in a block valid
        // for this layout; the old block is freed, `b` is overwritten undropped.
        unsafe { std::ptr::write(b, Box::from_raw(moved)) };
    }
}

/// Offers the buffer of `v` (its whole capacity) to `m`.
pub fn vec<T>(v: &mut Vec<T>, m: &mut dyn Mover) {
    let cap = v.capacity();
    let Ok(layout) = Layout::array::<T>(cap) else {
        return;
    };
    if layout.size() == 0 {
        return; // no buffer
    }
    // SAFETY: the copy is never dropped (`ManuallyDrop`); `v` keeps the
    // buffer unless it is overwritten below with the moved one.
    let mut copy = ManuallyDrop::new(unsafe { std::ptr::read(v) });
    let len = copy.len();
    // SAFETY: a Vec with a non-zero-sized capacity owns a live block with `layout`.
    let block = unsafe { NonNull::new_unchecked(copy.as_mut_ptr().cast::<u8>()) };
    if let Some(new) = m.relocate(block, layout) {
        // SAFETY: per `Mover`, `new` holds the `len` initialised items of the
        // buffer in a block valid for `cap` items; the old one is freed, so
        // `v` is overwritten without being dropped.
        unsafe { std::ptr::write(v, Vec::from_raw_parts(new.as_ptr().cast::<T>(), len, cap)) };
    }
}

/// Offers the blocks of `items[from..]` to `m`, one item at a time through
/// `each`, asking `m` after each whether to stop: `Some(i)` to resume at
/// item `i` later, `None` once every item was offered (at once when `from`
/// is past the end: the value may have shrunk between two calls).
pub fn walk<T>(
    items: &mut [T],
    from: usize,
    m: &mut dyn Mover,
    mut each: impl FnMut(&mut T, &mut dyn Mover),
) -> Option<usize> {
    let n = items.len();
    for (i, item) in items.iter_mut().enumerate().skip(from) {
        each(item, m);
        if i + 1 < n && m.should_stop() {
            return Some(i + 1);
        }
    }
    None
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use std::alloc::{alloc, dealloc};

    /// A mover that moves every block (or every other one), counting them,
    /// and asks to stop after `budget` moves.
    pub struct TestMover {
        pub moved: usize,
        pub offered: usize,
        pub every_other: bool,
        pub budget: usize,
    }

    impl Default for TestMover {
        fn default() -> TestMover {
            TestMover {
                moved: 0,
                offered: 0,
                every_other: false,
                budget: usize::MAX,
            }
        }
    }

    // SAFETY: a moved block is a fresh allocation of the same layout holding
    // a copy of the old bytes; the old block is freed with its layout.
    unsafe impl Mover for TestMover {
        fn relocate(&mut self, block: NonNull<u8>, layout: Layout) -> Option<NonNull<u8>> {
            self.offered += 1;
            if self.every_other && self.offered.is_multiple_of(2) {
                return None;
            }
            // SAFETY: `layout` is non-zero-sized (the helpers skip empty blocks).
            let new = NonNull::new(unsafe { alloc(layout) })?;
            // SAFETY: both blocks hold `layout.size()` bytes and are distinct.
            unsafe {
                new.as_ptr()
                    .copy_from_nonoverlapping(block.as_ptr(), layout.size());
                dealloc(block.as_ptr(), layout);
            }
            self.moved += 1;
            Some(new)
        }

        fn should_stop(&mut self) -> bool {
            self.moved >= self.budget
        }
    }

    #[test]
    fn moved_owners_keep_their_contents() {
        let mut m = TestMover::default();
        let mut b = Box::new([7u64, 8, 9]);
        let before = &*b as *const _;
        boxed(&mut b, &mut m);
        assert_eq!(*b, [7, 8, 9]);
        assert_ne!(&*b as *const _, before);

        let mut s: Box<[u8]> = (0..100u8).collect();
        boxed_slice(&mut s, &mut m);
        assert_eq!(&*s, &(0..100u8).collect::<Vec<_>>()[..]);

        let mut v: Vec<String> = Vec::with_capacity(10);
        v.push("a".into());
        v.push("bb".into());
        vec(&mut v, &mut m);
        assert_eq!(v, ["a", "bb"]);
        assert_eq!(v.capacity(), 10);
        v.push("ccc".into()); // the moved buffer grows like any other
        v.extend((0..50).map(|i| i.to_string()));
        assert_eq!(v.len(), 53);
        assert_eq!(m.moved, 3);
    }

    #[test]
    fn empty_owners_offer_nothing() {
        let mut m = TestMover::default();
        let mut e: Box<[u64]> = Box::new([]);
        boxed_slice(&mut e, &mut m);
        let mut v: Vec<u64> = Vec::new();
        vec(&mut v, &mut m);
        let mut z = Box::new(());
        boxed(&mut z, &mut m);
        assert_eq!(m.offered, 0);
    }

    #[test]
    fn a_walk_stops_when_asked_and_resumes() {
        let mut m = TestMover {
            budget: 2,
            ..TestMover::default()
        };
        let mut items: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 40]).collect();
        let next = walk(&mut items, 0, &mut m, vec);
        assert_eq!(next, Some(2));
        m.budget = usize::MAX;
        assert_eq!(walk(&mut items, 2, &mut m, vec), None);
        assert_eq!(m.moved, 5);
        assert_eq!(walk(&mut items, 9, &mut m, vec), None);
        for (i, v) in items.iter().enumerate() {
            assert_eq!(v, &vec![i as u8; 40]);
        }
    }

    #[test]
    fn blocks_not_moved_stay() {
        let mut m = TestMover {
            every_other: true,
            ..TestMover::default()
        };
        let mut v = vec![1u32, 2, 3];
        vec(&mut v, &mut m); // moved
        let at = v.as_ptr();
        vec(&mut v, &mut m); // kept
        assert_eq!(v.as_ptr(), at);
        assert_eq!(v, [1, 2, 3]);
    }
}
