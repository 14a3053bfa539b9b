//! RL.* commands: rate limiters on the `warden-rl` type.
//!
//! Each call reads the server clock once, decides in the core, and — only when
//! it let events through — stores the new state with the absolute time at
//! which the limiter is full again as the key's expiry, and replicates that
//! state: in the call itself (`arg@state` in its first parameter, see
//! `effect`) or as `RL._SET`. Denied calls and `COST 0` write and replicate
//! nothing.

use std::ffi::{c_long, CStr};

use crate::args::{internal_only, Args};
use crate::core::error::WardenError;
use crate::core::parse::{cell_integer, is_keyword, IntArg};
use crate::core::rate::{self, BucketState, Decision, GcraReply, Outcome, Rate, WindowState};
use crate::effect;
use crate::host::{self, api, Ctx, Key, RString, Sink};
use crate::rate::limiter::{Limiter, LimiterKind};
use crate::rate::wire::SetLimiter;
use crate::stats;

/// The limiter in a key: `Ok(None)` when the key is empty.
fn limiter_in(key: &mut Key, kind: LimiterKind) -> Result<Option<&mut Limiter>, WardenError> {
    match key.value::<Limiter>()? {
        Some(l) if l.kind() != kind => Err(WardenError::LimiterKindMismatch),
        found => Ok(found),
    }
}

/// An integer argument in its range (never negative, so a `u64`).
fn count_arg(bytes: &[u8], arg: IntArg) -> Result<u64, WardenError> {
    arg.parse(bytes).map(|v| v as u64)
}

/// Parses `[NAME value]...` options from `args[from..]`; each name at most once.
fn options<const N: usize>(
    args: &Args,
    from: usize,
    names: [(&str, IntArg); N],
) -> Result<[Option<u64>; N], WardenError> {
    let mut values = [None; N];
    let mut i = from;
    while i < args.len() {
        let word = args.bytes(i);
        let at = names
            .iter()
            .position(|(n, _)| is_keyword(word, n))
            .ok_or(WardenError::Syntax)?;
        if values[at].is_some() || i + 1 >= args.len() {
            return Err(WardenError::Syntax);
        }
        values[at] = Some(count_arg(args.bytes(i + 1), names[at].1)?);
        i += 2;
    }
    Ok(values)
}

/// Stores a new limiter state with its absolute expiry and emits the
/// keyspace event `event`.
fn store(
    ctx: *mut Ctx,
    (key, name): (&mut Key, *mut RString),
    limiter: Limiter,
    expires: Option<i64>,
    event: &CStr,
) {
    match key.value::<Limiter>() {
        Ok(Some(existing)) => *existing = limiter,
        _ => key.set_value(Box::new(limiter)),
    }
    key.set_abs_expire_or_persist(expires);
    host::notify(ctx, event, name);
}

/// Replicates the new state of the limiter in `args[1]`: in the call
/// itself, as `arg@state` in `args[2]` (`effect`), or else as `RL._SET`.
fn replicate_effect(ctx: *mut Ctx, args: &Args, limiter: &Limiter, expires: Option<i64>) {
    let text = SetLimiter::state_text(limiter, expires);
    // SAFETY: `args[2]` (the rate, limit or burst) was parsed into a number
    // before this call; its bytes are not read again by the command.
    if !unsafe { effect::replicate_in_place(ctx, args.raw(2), text.as_bytes()) } {
        SetLimiter::emit(limiter, expires, Sink::Replication(ctx), args.raw(1));
    }
}

/// An RL command whose first parameter (`args[2]`) did not parse: from a
/// master or the AOF it may carry its effect (`arg@state`), which is applied
/// like `RL._SET` and replicated as it came; otherwise it is the error `e`.
fn apply_replayed(ctx: *mut Ctx, args: &Args, e: WardenError) -> Result<(), WardenError> {
    let Some(text) = effect::replayed(ctx, args.bytes(2)) else {
        return Err(e);
    };
    let (limiter, expires) = SetLimiter::parse(text)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    key.value::<Limiter>()?;
    store(ctx, (&mut key, name), limiter, expires, c"rl.set");
    host::replicate_verbatim(ctx);
    host::reply_status(ctx, c"OK");
    Ok(())
}

