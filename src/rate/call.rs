//! What the RL commands share: their common arguments, reading a call
//! (which may carry a replicated effect), storing and replicating a
//! limiter's new state, and the reply.

use std::ffi::CStr;

use crate::common::error::WardenError;
use crate::common::grammar::{option, Arg, Kind, Request};
use crate::common::parse::IntArg;
use crate::glue::args::Args;
use crate::glue::effect::{self, MARK};
use crate::glue::host::{self, Ctx, Key, RStr, Sink};
use crate::rate::core::errors;
use crate::rate::core::rate::{BucketState, Decided, Decision, MAX_LIMITS};
use crate::rate::events;
use crate::rate::limiter::{Decoded, Limiter, LimiterKind, LimiterRef, Scratch};
use crate::rate::stats;
use crate::rate::wire::{SetLimiter, FEW_LIMITS_TEXT, ONE_LIMIT_TEXT, STATE_TEXT};

/// Where every RL command carries its first parameter (a rate, limit or
/// burst): a replicated call may carry its effect there (`arg@state`).
const FIRST_PARAMETER_AT: usize = 2;

/// An integer argument in its range (never negative, so a `u64`).
pub fn count(word: &[u8], arg: IntArg) -> Result<u64, WardenError> {
    arg.parse(word).map(|v| v as u64)
}

/// The slot of the next limit, if there is room for one more (the error is
/// only made when there is not).
pub fn next_limit<T>(limits: &mut [T], count: usize) -> Result<&mut T, WardenError> {
    match limits.get_mut(count) {
        Some(slot) => Ok(slot),
        None => Err(errors::too_many_limits()),
    }
}

/// The `COST n` option (1 when absent).
pub const COST: Arg = option("COST", "cost", Kind::Int);

/// The limiter in a key: `Ok(None)` when the key is empty.
pub fn limiter_in(key: &mut Key, kind: LimiterKind) -> Result<Option<&mut Limiter>, WardenError> {
    match key.value::<Limiter>()? {
        Some(l) if l.kind() != kind => Err(errors::KIND_MISMATCH),
        found => Ok(found),
    }
}

/// Stores a limiter's new states with their absolute expiry and emits the
/// keyspace event `event`.
pub fn store(
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
pub fn write(
    ctx: Ctx,
    args: &Args,
    key: &mut Key,
    limiter: LimiterRef,
    store_as: Option<Option<i64>>,
) {
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
pub fn read<'a, R: Request<'a>>(
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

pub fn reply_decision(ctx: Ctx, d: &Decision) {
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
pub fn run_buckets(
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
