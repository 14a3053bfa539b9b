//! RL.* commands: rate limiters on the `warden-rl` type.
//!
//! Each call reads the server clock once, decides in the core, and — only when
//! it let events through — stores the new state with the absolute time at
//! which the limiter is full again as the key's expiry, and replicates that
//! state: in the call itself (`arg@state` in its first parameter, see
//! `effect`) or as `RL._SET`. Denied calls and `COST 0` write and replicate
//! nothing.

use std::ffi::CStr;

use crate::common::error::WardenError;
use crate::common::grammar::Request;
use crate::glue::args::{internal_only, Args};
use crate::glue::effect::{self, MARK};
use crate::glue::host::{self, Ctx, Key, RStr, Sink};
use crate::rate::core::bucket::{self};
use crate::rate::core::errors;
use crate::rate::core::rate::{self, BucketState, Decided, Decision, GcraReply, MAX_LIMITS};
use crate::rate::core::window::{self, WindowState};
use crate::rate::events;
use crate::rate::limiter::{Decoded, Limiter, LimiterKind, LimiterRef, Scratch};
use crate::rate::requests::{Gcra, Leaky, SetState, Token, Window, FIRST_PARAMETER_AT};
use crate::rate::stats;
use crate::rate::wire::{SetLimiter, FEW_LIMITS_TEXT, ONE_LIMIT_TEXT, STATE_TEXT};

/// The limiter in a key: `Ok(None)` when the key is empty.
fn limiter_in(key: &mut Key, kind: LimiterKind) -> Result<Option<&mut Limiter>, WardenError> {
    match key.value::<Limiter>()? {
        Some(l) if l.kind() != kind => Err(errors::KIND_MISMATCH),
        found => Ok(found),
    }
}

/// Stores a limiter's new states with their absolute expiry and emits the
/// keyspace event `event`.
fn store(
    ctx: Ctx,
    (key, name): (&mut Key, RStr),
    limiter: LimiterRef,
    expires: Option<i64>,
    event: &CStr,
) {
    match key.value::<Limiter>() {
        Ok(Some(existing)) => existing.set(limiter),
        _ => key.set_value(Box::new(limiter.to_limiter())),
    }
    key.set_abs_expire_or_persist(expires);
    host::notify(ctx, event, name);
}

/// Replicates the new state of the limiter in `args[1]`: in the call
/// itself, as `arg@state` in `args[2]` (`effect`), or else as `RL._SET`
/// (always for a call by an alias, `CL.THROTTLE`, which a replica without
/// the alias would not know).
fn replicate_effect(ctx: Ctx, args: &Args, limiter: LimiterRef, expires: Option<i64>) {
    // The text in a buffer sized for its count of limits.
    let in_place = if args.by_alias() {
        effect::as_command()
    } else {
        match limiter.count() {
            1 => {
                let text = SetLimiter::state_text::<ONE_LIMIT_TEXT>(limiter, expires, Some(MARK));
                // SAFETY: `args[2]` (the first rate, limit or burst) was parsed
                // into a number before this call; its bytes are not read again.
                unsafe { effect::replicate_marked(ctx, args.raw(2), text.as_bytes()) }
            }
            2..=3 => {
                let text = SetLimiter::state_text::<FEW_LIMITS_TEXT>(limiter, expires, Some(MARK));
                // SAFETY: as above.
                unsafe { effect::replicate_marked(ctx, args.raw(2), text.as_bytes()) }
            }
            _ => {
                let text = SetLimiter::state_text::<STATE_TEXT>(limiter, expires, Some(MARK));
                // SAFETY: as above.
                unsafe { effect::replicate_marked(ctx, args.raw(2), text.as_bytes()) }
            }
        }
    };
    if !in_place {
        SetLimiter::emit(limiter, expires, Sink::Replication(ctx), args.raw(1));
    }
}

