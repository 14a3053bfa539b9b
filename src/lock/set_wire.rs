//! `DLOCK._SETS key limit:floor:expiry holders`: the one form in which a lock
//! with several holders (`SHARED`, `LIMIT n`) travels to replicas and the AOF.
//! `limit` is 0 for shared holders, n for a semaphore; `floor` the key's
//! largest token; `expiry` the key's absolute expiry in ms, -1 for none (the
//! AOF rewrite writes -1 and Redis follows with its own `PEXPIREAT`). `holders` is one argument of records
//! `<owner length>:<owner><token>:<holds>:<deadline_ms>;` (owners are any
//! bytes, so they are length-prefixed); deadlines are absolute Unix ms.

use std::ffi::CStr;

use crate::common::error::WardenError;
use crate::common::parse::{parse_fields, FieldText};
use crate::glue::host::{emit, RStr, Sink};
use crate::lock::core::set::{Holder, LockSet, SetKind, MAX_LIMIT};

/// The command's name.
pub const SET_LOCKS: &CStr = c"DLOCK._SETS";

/// `DLOCK._SETS`: the whole state of a lock set, parsed and emitted here only.
pub struct SetLocks;

/// The error for a malformed `DLOCK._SETS` argument.
fn bad() -> WardenError {
    WardenError::InvalidState("lock set must be limit:floor:expiry and owner records")
}

impl SetLocks {
    /// The `limit:floor:expiry` argument.
    pub fn header(set: &LockSet, expiry: Option<i64>) -> FieldText {
        let limit = match set.kind() {
            SetKind::Shared => 0,
            SetKind::Limit(n) => i64::from(n),
        };
        FieldText::new(&[limit.into(), set.floor.into(), expiry.unwrap_or(-1).into()])
    }

    /// The holders argument.
    pub fn holders(set: &LockSet) -> Vec<u8> {
        let mut out = Vec::with_capacity(set.holders().len() * 48);
        for h in set.holders() {
            let h = h.state();
            out.extend_from_slice(h.owner.len().to_string().as_bytes());
            out.push(b':');
            out.extend_from_slice(h.owner);
            let state = FieldText::new(&[h.token.into(), h.holds.into(), h.deadline_ms.into()]);
            out.extend_from_slice(state.as_bytes());
            out.push(b';');
        }
        out
    }

    /// Parses the two arguments into a set, validated like RDB input, and the
    /// key's expiry.
    pub fn parse(header: &[u8], holders: &[u8]) -> Result<(LockSet, Option<i64>), WardenError> {
        let [limit, floor, expiry] = parse_fields::<3>(header).ok_or_else(bad)?;
        let expiry = match expiry {
            -1 => None,
            at if at > 0 => Some(i64::try_from(at).map_err(|_| bad())?),
            _ => return Err(bad()),
        };
        let kind = match limit {
            0 => SetKind::Shared,
            n if n > 0 && n <= i128::from(MAX_LIMIT) => SetKind::Limit(n as u32),
            _ => return Err(bad()),
        };
        let floor = i64::try_from(floor).map_err(|_| bad())?;
        let mut list = Vec::new();
        let mut rest = holders;
        while !rest.is_empty() {
            let colon = rest.iter().position(|&b| b == b':').ok_or_else(bad)?;
            let len: usize = std::str::from_utf8(&rest[..colon])
                .ok()
                .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|t| t.parse().ok())
                .ok_or_else(bad)?;
            let body = &rest[colon + 1..];
            let owner = body.get(..len).ok_or_else(bad)?;
            let tail = &body[len..];
            let end = tail.iter().position(|&b| b == b';').ok_or_else(bad)?;
            let [token, holds, deadline] = parse_fields::<3>(&tail[..end]).ok_or_else(bad)?;
            list.push(Holder::new(
                owner,
                i64::try_from(token).map_err(|_| bad())?,
                i64::try_from(holds).map_err(|_| bad())?,
                i64::try_from(deadline).map_err(|_| bad())?,
            ));
            rest = &tail[end + 1..];
        }
        let set = LockSet::with_holders(kind, floor, list)?;
        set.validate()?;
        Ok((set, expiry))
    }

    /// Writes `DLOCK._SETS key limit:floor:expiry holders` to `sink`.
    pub fn emit(set: &LockSet, expiry: Option<i64>, sink: Sink, key: RStr) {
        let header = SetLocks::header(set, expiry);
        let header = header.as_bytes();
        let holders = SetLocks::holders(set);
        emit(sink, SET_LOCKS, (key, header, holders.as_slice()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::fence_clock::FenceClock;

    fn sample() -> LockSet {
        let mut fence = FenceClock::default();
        let mut set = LockSet::new(SetKind::Limit(3), 1);
        for owner in [&b"a"[..], b"b:c;1:2", b"\x00\xff"] {
            set.grant(owner, 1_796_000_000_000, 1_000, &mut fence)
                .unwrap();
        }
        set.holder_mut(b"b:c;1:2", None, 1_000)
            .unwrap()
            .set_holds(4);
        set
    }

    #[test]
    fn a_set_survives_the_wire_with_any_owner_bytes() {
        let set = sample();
        let header = SetLocks::header(&set, Some(1_796_000_000_123));
        let parsed = SetLocks::parse(header.as_bytes(), &SetLocks::holders(&set)).unwrap();
        assert_eq!(parsed, (set.clone(), Some(1_796_000_000_123)));
        let shared =
            LockSet::with_holders(SetKind::Shared, set.floor, set.holders().to_vec()).unwrap();
        let header = SetLocks::header(&shared, None);
        assert_eq!(
            header.as_bytes().split(|&b| b == b':').next(),
            Some(&b"0"[..])
        );
        let parsed = SetLocks::parse(header.as_bytes(), &SetLocks::holders(&shared)).unwrap();
        assert_eq!(parsed, (shared, None));
    }

    #[test]
    fn malformed_sets_are_refused() {
        let set = sample();
        let header = SetLocks::header(&set, None);
        let holders = SetLocks::holders(&set);
        let cut = &holders[..holders.len() - 1];
        for (h, body) in [
            (&b"3:5"[..], &holders[..]),
            (b"-1:5:-1", &holders[..]),
            (b"3:1796000000000002:0", &holders[..]),
            (b"3:1796000000000002:-2", &holders[..]),
            (b"2:1796000000000002:-1", &holders[..]),
            (header.as_bytes(), cut),
            (header.as_bytes(), b"9:a1:1:1;"),
            (header.as_bytes(), b"x:a1:1:1;"),
            (header.as_bytes(), b":a1:1:1;"),
            (b"0:1:-1", b"1:a0:1:1;"),
        ] {
            assert!(SetLocks::parse(h, body).is_err(), "{:?} {:?}", h, body);
        }
        assert!(
            SetLocks::parse(b"0:1:-1", b"").is_ok(),
            "a set may be empty"
        );
    }
}
