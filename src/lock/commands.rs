//! DLOCK.* commands: glue between the arguments, the lock key and the core
//! state machine. Grants, re-entries and extensions replicate the new state
//! with its absolute deadline in the call itself (`ttl@state`, see `effect`)
//! or as `DLOCK._SET`, hand-offs as `DLOCK._SET`; releases as themselves (see
//! `release`); calls that change nothing replicate nothing.

use std::ffi::c_int;
use std::ops::Deref;
use std::sync::atomic::AtomicI64;

use crate::common::error::WardenError;
use crate::glue::args::{internal_only, Args};
use crate::glue::effect;
use crate::glue::fence::{follow_token, with_fence};
use crate::glue::host::{self, Ctx, Either, Key, RStr, Sink};
use crate::glue::waiting::{self, Answer, WaitRequest, Waited};
use crate::lock::config;
use crate::lock::core::acquire::{self, decide, new_set, Ask, Change, Grant, Plan, Queue};
use crate::lock::core::handover::{self, Head, Verdict};
use crate::lock::core::packed::PackedLock;
use crate::lock::core::plain::{self as core_lock, LockState, Release, NO_DEADLINE};
use crate::lock::core::set::{Holding, LockSet, Want};
use crate::lock::data_type::counted;
use crate::lock::events;
use crate::lock::keep;
use crate::lock::lapse_watch;
use crate::lock::lost;
use crate::lock::replicas;
use crate::lock::requests as req;
use crate::lock::set_wire::SetLocks;
use crate::lock::stats;
use crate::lock::wire::SetLock;

/// Stores a new hold count in the plain lock of `key`: in its block, or in
/// a new one (with the key's expiry kept) when the block cannot hold it.
pub(super) fn store_holds(key: &mut Key, holds: i64) -> Result<(), WardenError> {
    let expiry = key.abs_expire();
    let lock = key.value::<PackedLock>()?.ok_or(WardenError::Internal)?;
    if lock.set_holds(holds) {
        return Ok(());
    }
    let moved = PackedLock::new(lock.owner(), lock.token(), holds);
    // The block left behind holds nothing: its unlink is no loss.
    lock.set_holds(0);
    key.set_value(counted(moved));
    key.set_abs_expire_or_persist(expiry);
    Ok(())
}

/// What a lock key holds: nothing, a plain lock, or a set of holders.
pub(super) enum Lock<'a> {
    /// An empty key.
    Free,
    /// A plain (exclusive) lock, its deadline read from the key's expiry (a
    /// view of the stored `PackedLock`: a change is stored with `store_holds`).
    One(LockState<&'a [u8]>),
    /// Shared holders or a semaphore's, each with its own lease (the key's
    /// expiry, the last of them, bounds them all by removing the key).
    Set(&'a mut LockSet),
}

impl Lock<'_> {
    /// The core's view of the lock (`lock::core::set::Holding`): the grant
    /// rule, the hand-over, floors and lease ends are all read through it.
    pub(super) fn holding(&self) -> Holding<'_> {
        match self {
            Lock::Free => Holding::Free,
            Lock::One(s) => Holding::Exclusive(*s),
            Lock::Set(set) => Holding::Set(set),
        }
    }
}

/// The lock in a key, whichever kind (see `Lock`). A plain lock's deadline
/// is the key's expiry, read here, so `PEXPIRE`, `PERSIST` and `RESTORE …
/// ttl` move the lease (`NO_DEADLINE` when the key has no expiry); so is a
/// set's bound (`LockSet::expiry_bound`).
pub(super) fn lock_of(key: &mut Key) -> Result<Lock<'_>, WardenError> {
    // An empty key (a new lock) has no expiry to read.
    let (found, expiry) = key.either_expiring::<PackedLock, LockSet>()?;
    let deadline = expiry.unwrap_or(NO_DEADLINE);
    Ok(match found {
        Either::Empty => Lock::Free,
        Either::First(lock) => Lock::One(lock.state(deadline)),
        Either::Second(set) => {
            set.expiry_bound = deadline;
            Lock::Set(set)
        }
    })
}

