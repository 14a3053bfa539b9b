//! The `warden-ls` data type: a lock with several holders (`SHARED` read
//! holders or a `LIMIT n` semaphore), each with its own lease.
//!
//! RDB layout, encoding version 2: one string buffer, a lock set's
//! `record` (limit, floor and holder count, then per holder its grant's head,
//! deadline and owner). Version 1 (still loaded): limit (unsigned, 0 =
//! shared), floor token (signed), holder count (unsigned), then per holder
//! owner (string buffer), token, holds and deadline in Unix ms (signed).
//! Every field is validated on load because RESTORE feeds this code bytes
//! from clients.
//!
//! Unlike a plain lock, each holder's deadline is data (the key's expiry is
//! the last of them), so digest and AOF rewrite include the deadlines.

use std::ffi::c_int;

use redis_module::error::Error;
use redis_module::native_types::RedisType;

use crate::common::relocate::Mover;
use crate::glue::data_type::{methods, with_unlink, Digest, StoredValue};
use crate::glue::fence::take_loaded_token;
use crate::glue::host::{Io, RStr, Sink};
use crate::lock::core::record;
use crate::lock::core::set::{Holder, LockSet, SetKind, MAX_LIMIT};
use crate::lock::data_type::{count_stored, load_state, uncount};
use crate::lock::keep;
use crate::lock::lapse_watch;
use crate::lock::set_wire::SetLocks;

/// Current RDB encoding version of lock sets.
pub const LOCK_SET_ENCODING_VERSION: i32 = 2;

/// The first encoding version (one field per value).
const LOCK_SET_ENCODING_V1: i32 = 1;

/// Most holders a stored set may claim (a semaphore's limit bounds its own).
const MAX_STORED_HOLDERS: u64 = MAX_LIMIT as u64;

/// The Redis data type of lock keys with several holders.
pub static LOCK_SET_TYPE: RedisType = RedisType::new(
    "warden-ls",
    LOCK_SET_ENCODING_VERSION,
    with_unlink::<LockSet>(methods::<LockSet>()),
);

/// The kind a stored limit stands for (0: shared).
fn kind_of(limit: u64) -> Result<SetKind, Error> {
    match limit {
        0 => Ok(SetKind::Shared),
        n if n <= MAX_LIMIT as u64 => Ok(SetKind::Limit(n as u32)),
        _ => Err(Error::generic("limit out of range")),
    }
}

/// Checks a stored holder count.
fn check_count(count: u64) -> Result<(), Error> {
    if count > MAX_STORED_HOLDERS {
        return Err(Error::generic("too many holders"));
    }
    if count == 0 {
        // The module deletes a set whose last holder leaves.
        return Err(Error::generic("a lock set without holders"));
    }
    Ok(())
}

/// A set in the layout of encoding version 1.
fn load_set_v1(rdb: Io) -> Result<LockSet, Error> {
    let kind = kind_of(rdb.load_unsigned()?)?;
    let floor = rdb.load_signed()?;
    let count = rdb.load_unsigned()?;
    check_count(count)?;
    let mut holders = Vec::new();
    for _ in 0..count {
        let h = load_state(rdb)?;
        holders.push(Holder::new(&h.owner, h.token, h.holds, h.deadline_ms));
    }
    holders_of(kind, floor, holders)
}

/// The set of `kind` and `floor` with `holders`, as loaded.
fn holders_of(kind: SetKind, floor: i64, holders: Vec<Holder>) -> Result<LockSet, Error> {
    LockSet::with_holders(kind, floor, holders).map_err(|_| Error::generic("too many holders"))
}