fn reply_decision(ctx: *mut Ctx, d: &Decision) {
    stats::count(if d.allowed {
        &stats::RL_ALLOWED
    } else {
        &stats::RL_DENIED
    });
    // SAFETY: `ctx` is the live context of a call that owes a reply; the entries follow.
    unsafe { api!(RedisModule_ReplyWithArray)(ctx, 4 as c_long) };
    for v in [i64::from(d.allowed), d.remaining, d.wait_ms, d.reset_ms] {
        host::reply_integer(ctx, v);
    }
}

/// Runs a bucket algorithm on key `args[1]` and replies with its decision.
fn run_bucket(
    ctx: *mut Ctx,
    args: &Args,
    kind: LimiterKind,
    decide: impl FnOnce(
        Option<&BucketState>,
        i64,
    ) -> Result<Outcome<BucketState, Decision>, WardenError>,
) -> Result<(), WardenError> {
    let now = host::now_ms();
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let state = match limiter_in(&mut key, kind)? {
        Some(Limiter::Bucket(_, s)) => Some(*s),
        _ => None,
    };
    let out = decide(state.as_ref(), now)?;
    if let Some((s, expires)) = out.store {
        let event = match kind {
            LimiterKind::Token => c"rl.token",
            LimiterKind::Leaky => c"rl.leaky",
            LimiterKind::Window => c"rl.window",
            LimiterKind::Gcra => c"rl.gcra",
        };
        let limiter = Limiter::Bucket(kind, s);
        replicate_effect(ctx, args, &limiter, expires);
        store(ctx, (&mut key, name), limiter, expires, event);
    }
    reply_decision(ctx, &out.reply);
    Ok(())
}

/// `RL.TOKEN key rate burst [COST n] [MAXWAIT ms]`
pub fn token(ctx: *mut Ctx, args: &Args) -> Result<(), WardenError> {
    args.arity("rl.token", args.len() >= 4)?;
    let rate = match Rate::parse(args.bytes(2)) {
        Ok(rate) => rate,
        Err(e) => return apply_replayed(ctx, args, e),
    };
    let burst = count_arg(args.bytes(3), rate::BURST)?;
    let [cost, max_wait] = options(
        args,
        4,
        [("COST", rate::COST), ("MAXWAIT", rate::MAX_WAIT_MS)],
    )?;
    run_bucket(ctx, args, LimiterKind::Token, |state, now| {
        rate::token_bucket(
            state,
            rate,
            burst,
            cost.unwrap_or(1),
            max_wait.unwrap_or(0),
            now,
        )
    })
}

/// `RL.LEAKY key rate capacity [COST n]`
pub fn leaky(ctx: *mut Ctx, args: &Args) -> Result<(), WardenError> {
    args.arity("rl.leaky", args.len() >= 4)?;
    let rate = match Rate::parse(args.bytes(2)) {
        Ok(rate) => rate,
        Err(e) => return apply_replayed(ctx, args, e),
    };
    let capacity = count_arg(args.bytes(3), rate::LEAKY_CAPACITY)?;
    let [cost] = options(args, 4, [("COST", rate::COST)])?;
    run_bucket(ctx, args, LimiterKind::Leaky, |state, now| {
        rate::leaky_bucket(state, rate, capacity, cost.unwrap_or(1), now)
    })
}

