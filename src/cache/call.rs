//! What the CACHE commands and the waiters share: storing an entry,
//! applying state a master or the AOF decided, and taking a lease.

use crate::cache::core::{CacheEntry, Lease, Meta};
use crate::cache::events;
use crate::cache::stats;
use crate::cache::wire::{emit_meta, Expiry};
use crate::common::error::WardenError;
use crate::glue::fence::follow_token;
use crate::glue::host::{self, Ctx, Key, RStr, Sink};

/// Stores `entry` in `key` with the key's expiry at its end.
pub fn store(key: &Key, entry: CacheEntry) {
    let expires = entry.expires_at();
    key.set_value(Box::new(entry));
    key.set_abs_expire(expires);
}

/// Applies state decided by a master or the AOF to `name`: a whole entry
/// (`value`), or all but the value (`None`: the entry keeps its value, or
/// the key gets a lease-only entry). `replicate` passes it on once it is
/// known to apply.
pub fn apply(
    ctx: Ctx,
    name: RStr,
    value: Option<&[u8]>,
    (meta, expiry): (Meta, Expiry),
    replicate: impl FnOnce(&Meta, Expiry),
) -> Result<(), WardenError> {
    let mut key = Key::writable(ctx, name);
    let current = key.value::<CacheEntry>()?;
    let lease_floor = current
        .as_deref()
        .and_then(CacheEntry::lease)
        .map_or(0, |lease| lease.token);
    match (value, current) {
        (None, Some(current)) => {
            meta.validate(current.value().is_some())?;
            current.apply_meta(&meta);
            let expires = current.expires_at();
            replicate(&meta, expiry);
            key.set_abs_expire(expires);
        }
        (value, current) => {
            meta.validate(value.is_some())?;
            let entry = CacheEntry::new(value, &meta, current.as_deref());
            replicate(&meta, expiry);
            store(&key, entry);
        }
    }
    if expiry == Expiry::Persist {
        key.set_abs_expire_or_persist(None);
    }
    if let Some(lease) = meta.lease {
        follow_token(lease.token, lease_floor);
    }
    host::notify(ctx, events::SET, name);
    Ok(())
}

/// Replies `[value or nil, lease token or 0]`: a `CACHE.GET … LEASE`.
pub fn reply_with_lease(ctx: Ctx, value: Option<&[u8]>, token: i64) {
    host::reply_array(ctx, 2);
    match value {
        Some(v) => host::reply_bulk(ctx, v),
        None => host::reply_null(ctx),
    }
    host::reply_integer(ctx, token);
}

/// Replicates a lease just taken on `name` (the entry is in the key) and
/// moves the key's expiry to the entry's end.
pub fn lease_taken(ctx: Ctx, key: &Key, name: RStr, meta: &Meta, expires: i64) {
    emit_meta(Sink::Replication(ctx), name, meta, Expiry::AtEnd);
    key.set_abs_expire(expires);
    host::notify(ctx, events::LEASE, name);
    stats::count(&stats::CACHE_LEASES);
}

/// Stores a lease-only entry for a miss on a missing key and replicates it.
pub fn lease_on_missing(ctx: Ctx, key: &Key, name: RStr, lease: Lease, now: i64) {
    let entry = CacheEntry::lease_only(lease, now);
    let (meta, expires) = (entry.meta(), entry.expires_at());
    key.set_value(Box::new(entry));
    lease_taken(ctx, key, name, &meta, expires);
}
