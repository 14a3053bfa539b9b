//! The compact byte form of locks in RDB and DUMP payloads (encoding
//! version 2 of both lock types): each value is one string buffer, its
//! fields packed, so a key pays one field opcode and one length instead of
//! one per field.
//!
//! - A grant's head: one flags byte (bits 0–2: the token's byte count minus
//!   one; bit 3: a hold count follows), the token in that many bytes
//!   (little-endian), then the holds as a varint when above 1.
//! - A plain lock: a grant's head, then the owner (the rest of the buffer).
//! - A lock set: limit (0 for shared), floor token and holder count, each a
//!   varint; then per holder a grant's head, its deadline (varint, Unix ms),
//!   its owner's length (varint) and the owner.
//!
//! Varints are LEB128 (7 bits a byte, least significant first). Decoding
//! checks lengths and ranges of the encoding only; the caller validates the
//! values as it does every stored lock (RESTORE feeds this bytes from
//! clients).

/// A grant's head has a hold count after the token.
const HAS_HOLDS: u8 = 1 << 3;

/// Appends `v` as a varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a grant's head: `token` (stored as its 64 bits) and `holds`.
pub fn put_grant(out: &mut Vec<u8>, token: i64, holds: i64) {
    let token = token as u64;
    let n = (8 - token.leading_zeros() as usize / 8).max(1);
    let flags = (n - 1) as u8 | if holds != 1 { HAS_HOLDS } else { 0 };
    out.push(flags);
    out.extend_from_slice(&token.to_le_bytes()[..n]);
    if holds != 1 {
        put_varint(out, holds as u64);
    }
}

/// A plain lock's payload.
pub fn plain(owner: &[u8], token: i64, holds: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(owner.len() + 12);
    put_grant(&mut out, token, holds);
    out.extend_from_slice(owner);
    out
}

/// Reads a payload front to back; every read is `None` past its end.
pub struct Reader<'a> {
    /// What is left to read.
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { rest: bytes }
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.rest.split_at_checked(n)?;
        self.rest = rest;
        Some(head)
    }

    /// The next varint (at most 10 bytes, no bits beyond 64).
    pub fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = *self.bytes(1)?.first()?;
            let bits = u64::from(b & 0x7f);
            if i == 9 && bits > 1 {
                return None;
            }
            v |= bits << (7 * i);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// The next varint as a non-negative `i64`.
    pub fn signed(&mut self) -> Option<i64> {
        i64::try_from(self.varint()?).ok()
    }

    /// The next grant's head: token and holds.
    pub fn grant(&mut self) -> Option<(i64, i64)> {
        let flags = *self.bytes(1)?.first()?;
        if flags & !(HAS_HOLDS | 7) != 0 {
            return None;
        }
        let n = usize::from(flags & 7) + 1;
        let mut token = [0u8; 8];
        token[..n].copy_from_slice(self.bytes(n)?);
        let holds = if flags & HAS_HOLDS != 0 {
            self.signed()?
        } else {
            1
        };
        Some((i64::from_le_bytes(token), holds))
    }

    /// Everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.rest)
    }

    /// Whether everything was read.
    pub fn is_done(&self) -> bool {
        self.rest.is_empty()
    }
}

/// A plain lock's payload read back: owner, token, holds.
pub fn read_plain(bytes: &[u8]) -> Option<(&[u8], i64, i64)> {
    let mut r = Reader::new(bytes);
    let (token, holds) = r.grant()?;
    Some((r.rest(), token, holds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_locks_round_trip_and_stay_small() {
        for (owner, token, holds) in [
            (&b"owner"[..], 1_796_000_000_000_000i64, 1i64),
            (b"o", 1, 2),
            (b"\x00\xff", 1 << 62, i64::MAX),
            (b"x", 255, 1),
            (b"x", 256, 300),
        ] {
            let bytes = plain(owner, token, holds);
            assert_eq!(read_plain(&bytes), Some((owner, token, holds)));
        }
        // flags + 7 token bytes + the owner: 13 bytes for a lock of "owner".
        assert_eq!(plain(b"owner", 1_796_000_000_000_000, 1).len(), 13);
    }

    #[test]
    fn varints_round_trip_and_refuse_overlong_input() {
        for v in [0, 1, 127, 128, 300, 1 << 41, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let mut r = Reader::new(&out);
            assert_eq!(r.varint(), Some(v));
            assert!(r.is_done());
        }
        assert_eq!(Reader::new(&[0x80; 11]).varint(), None);
        assert_eq!(Reader::new(&[0x80]).varint(), None, "cut short");
        let mut too_big = vec![0xff; 9];
        too_big.push(0x02);
        assert_eq!(Reader::new(&too_big).varint(), None, "beyond 64 bits");
        assert_eq!(
            Reader::new(&[0xff; 9].iter().chain(&[1]).copied().collect::<Vec<_>>()).varint(),
            Some(u64::MAX)
        );
        assert_eq!(Reader::new(&[0x80, 0x80, 0x01]).signed(), Some(1 << 14));
    }

    #[test]
    fn malformed_heads_are_refused() {
        assert_eq!(read_plain(b""), None);
        assert_eq!(read_plain(&[0x10, 1]), None, "unknown flag");
        assert_eq!(read_plain(&[6, 1, 2]), None, "token cut short");
        assert_eq!(read_plain(&[HAS_HOLDS, 1]), None, "holds missing");
        let mut neg = vec![HAS_HOLDS, 1];
        put_varint(&mut neg, u64::MAX);
        assert_eq!(read_plain(&neg), None, "holds beyond i64");
    }
}
