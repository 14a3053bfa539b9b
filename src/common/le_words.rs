//! Arrays as stored: 64-bit words (bit arrays) and 32-bit counters as
//! little-endian bytes (RDB, AOF, SCANDUMP chunks), whatever the host's
//! byte order.

use std::borrow::Cow;

use crate::common::error::WardenError;

/// Converts stored little-endian bytes into words; `None` unless whole words.
pub fn words_from_le(bytes: &[u8]) -> Option<Vec<u64>> {
    if !bytes.len().is_multiple_of(8) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect(),
    )
}

/// The little-endian byte form of words: borrowed on little-endian hosts.
pub fn words_to_le(words: &[u64]) -> Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        // SAFETY: u64 has no padding and u8 has alignment 1; on a little-endian
        // host the in-memory bytes are exactly the stored form.
        Cow::Borrowed(unsafe {
            std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), std::mem::size_of_val(words))
        })
    } else {
        Cow::Owned(words.iter().flat_map(|w| w.to_le_bytes()).collect())
    }
}

/// Converts stored little-endian bytes into 32-bit values; `None` unless whole values.
pub fn u32s_from_le(bytes: &[u8]) -> Option<Vec<u32>> {
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

/// The little-endian byte form of 32-bit values: borrowed on little-endian hosts.
pub fn u32s_to_le(values: &[u32]) -> Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        // SAFETY: u32 has no padding and u8 has alignment 1; on a little-endian
        // host the in-memory bytes are exactly the stored form.
        Cow::Borrowed(unsafe {
            std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
        })
    } else {
        Cow::Owned(values.iter().flat_map(|v| v.to_le_bytes()).collect())
    }
}

/// Reads little-endian fields off the front of a filter's dump header; past
/// the end, `ERR invalid filter data`.
pub struct Fields<'a>(pub &'a [u8]);

impl Fields<'_> {
    /// The next `N` bytes as they are.
    pub fn take<const N: usize>(&mut self) -> Result<[u8; N], WardenError> {
        let (head, rest) = self
            .0
            .split_first_chunk::<N>()
            .ok_or(WardenError::BadFilterData)?;
        self.0 = rest;
        Ok(*head)
    }

    /// The next little-endian u32.
    pub fn u32(&mut self) -> Result<u32, WardenError> {
        self.take().map(u32::from_le_bytes)
    }

    /// The next little-endian u64.
    pub fn u64(&mut self) -> Result<u64, WardenError> {
        self.take().map(u64::from_le_bytes)
    }

    /// The next little-endian f64.
    pub fn f64(&mut self) -> Result<f64, WardenError> {
        self.take().map(f64::from_le_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_little_endian() {
        let values = [0u32, 1, 0x0102_0304, u32::MAX];
        let bytes = u32s_to_le(&values);
        assert_eq!(&bytes[8..12], &[4, 3, 2, 1]);
        assert_eq!(u32s_from_le(&bytes).as_deref(), Some(&values[..]));
        assert_eq!(u32s_from_le(&bytes[1..]), None);
        let words = [0x0102_0304_0506_0708u64];
        assert_eq!(&*words_to_le(&words), &[8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(words_from_le(&words_to_le(&words)), Some(words.to_vec()));
    }
}