/// Replicates a lock's whole state with its absolute deadline as
/// `DLOCK._SET`. `owner_arg` is the client's owner argument when it is the
/// owner (shared, not copied).
pub(super) fn replicate_state<O: Deref<Target = [u8]>>(
    ctx: Ctx,
    key: RStr,
    owner_arg: Option<RStr>,
    state: &LockState<O>,
) {
    SetLock::emit(state, Sink::Replication(ctx), key, owner_arg);
}

/// Replicates the new state of the lock in `args[1]`, owned by `args[2]`,
/// after an ACQUIRE or EXTEND: in the call itself, as `ttl@state` in
/// `args[3]` (`effect`), or else as `DLOCK._SET`.
fn replicate_effect<O: Deref<Target = [u8]>>(ctx: Ctx, args: &Args, state: &LockState<O>) {
    // Built led by the mark: nothing to copy before it is appended.
    let text = SetLock::state_text(state, Some(effect::MARK));
    // SAFETY: `args[3]` is the ttl, parsed into a number before this call;
    // its bytes are not read again by the command.
    if !unsafe { effect::replicate_marked(ctx, args.raw(3), text.as_bytes()) } {
        replicate_state(ctx, args.raw(1), Some(args.raw(2)), state);
    }
}

/// Stores `state` (validated) in `name` as the master or the AOF decided it,
/// replicating it with `replicate` once the key is known to hold a lock or
/// nothing: the fencing clock moves past its token, a `dlock.set` event is
/// emitted.
fn apply_state(
    ctx: Ctx,
    name: RStr,
    state: LockState,
    replicate: impl FnOnce(&LockState),
) -> Result<(), WardenError> {
    let mut key = Key::writable(ctx, name);
    let key_floor = lock_of(&mut key)?.holding().floor();
    follow_token(state.token, key_floor);
    replicate(&state);
    store(&key, &state);
    host::notify(ctx, events::SET, name);
    Ok(())
}

/// An ACQUIRE or EXTEND whose ttl (`args[3]`) did not parse: from a master
/// or the AOF it may carry its effect (`ttl@state`), which is applied like
/// `DLOCK._SET` and replicated as it came; otherwise it is the error `e`.
fn apply_replayed(ctx: Ctx, args: &Args, e: WardenError) -> Result<(), WardenError> {
    let Some(text) = effect::replayed(ctx, args.bytes(3)) else {
        return Err(e);
    };
    // The owner was checked before the ttl.
    let state = SetLock::parse(args.bytes(2), text)?;
    let token = state.token;
    // Verbatim is safe here: this argv already carries the absolute state.
    apply_state(ctx, args.raw(1), state, |_| host::replicate_verbatim(ctx))?;
    host::reply_integer(ctx, token);
    Ok(())
}

/// Stores a new lock state in `key` with the key's expiry at its deadline.
fn store<O: Deref<Target = [u8]>>(key: &Key, state: &LockState<O>) {
    let deadline = state.deadline_ms;
    key.set_value(counted(PackedLock::new(
        &state.owner,
        state.token,
        state.holds,
    )));
    key.set_abs_expire_or_persist((deadline != NO_DEADLINE).then_some(deadline));
}

