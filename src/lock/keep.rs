//! Kept grants (`DLOCK.ACQUIRE … KEEP`) on the server: binds a grant to the
//! connection that received it, renews its lease while that connection is
//! open, and releases it when the connection closes. The schedule is
//! `lock::core::keep`; one module timer, at the earliest due time, serves
//! every kept grant.
//!
//! Every renewal and release is an ordinary lock change made by the module:
//! replicated with absolute deadlines (`DLOCK._SET`, `DLOCK._SETS`, `DEL`),
//! only on a master that accepts writes. Held back by a pause or a failover
//! in progress, it is retried every few ms; a node that is no longer a
//! master forgets its kept grants (their leases end at the last deadline
//! replicated). Bindings are connection state: never persisted or
//! replicated.
//!
//! A holder's host that vanishes closes nothing, so the socket of a
//! connection keeping grants gets TCP keepalive and a user timeout scaled to
//! its shortest lease (`core::keep::liveness`): the kernel gives the
//! connection up within about the lease, the server frees the client, and
//! the grants are released as for any closed connection. The socket's own
//! options come back when the connection keeps nothing any more.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;

use redis_module::raw;

use crate::common::error::WardenError;
use crate::glue::host::{self, shield, Ctx, TcpLiveness};
use crate::glue::waiting::{self, EarliestTimer, DEFERRED_RETRY_MS};
use crate::lock::config;
use crate::lock::core::errors;
use crate::lock::core::keep::{
    liveness, renewal_load, Applied, Due, Keeper, Kept, MIN_KEPT_TTL_MS,
};
use crate::lock::lost;
use crate::lock::stats;

/// Most leases renewed in memory per run of the timer during a pause.
const HOLD_BATCH: usize = 1000;

/// What the module does with a grant that is due (`lock::kept_grants::apply`);
/// an error: not done.
pub type Apply = fn(Ctx, &Kept, Due, i64) -> Result<Applied, WardenError>;

/// A holder's connection whose socket got `liveness` for a lease of
/// `ttl_ms` (its shortest kept lease), and the options it had before.
struct Tuned {
    fd: c_int,
    ttl_ms: i64,
    before: TcpLiveness,
}

thread_local! {
    static KEEPER: RefCell<Keeper> = RefCell::new(Keeper::default());
    /// The connections keeping grants whose sockets were tuned, by client id.
    static TUNED: RefCell<HashMap<u64, Tuned>> = RefCell::new(HashMap::new());
    /// The timer at the earliest due grant.
    static TIMER: EarliestTimer = const { EarliestTimer::new() };
    /// What is done with a due grant (set by `start`).
    static APPLY: Cell<Option<Apply>> = const { Cell::new(None) };
}

/// Runs `op` on the kept grants, then updates the INFO gauge and gives the
/// connections that keep nothing any more their socket options back.
fn with_keeper<R>(op: impl FnOnce(&mut Keeper) -> R) -> R {
    let (r, emptied) = KEEPER.with(|k| {
        let mut k = k.borrow_mut();
        let r = op(&mut k);
        stats::LOCKS_KEPT.store(k.len() as i64, Ordering::Relaxed);
        stats::LOCKS_KEPT_RENEWALS.store(k.renewals_per_sec() as i64, Ordering::Relaxed);
        (r, k.take_emptied())
    });
    for client in emptied {
        untune(client);
    }
    r
}

/// Gives the socket of connection `client`, which keeps a grant with a lease
/// of `ttl_ms`, the liveness of its shortest kept lease (`core::keep::
/// liveness`), so that its host vanishing ends the connection, and with it
/// the grant, within about the lease. Its options before are kept to be put
/// back. A connection without a TCP socket is left alone.
fn tune(ctx: Ctx, client: u64, ttl_ms: i64) {
    let tuned = TUNED.with(|t| t.borrow().get(&client).map(|t| (t.fd, t.ttl_ms, t.before)));
    let (fd, before) = match tuned {
        Some((_, tuned_ttl, _)) if tuned_ttl <= ttl_ms => return,
        Some((fd, _, before)) => (fd, before),
        None => {
            let Some(fd) = host::client_socket(ctx, client) else {
                return;
            };
            let Some(before) = host::read_liveness(fd) else {
                return;
            };
            (fd, before)
        }
    };
    let to = liveness(ttl_ms);
    let set = host::set_liveness(
        fd,
        &TcpLiveness {
            keepalive: 1,
            idle_s: to.idle_s,
            interval_s: to.interval_s,
            probes: to.probes,
            user_timeout_ms: to.user_timeout_ms,
        },
    );
    if set {
        TUNED.with(|t| t.borrow_mut().insert(client, Tuned { fd, ttl_ms, before }));
    } else {
        host::set_liveness(fd, &before);
    }
}

