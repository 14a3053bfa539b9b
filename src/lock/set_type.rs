//! The `warden-ls` data type: a lock with several holders (`SHARED` read
//! holders or a `LIMIT n` semaphore), each with its own lease.
//!
//! RDB layout, encoding version 1: limit (unsigned, 0 = shared), floor token
//! (signed), holder count (unsigned), then per holder a plain lock's layout
//! (`data_type::save_state`): owner (string buffer), token, holds and
//! deadline in Unix ms (signed). Every field is validated on
//! load because RESTORE feeds this code bytes from clients.
//!
//! Unlike a plain lock, each holder's deadline is data (the key's expiry is
//! the last of them), so digest and AOF rewrite include the deadlines.

use redis_module::error::Error;
use redis_module::native_types::RedisType;

use crate::common::relocate::Mover;
use crate::glue::data_type::{methods, Digest, StoredValue};
use crate::glue::fence::observe_token;
use crate::glue::host::{Io, RStr, Sink};
use crate::lock::core::plain::LockState;
use crate::lock::core::set::{LockSet, SetKind, MAX_LIMIT};
use crate::lock::data_type::{load_state, save_state};
use crate::lock::set_wire::SetLocks;

/// Current RDB encoding version of lock sets.
pub const LOCK_SET_ENCODING_VERSION: i32 = 1;

/// Most holders a stored set may claim (a semaphore's limit bounds its own).
const MAX_STORED_HOLDERS: u64 = MAX_LIMIT as u64;

/// The Redis data type of lock keys with several holders.
pub static LOCK_SET_TYPE: RedisType =
    RedisType::new("warden-ls", LOCK_SET_ENCODING_VERSION, methods::<LockSet>());

fn load_set(rdb: Io) -> Result<LockSet, Error> {
    let limit = rdb.load_unsigned()?;
    let kind = match limit {
        0 => SetKind::Shared,
        n if n <= MAX_LIMIT as u64 => SetKind::Limit(n as u32),
        _ => return Err(Error::generic("limit out of range")),
    };
    let floor = rdb.load_signed()?;
    let count = rdb.load_unsigned()?;
    if count > MAX_STORED_HOLDERS {
        return Err(Error::generic("too many holders"));
    }
    if count == 0 {
        // The module deletes a set whose last holder leaves.
        return Err(Error::generic("a lock set without holders"));
    }
    let mut set = LockSet::new(kind, floor);
    for _ in 0..count {
        set.holders.push(load_state(rdb)?);
    }
    Ok(set)
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

    fn redis_type() -> &'static RedisType {
        &LOCK_SET_TYPE
    }

    fn load(rdb: Io, _encver: i32) -> Option<Self> {
        let set = load_set(rdb).ok().filter(|s| s.validate().is_ok())?;
        observe_token(set.floor);
        Some(set)
    }

    fn save(&self, rdb: Io) {
        rdb.save_unsigned(u64::from(limit_code(self.kind)));
        rdb.save_signed(self.floor);
        rdb.save_unsigned(self.holders.len() as u64);
        for h in &self.holders {
            save_state(rdb, h, h.deadline_ms);
        }
    }

    fn aof_rewrite(&self, aof: Sink, key: RStr) {
        // The rewrite leaves the expiry to the PEXPIREAT Redis writes after it.
        SetLocks::emit(self, None, aof, key);
    }

    fn mem_usage(&self) -> usize {
        std::mem::size_of::<LockSet>()
            + self.holders.capacity() * std::mem::size_of::<LockState>()
            + self
                .holders
                .iter()
                .map(|h| h.owner.heap_bytes())
                .sum::<usize>()
    }

    fn digest(&self, md: &mut Digest) {
        md.add_int(i64::from(limit_code(self.kind)));
        md.add_int(self.floor);
        for h in &self.holders {
            md.add_bytes(&h.owner);
            md.add_int(h.token);
            md.add_int(h.holds);
            md.add_int(h.deadline_ms);
        }
    }

    fn defrag(&mut self, m: &mut dyn Mover, cursor: u64) -> Option<u64> {
        self.relocate(cursor as usize, m).map(|next| next as u64)
    }

    fn free_effort(&self) -> usize {
        1 + self.holders.len()
    }
}