/// `DLOCK.ACQUIRE key owner ttl_ms [WAIT timeout_ms] [REENTRANT] [SHARED | LIMIT n] [KEEP]`
///
/// `lock::core::acquire::decide` decides on what was read (the key's lock,
/// its queue, the clock); this applies its plan: after serving the queued
/// waiters first, it reads and asks again, once.
pub fn acquire(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let request = match args.parse::<req::Acquire>() {
        Ok(request) => request,
        Err(r) if r.at == req::TTL_AT => return apply_replayed(ctx, args, r.error),
        Err(r) => return Err(r.error),
    };
    let ttl_ms = request.ttl_ms;
    let now = host::now_ms();
    let deadline = core_lock::lease_deadline(now, ttl_ms)?;
    replicas::require(ctx, now)?;
    let keeper = request
        .keep
        .then(|| keep::caller(ctx, ttl_ms))
        .transpose()?;
    let ask = Ask {
        owner: request.owner,
        want: request.want,
        reentrant: request.reentrant,
        deadline,
        wait: request.wait_ms.is_some() && host::may_block(ctx),
    };
    let (name, key_bytes) = (args.raw(1), args.bytes(1));
    let mut key = Key::writable(ctx, name);
    let kept_lease = |token| keep::check_lease(ctx, key_bytes, token, ttl_ms);
    let mut queue = queue_of(ctx, name);
    // Asked twice at most: `decide` serves only waiters not served yet.
    let plan = loop {
        let lock = lock_of(&mut key)?;
        let plan = with_fence(|fence| decide(lock.holding(), &ask, queue, now, fence, kept_lease))?;
        if plan != Plan::ServeFirst {
            break plan;
        }
        // First come, first served: queued waiters go before this caller.
        serve_waiters(ctx, &mut key, name, host::selected_db(ctx), now);
        let waiting = waiting::count_in(ctx, name) > 0;
        queue = Queue::Served { waiting };
    };
    let grant = match plan {
        Plan::Grant(grant) => grant,
        Plan::Wait { look_at } => return wait(ctx, args, &request, keeper, look_at, now),
        Plan::Nil => {
            stats::count(&stats::LOCKS_CONTENDED);
            host::reply_null(ctx);
            return Ok(());
        }
        Plan::ServeFirst => return Err(WardenError::Internal),
    };
    if apply_grant(ctx, &mut key, name, &ask, &grant, Some(args), now)? {
        store_set_changes(ctx, &mut key, name, now);
    }
    keep::granted(ctx, keeper, key_bytes, ask.owner, grant.token, ttl_ms, now);
    host::notify(ctx, events::ACQUIRE, name);
    if grant.new {
        stats::count(&stats::LOCKS_GRANTED);
    }
    // A holder's repeat may have shortened its lease.
    look_again(ctx, &mut key, host::selected_db(ctx), key_bytes, now);
    host::reply_integer(ctx, grant.token);
    Ok(())
}

/// The queue of the key `name` as `decide` reads it: the oldest waiter's
/// request is looked at only when some client waits.
fn queue_of(ctx: Ctx, name: RStr) -> Queue {
    if waiting::count_in(ctx, name) == 0 {
        return Queue::Empty;
    }
    let db = host::selected_db(ctx);
    let front = waiting::front::<LockWaiter, _>(db, name.bytes(), |w| w.want);
    Queue::Waiting { front }
}

/// An ACQUIRE … WAIT that cannot be granted now: the client blocks (the key
/// looked at again at `look_at`).
fn wait(
    ctx: Ctx,
    args: &Args,
    request: &req::Acquire,
    keeper: Option<u64>,
    look_at: i64,
    now: i64,
) -> Result<(), WardenError> {
    let Some(timeout_ms) = request.wait_ms else {
        return Err(WardenError::Internal);
    };
    stats::count(&stats::LOCKS_CONTENDED);
    let waiter = WaitRequest {
        family: &LOCKS,
        payload: Box::new(LockWaiter {
            owner: request.owner.to_vec(),
            ttl_ms: request.ttl_ms,
            want: request.want,
            reentrant: request.reentrant,
            keeper,
        }),
        timeout_ms,
        max_waiters: config::dlock_max_waiters(),
        look_at: Some(look_at),
    };
    waiting::block(ctx, host::selected_db(ctx), args.bytes(1), waiter, now)
}

