//! RL.* commands: rate limiters on the `warden-rl` type.
//!
//! Each call reads the server clock once, decides in the core, and — only when
//! it let events through — stores the new state with the absolute time at
//! which the limiter is full again as the key's expiry, and replicates that
//! state: in the call itself (`arg@state` in its first parameter, see
//! `effect`) or as `RL._SET`. Denied calls and `COST 0` write and replicate
//! nothing.

use std::ffi::{c_long, CStr};

use crate::common::error::WardenError;
use crate::common::parse::{cell_integer, is_keyword, IntArg};
use crate::glue::args::{internal_only, Args};
use crate::glue::effect::{self, MARK};
use crate::glue::host::{self, api, Ctx, Key, RString, Sink};
use crate::glue::stats;
use crate::rate::core::bucket::{self, BucketLimit};
use crate::rate::core::rate::{self, BucketState, Decided, Decision, GcraReply, Rate, MAX_LIMITS};
use crate::rate::core::window::{self, WindowLimit, WindowState};
use crate::rate::limiter::{Limiter, LimiterKind, LimiterRef};
use crate::rate::wire::{SetLimiter, FEW_LIMITS_TEXT, ONE_LIMIT_TEXT, STATE_TEXT};

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

/// Whether an argument after a limit starts the options: a word that
/// begins with a letter (`COST`, `MAXWAIT`, or an unknown one, a syntax
/// error) and is not the rate `inf`.
fn starts_options(word: &[u8]) -> bool {
    word.first().is_some_and(u8::is_ascii_alphabetic) && !word.eq_ignore_ascii_case(b"inf")
}

/// Reads the limits `first second [first second ...]` from `args[3..]`
/// (the first `first`, `args[2]`, is parsed by the caller as `head`) until
/// an argument that starts the options; returns how many were read and the
/// index of the options.
fn limits<L: Copy>(
    args: &Args,
    head: L,
    out: &mut [L; MAX_LIMITS],
    parse: impl Fn(Option<L>, &[u8], &[u8]) -> Result<L, WardenError>,
) -> Result<(usize, usize), WardenError> {
    out[0] = parse(Some(head), &[], args.bytes(3))?;
    let (mut n, mut i) = (1, 4);
    while i < args.len() && !starts_options(args.bytes(i)) {
        if i + 1 >= args.len() {
            return Err(WardenError::Syntax); // a first without its second
        }
        let slot = out.get_mut(n).ok_or(WardenError::TooManyLimits)?;
        *slot = parse(None, args.bytes(i), args.bytes(i + 1))?;
        (n, i) = (n + 1, i + 2);
    }
    Ok((n, i))
}

