//! CACHE.* commands: glue between the arguments, the cache key and
//! `cache::core`. A SET replicates its entry with absolute times in the call
//! itself (`ttl@meta`, see `effect`) or as `CACHE._SET`; a lease taken or a
//! hot key extended replicates as `CACHE._META`; reads that change nothing
//! replicate nothing (HOT read counts stay on the master).

use std::ffi::c_int;
use std::rc::Rc;
use std::sync::atomic::AtomicI64;

use crate::cache::config;
use crate::cache::core::handover::{self, Head, Verdict};
use crate::cache::core::{new_lease, CacheEntry, Lease, Meta, Read};
use crate::cache::errors;
use crate::cache::events;
use crate::cache::requests::{Get, Info, Set, SetMeta, SetWhole, TTL_AT};
use crate::cache::stats;
use crate::cache::wire::{emit_entry, emit_meta, meta_text, parse_meta, Expiry};
use crate::common::error::WardenError;
use crate::common::grammar::Request;
use crate::glue::args::{internal_only, Args};
use crate::glue::effect;
use crate::glue::fence::{follow_token, with_fence};
use crate::glue::host::{self, Ctx, Key, RStr, Sink};
use crate::glue::waiting::{self, Answer, WaitRequest, Waited};

/// `CACHE.SET key value ttl_ms [STALE stale_ms] [VERSION v] [LEASE token]`
pub fn set(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let Set { value, request } = match args.parse::<Set>() {
        Ok(set) => set,
        Err(r) if r.at == TTL_AT => return apply_replayed_set(ctx, args, r.error),
        Err(r) => return Err(r.error),
    };
    if value.len() > config::cache_max_value_bytes() {
        return Err(errors::VALUE_TOO_LARGE);
    }
    let now = host::now_ms();
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let (entry, meta) = {
        let current = key.value::<CacheEntry>()?;
        let allowed = match current.as_deref() {
            Some(entry) => entry.may_set(&request, now),
            // A lease ends with its key: a DEL voided it.
            None => request.lease.is_none(),
        };
        if !allowed {
            host::reply_integer(ctx, 0);
            return Ok(());
        }
        let meta = Meta::stored(&request, now)?;
        (
            CacheEntry::new(Some(value), &meta, current.as_deref()),
            meta,
        )
    };
    let text = meta_text(&meta, Expiry::AtEnd);
    // SAFETY: `args[3]` is the ttl, parsed into a number before this call;
    // its bytes are not read again by the command.
    if !unsafe { effect::replicate_in_place(ctx, args.raw(3), text.as_bytes()) } {
        emit_entry(
            Sink::Replication(ctx),
            name,
            value,
            Some(args.raw(2)),
            &meta,
            Expiry::AtEnd,
        );
    }
    store(&key, entry);
    host::notify(ctx, events::SET, name);
    let db = host::selected_db(ctx);
    if waiting::count(db, args.bytes(1)) > 0 {
        serve_waiters(ctx, &mut key, name, db, now);
    }
    host::reply_integer(ctx, 1);
    Ok(())
}

/// A SET whose ttl (`args[3]`) did not parse: from a master or the AOF it
/// may carry its effect (`ttl@meta`), applied like `CACHE._SET` and
/// replicated as it came; otherwise it is the error `e`.
fn apply_replayed_set(ctx: Ctx, args: &Args, e: WardenError) -> Result<(), WardenError> {
    let Some(text) = effect::replayed(ctx, args.bytes(3)) else {
        return Err(e);
    };
    let parsed = parse_meta(text)?;
    // Verbatim is safe here: this argv already carries the absolute state.
    apply(ctx, args.raw(1), Some(args.bytes(2)), parsed, |_, _| {
        host::replicate_verbatim(ctx)
    })?;
    host::reply_integer(ctx, 1);
    Ok(())
}

/// Stores `entry` in `key` with the key's expiry at its end.
fn store(key: &Key, entry: CacheEntry) {
    let expires = entry.expires_at();
    key.set_value(Box::new(entry));
    key.set_abs_expire(expires);
}

