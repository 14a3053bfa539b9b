//! The `warden-lk` data type: one held lock, a `PackedLock` (owner, token,
//! holds in one block; the lease is the key's expiry).
//!
//! RDB layout, encoding version 2: one string buffer, a plain lock's
//! `record` (a grant's head: token and holds, then the owner). Version 1
//! (still loaded): owner (string buffer), token (signed), holds (signed),
//! deadline in Unix ms (signed, ignored: the key's expiry is the lease).
//! Every field is validated on load because RESTORE feeds this code bytes
//! from clients. The type also carries the module's fencing floor as RDB aux
//! data (`fence::aux_save`): one signed integer before the keys.
//!
//! Digest, AOF rewrite and RDB leave the lease out: Redis digests and saves
//! the expiry itself, and writes a `PEXPIREAT` after the `DLOCK._SET …
//! NO_DEADLINE` the rewrite emits.

use std::ffi::{c_int, c_void};
use std::ptr::NonNull;
use std::sync::atomic::Ordering;

use redis_module::error::Error;
use redis_module::native_types::RedisType;

use crate::common::compact_bytes::CompactBytes;
use crate::glue::data_type::{methods, with_aux, with_unlink, Digest, Stored};
use crate::glue::fence::{self, take_loaded_token};
use crate::glue::host::{Io, ModuleValue, RStr, Sink};
use crate::lock::core::packed::PackedLock;
use crate::lock::core::plain::{LockState, NO_DEADLINE};
use crate::lock::core::record;
use crate::lock::keep;
use crate::lock::stats::LOCK_KEYS;
use crate::lock::wire::SetLock;

/// Current RDB encoding version of lock values.
pub const LOCK_ENCODING_VERSION: i32 = 2;

/// The first encoding version (one field per value, deadline included).
pub const LOCK_ENCODING_V1: i32 = 1;

/// Longest owner accepted from storage (the command path has no limit beyond
/// Redis's own argument size, but a forged payload must not claim gigabytes).
const MAX_STORED_OWNER_BYTES: usize = 512 * 1024 * 1024;

/// The Redis data type of lock keys.
pub static LOCK_TYPE: RedisType = RedisType::new(
    "warden-lk",
    LOCK_ENCODING_VERSION,
    with_aux(
        with_unlink::<PackedLock>(methods::<PackedLock>()),
        Some(fence::aux_load),
        (Some(fence::aux_save), Some(fence::aux_save_when_ahead)),
    ),
);

/// Counts a lock value (a plain lock or a set) that starts to live in the
/// keyspace (`stats::LOCK_KEYS`; its type's `on_free` uncounts it).
pub fn counted<T: ?Sized>(value: Box<T>) -> Box<T> {
    count_stored();
    value
}

/// `counted`, for a value Redis boxes itself (a set's `load` and `copy`).
pub(super) fn count_stored() {
    LOCK_KEYS.fetch_add(1, Ordering::Relaxed);
}

/// Uncounts a lock value Redis frees (`counted`).
pub(super) fn uncount() {
    LOCK_KEYS.fetch_sub(1, Ordering::Relaxed);
}

/// Loads one lock state in the layout of encoding version 1 (owner, token,
/// holds, deadline): a plain lock's value and each holder of a lock set of
/// version 1 (`set_type`). Validation is the caller's.
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

/// Reads a plain lock of encoding version `encver`, checked as every stored
/// lock is (`LockState::validate`).
fn load_lock(rdb: Io, encver: i32) -> Option<Box<PackedLock>> {
    let lock = if encver == LOCK_ENCODING_V1 {
        let state = load_state(rdb).ok()?;
        PackedLock::new(&state.owner, state.token, state.holds)
    } else {
        let bytes = rdb.load_string_buffer().ok()?;
        let (owner, token, holds) = record::read_plain(bytes.as_ref())?;
        PackedLock::new(owner, token, holds)
    };
    lock.state(NO_DEADLINE).validate().ok()?;
    Some(lock)
}

impl ModuleValue for PackedLock {
    fn redis_type() -> &'static RedisType {
        &LOCK_TYPE
    }

    unsafe fn from_raw<'a>(value: *mut c_void) -> Option<&'a mut PackedLock> {
        let block = NonNull::new(value.cast::<u8>())?;
        // SAFETY: per the contract, the start of a block `into_raw` gave
        // up: a boxed `PackedLock` (made by `PackedLock::new`), live and not
        // otherwise referenced for 'a.
        Some(unsafe { &mut *PackedLock::from_raw(block).as_ptr() })
    }
}

impl Stored for PackedLock {
    const ENCODING_VERSION: i32 = LOCK_ENCODING_VERSION;
    const OLDEST_ENCODING_VERSION: i32 = LOCK_ENCODING_V1;

    fn load_boxed(rdb: Io, encver: i32) -> Option<Box<PackedLock>> {
        let lock = load_lock(rdb, encver)?;
        if !take_loaded_token(lock.token()) {
            return None;
        }
        Some(counted(lock))
    }

    fn save(&self, rdb: Io) {
        rdb.save_slice(&record::plain(self.owner(), self.token(), self.holds()));
    }

    fn aof_rewrite(&self, aof: Sink, key: RStr) {
        SetLock::emit(&self.state(NO_DEADLINE), aof, key, None);
    }

    fn mem_usage(&self) -> usize {
        self.heap_bytes()
    }

    fn digest(&self, md: &mut Digest) {
        md.add_bytes(self.owner());
        md.add_int(self.token());
        md.add_int(self.holds());
    }

    fn copy_boxed(&self) -> Box<PackedLock> {
        counted(self.boxed_copy())
    }

    fn on_free(&self) {
        uncount();
    }

    /// A lock still held (a released or replaced lock is left with no hold
    /// first).
    fn notices_unlink(&self) -> bool {
        self.holds() > 0
    }

    /// A lock still held leaves its key: its holder lost it.
    fn on_unlink(&self, key: &[u8], db: c_int) {
        keep::value_unlinked(key, db, [self.token()]);
    }
}