/// Puts back the socket options of connection `client`, which keeps no
/// grant any more (still open: it may serve other code now).
fn untune(client: u64) {
    if let Some(t) = TUNED.with(|t| t.borrow_mut().remove(&client)) {
        if host::connection_is_open(client) {
            host::set_liveness(t.fd, &t.before);
        }
    }
}

/// The connection a `KEEP` request with a lease of `ttl_ms` binds its grant
/// to: the caller's, which must be a client connection (a script's or a
/// module call's client never closes, so nothing would ever end the grant),
/// on a master (a writable replica renews nothing), with a ttl renewals can
/// keep and room for its renewals (a repeat is counted as a new grant).
pub fn caller(ctx: Ctx, ttl_ms: i64) -> Result<u64, WardenError> {
    if ttl_ms < MIN_KEPT_TTL_MS {
        return Err(errors::keep_ttl_too_short(MIN_KEPT_TTL_MS));
    }
    if !host::is_master(ctx) {
        return Err(errors::KEEP_NEEDS_MASTER);
    }
    let client = host::connection_id(ctx).ok_or(errors::KEEP_NEEDS_CONNECTION)?;
    check_capacity(ttl_ms)?;
    Ok(client)
}

/// Binds the grant `token` of `owner` on (`db`, `key`), just made or renewed
/// at `now` with a lease of `ttl_ms`, to the connection `client`.
#[allow(clippy::too_many_arguments)]
pub fn bind(
    ctx: Ctx,
    client: u64,
    db: c_int,
    key: &[u8],
    owner: &[u8],
    token: i64,
    ttl_ms: i64,
    now: i64,
) {
    let grant = Kept {
        id: 0,
        client,
        db,
        key: key.to_vec(),
        owner: owner.to_vec(),
        token,
        ttl_ms,
    };
    // A waiter's connection may have closed while it was being served.
    let open = host::connection_is_open(client);
    with_keeper(|k| {
        k.bind(grant, now);
        if !open {
            k.client_gone(client, now);
        }
    });
    if open {
        tune(ctx, client, ttl_ms);
    }
    arm(ctx, now, now);
}

/// After the grant `token` on `key` of the selected database was made or
/// renewed with a lease of `ttl_ms`: with `KEEP` (`keeper`, the caller's
/// connection) binds it to that connection; without, a kept grant goes on
/// being renewed with the new lease.
pub fn granted(
    ctx: Ctx,
    keeper: Option<u64>,
    key: &[u8],
    owner: &[u8],
    token: i64,
    ttl_ms: i64,
    now: i64,
) {
    match keeper {
        Some(client) => {
            let db = host::selected_db(ctx);
            bind(ctx, client, db, key, owner, token, ttl_ms, now);
        }
        None if any_kept() => extended(ctx, token, host::selected_db(ctx), key, ttl_ms, now),
        None => {}
    }
}

/// Refuses a lease of `ttl_ms` for the grant `token` on `key` of the
/// selected database when that grant is kept and the lease is shorter than
/// `KEEP`'s minimum, or would need more renewals than the capacity left
/// (EXTEND, a repeat ACQUIRE, with or without KEEP or TOKEN). Asked before
/// anything changes.
pub fn check_lease(ctx: Ctx, key: &[u8], token: i64, ttl_ms: i64) -> Result<(), WardenError> {
    if !any_kept() {
        return Ok(());
    }
    let db = host::selected_db(ctx);
    let capacity = config::dlock_keep_max_renewals();
    with_keeper(|k| match k.renewed_lease(token, db, key) {
        None => Ok(()),
        Some(_) if ttl_ms < MIN_KEPT_TTL_MS => Err(errors::keep_ttl_too_short(MIN_KEPT_TTL_MS)),
        Some(now_ttl) => {
            let more = renewal_load(ttl_ms).saturating_sub(renewal_load(now_ttl));
            match k.fits(more, capacity) {
                true => Ok(()),
                false => Err(errors::keep_capacity(capacity)),
            }
        }
    })
}

