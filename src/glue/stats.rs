//! Event counters shown in the `warden` section of INFO (`info`). Families
//! count here, and keep their gauges (waiters, filters) here too.

use std::sync::atomic::{AtomicI64, Ordering};

/// New lock grants, including hand-offs to waiters.
pub static LOCKS_GRANTED: AtomicI64 = AtomicI64::new(0);
/// Acquires that found the lock held by another owner.
pub static LOCKS_CONTENDED: AtomicI64 = AtomicI64::new(0);
/// Grants made by handing a released or expired lock to a waiter.
pub static LOCKS_HANDED_OFF: AtomicI64 = AtomicI64::new(0);

/// Clients blocked in `DLOCK.ACQUIRE … WAIT` (a gauge).
pub static LOCKS_WAITING: AtomicI64 = AtomicI64::new(0);
/// Grants kept alive by their connections (`KEEP`, a gauge).
pub static LOCKS_KEPT: AtomicI64 = AtomicI64::new(0);
/// Renewals per second the kept grants need (a gauge; at most
/// `dlock-keep-max-renewals`).
pub static LOCKS_KEPT_RENEWALS: AtomicI64 = AtomicI64::new(0);
/// Lock sets watched for a holder whose lease ends before the others'
/// (`lock::lapse_watch`, a gauge).
pub static LOCKS_WATCHED: AtomicI64 = AtomicI64::new(0);
/// Grants lost otherwise than by their holder's RELEASE (`dlock.lost`).
pub static LOCKS_LOST: AtomicI64 = AtomicI64::new(0);
/// Lock keys (plain locks and lock sets) alive in the keyspace (a gauge):
/// a flush or a role change looks for lost grants only when there are some.
pub static LOCK_KEYS: AtomicI64 = AtomicI64::new(0);

/// `CACHE.GET`s answered with a fresh value.
pub static CACHE_HITS: AtomicI64 = AtomicI64::new(0);
/// `CACHE.GET`s that found nothing fresh (nil, a stale value or a lease).
pub static CACHE_MISSES: AtomicI64 = AtomicI64::new(0);
/// Refresh leases granted, including hand-offs to waiters.
pub static CACHE_LEASES: AtomicI64 = AtomicI64::new(0);
/// `CACHE.GET … LEASE` replies that carried a stale value.
pub static CACHE_STALE_SERVED: AtomicI64 = AtomicI64::new(0);
/// Clients blocked in `CACHE.GET … WAIT` (a gauge).
pub static CACHE_WAITING: AtomicI64 = AtomicI64::new(0);

/// Live Bloom filters in this server (a gauge).
pub static BF_FILTERS: AtomicI64 = AtomicI64::new(0);
/// Bytes of all live Bloom filters (a gauge).
pub static BF_BYTES: AtomicI64 = AtomicI64::new(0);
/// Cuckoo filters in the keyspace.
pub static CF_FILTERS: AtomicI64 = AtomicI64::new(0);
/// Bytes of those cuckoo filters.
pub static CF_BYTES: AtomicI64 = AtomicI64::new(0);

/// Rate-limiter calls that were allowed.
pub static RL_ALLOWED: AtomicI64 = AtomicI64::new(0);
/// Rate-limiter calls that were denied.
pub static RL_DENIED: AtomicI64 = AtomicI64::new(0);

/// Lock and limiter effects replicated in the client's own call (`effect`).
pub static EFFECTS_IN_PLACE: AtomicI64 = AtomicI64::new(0);
/// Lock and limiter effects replicated as an internal command.
pub static EFFECTS_AS_COMMANDS: AtomicI64 = AtomicI64::new(0);
/// Time-dependent calls applied from a master or the AOF without their effect.
pub static REPLAYS_WITHOUT_EFFECT: AtomicI64 = AtomicI64::new(0);

/// Blocks of warden's values active defragmentation moved (values and
/// their inner allocations; Redis's own key objects not included).
pub static DEFRAG_MOVED: AtomicI64 = AtomicI64::new(0);
/// Defrag calls on a large value that stopped to resume at a later call.
pub static DEFRAG_PAUSED: AtomicI64 = AtomicI64::new(0);

/// Adds one to a counter.
pub fn count(counter: &AtomicI64) {
    counter.fetch_add(1, Ordering::Relaxed);
}