/// Applies `grant`, made for `ask`, to the lock in `key` (`name`): a plain
/// lock's change is replicated (in ACQUIRE's own call `args` when given and
/// the grant allows it, else as `DLOCK._SET`) and stored; a set's change is
/// made in place and left to the caller's `store_set_changes` (once for a
/// batch of waiters served together). Returns whether a set changed.
fn apply_grant(
    ctx: Ctx,
    key: &mut Key,
    name: RStr,
    ask: &Ask,
    grant: &Grant,
    args: Option<&Args>,
    now: i64,
) -> Result<bool, WardenError> {
    let replicate = |state: &LockState<&[u8]>, over_set: bool| match args {
        Some(args) if !over_set => replicate_effect(ctx, args, state),
        _ => replicate_state(ctx, name, None, state),
    };
    match grant.change {
        Change::Plain { state, over_set } => {
            replicate(&state, over_set);
            store(key, &state);
        }
        Change::Renew { state } => {
            replicate(&state, false);
            store_holds(key, state.holds)?;
            key.set_abs_expire(state.deadline_ms);
        }
        Change::SetNew { kind } => {
            let set = new_set(kind, ask, grant.token);
            key.set_value(counted(Box::new(set)));
            key.set_abs_expire(ask.deadline);
            return Ok(true);
        }
        Change::SetJoin { prune } | Change::SetRenew { prune, .. } => {
            let Lock::Set(set) = lock_of(key)? else {
                return Err(WardenError::Internal);
            };
            if prune {
                prune_lapsed(ctx, set, name, now);
            }
            grant.apply_to_set(set, ask, now)?;
            if let Some(last) = set.latest_deadline() {
                key.set_abs_expire(last);
            }
            return Ok(true);
        }
    }
    Ok(false)
}

/// With waiters on the key, makes sure they are looked at when the next
/// lease ends (a holder's repeat or extension may have moved it earlier).
pub(super) fn look_again(ctx: Ctx, key: &mut Key, db: c_int, key_bytes: &[u8], now: i64) {
    if waiting::count(db, key_bytes) == 0 {
        return;
    }
    if let Ok(Some(next)) = lock_of(key).map(|l| l.holding().next_deadline(now)) {
        waiting::look_at(ctx, db, key_bytes, next, now);
    }
}

/// Drops the holders of `set` (in key `name`) whose lease ended: they lost
/// their grants (`dlock.lost`), and no longer kept ones are renewed.
fn prune_lapsed(ctx: Ctx, set: &mut LockSet, name: RStr, now: i64) {
    if keep::any_kept() {
        keep::lapsed(host::selected_db(ctx), name.bytes(), set.lapsed_tokens(now));
    }
    if set.prune(now) {
        lost::note(host::selected_db(ctx), name.bytes());
    }
}

/// After a change to the set in `key` (a grant, re-entry, extension or
/// release): drops holders whose lease ended, then replicates the whole set
/// with absolute deadlines and sets the key's expiry to the last lease; a
/// set left without holders is deleted (replicated as `DEL`).
pub(super) fn store_set_changes(ctx: Ctx, key: &mut Key, name: RStr, now: i64) {
    let Ok(Lock::Set(set)) = lock_of(key) else {
        return;
    };
    prune_lapsed(ctx, set, name, now);
    match set.latest_deadline() {
        Some(last) => {
            SetLocks::emit(set, Some(last), Sink::Replication(ctx), name);
            set.expiry_bound = last;
            let first_lapse = set.first_lapse(now);
            key.set_abs_expire(last);
            lapse_watch::track(ctx, name.bytes(), first_lapse, now);
        }
        None => {
            key.delete();
            host::emit(Sink::Replication(ctx), c"DEL", (name,));
            lapse_watch::forget(host::selected_db(ctx), name.bytes());
        }
    }
}