/// Replicates and stores the states a call decided to write, if any.
fn write(ctx: Ctx, args: &Args, key: &mut Key, limiter: LimiterRef, store_as: Option<Option<i64>>) {
    let Some(expires) = store_as else { return };
    let event = match limiter.kind() {
        LimiterKind::Token => events::TOKEN,
        LimiterKind::Leaky => events::LEAKY,
        LimiterKind::Window => events::WINDOW,
        LimiterKind::Gcra => events::GCRA,
    };
    replicate_effect(ctx, args, limiter, expires);
    store(ctx, (key, args.raw(1)), limiter, expires, event);
}

/// An RL command whose first parameter (`args[2]`) did not parse: from a
/// master or the AOF it may carry its effect (`arg@state`), which is applied
/// like `RL._SET` and replicated as it came; otherwise it is the error `e`.
fn apply_replayed(ctx: Ctx, args: &Args, e: WardenError) -> Result<(), WardenError> {
    let Some(text) = effect::replayed(ctx, args.bytes(2)) else {
        return Err(e);
    };
    let (limiter, expires) = SetLimiter::parse(text)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    key.value::<Limiter>()?;
    store(
        ctx,
        (&mut key, name),
        limiter.view(&mut Scratch::default()),
        expires,
        events::SET,
    );
    // Verbatim is safe here: this argv already carries the absolute state.
    host::replicate_verbatim(ctx);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// Reads the call into `request`; false when it was a replicated call
/// carrying its effect in its first parameter, applied here
/// (`apply_replayed`).
fn read<'a, R: Request<'a>>(
    ctx: Ctx,
    args: &Args<'a>,
    request: &mut R,
) -> Result<bool, WardenError> {
    match args.parse_into(request) {
        Ok(()) => Ok(true),
        Err(r) if r.at == FIRST_PARAMETER_AT => apply_replayed(ctx, args, r.error).map(|()| false),
        Err(r) => Err(r.error),
    }
}

fn reply_decision(ctx: Ctx, d: &Decision) {
    stats::count(if d.allowed {
        &stats::RL_ALLOWED
    } else {
        &stats::RL_DENIED
    });
    host::reply_array(ctx, 4);
    for v in [i64::from(d.allowed), d.remaining, d.wait_ms, d.reset_ms] {
        host::reply_integer(ctx, v);
    }
}

/// Runs `decide` on the bucket limits of key `args[1]` with a buffer for
/// `n` new states (one inline, or room for every limit), then writes what
/// it decided and replies.
fn run_buckets(
    ctx: Ctx,
    args: &Args,
    kind: LimiterKind,
    n: usize,
    decide: impl FnOnce(&[BucketState], i64, &mut [BucketState]) -> Result<Decided, WardenError>,
) -> Result<(), WardenError> {
    let now = host::now_ms();
    let mut key = Key::writable(ctx, args.raw(1));
    let mut room = Decoded::new();
    let stored = match limiter_in(&mut key, kind)? {
        Some(l) => l.states(&mut room),
        None => &[],
    };
    // The smallest buffer that holds them: zeroing all eight costs more
    // than the rest of a two-limit call's bookkeeping.
    let (mut one, mut few, mut all);
    let out: &mut [BucketState] = match n {
        1 => {
            one = [BucketState::default()];
            &mut one
        }
        2..=3 => {
            few = [BucketState::default(); 3];
            &mut few
        }
        _ => {
            all = [BucketState::default(); MAX_LIMITS];
            &mut all
        }
    };
    let d = decide(stored, now, out)?;
    write(
        ctx,
        args,
        &mut key,
        LimiterRef::Bucket(kind, &out[..n]),
        d.store,
    );
    reply_decision(ctx, &d.reply);
    Ok(())
}

/// `RL.TOKEN key rate burst [rate burst ...] [COST n] [MAXWAIT ms]`
pub fn token(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let mut r = Token::empty();
    if !read(ctx, args, &mut r)? {
        return Ok(());
    }
    let (limits, cost, max_wait) = (&r.limits[..r.count], r.cost, r.max_wait_ms);
    run_buckets(
        ctx,
        args,
        LimiterKind::Token,
        r.count,
        |stored, now, out| bucket::token_buckets(stored, limits, cost, max_wait, now, out),
    )
}

/// `RL.LEAKY key rate capacity [COST n]`
pub fn leaky(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let mut r = Leaky::empty();
    if !read(ctx, args, &mut r)? {
        return Ok(());
    }
    let (rate, capacity, cost) = (r.limit.rate, r.limit.size, r.cost);
    run_buckets(ctx, args, LimiterKind::Leaky, 1, |stored, now, out| {
        let o = bucket::leaky_bucket(stored.first(), rate, capacity, cost, now)?;
        if let (Some((s, _)), Some(slot)) = (o.store, out.first_mut()) {
            *slot = s;
        }
        Ok(Decided {
            reply: o.reply,
            store: o.store.map(|(_, expires)| expires),
        })
    })
}

/// `RL.WINDOW key limit window_ms [limit window_ms ...] [COST n]`
pub fn window(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let mut r = Window::empty();
    if !read(ctx, args, &mut r)? {
        return Ok(());
    }
    let now = host::now_ms();
    let mut key = Key::writable(ctx, args.raw(1));
    let mut room = Decoded::new();
    let stored: &[WindowState] = match limiter_in(&mut key, LimiterKind::Window)? {
        Some(l) => l.states(&mut room),
        None => &[],
    };
    let mut out = [WindowState::NONE; MAX_LIMITS];
    let d = window::sliding_windows(stored, &r.limits[..r.count], r.cost, now, &mut out)?;
    write(
        ctx,
        args,
        &mut key,
        LimiterRef::Window(&out[..r.count]),
        d.store,
    );
    reply_decision(ctx, &d.reply);
    Ok(())
}

/// `RL.GCRA key max_burst count period_s [quantity | QUANTITY n]`, replying
/// like redis-cell's `CL.THROTTLE` and reading its arguments the same way.
pub fn gcra(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let mut r = Gcra::empty();
    if !read(ctx, args, &mut r)? {
        return Ok(());
    }
    let now = host::now_ms();
    let mut key = Key::writable(ctx, args.raw(1));
    let state = match limiter_in(&mut key, LimiterKind::Gcra)? {
        Some(l) => l.first::<BucketState>(),
        None => None,
    };
    let out = rate::gcra(
        state.as_ref(),
        r.max_burst,
        r.count,
        r.period_s,
        r.quantity,
        now,
    )?;
    if let Some((s, expires)) = out.store {
        let states = [s];
        let limiter = LimiterRef::Bucket(LimiterKind::Gcra, &states);
        write(ctx, args, &mut key, limiter, Some(expires));
    }
    let r: GcraReply = out.reply;
    stats::count(if r.limited == 0 {
        &stats::RL_ALLOWED
    } else {
        &stats::RL_DENIED
    });
    host::reply_array(ctx, 5);
    for v in [
        r.limited,
        r.limit,
        r.remaining,
        r.retry_after_s,
        r.reset_after_s,
    ] {
        host::reply_integer(ctx, v);
    }
    Ok(())
}

/// `RL._SET key kind:n:limits…:pxat_ms` (see `wire`): the replication and
/// AOF form of a limiter's state in one argument (`pxat_ms` -1: no
/// expiry). Internal.
pub fn set_state(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "rl._set")?;
    let request = args.parse::<SetState>()?;
    let (limiter, expires) = SetLimiter::parse(request.state)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    key.value::<Limiter>()?;
    let mut room = Scratch::default();
    let view = limiter.view(&mut room);
    SetLimiter::emit(view, expires, Sink::Replication(ctx), name);
    store(ctx, (&mut key, name), view, expires, events::SET);
    host::reply_status(ctx, c"OK");
    Ok(())
}
