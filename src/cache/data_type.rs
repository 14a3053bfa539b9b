//! The `warden-ch` data type: one cache entry (value, version, fresh and
//! stale ends, refresh lease).
//!
//! RDB layout, encoding version 1: has value (unsigned 0/1), the value
//! (string buffer, when it has one), version, fresh end, stale end, lease
//! token and lease end (signed; 0 and 0 without a lease). Every field is
//! validated on load because RESTORE feeds this code bytes from clients.
//! HOT read counts are the master's working state: not saved, digested or
//! copied to replicas.

use redis_module::error::Error;
use redis_module::native_types::RedisType;

use crate::cache::core::{CacheEntry, Lease, Meta};
use crate::cache::wire::{emit_entry, emit_meta, Expiry};
use crate::common::relocate::Mover;
use crate::glue::data_type::{methods, Digest, StoredValue};
use crate::glue::fence::take_loaded_token;
use crate::glue::host::{Io, RStr, Sink};

/// Current RDB encoding version of cache values.
pub const CACHE_ENCODING_VERSION: i32 = 1;

/// Longest value accepted from storage: Redis's own string limit (a forged
/// payload must not claim more; `cache-max-value-bytes` caps what clients
/// store).
pub const MAX_STORED_VALUE_BYTES: usize = 512 * 1024 * 1024;

/// The Redis data type of cache keys.
pub static CACHE_TYPE: RedisType =
    RedisType::new("warden-ch", CACHE_ENCODING_VERSION, methods::<CacheEntry>());

fn load_entry(rdb: Io) -> Result<CacheEntry, Error> {
    let bad = || Error::generic("invalid cache entry");
    let value = match rdb.load_unsigned()? {
        0 => None,
        1 => {
            let value = rdb.load_string_buffer()?;
            if value.as_ref().len() > MAX_STORED_VALUE_BYTES {
                return Err(bad());
            }
            Some(value)
        }
        _ => return Err(bad()),
    };
    let version = rdb.load_signed()?;
    let fresh_until = rdb.load_signed()?;
    let stale_until = rdb.load_signed()?;
    let token = rdb.load_signed()?;
    let until_ms = rdb.load_signed()?;
    let lease = match (token, until_ms) {
        (0, 0) => None,
        (token, until_ms) => Some(Lease { token, until_ms }),
    };
    let meta = Meta {
        version,
        fresh_until,
        stale_until,
        lease,
    };
    meta.validate(value.is_some()).map_err(|_| bad())?;
    Ok(CacheEntry::new(
        value.as_ref().map(|v| v.as_ref()),
        &meta,
        None,
    ))
}

/// The lease fields as stored and digested: token and end, 0 and 0 without one.
fn lease_fields(lease: Option<&Lease>) -> Lease {
    lease.copied().unwrap_or(Lease {
        token: 0,
        until_ms: 0,
    })
}

impl StoredValue for CacheEntry {
    const ENCODING_VERSION: i32 = CACHE_ENCODING_VERSION;

    fn redis_type() -> &'static RedisType {
        &CACHE_TYPE
    }

    fn load(rdb: Io, _encver: i32) -> Option<Self> {
        let entry = load_entry(rdb).ok()?;
        if let Some(lease) = entry.lease() {
            if !take_loaded_token(lease.token) {
                return None;
            }
        }
        Some(entry)
    }

    fn save(&self, rdb: Io) {
        match self.value() {
            Some(v) => {
                rdb.save_unsigned(1);
                rdb.save_slice(v);
            }
            None => rdb.save_unsigned(0),
        }
        let meta = self.meta();
        let lease = lease_fields(meta.lease.as_ref());
        for field in [
            meta.version,
            meta.fresh_until,
            meta.stale_until,
            lease.token,
            lease.until_ms,
        ] {
            rdb.save_signed(field);
        }
    }

    fn aof_rewrite(&self, aof: Sink, key: RStr) {
        // Redis writes the key's own PEXPIREAT after this, if it has one.
        match self.value() {
            Some(v) => emit_entry(aof, key, v, None, &self.meta(), Expiry::Persist),
            None => emit_meta(aof, key, &self.meta(), Expiry::Persist),
        }
    }

    /// The entry's struct (the block Redis points at) and its heap block.
    fn mem_usage(&self) -> usize {
        std::mem::size_of::<CacheEntry>() + self.heap_bytes()
    }

    fn digest(&self, md: &mut Digest) {
        let meta = self.meta();
        let lease = lease_fields(meta.lease.as_ref());
        md.add_int(i64::from(self.value().is_some()));
        md.add_bytes(self.value().unwrap_or(b""));
        for field in [
            meta.version,
            meta.fresh_until,
            meta.stale_until,
            lease.token,
            lease.until_ms,
        ] {
            md.add_int(field);
        }
    }

    fn defrag(&mut self, m: &mut dyn Mover, _cursor: u64) -> Option<u64> {
        self.relocate(m);
        None
    }
}
