//! The real DUMPs the corrupt-payload tests start from (`tests/it/module/payload_fuzz.rs`,
//! `tests/it/module/payload_forged.rs`, and each family's own): a `Base` is a key's
//! payload and its parsed fields, of the type a family's kit (`kit::TypeKit`) says.
//! Each type's bases, forgeries and refusals are in its family's folder
//! (`tests/it/<family>/kit.rs`); parsing, encoding and the odd-value generators in
//! `payload.rs`.

use super::kit::TypeKit;
use super::payload::*;
use super::*;

use std::time::Duration;

/// Reads without a reply after this long fail the test.
pub const PAYLOAD_READ_TIMEOUT: Duration = Duration::from_secs(30);
pub const LONG_TTL_MS: i64 = 3_600_000;

/// A real DUMP to start from.
#[derive(Clone)]
pub struct Base {
    pub key: String,
    pub payload: Vec<u8>,
    pub dump: Dump,
}

/// Sends `c`, which must not answer an error; returns the reply.
pub fn must(con: &mut Connection, c: &redis::Cmd) -> Value {
    let v = raw(con, c);
    assert!(err_of(&v).is_none(), "{}: {v:?}", show(c));
    v
}

/// RESTORE of `payload` into `dst` with the same absolute expiry as `src` (the expiry
/// is part of a key's digest).
pub fn restore_like(con: &mut Connection, src: &str, dst: &str, payload: &[u8]) -> redis::Cmd {
    let at: i64 = query!(con, "PEXPIRETIME", src);
    let mut c = cmd("RESTORE");
    c.arg(dst).arg(at.max(0)).arg(payload).arg("REPLACE");
    if at > 0 {
        c.arg("ABSTTL");
    }
    c
}

/// `DEBUG DIGEST-VALUE key` as sent (an error stays a value).
pub fn digest_value(con: &mut Connection, key: &[u8]) -> Value {
    raw(con, cmd("DEBUG").arg("DIGEST-VALUE").arg(key))
}

/// `base` of each of `keys`, all of type `ty`.
pub fn bases_of(con: &mut Connection, keys: &[&str], ty: &TypeKit) -> Vec<Base> {
    keys.iter().map(|k| base(con, k, ty)).collect()
}

/// The DUMP of `key`, which must be a value of type `ty` in the encoding
/// version the module writes for it, parsed.
pub fn base(con: &mut Connection, key: &str, ty: &TypeKit) -> Base {
    let payload = dump(con, key);
    let dump = parse_dump(&payload);
    assert_eq!(
        dump.type_name(),
        ty.name,
        "{key}: module id {:#x}",
        dump.module_id
    );
    assert_eq!(dump.encver(), ty.encver, "{key}: encoding version");
    Base {
        key: key.to_string(),
        payload,
        dump,
    }
}

/// A signed field as `RedisModule_SaveSigned` writes it: the UINT opcode with the
/// two's-complement bits.
pub fn sig(v: i64) -> Field {
    Field::U(v as u64)
}

/// The opcode of a field, as a letter (I, U, F, D, S; R for raw bytes).
pub fn field_kind(f: &Field) -> &'static str {
    match f {
        Field::I(_) => "I",
        Field::U(_) => "U",
        Field::F(_) => "F",
        Field::D(_) => "D",
        Field::S(_) => "S",
        Field::Raw(_) => "R",
    }
}