/// Refuses a new kept lease of `ttl_ms` that would need more renewals than
/// `dlock-keep-max-renewals` leaves (a grant about to be kept: a KEEP
/// request, or a KEEP waiter about to be served).
pub fn check_capacity(ttl_ms: i64) -> Result<(), WardenError> {
    let capacity = config::dlock_keep_max_renewals();
    match with_keeper(|k| k.fits(renewal_load(ttl_ms), capacity)) {
        true => Ok(()),
        false => Err(errors::keep_capacity(capacity)),
    }
}

/// Whether any grant is kept on this node (so a release must unbind).
pub fn any_kept() -> bool {
    stats::LOCKS_KEPT.load(Ordering::Relaxed) > 0
}

/// The grant `token` on (`db`, `key`) was released by its holder: no
/// longer kept.
pub fn released(token: i64, db: c_int, key: &[u8]) {
    with_keeper(|k| k.remove_on(token, db, key));
}

/// The grants `tokens` on (`db`, `key`) lapsed and are being dropped: no
/// longer kept (their holders are told of the loss as the set is pruned).
/// Callers skip it when nothing is kept (`any_kept`).
pub fn lapsed(db: c_int, key: &[u8], tokens: impl Iterator<Item = i64>) {
    with_keeper(|k| tokens.for_each(|token| _ = k.remove_on(token, db, key)));
}

/// The grant `token` on (`db`, `key`) got a lease of `ttl_ms` from `now`
/// (EXTEND, a repeat): if kept, renewals go on with that lease.
pub fn extended(ctx: Ctx, token: i64, db: c_int, key: &[u8], ttl_ms: i64, now: i64) {
    if !any_kept() {
        return;
    }
    if let Some(client) = with_keeper(|k| k.extended(token, db, key, ttl_ms, now)) {
        // A shorter lease needs its connection's liveness scaled to it, and
        // is due sooner than the timer may be armed.
        tune(ctx, client, ttl_ms);
        arm(ctx, now, now);
    }
}

/// A lock value with grants `tokens` left key `key` of database `db`
/// (deleted, expired, evicted, overwritten: a data type's unlink callback):
/// on a serving master its holders lost them, and none is kept any more.
/// The module's own changes never unlink a value with a grant left.
pub fn value_unlinked(key: &[u8], db: c_int, tokens: impl IntoIterator<Item = i64>) {
    if !host::is_serving_master() {
        return;
    }
    with_keeper(|k| {
        for token in tokens {
            k.remove_on(token, db, key);
        }
    });
    lost::note(db, key);
}

/// The node is no longer a master: its grants follow the master's now, none
/// is renewed here, and their holders learn it. A lease renewed in memory
/// only during a pause goes back to what the replicas have.
pub fn demoted(ctx: Ctx) {
    let now = host::now_ms();
    let mut expiry_put_back: Vec<(c_int, Vec<u8>)> = Vec::new();
    for (grant, owed) in with_keeper(|k| k.clear()) {
        if let Some(replicated) = owed {
            // The first grant held on a key saw its expiry as replicas have it.
            let place = (grant.db, grant.key.clone());
            let key_expiry = !expiry_put_back.contains(&place);
            if key_expiry {
                expiry_put_back.push(place);
            }
            let revert = Due::Revert {
                replicated,
                key_expiry,
            };
            // Nothing to do when the grant is gone already.
            let _ = apply(ctx, &grant, revert, now);
        }
        lost::note(grant.db, &grant.key);
    }
}

/// Does what is due for `grant` (`APPLY`, set by `start`).
fn apply(ctx: Ctx, grant: &Kept, due: Due, now: i64) -> Result<Applied, WardenError> {
    match APPLY.get() {
        Some(apply) => apply(ctx, grant, due, now),
        None => Ok(Applied::Gone),
    }
}

/// Makes sure a timer fires when the earliest kept grant is due, not
/// before `not_before`.
fn arm(ctx: Ctx, now: i64, not_before: i64) {
    let due = with_keeper(|k| k.next_due()).map(|at| at.max(not_before));
    TIMER.with(|t| t.arm(ctx, due, now, on_timer));
}

/// The kept-grant timer: renews or releases what is due, a batch at a time.
unsafe extern "C" fn on_timer(ctx: *mut raw::RedisModuleCtx, _: *mut c_void) {
    // SAFETY: the context Redis passed this timer callback.
    unsafe { waiting::on_earliest_timer(ctx, &TIMER, run_due) }
}