/// `DLOCK.RELEASE key owner [TOKEN t]`
///
/// Dropping a hold depends only on the stored owner and hold count, so it is
/// replicated as the command itself and is the same effect wherever it is
/// applied. A lock found in the key is live: Redis deletes a lapsed key when
/// it opens it (and hides it while writes are paused), and applied from a
/// master or the AOF the release was already decided there — so neither the
/// clock nor the key's expiry is read. A release that hands the lock to a
/// waiter replicates the new state instead.
pub fn release(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let request = args.parse::<req::Release>()?;
    let (owner, token) = (request.owner, request.token);
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let lock = match key.either::<PackedLock, LockSet>()? {
        Either::Second(_) => return release_in_set(ctx, args, &mut key, owner, token),
        Either::First(lock) => Some(lock),
        Either::Empty => None,
    };
    let Some(lock) = lock else {
        host::reply_integer(ctx, 0);
        return Ok(());
    };
    let mut state = lock.state(NO_DEADLINE);
    let outcome = state.release(owner, token, i64::MIN);
    if outcome == Release::Freed && keep::any_kept() {
        keep::released(state.token, host::selected_db(ctx), args.bytes(1));
    }
    // One hold fewer (0 once freed: a hand-over sees a free lock) fits the block.
    let holds = state.holds;
    if outcome != Release::NotHeld && !lock.set_holds(holds) {
        store_holds(&mut key, holds)?;
    }
    match outcome {
        Release::NotHeld => host::reply_integer(ctx, 0),
        Release::StillHeld => {
            // Time-independent: applied elsewhere it drops the same hold.
            host::replicate_verbatim(ctx);
            host::notify(ctx, events::RELEASE, name);
            host::reply_integer(ctx, 1);
        }
        Release::Freed => {
            let db = host::selected_db(ctx);
            host::notify(ctx, events::RELEASE, name);
            // A release applied from a master (a writable replica's own
            // waiters) hands nothing over: that would grant a lock the master
            // never granted. The waiters stay queued, as for any write the
            // server does not accept now.
            let handed_off = waiting::count(db, args.bytes(1)) > 0
                && host::writes_allowed(ctx)
                && serve_waiters(ctx, &mut key, name, db, host::now_ms());
            if !handed_off {
                key.delete();
                // Time-independent: a replayed release frees the same lock.
                host::replicate_verbatim(ctx);
            }
            host::reply_integer(ctx, 1);
        }
    }
    Ok(())
}

/// RELEASE of one holder of a set: the set is replicated as it is after
/// (a lease that ended meanwhile is dropped there too, by this clock), and
/// the place freed goes to the waiters at the head of the queue.
fn release_in_set(
    ctx: Ctx,
    args: &Args,
    key: &mut Key,
    owner: &[u8],
    token: Option<i64>,
) -> Result<(), WardenError> {
    let name = args.raw(1);
    let db = host::selected_db(ctx);
    let now = host::now_ms();
    let outcome = match lock_of(key)? {
        Lock::Set(set) => {
            let kept = keep::any_kept()
                .then(|| set.holder_mut(owner, token, now).map(|h| h.state().token))
                .flatten();
            let outcome = set.release(owner, token, now);
            if let (Release::Freed, Some(kept)) = (outcome, kept) {
                keep::released(kept, db, args.bytes(1));
            }
            if outcome != Release::NotHeld {
                set.bound_deadlines();
            }
            outcome
        }
        _ => Release::NotHeld,
    };
    if outcome == Release::NotHeld {
        host::reply_integer(ctx, 0);
        return Ok(());
    }
    host::notify(ctx, events::RELEASE, name);
    store_set_changes(ctx, key, name, now);
    if outcome == Release::Freed
        && waiting::count(db, args.bytes(1)) > 0
        && host::writes_allowed(ctx)
    {
        serve_waiters(ctx, key, name, db, now);
    }
    host::reply_integer(ctx, 1);
    Ok(())
}

