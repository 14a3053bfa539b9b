//! A byte string behind one thin pointer: its length (a `u32`) is stored in
//! front of the bytes, so the owner holds 8 bytes instead of a fat
//! pointer's 16. Cache entries keep their value so (they stay within 64
//! bytes of a Redis string of the same value).

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::fmt;
use std::ops::Deref;
use std::ptr::NonNull;

use crate::common::relocate::Mover;

/// Bytes in front of the value: its length.
const HEADER: usize = std::mem::size_of::<u32>();

/// An owned, immutable byte string of at most `u32::MAX` bytes.
pub struct ThinBytes(NonNull<u8>);

// SAFETY: a `ThinBytes` owns its allocation alone and never changes it, like
// a `Box<[u8]>`.
unsafe impl Send for ThinBytes {}
// SAFETY: as above: shared references only read.
unsafe impl Sync for ThinBytes {}

impl ThinBytes {
    /// The allocation for `len` bytes and their header.
    fn layout(len: usize) -> Layout {
        Layout::from_size_align(HEADER + len, HEADER)
            .unwrap_or_else(|_| handle_alloc_error(Layout::new::<u32>()))
    }

    /// Bytes held on the heap, the length header included.
    pub fn heap_bytes(&self) -> usize {
        HEADER + self.len()
    }

    /// Offers the allocation to `m` (active defragmentation).
    pub fn relocate(&mut self, m: &mut dyn Mover) {
        if let Some(new) = m.relocate(self.0, Self::layout(self.len())) {
            // `Mover` guarantees the header and bytes were copied there.
            self.0 = new;
        }
    }

    /// The length in bytes.
    #[allow(clippy::len_without_is_empty)] // `Deref` gives `is_empty`
    pub fn len(&self) -> usize {
        // SAFETY: the allocation starts with the length, written by `from`.
        unsafe { self.0.as_ptr().cast::<u32>().read() as usize }
    }
}

impl From<&[u8]> for ThinBytes {
    /// Copies `bytes` (at most `u32::MAX` of them: longer input is cut, which
    /// no caller passes: values are capped far below).
    fn from(bytes: &[u8]) -> Self {
        let bytes = &bytes[..bytes.len().min(u32::MAX as usize)];
        let layout = Self::layout(bytes.len());
        // SAFETY: the layout's size is at least HEADER (non-zero).
        let raw = unsafe { alloc(layout) };
        let Some(ptr) = NonNull::new(raw) else {
            handle_alloc_error(layout)
        };
        // SAFETY: `ptr` holds HEADER + len bytes, aligned for a u32; the
        // source does not overlap a fresh allocation.
        unsafe {
            ptr.as_ptr().cast::<u32>().write(bytes.len() as u32);
            ptr.as_ptr()
                .add(HEADER)
                .copy_from_nonoverlapping(bytes.as_ptr(), bytes.len());
        }
        ThinBytes(ptr)
    }
}

impl Deref for ThinBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: `len` bytes follow the header, initialised by `from`, and
        // live as long as `self`.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().add(HEADER), self.len()) }
    }
}

impl Drop for ThinBytes {
    fn drop(&mut self) {
        let layout = Self::layout(self.len());
        // SAFETY: allocated by `from` with this same layout, freed once.
        unsafe { dealloc(self.0.as_ptr(), layout) }
    }
}

impl Clone for ThinBytes {
    fn clone(&self) -> Self {
        ThinBytes::from(&**self)
    }
}

impl PartialEq for ThinBytes {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for ThinBytes {}

impl fmt::Debug for ThinBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_any_bytes_behind_a_thin_pointer() {
        assert_eq!(std::mem::size_of::<Option<ThinBytes>>(), 8);
        for bytes in [&b""[..], b"v", b"\x00\xff\r\n", &[7u8; 1000][..]] {
            let t = ThinBytes::from(bytes);
            assert_eq!(&*t, bytes);
            assert_eq!(t.len(), bytes.len());
            assert_eq!(t.heap_bytes(), bytes.len() + 4);
            let c = t.clone();
            drop(t);
            assert_eq!(&*c, bytes);
        }
    }

    #[test]
    fn relocated_bytes_keep_their_length_and_content() {
        let mut m = crate::common::relocate::tests::TestMover::default();
        for n in [0usize, 3, 100] {
            let data: Vec<u8> = (0..n).map(|i| i as u8).collect();
            let mut b = ThinBytes::from(&data[..]);
            b.relocate(&mut m);
            assert_eq!(&*b, &data[..]);
        }
        assert_eq!(m.moved, 3);
    }
}