/// A set in the layout of encoding version 2 (`record`).
fn load_set_v2(rdb: Io) -> Result<LockSet, Error> {
    let bytes = rdb.load_string_buffer()?;
    let bad = || Error::generic("malformed lock set");
    let mut r = record::Reader::new(bytes.as_ref());
    let kind = kind_of(r.varint().ok_or_else(bad)?)?;
    let floor = r.signed().ok_or_else(bad)?;
    let count = r.varint().ok_or_else(bad)?;
    check_count(count)?;
    let mut holders = Vec::new();
    for _ in 0..count {
        let (token, holds) = r.grant().ok_or_else(bad)?;
        let deadline_ms = r.signed().ok_or_else(bad)?;
        let len = usize::try_from(r.varint().ok_or_else(bad)?).map_err(|_| bad())?;
        let owner = r.bytes(len).ok_or_else(bad)?;
        holders.push(Holder::new(owner, token, holds, deadline_ms));
    }
    if !r.is_done() {
        return Err(bad());
    }
    holders_of(kind, floor, holders)
}

/// A set's version 2 payload.
fn set_record(set: &LockSet) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + set.holders().len() * 24);
    record::put_varint(&mut out, u64::from(limit_code(set.kind())));
    record::put_varint(&mut out, set.floor as u64);
    record::put_varint(&mut out, set.holders().len() as u64);
    for h in set.holders() {
        let h = h.state();
        record::put_grant(&mut out, h.token, h.holds);
        record::put_varint(&mut out, h.deadline_ms as u64);
        record::put_varint(&mut out, h.owner.len() as u64);
        out.extend_from_slice(h.owner);
    }
    out
}

/// The stored form of a set's kind: its limit, 0 for a shared lock.
fn limit_code(kind: SetKind) -> u32 {
    match kind {
        SetKind::Shared => 0,
        SetKind::Limit(n) => n,
    }
}

impl StoredValue for LockSet {
    const ENCODING_VERSION: i32 = LOCK_SET_ENCODING_VERSION;
    const OLDEST_ENCODING_VERSION: i32 = LOCK_SET_ENCODING_V1;

    fn redis_type() -> &'static RedisType {
        &LOCK_SET_TYPE
    }

    fn load(rdb: Io, encver: i32) -> Option<Self> {
        let set = if encver == LOCK_SET_ENCODING_V1 {
            load_set_v1(rdb)
        } else {
            load_set_v2(rdb)
        };
        let set = set.ok().filter(|s| s.validate().is_ok())?;
        if !take_loaded_token(set.floor) {
            return None;
        }
        count_stored();
        Some(set)
    }

    fn save(&self, rdb: Io) {
        rdb.save_slice(&set_record(self));
    }

    fn aof_rewrite(&self, aof: Sink, key: RStr) {
        // The rewrite leaves the expiry to the PEXPIREAT Redis writes after it.
        SetLocks::emit(self, None, aof, key);
    }

    /// The set's struct, its list of holders and each holder's block.
    fn mem_usage(&self) -> usize {
        std::mem::size_of::<LockSet>()
            + std::mem::size_of_val(self.holders())
            + self.holders().iter().map(Holder::heap_bytes).sum::<usize>()
    }

    fn digest(&self, md: &mut Digest) {
        md.add_int(i64::from(limit_code(self.kind())));
        md.add_int(self.floor);
        for h in self.holders() {
            let h = h.state();
            md.add_bytes(h.owner);
            md.add_int(h.token);
            md.add_int(h.holds);
            md.add_int(h.deadline_ms);
        }
    }

    fn copy(&self) -> Self {
        count_stored();
        self.clone()
    }

    fn on_free(&self) {
        uncount();
    }

    fn defrag(&mut self, m: &mut dyn Mover, cursor: u64) -> Option<u64> {
        self.relocate(cursor as usize, m).map(|next| next as u64)
    }

    /// One allocation each: the set, its list and each holder's block.
    fn free_effort(&self) -> usize {
        2 + self.holders().len()
    }

    /// A set with holders (the module deletes a set only once it has none).
    fn notices_unlink(&self) -> bool {
        !self.holders().is_empty()
    }

    /// A set with holders leaves its key: they lost their grants.
    fn on_unlink(&self, key: &[u8], db: c_int) {
        lapse_watch::forget(db, key);
        keep::value_unlinked(key, db, self.holders().iter().map(|h| h.state().token));
    }
}