/// EXTEND of one holder of a set: its own lease only.
fn extend_in_set(
    ctx: Ctx,
    args: &Args,
    key: &mut Key,
    owner: &[u8],
    token: Option<i64>,
    deadline: i64,
    now: i64,
) -> Result<(), WardenError> {
    let name = args.raw(1);
    let extended = match lock_of(key)? {
        Lock::Set(set) => {
            let held = set.live(now).find(|h| h.is_held_by(owner, token, now));
            let Some(held) = held.map(|h| h.token) else {
                host::reply_integer(ctx, 0);
                return Ok(());
            };
            // A kept lease has limits (checked before anything changes).
            keep::check_lease(ctx, args.bytes(1), held, deadline - now)?;
            set.bound_deadlines();
            set.holder_mut(owner, token, now).map(|holder| {
                holder.deadline_ms = deadline;
                holder.state().token
            })
        }
        _ => None,
    };
    if let Some(token) = extended {
        let db = host::selected_db(ctx);
        keep::extended(ctx, token, db, args.bytes(1), deadline - now, now);
        store_set_changes(ctx, key, name, now);
        host::notify(ctx, events::EXTEND, name);
        look_again(ctx, key, host::selected_db(ctx), args.bytes(1), now);
    }
    host::reply_integer(ctx, i64::from(extended.is_some()));
    Ok(())
}

/// `DLOCK.EXTEND key owner ttl_ms [TOKEN t]`
pub fn extend(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let request = match args.parse::<req::Extend>() {
        Ok(request) => request,
        Err(r) if r.at == req::TTL_AT => return apply_replayed(ctx, args, r.error),
        Err(r) => return Err(r.error),
    };
    let (owner, ttl_ms, token) = (request.owner, request.ttl_ms, request.token);
    let now = host::now_ms();
    let deadline = core_lock::lease_deadline(now, ttl_ms)?;
    replicas::require(ctx, now)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let current = match lock_of(&mut key)? {
        Lock::Set(_) => return extend_in_set(ctx, args, &mut key, owner, token, deadline, now),
        Lock::One(state) => Some(state),
        Lock::Free => None,
    };
    let extended = match current {
        Some(mut state) => {
            if state.is_held_by(owner, token, now) {
                keep::check_lease(ctx, args.bytes(1), state.token, ttl_ms)?;
            }
            let extended = state.extend(owner, token, deadline, now);
            if extended {
                replicate_effect(ctx, args, &state);
                let db = host::selected_db(ctx);
                keep::extended(ctx, state.token, db, args.bytes(1), ttl_ms, now);
            }
            extended
        }
        None => false,
    };
    if extended {
        key.set_abs_expire(deadline);
        host::notify(ctx, events::EXTEND, name);
        if waiting::count_in(ctx, name) > 0 {
            waiting::look_at(ctx, host::selected_db(ctx), args.bytes(1), deadline, now);
        }
    }
    host::reply_integer(ctx, i64::from(extended));
    Ok(())
}

