//! The `warden-lk` data type: one held lock (owner, token, holds, deadline).
//!
//! RDB layout, encoding version 1: owner (string buffer), token (signed),
//! holds (signed), deadline in Unix ms (signed). Every field is validated on
//! load because RESTORE feeds this code bytes from clients.
//! The type also carries the module's fencing floor as RDB aux data
//! (`fence::aux_save`): one signed integer before the keys.
//!
//! The lease is the key's expiry: the stored deadline is only what it was at
//! the last lock command (the command glue reads the expiry). So digest, AOF
//! rewrite and RDB leave it out: Redis digests and saves the expiry itself,
//! and writes a `PEXPIREAT` after the `DLOCK._SET … NO_DEADLINE` the rewrite
//! emits. RDB and `DUMP` save `NO_DEADLINE` in its place, so a read that
//! brought the cached deadline up to date (after `PERSIST`, say) on the master
//! only leaves the same bytes as on a replica.

use redis_module::error::Error;
use redis_module::native_types::RedisType;

use crate::common::compact_bytes::CompactBytes;
use crate::common::relocate::Mover;
use crate::glue::data_type::{methods, with_aux, Digest, StoredValue};
use crate::glue::fence::{self, observe_token};
use crate::glue::host::{Io, RStr, Sink};
use crate::lock::core::plain::{LockState, NO_DEADLINE};
use crate::lock::wire::SetLock;

/// Current RDB encoding version of lock values.
pub const LOCK_ENCODING_VERSION: i32 = 1;

/// Longest owner accepted from storage (the command path has no limit beyond
/// Redis's own argument size, but a forged payload must not claim gigabytes).
const MAX_STORED_OWNER_BYTES: usize = 512 * 1024 * 1024;

/// The Redis data type of lock keys.
pub static LOCK_TYPE: RedisType = RedisType::new(
    "warden-lk",
    LOCK_ENCODING_VERSION,
    with_aux(
        methods::<LockState>(),
        Some(fence::aux_load),
        Some(fence::aux_save),
    ),
);

/// Loads one lock state (owner, token, holds, deadline): a plain lock's value
/// and each holder of a lock set (`set_type`). Validation is the caller's.
pub(super) fn load_state(rdb: Io) -> Result<LockState, Error> {
    let owner = rdb.load_string_buffer()?;
    if owner.as_ref().len() > MAX_STORED_OWNER_BYTES {
        return Err(Error::generic("owner too long"));
    }
    let owner = CompactBytes::from(owner.as_ref());
    let token = rdb.load_signed()?;
    let holds = rdb.load_signed()?;
    let deadline_ms = rdb.load_signed()?;
    Ok(LockState {
        owner,
        token,
        holds,
        deadline_ms,
    })
}

/// Saves one lock state in the layout `load_state` reads, with the deadline
/// `deadline_ms` (a set holder's own; `NO_DEADLINE` for a plain lock, whose
/// lease is the key's expiry).
pub(super) fn save_state(rdb: Io, state: &LockState, deadline_ms: i64) {
    rdb.save_slice(&state.owner);
    rdb.save_signed(state.token);
    rdb.save_signed(state.holds);
    rdb.save_signed(deadline_ms);
}

impl StoredValue for LockState {
    const ENCODING_VERSION: i32 = LOCK_ENCODING_VERSION;

    fn redis_type() -> &'static RedisType {
        &LOCK_TYPE
    }

    fn load(rdb: Io, _encver: i32) -> Option<Self> {
        let state = load_state(rdb).ok().filter(|s| s.validate().is_ok())?;
        observe_token(state.token);
        Some(state)
    }

    fn save(&self, rdb: Io) {
        save_state(rdb, self, NO_DEADLINE);
    }

    fn aof_rewrite(&self, aof: Sink, key: RStr) {
        let state = LockState {
            deadline_ms: NO_DEADLINE,
            ..self.clone()
        };
        SetLock::emit(&state, aof, key, None);
    }

    fn mem_usage(&self) -> usize {
        std::mem::size_of::<LockState>() + self.owner.heap_bytes()
    }

    fn digest(&self, md: &mut Digest) {
        md.add_bytes(&self.owner);
        md.add_int(self.token);
        md.add_int(self.holds);
    }

    fn defrag(&mut self, m: &mut dyn Mover, _cursor: u64) -> Option<u64> {
        self.relocate(m);
        None
    }
}