/// Stores a limiter's new states with their absolute expiry and emits the
/// keyspace event `event`.
fn store(
    ctx: *mut Ctx,
    (key, name): (&mut Key, *mut RString),
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
/// itself, as `arg@state` in `args[2]` (`effect`), or else as `RL._SET`.
fn replicate_effect(ctx: *mut Ctx, args: &Args, limiter: LimiterRef, expires: Option<i64>) {
    // The text in a buffer sized for its count of limits.
    let in_place = match limiter.count() {
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
    };
    if !in_place {
        SetLimiter::emit(limiter, expires, Sink::Replication(ctx), args.raw(1));
    }
}

/// Replicates and stores the states a call decided to write, if any.
fn write(
    ctx: *mut Ctx,
    args: &Args,
    key: &mut Key,
    limiter: LimiterRef,
    store_as: Option<Option<i64>>,
) {
    let Some(expires) = store_as else { return };
    let event = match limiter.kind() {
        LimiterKind::Token => c"rl.token",
        LimiterKind::Leaky => c"rl.leaky",
        LimiterKind::Window => c"rl.window",
        LimiterKind::Gcra => c"rl.gcra",
    };
    replicate_effect(ctx, args, limiter, expires);
    store(ctx, (key, args.raw(1)), limiter, expires, event);
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
    store(ctx, (&mut key, name), limiter.view(), expires, c"rl.set");
    // Verbatim is safe here: this argv already carries the absolute state.
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

/// Runs `decide` on the bucket limits of key `args[1]` with a buffer for
/// `n` new states (one inline, or room for every limit), then writes what
/// it decided and replies.
fn run_buckets(
    ctx: *mut Ctx,
    args: &Args,
    kind: LimiterKind,
    n: usize,
    decide: impl FnOnce(&[BucketState], i64, &mut [BucketState]) -> Result<Decided, WardenError>,
) -> Result<(), WardenError> {
    let now = host::now_ms();
    let mut key = Key::writable(ctx, args.raw(1));
    let stored = match limiter_in(&mut key, kind)? {
        Some(Limiter::Bucket(_, l)) => l.as_slice(),
        _ => &[],
    };
    let mut one = [BucketState::default()];
    let mut all;
    let out: &mut [BucketState] = if n == 1 {
        &mut one
    } else {
        all = [BucketState::default(); MAX_LIMITS];
        &mut all[..]
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

/// A `rate burst` pair of RL.TOKEN (`rate` already parsed for the first).
fn token_limit(
    rate: Option<BucketLimit>,
    r: &[u8],
    burst: &[u8],
) -> Result<BucketLimit, WardenError> {
    let rate = match rate {
        Some(first) => first.rate,
        None => Rate::parse(r)?,
    };
    let size = count_arg(burst, rate::BURST)?;
    Ok(BucketLimit { rate, size })
}

/// `RL.TOKEN key rate burst [rate burst ...] [COST n] [MAXWAIT ms]`
pub fn token(ctx: *mut Ctx, args: &Args) -> Result<(), WardenError> {
    args.arity("rl.token", args.len() >= 4)?;
    let rate = match Rate::parse(args.bytes(2)) {
        Ok(rate) => rate,
        Err(e) => return apply_replayed(ctx, args, e),
    };
    let mut pairs = [BucketLimit::NONE; MAX_LIMITS];
    let head = BucketLimit { rate, size: 0 };
    let (n, at) = limits(args, head, &mut pairs, token_limit)?;
    let [cost, max_wait] = options(
        args,
        at,
        [("COST", rate::COST), ("MAXWAIT", rate::MAX_WAIT_MS)],
    )?;
    let (cost, max_wait) = (cost.unwrap_or(1), max_wait.unwrap_or(0));
    run_buckets(ctx, args, LimiterKind::Token, n, |stored, now, out| {
        bucket::token_buckets(stored, &pairs[..n], cost, max_wait, now, out)
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
    run_buckets(ctx, args, LimiterKind::Leaky, 1, |stored, now, out| {
        let o = bucket::leaky_bucket(stored.first(), rate, capacity, cost.unwrap_or(1), now)?;
        if let (Some((s, _)), Some(slot)) = (o.store, out.first_mut()) {
            *slot = s;
        }
        Ok(Decided {
            reply: o.reply,
            store: o.store.map(|(_, expires)| expires),
        })
    })
}

/// A `limit window` pair of RL.WINDOW (`limit` already parsed for the first).
fn window_limit(
    limit: Option<WindowLimit>,
    l: &[u8],
    window: &[u8],
) -> Result<WindowLimit, WardenError> {
    let limit = match limit {
        Some(first) => first.limit,
        None => count_arg(l, rate::WINDOW_LIMIT)?,
    };
    let window_ms = count_arg(window, rate::WINDOW_MS)?;
    Ok(WindowLimit { limit, window_ms })
}

/// `RL.WINDOW key limit window_ms [limit window_ms ...] [COST n]`
pub fn window(ctx: *mut Ctx, args: &Args) -> Result<(), WardenError> {
    args.arity("rl.window", args.len() >= 4)?;
    let limit = match count_arg(args.bytes(2), rate::WINDOW_LIMIT) {
        Ok(limit) => limit,
        Err(e) => return apply_replayed(ctx, args, e),
    };
    let mut pairs = [WindowLimit::NONE; MAX_LIMITS];
    let head = WindowLimit {
        limit,
        window_ms: 0,
    };
    let (n, at) = limits(args, head, &mut pairs, window_limit)?;
    let [cost] = options(args, at, [("COST", rate::COST)])?;
    let now = host::now_ms();
    let mut key = Key::writable(ctx, args.raw(1));
    let stored: &[WindowState] = match limiter_in(&mut key, LimiterKind::Window)? {
        Some(Limiter::Window(l)) => l.as_slice(),
        _ => &[],
    };
    let mut out = [WindowState::NONE; MAX_LIMITS];
    let d = window::sliding_windows(stored, &pairs[..n], cost.unwrap_or(1), now, &mut out)?;
    write(ctx, args, &mut key, LimiterRef::Window(&out[..n]), d.store);
    reply_decision(ctx, &d.reply);
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
    let mut key = Key::writable(ctx, args.raw(1));
    let state = match limiter_in(&mut key, LimiterKind::Gcra)? {
        Some(Limiter::Bucket(_, l)) => l.as_slice().first().copied(),
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

/// `RL._SET key kind:n:limits…:pxat_ms` (see `wire`): the replication and
/// AOF form of a limiter's state in one argument (`pxat_ms` -1: no
/// expiry). Internal.
pub fn set_state(ctx: *mut Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "rl._set")?;
    args.arity("rl._set", args.len() == 3)?;
    let (limiter, expires) = SetLimiter::parse(args.bytes(2))?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    key.value::<Limiter>()?;
    SetLimiter::emit(limiter.view(), expires, Sink::Replication(ctx), name);
    store(ctx, (&mut key, name), limiter.view(), expires, c"rl.set");
    host::reply_status(ctx, c"OK");
    Ok(())
}
