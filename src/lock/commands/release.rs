//! `DLOCK.RELEASE`: drops one hold of an owner's lock; at zero holds the
//! lock goes to the oldest waiter. Replicated as itself (see `release`).

use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, option, Arg, Grammar, Kind, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Either, Key};
use crate::glue::waiting;
use crate::lock::call::{lock_of, store_holds, store_set_changes, Lock, OwnerGrant};
use crate::lock::core::packed::PackedLock;
use crate::lock::core::plain::{self, NO_DEADLINE};
use crate::lock::core::set::LockSet;
use crate::lock::events;
use crate::lock::keep;
use crate::lock::waiters::serve_waiters;

/// `DLOCK.RELEASE key owner [TOKEN t]`
pub type Release<'a> = OwnerGrant<'a, false>;

impl<'a> Request<'a> for OwnerGrant<'a, false> {
    const NAME: &'static str = "dlock.release";
    const GRAMMAR: Grammar = Grammar::exact(&[
        key(),
        arg("owner", Kind::Str),
        option("TOKEN", "t", Kind::Int),
    ]);

    fn empty() -> Self {
        OwnerGrant {
            owner: &[],
            ttl_ms: 0,
            token: None,
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        self.take_field(arg, word)
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
    let request = args.parse::<Release>()?;
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
    if outcome == plain::Release::Freed && keep::any_kept() {
        keep::released(state.token, host::selected_db(ctx), args.bytes(1));
    }
    // One hold fewer (0 once freed: a hand-over sees a free lock) fits the block.
    let holds = state.holds;
    if outcome != plain::Release::NotHeld && !lock.set_holds(holds) {
        store_holds(&mut key, holds)?;
    }
    match outcome {
        plain::Release::NotHeld => host::reply_integer(ctx, 0),
        plain::Release::StillHeld => {
            // Time-independent: applied elsewhere it drops the same hold.
            host::replicate_verbatim(ctx);
            host::notify(ctx, events::RELEASE, name);
            host::reply_integer(ctx, 1);
        }
        plain::Release::Freed => {
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
            if let (plain::Release::Freed, Some(kept)) = (outcome, kept) {
                keep::released(kept, db, args.bytes(1));
            }
            if outcome != plain::Release::NotHeld {
                set.bound_deadlines();
            }
            outcome
        }
        _ => plain::Release::NotHeld,
    };
    if outcome == plain::Release::NotHeld {
        host::reply_integer(ctx, 0);
        return Ok(());
    }
    host::notify(ctx, events::RELEASE, name);
    store_set_changes(ctx, key, name, now);
    if outcome == plain::Release::Freed
        && waiting::count(db, args.bytes(1)) > 0
        && host::writes_allowed(ctx)
    {
        serve_waiters(ctx, key, name, db, now);
    }
    host::reply_integer(ctx, 1);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Release as Request>::NAME,
    func: command_fn!(release),
    alias: None,
    flags: "write",
    doc: Doc {
        summary: "Drops one hold of the owner's lock (of the grant that carried token t, with TOKEN): 1 if it held it, 0 otherwise. At zero holds the lock goes to the oldest waiter.",
        complexity: "O(1)",
        grammar: <Release as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