/// `DLOCK._SETS key limit:floor:expiry holders`: the replication and AOF form of a
/// lock with several holders (see `set_wire`). Internal: only from the master
/// link or the AOF.
pub fn set_states(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "dlock._sets")?;
    let request = args.parse::<req::SetStates>()?;
    let (set, expiry) = SetLocks::parse(request.head, request.holders)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let key_floor = lock_of(&mut key)?.holding().floor();
    follow_token(set.floor, key_floor);
    SetLocks::emit(&set, expiry, Sink::Replication(ctx), name);
    if set.holders().is_empty() {
        key.delete();
    } else {
        key.set_value(counted(Box::new(set)));
        key.set_abs_expire_or_persist(expiry);
    }
    host::notify(ctx, events::SET, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// `DLOCK._SET key owner token:holds:deadline_ms`: the replication and AOF
/// form of every lock change, with an absolute deadline (`NO_DEADLINE`: the
/// key gets no expiry). Internal: only from the master link or the AOF.
pub fn set_state(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "dlock._set")?;
    let request = args.parse::<req::SetState>()?;
    let state = SetLock::parse(request.owner, request.state)?;
    apply_state(ctx, args.raw(1), state, |state| {
        replicate_state(ctx, args.raw(1), Some(args.raw(2)), state)
    })?;
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// What a client blocked in `DLOCK.ACQUIRE … WAIT` asked for.
struct LockWaiter {
    /// Who will hold the lock once it is handed over.
    owner: Vec<u8>,
    /// Lease length asked for; the lease starts at the hand-off.
    ttl_ms: i64,
    /// Exclusive, `SHARED` or `LIMIT n`.
    want: Want,
    /// `REENTRANT`: if its owner holds the lock by then, one more hold.
    reentrant: bool,
    /// `KEEP`: the connection that waits, which the grant will be bound to.
    keeper: Option<u64>,
}

/// Locks as a `waiting::Waited`: a free lock goes to the oldest waiter.
struct Locks;

/// The lock family's entry in the waiting machinery.
static LOCKS: Locks = Locks;

impl Waited for Locks {
    fn serve(&self, ctx: Ctx, key: &mut Key, name: RStr, db: c_int, now: i64) {
        serve_waiters(ctx, key, name, db, now);
    }

    fn holds_own(&self, key: &Key) -> bool {
        key.holds::<PackedLock>() || key.holds::<LockSet>()
    }

    fn gauge(&self) -> &'static AtomicI64 {
        &stats::LOCKS_WAITING
    }
}

/// Hands the lock to the waiters at the head of the queue while the grant
/// rule lets them in: one exclusive waiter, or consecutive shared (or
/// semaphore) waiters together, replicated as one change of the set. `key`
/// is open for writing on `db`. Returns whether a waiter got the lock.
pub(super) fn serve_waiters(ctx: Ctx, key: &mut Key, name: RStr, db: c_int, now: i64) -> bool {
    let key_bytes = name.bytes();
    let (served, set_changed) = hand_over(ctx, key, name, db, key_bytes, now);
    if set_changed {
        store_set_changes(ctx, key, name, now);
    }
    look_again(ctx, key, db, key_bytes, now);
    served
}

