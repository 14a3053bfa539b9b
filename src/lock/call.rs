//! What the DLOCK commands share: the owner and ttl arguments and the
//! request RELEASE and EXTEND share, the lock in a key (whichever kind), and
//! storing and replicating its changes: the new state with its absolute
//! deadline in the call itself (`ttl@state`, see `effect`) or as
//! `DLOCK._SET`, a set's holders as `DLOCK._SETS`.

use std::ffi::c_int;
use std::ops::Deref;

use crate::common::error::WardenError;
use crate::common::grammar::Arg;
use crate::glue::args::Args;
use crate::glue::effect;
use crate::glue::fence::follow_token;
use crate::glue::host::{self, Ctx, Either, Key, RStr, Sink};
use crate::glue::waiting;
use crate::lock::core::acquire::{new_set, Ask, Change, Grant};
use crate::lock::core::errors;
use crate::lock::core::packed::PackedLock;
use crate::lock::core::plain::{LockState, NO_DEADLINE, TOKEN, TTL_MS};
use crate::lock::core::set::{Holding, LockSet};
use crate::lock::data_type::counted;
use crate::lock::events;
use crate::lock::keep;
use crate::lock::lapse_watch;
use crate::lock::lost;
use crate::lock::set_wire::SetLocks;
use crate::lock::wire::SetLock;

/// An owner, which must not be empty.
pub(super) fn owner(word: &[u8]) -> Result<&[u8], WardenError> {
    if word.is_empty() {
        return Err(errors::OWNER_EMPTY);
    }
    Ok(word)
}

/// Where `DLOCK.ACQUIRE` and `DLOCK.EXTEND` carry their ttl: a replicated
/// call may carry its effect there instead (`ttl@state`).
pub const TTL_AT: usize = 3;

/// `DLOCK.RELEASE key owner [TOKEN t]` and `DLOCK.EXTEND key owner ttl_ms
/// [TOKEN t]`: an owner's grant (the one that carried token `t`), and for
/// EXTEND its new lease.
pub struct OwnerGrant<'a, const EXTEND: bool> {
    /// The holder.
    pub owner: &'a [u8],
    /// EXTEND's new lease (0 for RELEASE).
    pub ttl_ms: i64,
    /// `TOKEN t`: only the grant that carried it.
    pub token: Option<i64>,
}

impl<'a, const EXTEND: bool> OwnerGrant<'a, EXTEND> {
    /// The fields RELEASE and EXTEND share.
    pub(super) fn take_field(
        &mut self,
        arg: &'static Arg,
        word: &'a [u8],
    ) -> Result<(), WardenError> {
        match arg.name {
            "owner" => self.owner = owner(word)?,
            "ttl_ms" => self.ttl_ms = TTL_MS.parse(word)?,
            "t" => self.token = Some(TOKEN.parse(word)?),
            _ => {}
        }
        Ok(())
    }
}

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
pub(super) fn replicate_effect<O: Deref<Target = [u8]>>(
    ctx: Ctx,
    args: &Args,
    state: &LockState<O>,
) {
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
pub(super) fn apply_state(
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
pub(super) fn apply_replayed(ctx: Ctx, args: &Args, e: WardenError) -> Result<(), WardenError> {
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

/// Applies `grant`, made for `ask`, to the lock in `key` (`name`): a plain
/// lock's change is replicated (in ACQUIRE's own call `args` when given and
/// the grant allows it, else as `DLOCK._SET`) and stored; a set's change is
/// made in place and left to the caller's `store_set_changes` (once for a
/// batch of waiters served together). Returns whether a set changed.
pub(super) fn apply_grant(
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
