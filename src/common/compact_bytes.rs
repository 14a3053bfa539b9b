//! A byte string stored inline when short (most lock owners: UUIDs,
//! `host:pid:thread`), saving an allocation per lock grant.

use std::fmt;
use std::ops::Deref;

use crate::common::relocate::{self, Mover};

/// Bytes that fit without a heap allocation.
const INLINE: usize = 46;

/// An immutable byte string, inline up to 46 bytes.
#[derive(Clone)]
pub enum CompactBytes {
    /// Short content kept in place.
    Inline { len: u8, buf: [u8; INLINE] },
    /// Longer content on the heap.
    Heap(Box<[u8]>),
}

impl CompactBytes {
    /// Bytes held on the heap (0 when inline), for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        match self {
            CompactBytes::Inline { .. } => 0,
            CompactBytes::Heap(b) => b.len(),
        }
    }

    /// Offers the heap block, if any, to `m` (active defragmentation).
    pub fn relocate(&mut self, m: &mut dyn Mover) {
        if let CompactBytes::Heap(b) = self {
            relocate::boxed_slice(b, m);
        }
    }
}

impl From<&[u8]> for CompactBytes {
    fn from(bytes: &[u8]) -> Self {
        if bytes.len() <= INLINE {
            let mut buf = [0u8; INLINE];
            buf[..bytes.len()].copy_from_slice(bytes);
            CompactBytes::Inline {
                len: bytes.len() as u8,
                buf,
            }
        } else {
            CompactBytes::Heap(bytes.into())
        }
    }
}

impl Deref for CompactBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            CompactBytes::Inline { len, buf } => &buf[..usize::from(*len)],
            CompactBytes::Heap(b) => b,
        }
    }
}

impl PartialEq for CompactBytes {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for CompactBytes {}

impl PartialEq<[u8]> for CompactBytes {
    fn eq(&self, other: &[u8]) -> bool {
        **self == *other
    }
}

impl fmt::Debug for CompactBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_content_round_trip() {
        for n in [0, 1, 36, 46, 47, 1000] {
            let data: Vec<u8> = (0..n).map(|i| (i * 7) as u8).collect();
            let b = CompactBytes::from(&data[..]);
            assert_eq!(&*b, &data[..]);
            assert_eq!(b.heap_bytes(), if n <= 46 { 0 } else { n });
            assert_eq!(b, CompactBytes::from(&data[..]));
        }
        assert_ne!(
            CompactBytes::from(&b"ab"[..]),
            CompactBytes::from(&b"abc"[..])
        );
    }

    #[test]
    fn only_heap_content_is_relocated() {
        let mut m = crate::common::relocate::tests::TestMover::default();
        let long: Vec<u8> = (0..100u8).collect();
        let mut short = CompactBytes::from(&b"owner"[..]);
        let mut heap = CompactBytes::from(&long[..]);
        short.relocate(&mut m);
        heap.relocate(&mut m);
        assert_eq!((&*short, &*heap), (&b"owner"[..], &long[..]));
        assert_eq!(m.moved, 1);
    }
}
