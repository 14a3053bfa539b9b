//! How cache state travels to replicas and the AOF, always with absolute
//! times: `CACHE._SET key value meta` (a whole entry) and `CACHE._META key
//! meta` (everything but the value: a lease taken, a hot key extended).
//! `meta` is `version:fresh_until:stale_until:lease_token:lease_until`, the
//! lease fields 0:0 without a lease; applied, the key expires at the entry's
//! end. An AOF rewrite adds a sixth field, `-1`: the key is left without an
//! expiry, and the `PEXPIREAT` Redis writes after it (when the key has one)
//! sets the real one. A `CACHE.SET` carries the five fields in its own call
//! (`ttl@meta`, see `effect`).

use std::ffi::CStr;

use crate::cache::core::{Lease, Meta};
use crate::common::error::WardenError;
use crate::common::parse::{parse_some_fields, FieldText};
use crate::glue::host::{emit, RStr, Sink};

/// The whole-entry command's name.
pub const SET_ENTRY: &CStr = c"CACHE._SET";
/// The all-but-the-value command's name.
pub const SET_META: &CStr = c"CACHE._META";

/// Whether an applied state sets the key's expiry to the entry's end, or
/// leaves the key without one (the AOF rewrite form).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// The key expires when the entry ends.
    AtEnd,
    /// No expiry (a `PEXPIREAT` may follow).
    Persist,
}

/// Parses `meta` (not yet validated against the entry it goes to).
pub fn parse_meta(text: &[u8]) -> Result<(Meta, Expiry), WardenError> {
    let bad = || {
        WardenError::InvalidState("state must be version:fresh_until:stale_until:lease:lease_until")
    };
    let (fields, n) = parse_some_fields::<6>(text).ok_or_else(bad)?;
    let expiry = match (n, fields[5]) {
        (5, _) => Expiry::AtEnd,
        (6, -1) => Expiry::Persist,
        _ => return Err(bad()),
    };
    let [version, fresh_until, stale_until, token, until_ms, _] =
        fields.map(|f| i64::try_from(f).map_err(|_| bad()));
    let (token, until_ms) = (token?, until_ms?);
    let lease = match (token, until_ms) {
        (0, 0) => None,
        (token, until_ms) => Some(Lease { token, until_ms }),
    };
    let meta = Meta {
        version: version?,
        fresh_until: fresh_until?,
        stale_until: stale_until?,
        lease,
    };
    Ok((meta, expiry))
}

/// The `meta` text (with the sixth field for `Expiry::Persist`).
pub fn meta_text(meta: &Meta, expiry: Expiry) -> FieldText {
    let mut text = FieldText::empty();
    let lease = meta.lease.unwrap_or(Lease {
        token: 0,
        until_ms: 0,
    });
    for f in [
        meta.version,
        meta.fresh_until,
        meta.stale_until,
        lease.token,
        lease.until_ms,
    ] {
        text.push_field(f.into());
    }
    if expiry == Expiry::Persist {
        text.push_field(-1);
    }
    text
}

/// Writes `CACHE._SET key value meta` to `sink`; `value_arg` is the
/// client's own value argument when there is one (shared, not copied).
pub fn emit_entry(
    sink: Sink,
    key: RStr,
    value: &[u8],
    value_arg: Option<RStr>,
    meta: &Meta,
    expiry: Expiry,
) {
    let text = meta_text(meta, expiry);
    let text = text.as_bytes();
    match value_arg {
        Some(arg) => emit(sink, SET_ENTRY, (key, arg, text)),
        None => emit(sink, SET_ENTRY, (key, value, text)),
    }
}

/// Writes `CACHE._META key meta` to `sink`.
pub fn emit_meta(sink: Sink, key: RStr, meta: &Meta, expiry: Expiry) {
    let text = meta_text(meta, expiry);
    let text = text.as_bytes();
    emit(sink, SET_META, (key, text));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_text_round_trips() {
        let with = Meta {
            version: 9,
            fresh_until: 1_800_000_000_000,
            stale_until: 1_800_000_005_000,
            lease: Some(Lease {
                token: 1_800_000_000_000_000,
                until_ms: 1_800_000_000_500,
            }),
        };
        let without = Meta {
            lease: None,
            ..with
        };
        for meta in [with, without] {
            for expiry in [Expiry::AtEnd, Expiry::Persist] {
                let text = meta_text(&meta, expiry);
                assert_eq!(parse_meta(text.as_bytes()), Ok((meta, expiry)));
            }
        }
        assert_eq!(
            meta_text(&without, Expiry::AtEnd).as_bytes(),
            b"9:1800000000000:1800000005000:0:0"
        );
        assert_eq!(
            meta_text(&without, Expiry::Persist).as_bytes(),
            b"9:1800000000000:1800000005000:0:0:-1"
        );
        for bad in [
            &b"1:2:3:4"[..],
            b"1:2:3:4:5:6",
            b"1:2:3:4:5:-1:7",
            b"a:2:3:4:5",
            b"1:2:3:4:99999999999999999999",
        ] {
            assert!(parse_meta(bad).is_err());
        }
    }
}
