//! Unsigned integers in 7 bits a byte, the high bit saying "more follows"
//! (LEB128): the compact value encodings of RDB and DUMP payloads, where a
//! small count takes one byte and a Unix time in ms six. Reading refuses
//! what a writer never produces: a value past its type, bytes past the end.

/// Most bytes a `u128` takes.
pub const MAX_U128_BYTES: usize = 19;

/// Most bytes a `u64` takes.
pub const MAX_U64_BYTES: usize = 10;

/// Writes into a byte buffer the caller sized for what it writes.
pub struct Writer<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> Writer<'a> {
    /// An empty writer over `buf`.
    pub fn new(buf: &'a mut [u8]) -> Writer<'a> {
        Writer { buf, len: 0 }
    }

    /// Appends one byte as it is.
    pub fn byte(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }

    /// Appends `v` in 1 to 10 bytes.
    pub fn u64(&mut self, v: u64) {
        self.u128(u128::from(v));
    }

    /// Appends `v` in 1 to 19 bytes.
    pub fn u128(&mut self, mut v: u128) {
        while v >= 0x80 {
            self.byte(v as u8 | 0x80);
            v >>= 7;
        }
        self.byte(v as u8);
    }

    /// What was written.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Reads what a `Writer` wrote; every read is `None` past the end.
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes }
    }

    /// One byte as it is.
    pub fn byte(&mut self) -> Option<u8> {
        let (first, rest) = self.bytes.split_first()?;
        self.bytes = rest;
        Some(*first)
    }

    /// A value written by `Writer::u64` (`None` if it does not fit a u64).
    pub fn u64(&mut self) -> Option<u64> {
        u64::try_from(self.u128()?).ok()
    }

    /// A value written by `Writer::u128`: `None` past the end, or when its
    /// bits do not fit a u128.
    pub fn u128(&mut self) -> Option<u128> {
        let mut v = 0u128;
        for shift in (0..MAX_U128_BYTES as u32).map(|i| i * 7) {
            let b = self.byte()?;
            let bits = u128::from(b & 0x7f);
            if shift == 126 && bits > 0b11 {
                return None;
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// Whether every byte was read.
    pub fn is_done(&self) -> bool {
        self.bytes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(v: u128) -> (usize, Option<u128>) {
        let mut buf = [0u8; MAX_U128_BYTES];
        let mut w = Writer::new(&mut buf);
        w.u128(v);
        let n = w.bytes().len();
        let mut r = Reader::new(w.bytes());
        let back = r.u128();
        assert!(r.is_done());
        (n, back)
    }

    #[test]
    fn values_round_trip_in_the_fewest_bytes() {
        let cases: [(u128, usize); 9] = [
            (0, 1),
            (127, 1),
            (128, 2),
            (16_383, 2),
            (16_384, 3),
            (1_796_104_473_859, 6),
            (u128::from(u64::MAX), MAX_U64_BYTES),
            (u128::from(u64::MAX) + 1, MAX_U64_BYTES),
            (u128::MAX, MAX_U128_BYTES),
        ];
        for (v, n) in cases {
            assert_eq!(round_trip(v), (n, Some(v)), "{v}");
        }
        let mut x = 0x9e37_79b9_7f4a_7c15_u128;
        for _ in 0..10_000 {
            x = x
                .wrapping_mul(0x2545_f491_4f6c_dd1d_2545_f491_4f6c_dd1d)
                .rotate_left(17);
            let v = x >> (x % 128);
            assert_eq!(round_trip(v).1, Some(v));
        }
    }

    #[test]
    fn reads_refuse_what_no_writer_makes() {
        // Cut short, too long for a u128, too wide for a u64.
        assert_eq!(Reader::new(&[0x80]).u128(), None);
        assert_eq!(Reader::new(&[]).byte(), None);
        assert_eq!(Reader::new(&[0xff; 20]).u128(), None);
        let mut over = [0xffu8; 19];
        over[18] = 0x04;
        assert_eq!(Reader::new(&over).u128(), None);
        over[18] = 0x03;
        assert_eq!(Reader::new(&over).u128(), Some(u128::MAX));
        let mut buf = [0u8; 19];
        let mut w = Writer::new(&mut buf);
        w.u128(u128::from(u64::MAX) + 1);
        assert_eq!(Reader::new(w.bytes()).u64(), None);
    }
}