/// Applies state decided by a master or the AOF to `name`: a whole entry
/// (`value`), or all but the value (`None`: the entry keeps its value, or
/// the key gets a lease-only entry). `replicate` passes it on once it is
/// known to apply.
fn apply(
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

/// `CACHE._SET key value meta`: a whole entry with absolute times.
/// Internal: only from the master link or the AOF.
pub fn set_entry(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "cache._set")?;
    let request = args.parse::<SetWhole>()?;
    let parsed = parse_meta(request.meta)?;
    apply(
        ctx,
        args.raw(1),
        Some(request.value),
        parsed,
        |meta, expiry| {
            let sink = Sink::Replication(ctx);
            emit_entry(sink, args.raw(1), &[], Some(args.raw(2)), meta, expiry)
        },
    )?;
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// `CACHE._META key meta`: an entry's state but its value, with absolute
/// times. Internal: only from the master link or the AOF.
pub fn set_meta(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "cache._meta")?;
    let parsed = parse_meta(args.parse::<SetMeta>()?.meta)?;
    apply(ctx, args.raw(1), None, parsed, |meta, expiry| {
        emit_meta(Sink::Replication(ctx), args.raw(1), meta, expiry)
    })?;
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// Replies `[value or nil, lease token or 0]`: a `CACHE.GET … LEASE`.
fn reply_with_lease(ctx: Ctx, value: Option<&[u8]>, token: i64) {
    host::reply_array(ctx, 2);
    match value {
        Some(v) => host::reply_bulk(ctx, v),
        None => host::reply_null(ctx),
    }
    host::reply_integer(ctx, token);
}

/// Replicates a lease just taken on `name` (the entry is in the key) and
/// moves the key's expiry to the entry's end.
fn lease_taken(ctx: Ctx, key: &Key, name: RStr, meta: &Meta, expires: i64) {
    emit_meta(Sink::Replication(ctx), name, meta, Expiry::AtEnd);
    key.set_abs_expire(expires);
    host::notify(ctx, events::LEASE, name);
    stats::count(&stats::CACHE_LEASES);
}

/// Stores a lease-only entry for a miss on a missing key and replicates it.
fn lease_on_missing(ctx: Ctx, key: &Key, name: RStr, lease: Lease, now: i64) {
    let entry = CacheEntry::lease_only(lease, now);
    let (meta, expires) = (entry.meta(), entry.expires_at());
    key.set_value(Box::new(entry));
    lease_taken(ctx, key, name, &meta, expires);
}

/// `CACHE.GET key [MINVERSION v] [HOT reads window_ms EXTEND ttl_ms] [LEASE lease_ms [WAIT timeout_ms]]`
pub fn get(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let mut options = Get::empty();
    args.parse_into(&mut options)?;
    let now = host::now_ms();
    let name = args.raw(1);
    let Some(lease_ms) = options.lease_ms else {
        return plain_get(ctx, name, &options, now);
    };
    let mut key = Key::writable(ctx, name);
    let min = options.min_version;
    let db = host::selected_db(ctx);
    let queued = waiting::count(db, args.bytes(1)) > 0;
    let read = match key.value::<CacheEntry>()? {
        Some(entry) => entry.read(min, now),
        None => Read::Vacant,
    };
    if queued && read == Read::Vacant {
        // First come, first served: a vacant lease goes to the queue first.
        serve_waiters(ctx, &mut key, name, db, now);
    }
    let Some(entry) = key.value::<CacheEntry>()? else {
        let lease = with_fence(|fence| new_lease(lease_ms, now, fence))?;
        lease_on_missing(ctx, &key, name, lease, now);
        stats::count(&stats::CACHE_MISSES);
        reply_with_lease(ctx, None, lease.token);
        return Ok(());
    };
    match entry.read(min, now) {
        Read::Fresh => {
            let extended = options.hot.is_some_and(|hot| entry.count_read(&hot, now));
            if extended {
                emit_meta(Sink::Replication(ctx), name, &entry.meta(), Expiry::AtEnd);
            }
            stats::count(&stats::CACHE_HITS);
            reply_with_lease(ctx, Some(entry.value_or_empty()), 0);
            if extended {
                let expires = entry.expires_at();
                key.set_abs_expire(expires);
                host::notify(ctx, events::EXTEND, name);
            }
        }
        Read::Refreshing => {
            stats::count(&stats::CACHE_MISSES);
            let lease_end = entry.live_lease(now).map_or(now, |l| l.until_ms);
            if let Some(stale) = entry.stale_value(min, now) {
                stats::count(&stats::CACHE_STALE_SERVED);
                reply_with_lease(ctx, Some(stale), 0);
                return Ok(());
            }
            match options.wait_ms {
                Some(timeout_ms) if host::may_block(ctx) => {
                    let request = WaitRequest {
                        family: &CACHE,
                        payload: Box::new(CacheWaiter {
                            min_version: min,
                            lease_ms,
                        }),
                        timeout_ms,
                        max_waiters: config::cache_max_waiters(),
                        look_at: Some(lease_end),
                    };
                    waiting::block(ctx, db, args.bytes(1), request, now)?;
                }
                _ => reply_with_lease(ctx, None, 0),
            }
        }
        Read::Vacant => {
            stats::count(&stats::CACHE_MISSES);
            let lease = with_fence(|fence| entry.take_lease(lease_ms, now, fence))?;
            let stale = entry.stale_value(min, now);
            if stale.is_some() {
                stats::count(&stats::CACHE_STALE_SERVED);
            }
            reply_with_lease(ctx, stale, lease.token);
            let (meta, expires) = (entry.meta(), entry.expires_at());
            lease_taken(ctx, &key, name, &meta, expires);
        }
    }
    Ok(())
}

/// `CACHE.GET` without `LEASE`: the value when fresh (counting a HOT read),
/// else nil. The key is opened for reading (half the cost of opening it for
/// writing), and again for writing only when a HOT extension is due.
fn plain_get(ctx: Ctx, name: RStr, options: &Get, now: i64) -> Result<(), WardenError> {
    let mut key = Key::readable(ctx, name);
    let Some(entry) = key.value::<CacheEntry>()? else {
        stats::count(&stats::CACHE_MISSES);
        host::reply_null(ctx);
        return Ok(());
    };
    if !entry.is_fresh(options.min_version, now) {
        stats::count(&stats::CACHE_MISSES);
        host::reply_null(ctx);
        return Ok(());
    }
    // The read count is the master's working state: counted in place.
    let extended = options.hot.is_some_and(|hot| entry.count_read(&hot, now));
    stats::count(&stats::CACHE_HITS);
    host::reply_bulk(ctx, entry.value_or_empty());
    if extended {
        let (meta, expires) = (entry.meta(), entry.expires_at());
        drop(key);
        emit_meta(Sink::Replication(ctx), name, &meta, Expiry::AtEnd);
        Key::writable(ctx, name).set_abs_expire(expires);
        host::notify(ctx, events::EXTEND, name);
    }
    Ok(())
}

/// `CACHE.INFO key`
pub fn info(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Info>()?;
    let now = host::now_ms();
    let mut key = Key::readable(ctx, args.raw(1));
    let Some(entry) = key.value::<CacheEntry>()? else {
        host::reply_null(ctx);
        return Ok(());
    };
    let reads = if now < entry.window_until() {
        entry.reads()
    } else {
        0
    };
    let lease = entry.live_lease(now).map_or(0, |l| l.token);
    let waiters = waiting::count(host::selected_db(ctx), args.bytes(1));
    host::reply_map(ctx, 6);
    for (field, value) in [
        (&b"version"[..], entry.version()),
        (b"fresh_ms", entry.fresh_until().saturating_sub(now)),
        (b"stale_ms", entry.stale_until().saturating_sub(now)),
        (b"reads", i64::from(reads)),
        (b"lease", lease),
        (b"waiters", waiters as i64),
    ] {
        host::reply_bulk(ctx, field);
        host::reply_integer(ctx, value);
    }
    Ok(())
}

/// What a client blocked in `CACHE.GET … LEASE … WAIT` asked for.
struct CacheWaiter {
    /// Its `MINVERSION`.
    min_version: i64,
    /// The lease it takes if the refresh falls to it.
    lease_ms: i64,
}

/// Cache refreshes as a `waiting::Waited`: a SET hands the value to every
/// waiter it satisfies; a lease that ends without one goes to the oldest.
struct Cache;

/// The cache family's entry in the waiting machinery.
static CACHE: Cache = Cache;

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
fn serve_waiters(ctx: Ctx, key: &mut Key, name: RStr, db: c_int, now: i64) {
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