/// Renews or releases the grants due at `now`, a batch of them; first, once
/// writes resume after a pause, the leases renewed in memory meanwhile are
/// replicated.
fn run_due(ctx: Ctx, now: i64) {
    if host::is_serving_master() && host::writes_paused() {
        hold_due(ctx, now);
        return;
    }
    let not_before = waiting::run_master_schedule(
        ctx,
        now,
        || demoted(ctx),
        || {
            let next = with_keeper(|k| match k.pop_owed() {
                Some(grant) => Some((grant, Due::Settle)),
                None => k.pop_due(now),
            });
            let Some((grant, due)) = next else {
                return false;
            };
            let outcome = apply(ctx, &grant, due, now);
            let unlinked = !with_keeper(|k| k.contains(grant.id));
            let renewal = matches!(due, Due::Renew | Due::Settle);
            if renewal && outcome == Ok(Applied::Gone) && !unlinked {
                // Gone without RELEASE (which unbinds), an unlink or a lapse
                // (which announced it, perhaps as the key was opened here):
                // flushed or swapped away.
                lost::note(grant.db, &grant.key);
            }
            with_keeper(|k| match (outcome, due) {
                (Ok(Applied::Done), Due::Renew) => k.renewed(grant.id, now),
                // Its next renewal was scheduled when it was held.
                (Ok(Applied::Done), Due::Settle) => {}
                (Err(WardenError::NotEnoughReplicas(_)), _) => {
                    k.retry_at(grant.id, now + DEFERRED_RETRY_MS)
                }
                // Released, gone, or of another type now.
                _ => {
                    k.remove(grant.id);
                }
            });
            true
        },
    );
    arm(ctx, now, not_before);
}

/// While writes are paused (`CLIENT PAUSE`, a failover in progress): leases
/// due for renewal are renewed in memory only (`Due::Hold`), so no key
/// reaches its deadline before writes resume, when they are replicated; a
/// release waits. The timer looks every few ms for writes to resume while a
/// held lease is owed to the replicas.
fn hold_due(ctx: Ctx, now: i64) {
    for _ in 0..HOLD_BATCH {
        let Some((grant, due)) = with_keeper(|k| k.pop_due(now)) else {
            break;
        };
        let outcome = match due {
            Due::Renew => apply(ctx, &grant, Due::Hold, now),
            _ => Ok(Applied::Gone),
        };
        with_keeper(|k| match (due, outcome) {
            (Due::Renew, Ok(Applied::Held(replicated))) => k.held(grant.id, replicated, now),
            (Due::Renew, Ok(Applied::Done)) => k.renewed(grant.id, now),
            // A release, or a lease already at its end, waits for writes.
            _ => k.retry_at(grant.id, now + DEFERRED_RETRY_MS),
        });
    }
    let (next, owes) = with_keeper(|k| (k.next_due(), k.owes()));
    let poll = now + DEFERRED_RETRY_MS;
    let at = match owes {
        true => Some(next.map_or(poll, |at| at.min(poll))),
        false => next,
    };
    TIMER.with(|t| t.arm(ctx, at, now, on_timer));
}

/// # Safety
/// Called by Redis with a valid context and the event's client info.
///
/// Server-event hook: a client connection closed. The grants it kept are
/// released from the timer (a write here would land inside whatever freed
/// the client, perhaps during a pause).
unsafe extern "C" fn on_client_changed(
    ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    subevent: u64,
    data: *mut c_void,
) {
    shield((), || {
        if subevent != raw::REDISMODULE_SUBEVENT_CLIENT_CHANGE_DISCONNECTED
            || data.is_null()
            || with_keeper(|k| k.is_empty())
        {
            return;
        }
        // SAFETY: Redis passes a RedisModuleClientInfo with client-change events (checked non-null above).
        let client = unsafe { (*data.cast::<raw::RedisModuleClientInfo>()).id };
        // Its socket is closing: nothing to put back.
        TUNED.with(|t| t.borrow_mut().remove(&client));
        let now = host::now_ms();
        if with_keeper(|k| k.client_gone(client, now)) > 0 {
            // SAFETY: the context Redis passed this event hook, used while it runs.
            arm(unsafe { Ctx::from_raw(ctx) }, now, now);
        }
    })
}

/// Subscribes the connection-closed hook; `apply` renews and releases.
pub fn start(ctx: Ctx, apply: Apply) -> bool {
    APPLY.set(Some(apply));
    let id = raw::REDISMODULE_EVENT_CLIENT_CHANGE;
    host::subscribe_server_event(ctx, id, on_client_changed)
}
