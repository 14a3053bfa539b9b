//! The packed payloads of lock values (encoding version 2 of `warden-lk` and
//! `warden-ls`, one string field each), read and written independently of
//! the module's code, for forging them; and the version 1 layout (one field
//! per value) today's main wrote, which must still load.
//!
//! A grant's head is a flags byte (bits 0–2: token bytes − 1; bit 3: holds
//! follow), the token little-endian, then the holds as a LEB128 varint. A
//! lock is a head and the owner; a set is limit, floor and count (varints),
//! then per holder a head, deadline, owner length (varints) and owner.

use crate::common::payload::{with_encver, Dump, Field};

/// One lock or holder, as a payload carries it (the deadline only in sets).
#[derive(Debug, Clone, PartialEq)]
pub struct Grant {
    pub owner: Vec<u8>,
    pub token: i64,
    pub holds: i64,
    pub deadline: i64,
}

/// A lock set's payload.
#[derive(Debug, Clone, PartialEq)]
pub struct SetRec {
    pub limit: u64,
    pub floor: i64,
    pub holders: Vec<Grant>,
}

/// LEB128 of `v`.
pub fn leb(v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = v;
    loop {
        let low = (rest & 0x7f) as u8;
        rest >>= 7;
        if rest == 0 {
            out.push(low);
            return out;
        }
        out.push(low | 0x80);
    }
}

/// A grant's head with the token in `n` bytes (any n from 1 to 8 that holds it).
pub fn head(token: i64, holds: i64, n: usize) -> Vec<u8> {
    let mut out = vec![(n as u8 - 1) | if holds == 1 { 0 } else { 8 }];
    out.extend_from_slice(&(token as u64).to_le_bytes()[..n]);
    if holds != 1 {
        out.extend(leb(holds as u64));
    }
    out
}

/// The fewest bytes holding `token`.
fn token_bytes(token: i64) -> usize {
    (1..=8)
        .find(|&n| n == 8 || (token as u64) >> (8 * n) == 0)
        .unwrap()
}

/// A cursor over a payload.
struct Cur<'a>(&'a [u8]);

impl Cur<'_> {
    fn take(&mut self, n: usize) -> Option<Vec<u8>> {
        let (a, b) = self.0.split_at_checked(n)?;
        self.0 = b;
        Some(a.to_vec())
    }

    fn leb(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.take(1)?[0];
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }

    fn head(&mut self) -> Option<(i64, i64)> {
        let flags = self.take(1)?[0];
        let mut t = [0u8; 8];
        let n = usize::from(flags & 7) + 1;
        t[..n].copy_from_slice(&self.take(n)?);
        let holds = if flags & 8 != 0 {
            self.leb()? as i64
        } else {
            1
        };
        Some((i64::from_le_bytes(t), holds))
    }
}

/// The one string field of a version 2 payload.
fn only_string(d: &Dump) -> Option<&[u8]> {
    match d.fields.as_slice() {
        [Field::S(s)] => Some(s),
        _ => None,
    }
}

impl Grant {
    /// The lock a well-formed `warden-lk` version 2 dump holds (deadline 0:
    /// not stored).
    pub fn of(d: &Dump) -> Grant {
        Grant::read(d).expect("a packed lock payload")
    }

    /// The lock a `warden-lk` version 2 dump holds, if it reads as one.
    pub fn read(d: &Dump) -> Option<Grant> {
        let mut c = Cur(only_string(d)?);
        let (token, holds) = c.head()?;
        Some(Grant {
            owner: c.0.to_vec(),
            token,
            holds,
            deadline: 0,
        })
    }

    /// The version 2 payload of this lock.
    pub fn lock_bytes(&self) -> Vec<u8> {
        let mut out = head(self.token, self.holds, token_bytes(self.token));
        out.extend_from_slice(&self.owner);
        out
    }

    /// `d` (a lock's dump) holding this lock instead.
    pub fn put(&self, d: &mut Dump) {
        d.fields = vec![Field::S(self.lock_bytes())];
    }

    /// The version 1 fields of this lock (owner, token, holds, deadline).
    pub fn v1_fields(&self) -> Vec<Field> {
        vec![
            Field::S(self.owner.clone()),
            Field::U(self.token as u64),
            Field::U(self.holds as u64),
            Field::U(self.deadline as u64),
        ]
    }
}

impl SetRec {
    /// The set a well-formed `warden-ls` version 2 dump holds.
    pub fn of(d: &Dump) -> SetRec {
        SetRec::read(d).expect("a packed lock set payload")
    }

    /// The set a `warden-ls` version 2 dump holds, if it reads as one.
    pub fn read(d: &Dump) -> Option<SetRec> {
        let mut c = Cur(only_string(d)?);
        let limit = c.leb()?;
        let floor = c.leb()? as i64;
        let count = c.leb()?.min(1 << 20);
        let mut holders = Vec::new();
        for _ in 0..count {
            let (token, holds) = c.head()?;
            let deadline = c.leb()? as i64;
            let len = usize::try_from(c.leb()?).ok()?;
            holders.push(Grant {
                owner: c.take(len)?,
                token,
                holds,
                deadline,
            });
        }
        c.0.is_empty().then_some(SetRec {
            limit,
            floor,
            holders,
        })
    }

    /// The version 2 payload with `count` claimed holders.
    pub fn bytes_claiming(&self, count: u64) -> Vec<u8> {
        let mut out = leb(self.limit);
        out.extend(leb(self.floor as u64));
        out.extend(leb(count));
        for h in &self.holders {
            out.extend(head(h.token, h.holds, token_bytes(h.token)));
            out.extend(leb(h.deadline as u64));
            out.extend(leb(h.owner.len() as u64));
            out.extend_from_slice(&h.owner);
        }
        out
    }

    /// The version 1 fields of this set.
    pub fn v1_fields(&self) -> Vec<Field> {
        let mut out = vec![
            Field::U(self.limit),
            Field::U(self.floor as u64),
            Field::U(self.holders.len() as u64),
        ];
        for h in &self.holders {
            out.extend(h.v1_fields());
        }
        out
    }
}

/// The version 1 form (today's main's) of a version 2 lock or set dump;
/// `deadline` for a plain lock's stored deadline field.
pub fn as_v1(d: &Dump, deadline: i64) -> Dump {
    let mut out = with_encver(d, 1);
    out.fields = if d.type_name() == "warden-lk" {
        Grant {
            deadline,
            ..Grant::of(d)
        }
        .v1_fields()
    } else {
        SetRec::of(d).v1_fields()
    };
    out
}

/// `d` (a lock's dump) with its token replaced.
pub fn with_token(d: &Dump, token: i64) -> Dump {
    let mut out = d.clone();
    Grant {
        token,
        ..Grant::of(d)
    }
    .put(&mut out);
    out
}
