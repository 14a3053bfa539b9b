//! `DLOCK.EXTEND`: sets the remaining lease of an owner's lock (never
//! re-creates a lost one).

use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, option, Arg, Grammar, Kind, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};
use crate::glue::waiting;
use crate::lock::call::{
    apply_replayed, lock_of, look_again, replicate_effect, store_set_changes, Lock, OwnerGrant,
    TTL_AT,
};
use crate::lock::core::plain as core_lock;
use crate::lock::events;
use crate::lock::keep;
use crate::lock::replicas;

/// `DLOCK.EXTEND key owner ttl_ms [TOKEN t]`
pub type Extend<'a> = OwnerGrant<'a, true>;

impl<'a> Request<'a> for OwnerGrant<'a, true> {
    const NAME: &'static str = "dlock.extend";
    const GRAMMAR: Grammar = Grammar::exact(&[
        key(),
        arg("owner", Kind::Str),
        arg("ttl_ms", Kind::Int),
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

/// `DLOCK.EXTEND key owner ttl_ms [TOKEN t]`
pub fn extend(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let request = match args.parse::<Extend>() {
        Ok(request) => request,
        Err(r) if r.at == TTL_AT => return apply_replayed(ctx, args, r.error),
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

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Extend as Request>::NAME,
    func: command_fn!(extend),
    alias: None,
    flags: "write fast",
    doc: Doc {
        summary: "Sets the remaining lease of the owner's lock (of the grant that carried token t, with TOKEN) to ttl_ms: 1, or 0 if it does not hold it (never re-creates a lost lock).",
        complexity: "O(1)",
        grammar: <Extend as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