/// The grants of `serve_waiters`: applies the hand-over plan's verdicts
/// (`lock::core::handover`) to the head of the queue until it says stop.
/// Returns whether a waiter got the lock, and whether a set changed (its
/// state is not replicated yet).
fn hand_over(
    ctx: Ctx,
    key: &mut Key,
    name: RStr,
    db: c_int,
    key_bytes: &[u8],
    now: i64,
) -> (bool, bool) {
    let (mut served, mut set_changed) = (false, false);
    // The head's owner, copied out of the queue: the plan may ask the
    // cluster (`CLUSTER NODES`), which is not done while the queue is borrowed.
    let mut owner = Vec::new();
    loop {
        let lock = match lock_of(key) {
            Ok(lock) => lock,
            Err(e) => {
                // Another command overwrote the key: its lock waiters get
                // the error a request would get now (WRONGTYPE).
                waiting::fail_front::<LockWaiter>(ctx, db, key_bytes, &e.to_string());
                return (served, set_changed);
            }
        };
        let front = waiting::front::<LockWaiter, _>(db, key_bytes, |w| {
            owner.clear();
            owner.extend_from_slice(&w.owner);
            w.want
        });
        let head = match front {
            Some(want) => Head::Waiter {
                want,
                owner: &owner,
            },
            None if waiting::count(db, key_bytes) == 0 => Head::Empty,
            None => Head::Other,
        };
        // A key that vanished may have left with its slot (MIGRATE,
        // resharding): granting here would write a key this node no longer
        // serves.
        let moved = || waiting::moved_error(ctx, key_bytes);
        let repeat = match handover::decide(lock.holding(), head, now, served, moved) {
            Verdict::Stop => return (served, set_changed),
            Verdict::Drop => {
                // Another family's waiter at the head: answered with an error.
                waiting::pop_front::<LockWaiter>(db, key_bytes);
                continue;
            }
            Verdict::SendAway(error) => {
                // Send the waiters to the node that serves the slot now.
                waiting::fail_all(db, key_bytes, &error);
                return (false, false);
            }
            Verdict::Grant => false,
            Verdict::Renew => true,
        };
        if let Err(e) = replicas::require(ctx, now) {
            // Too few replicas for a grant: the waiters learn it now and
            // can look for a master that has them.
            waiting::fail_all(db, key_bytes, &e.to_string());
            return (served, set_changed);
        }
        let Some(waiter) = waiting::pop_front::<LockWaiter>(db, key_bytes) else {
            return (served, set_changed);
        };
        let asked = &waiter.payload;
        if asked.keeper.is_some() {
            if let Err(e) = keep::check_capacity(asked.ttl_ms) {
                // Room for its renewals went while it waited: refused to it alone.
                waiter.answer(Answer::Error(e.to_string()));
                continue;
            }
        }
        match grant_waiter(ctx, key, name, asked, repeat, now) {
            Ok((token, changed_set)) => {
                let (owner, ttl) = (&asked.owner, asked.ttl_ms);
                keep::granted(ctx, asked.keeper, key_bytes, owner, token, ttl, now);
                host::notify(ctx, events::ACQUIRE, name);
                waiter.answer(Answer::Integer(token));
                stats::count(&stats::LOCKS_GRANTED);
                stats::count(&stats::LOCKS_HANDED_OFF);
                served = true;
                set_changed |= changed_set;
            }
            Err(NotGranted::Own(e)) => {
                // This waiter's own request (a lease too short for the kept
                // grant it repeats): refused to it alone.
                waiter.answer(Answer::Error(e.to_string()));
            }
            Err(NotGranted::Key(e)) => {
                // The waiter already taken is answered too: none is left hanging.
                let error = e.to_string();
                waiter.answer(Answer::Error(error.clone()));
                waiting::fail_all(db, key_bytes, &error);
                return (served, set_changed);
            }
        }
        // After an exclusive grant the next waiter finds the lock held (only a
        // repeat of the same owner goes on).
    }
}

/// Why a waiter the hand-over let in was not granted.
enum NotGranted {
    /// Its own request (the kept lease it repeats refused): answered alone.
    Own(WardenError),
    /// The key: every waiter is answered.
    Key(WardenError),
}

/// The grant of a waiter the hand-over let in (`repeat`: its owner holds
/// the lock already), made by `lock::core::acquire` on the key as it is now
/// and applied. Returns its token and whether a set changed (not
/// replicated yet).
fn grant_waiter(
    ctx: Ctx,
    key: &mut Key,
    name: RStr,
    asked: &LockWaiter,
    repeat: bool,
    now: i64,
) -> Result<(i64, bool), NotGranted> {
    let ask = Ask {
        owner: &asked.owner,
        want: asked.want,
        reentrant: asked.reentrant,
        deadline: now.saturating_add(asked.ttl_ms),
        wait: false,
    };
    let lock = lock_of(key).map_err(NotGranted::Key)?;
    let lease_refused = std::cell::Cell::new(false);
    let grant = if repeat {
        let ttl_ms = ask.deadline - now;
        let kept_lease = |token| {
            let checked = keep::check_lease(ctx, name.bytes(), token, ttl_ms);
            lease_refused.set(checked.is_err());
            checked
        };
        acquire::renew(lock.holding(), &ask, now, kept_lease)
    } else {
        with_fence(|fence| acquire::grant(lock.holding(), &ask, now, fence))
    };
    let grant = grant.map_err(|e| match lease_refused.get() {
        true => NotGranted::Own(e),
        false => NotGranted::Key(e),
    })?;
    let changed_set =
        apply_grant(ctx, key, name, &ask, &grant, None, now).map_err(NotGranted::Key)?;
    Ok((grant.token, changed_set))
}