/// `RL.WINDOW key limit window_ms [COST n]`
pub fn window(ctx: *mut Ctx, args: &Args) -> Result<(), WardenError> {
    args.arity("rl.window", args.len() >= 4)?;
    let limit = match count_arg(args.bytes(2), rate::WINDOW_LIMIT) {
        Ok(limit) => limit,
        Err(e) => return apply_replayed(ctx, args, e),
    };
    let window_ms = count_arg(args.bytes(3), rate::WINDOW_MS)?;
    let [cost] = options(args, 4, [("COST", rate::COST)])?;
    let now = host::now_ms();
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let state: Option<WindowState> = match limiter_in(&mut key, LimiterKind::Window)? {
        Some(Limiter::Window(w)) => Some(*w),
        _ => None,
    };
    let out = rate::sliding_window(state.as_ref(), limit, window_ms, cost.unwrap_or(1), now)?;
    if let Some((s, expires)) = out.store {
        let limiter = Limiter::Window(s);
        replicate_effect(ctx, args, &limiter, expires);
        store(ctx, (&mut key, name), limiter, expires, c"rl.window");
    }
    reply_decision(ctx, &out.reply);
    Ok(())
}

/// An `RL.GCRA` integer in any form `CL.THROTTLE` takes (`+60`, `060`).
fn gcra_arg(bytes: &[u8], arg: IntArg) -> Result<u64, WardenError> {
    count_arg(cell_integer(bytes), arg)
}

/// `RL.GCRA key max_burst count period_s [quantity | QUANTITY n]`, replying
/// like redis-cell's `CL.THROTTLE` and reading its arguments the same way.
pub fn gcra(ctx: *mut Ctx, args: &Args) -> Result<(), WardenError> {
    args.arity("rl.gcra", args.len() >= 5)?;
    let max_burst = match gcra_arg(args.bytes(2), rate::GCRA_MAX_BURST) {
        Ok(max_burst) => max_burst,
        Err(e) => return apply_replayed(ctx, args, e),
    };
    let count = gcra_arg(args.bytes(3), rate::GCRA_COUNT)?;
    let period = gcra_arg(args.bytes(4), rate::GCRA_PERIOD_S)?;
    let quantity = match args.len() {
        5 => None,
        // CL.THROTTLE's positional quantity.
        6 if !is_keyword(args.bytes(5), "QUANTITY") => {
            Some(gcra_arg(args.bytes(5), rate::GCRA_QUANTITY)?)
        }
        7 if is_keyword(args.bytes(5), "QUANTITY") => {
            Some(gcra_arg(args.bytes(6), rate::GCRA_QUANTITY)?)
        }
        _ => return Err(WardenError::Syntax),
    };
    let now = host::now_ms();
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let state = match limiter_in(&mut key, LimiterKind::Gcra)? {
        Some(Limiter::Bucket(_, s)) => Some(*s),
        _ => None,
    };
    let out = rate::gcra(
        state.as_ref(),
        max_burst,
        count,
        period,
        quantity.unwrap_or(1),
        now,
    )?;
    if let Some((s, expires)) = out.store {
        let limiter = Limiter::Bucket(LimiterKind::Gcra, s);
        replicate_effect(ctx, args, &limiter, expires);
        store(ctx, (&mut key, name), limiter, expires, c"rl.gcra");
    }
    let r: GcraReply = out.reply;
    stats::count(if r.limited == 0 {
        &stats::RL_ALLOWED
    } else {
        &stats::RL_DENIED
    });
    // SAFETY: `ctx` is the live context of a call that owes a reply; the entries follow.
    unsafe { api!(RedisModule_ReplyWithArray)(ctx, 5 as c_long) };
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

/// `RL._SET key kind:f1:f2:f3:f4:pxat_ms`: the replication and AOF form of a
/// limiter's state in one argument (`pxat_ms` -1: no expiry). Internal.
pub fn set_state(ctx: *mut Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "rl._set")?;
    args.arity("rl._set", args.len() == 3)?;
    let (limiter, expires) = SetLimiter::parse(args.bytes(2))?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    key.value::<Limiter>()?;
    SetLimiter::emit(&limiter, expires, Sink::Replication(ctx), name);
    store(ctx, (&mut key, name), limiter, expires, c"rl.set");
    host::reply_status(ctx, c"OK");
    Ok(())
}
