//! Clients blocked in `CACHE.GET … LEASE … WAIT`: the cache's entry in the
//! waiting machinery, and how a key's waiters are answered when its value
//! changes or its lease ends.

use std::ffi::c_int;
use std::rc::Rc;
use std::sync::atomic::AtomicI64;

use crate::cache::call::{lease_on_missing, lease_taken, reply_with_lease};
use crate::cache::core::handover::{self, Head, Verdict};
use crate::cache::core::{new_lease, CacheEntry, Lease};
use crate::cache::stats;
use crate::common::error::WardenError;
use crate::glue::fence::with_fence;
use crate::glue::host::{Ctx, Key, RStr};
use crate::glue::waiting::{self, Answer, Waited};

/// What a client blocked in `CACHE.GET … LEASE … WAIT` asked for.
pub struct CacheWaiter {
    /// Its `MINVERSION`.
    pub min_version: i64,
    /// The lease it takes if the refresh falls to it.
    pub lease_ms: i64,
}

/// Cache refreshes as a `waiting::Waited`: a SET hands the value to every
/// waiter it satisfies; a lease that ends without one goes to the oldest.
pub struct Cache;

/// The cache family's entry in the waiting machinery.
pub static CACHE: Cache = Cache;

impl Waited for Cache {
    fn serve(&self, ctx: Ctx, key: &mut Key, name: RStr, db: c_int, now: i64) {
        serve_waiters(ctx, key, name, db, now);
    }

    fn holds_own(&self, key: &Key) -> bool {
        key.holds::<CacheEntry>()
    }

    fn timeout_answer(&self) -> Answer {
        Answer::Custom(Box::new(|ctx| reply_with_lease(ctx, None, 0)))
    }

    fn gauge(&self) -> &'static AtomicI64 {
        &stats::CACHE_WAITING
    }
}

/// Answers the waiters of a cache key as the hand-over plan says
/// (`cache::core::handover`): every one the fresh value satisfies gets it
/// (in arrival order); then the oldest of the rest takes a lease when none
/// runs (the others wait for that refresh). `key` is open for writing on
/// `db`.
pub fn serve_waiters(ctx: Ctx, key: &mut Key, name: RStr, db: c_int, now: i64) {
    let key_bytes = name.bytes();
    match key.value::<CacheEntry>() {
        Ok(entry) => {
            let entry = entry.as_deref();
            if let Some(version) = handover::fresh_version(entry, now) {
                let value = entry.map_or(&[][..], CacheEntry::value_or_empty);
                answer_fresh(db, key_bytes, value, version);
            }
        }
        Err(e) => {
            // Another command overwrote the key: its cache waiters get the
            // error a request would get now (WRONGTYPE).
            waiting::fail_front::<CacheWaiter>(ctx, db, key_bytes, &e.to_string());
            return;
        }
    }
    loop {
        let head = match waiting::front::<CacheWaiter, _>(db, key_bytes, |w| w.min_version) {
            Some(min_version) => Head::Waiter { min_version },
            None if waiting::count(db, key_bytes) == 0 => Head::Empty,
            None => Head::Other,
        };
        let Ok(entry) = key.value::<CacheEntry>() else {
            return;
        };
        let moved = || waiting::moved_error(ctx, key_bytes);
        match handover::decide(entry.as_deref(), head, now, moved) {
            Verdict::Stop => return,
            Verdict::Drop => {
                // `pop_front` answers another family's waiter (WRONGTYPE)
                // and takes it off.
                if let Some(stray) = waiting::pop_front::<CacheWaiter>(db, key_bytes) {
                    stray.answer(Answer::Error(WardenError::WrongType.to_string()));
                }
            }
            Verdict::LookAt(lease_end) => {
                waiting::look_at(ctx, db, key_bytes, lease_end, now);
                return;
            }
            Verdict::SendAway(error) => {
                // The slot left this node: send the waiters there.
                waiting::fail_all(db, key_bytes, &error);
                return;
            }
            Verdict::Lease => {
                hand_lease(ctx, key, name, db, now);
                return;
            }
        }
    }
}

/// Answers every waiter of (`db`, `key`) that a fresh `value` of `version`
/// satisfies, in arrival order, with one copy of the value.
fn answer_fresh(db: c_int, key: &[u8], value: &[u8], version: i64) {
    let served = waiting::take_where::<CacheWaiter>(db, key, |w| {
        handover::satisfies(version, w.min_version)
    });
    if served.is_empty() {
        return;
    }
    let value: Rc<[u8]> = value.into();
    for waiter in served {
        stats::count(&stats::CACHE_HITS);
        let value = Rc::clone(&value);
        waiter.answer(Answer::Custom(Box::new(move |ctx| {
            reply_with_lease(ctx, Some(&value), 0)
        })));
    }
}

/// `Verdict::Lease`: the oldest waiter takes a lease on the entry in `key`,
/// or in a new lease-only entry when the key is gone, replicated; it is
/// answered the stale value it may have and the token, and the others are
/// looked at when the lease ends. A lease that cannot be taken fails every
/// waiter.
fn hand_lease(ctx: Ctx, key: &mut Key, name: RStr, db: c_int, now: i64) {
    let key_bytes = name.bytes();
    let Some(waiter) = waiting::pop_front::<CacheWaiter>(db, key_bytes) else {
        return;
    };
    let (lease_ms, min) = (waiter.payload.lease_ms, waiter.payload.min_version);
    let taken = match key.value::<CacheEntry>() {
        Ok(Some(entry)) => {
            with_fence(|fence| entry.take_lease(lease_ms, now, fence)).map(|lease| {
                let stale: Option<Rc<[u8]>> = entry.stale_value(min, now).map(Into::into);
                (lease, stale, Some((entry.meta(), entry.expires_at())))
            })
        }
        Ok(None) => with_fence(|fence| new_lease(lease_ms, now, fence)).map(|l| (l, None, None)),
        Err(e) => Err(e),
    };
    let (lease, stale, updated) = match taken {
        Ok(taken) => taken,
        Err(e) => {
            // The waiter already taken is answered too: none is left hanging.
            let error = e.to_string();
            waiter.answer(Answer::Error(error.clone()));
            waiting::fail_all(db, key_bytes, &error);
            return;
        }
    };
    match updated {
        Some((meta, expires)) => lease_taken(ctx, key, name, &meta, expires),
        None => lease_on_missing(ctx, key, name, lease, now),
    }
    if stale.is_some() {
        stats::count(&stats::CACHE_STALE_SERVED);
    }
    let Lease { token, until_ms } = lease;
    waiter.answer(Answer::Custom(Box::new(move |ctx| {
        reply_with_lease(ctx, stale.as_deref(), token)
    })));
    if waiting::count(db, key_bytes) > 0 {
        waiting::look_at(ctx, db, key_bytes, until_ms, now);
    }
}
