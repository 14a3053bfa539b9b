//! The lock family's counters and gauges, and its INFO fields.

use std::sync::atomic::AtomicI64;

use crate::glue::family::InfoField;
pub use crate::glue::stats::count;

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

/// The family's INFO fields, in order.
pub static INFO: [InfoField; 9] = [
    InfoField::counter(c"locks_granted", &LOCKS_GRANTED),
    InfoField::counter(c"locks_contended", &LOCKS_CONTENDED),
    InfoField::counter(c"locks_handed_off", &LOCKS_HANDED_OFF),
    InfoField::counter(c"locks_waiting", &LOCKS_WAITING),
    InfoField::counter(c"locks_kept", &LOCKS_KEPT),
    InfoField::counter(c"locks_kept_renewals", &LOCKS_KEPT_RENEWALS),
    InfoField::counter(c"locks_lost", &LOCKS_LOST),
    InfoField::counter(c"locks_watched", &LOCKS_WATCHED),
    InfoField::counter(c"lock_keys", &LOCK_KEYS),
];
