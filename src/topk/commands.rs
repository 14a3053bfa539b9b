//! TOPK.*X commands: top-k heavy hitters on the `warden-tk` type, with
//! RedisBloom's `TOPK.*` replies and error texts (after `ERR `).
//!
//! Replication: an add decays buckets with draws from a generator kept in
//! the value, so the same adds on the same value give the same value; they
//! replicate as they were sent, and a creation as `TOPK.RESERVEX` with every
//! parameter (a replica with other defaults makes the same top-k, seeded
//! from the same key name). A windowed top-k's write first moves it to the
//! current slot; when that moved it, the move is replicated as its effect,
//! `TOPK._ROTATEX key slot_ms`, before the write, and the write itself after
//! it. Applied from a master or the AOF, a write never reads the clock: it
//! counts in the slot the top-k is at. Reads and refused calls replicate
//! nothing.

use std::ffi::CStr;

use crate::common::error::WardenError;
use crate::glue::args::{internal_only, Args};
use crate::glue::host::{self, emit, Ctx, Key, RStr, Sink};
use crate::glue::stats::count;
use crate::topk::config::{self, TOPK_MAX_BYTES};
use crate::topk::core::heavy_keeper::{error, text, Params, TopK, KIND};
use crate::topk::data_type::{check_header, track_new};
use crate::topk::events;
use crate::topk::requests::{
    increment, Add, Count, IncrBy, Info, List, Load, Query, Reserve, Rotate,
};
use crate::topk::stats::{track_growth, TOPK_ROTATIONS};
use crate::topk::wire::{buckets_from_le, emit_rotate, parse_rotate, LoadTopK};

/// The size cap for this call: `topk-max-bytes` and the machine's memory;
/// writes applied from a master or the AOF only the largest value the
/// setting accepts (they rebuild what exists already).
fn max_bytes(ctx: Ctx) -> u64 {
    if host::is_replay(ctx) {
        TOPK_MAX_BYTES.max as u64
    } else {
        config::topk_max_bytes().min(host::physical_memory())
    }
}

/// The top-k in `key`: RedisBloom's `TopK: key does not exist` when empty.
fn topk_in(key: &mut Key) -> Result<&mut TopK, WardenError> {
    key.value::<TopK>()?.ok_or_else(|| error(text::KEY_MISSING))
}

/// The generator seed of a top-k created at `key`: its name hashed, so a
/// replica creating it gets the same.
fn seed_of(key: RStr) -> u64 {
    xxhash_rust::xxh3::xxh3_64(key.bytes())
}

/// The server's clock, never before 0.
fn now() -> u64 {
    host::now_ms().max(0) as u64
}

/// `TOPK.RESERVEX key k [width depth decay] [WINDOW ms]`: replicated with
/// every parameter.
pub fn reserve(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let request = args.parse::<Reserve>()?;
    let params = request.params();
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    match key.value::<TopK>() {
        Ok(None) => {}
        Ok(Some(_)) | Err(WardenError::WrongType) => return Err(error(text::KEY_EXISTS)),
        Err(e) => return Err(e),
    }
    let t = TopK::new(params, request.window, seed_of(name), max_bytes(ctx))?;
    replicate_reserve(ctx, name, params, request.window);
    track_new(&t);
    key.set_value(Box::new(t));
    host::notify(ctx, events::RESERVE, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// Replicates `TOPK.RESERVEX key k width depth decay [WINDOW ms]`.
fn replicate_reserve(ctx: Ctx, key: RStr, p: Params, window: Option<u64>) {
    let sink = Sink::Replication(ctx);
    let decay = p.decay.to_string();
    let (k, w, d) = (i64::from(p.k), i64::from(p.width), i64::from(p.depth));
    let decay = decay.as_bytes();
    match window {
        None => emit(sink, c"TOPK.RESERVEX", (key, k, w, d, decay)),
        Some(ms) => emit(
            sink,
            c"TOPK.RESERVEX",
            (key, k, w, d, decay, c"WINDOW", ms as i64),
        ),
    }
}

/// Adds the items of `args[2..]` (with their increments when `pairs`) to
/// the top-k in `args[1]`: per item, the item it pushed out of the list, or
/// nil.
fn add_items(
    ctx: Ctx,
    args: &Args,
    pairs: bool,
    (name, event): (&CStr, &CStr),
) -> Result<(), WardenError> {
    let key_name = args.raw(1);
    let mut key = Key::writable(ctx, key_name);
    let t = topk_in(&mut key)?;
    let before = t.size();
    let mut rotated = None;
    if let (Some(ring), false) = (t.ring(), host::is_replay(ctx)) {
        // A client's write counts in the current slot; a master's or the
        // AOF's in the slot the top-k is at (the move came as its own effect).
        let slot = ring.slot_of(now());
        if t.rotate_to(slot)? {
            count(&TOPK_ROTATIONS);
            rotated = Some(slot);
        }
    }
    let step = if pairs { 2 } else { 1 };
    let n = (args.len() - 2) / step;
    host::reply_array(ctx, n);
    for i in 0..n {
        let at = 2 + i * step;
        // Checked as the call was read.
        let by = if pairs {
            increment(args.bytes(at + 1)).unwrap_or(0)
        } else {
            1
        };
        match t.add(args.bytes(at), by) {
            Some(out) => host::reply_bulk(ctx, &out),
            None => host::reply_null(ctx),
        }
    }
    track_growth(before, t.size());
    match rotated {
        Some(slot) => {
            emit_rotate(Sink::Replication(ctx), key_name, slot);
            host::replicate_as(ctx, name, args.raw_from(1));
        }
        None => host::replicate_verbatim(ctx),
    }
    host::notify(ctx, event, key_name);
    Ok(())
}

/// `TOPK.ADDX key item [item ...]`
pub fn add(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Add>()?;
    add_items(ctx, args, false, (c"TOPK.ADDX", events::ADD))
}

/// `TOPK.INCRBYX key item increment [item increment ...]`
pub fn incrby(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<IncrBy>()?;
    add_items(ctx, args, true, (c"TOPK.INCRBYX", events::INCRBY))
}

/// `TOPK.QUERYX key item [item ...]`: 1 for each item in the top k, else 0.
pub fn query(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Query>()?;
    let mut key = Key::readable(ctx, args.raw(1));
    let t = topk_in(&mut key)?;
    let now = now();
    host::reply_array(ctx, args.len() - 2);
    for i in 2..args.len() {
        host::reply_integer(ctx, i64::from(t.query(args.bytes(i), now)));
    }
    Ok(())
}

/// `TOPK.COUNTX key item [item ...]`: each item's count (RedisBloom's
/// estimate, which may be below the true count).
pub fn count_items(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Count>()?;
    let mut key = Key::readable(ctx, args.raw(1));
    let t = topk_in(&mut key)?;
    let now = now();
    host::reply_array(ctx, args.len() - 2);
    for i in 2..args.len() {
        host::reply_integer(ctx, t.count(args.bytes(i), now) as i64);
    }
    Ok(())
}

/// `TOPK.LISTX key [WITHCOUNT]`: the items, largest count first (each
/// followed by its count with `WITHCOUNT`).
pub fn list(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let with_count = args.parse::<List>()?.with_count;
    let mut key = Key::readable(ctx, args.raw(1));
    let t = topk_in(&mut key)?;
    let items = t.list(now());
    host::reply_array(ctx, items.len() * if with_count { 2 } else { 1 });
    for (item, n) in items {
        host::reply_bulk(ctx, item);
        if with_count {
            host::reply_integer(ctx, n as i64);
        }
    }
    Ok(())
}

/// `TOPK.INFOX key`: k, width, depth and decay (RedisBloom's fields), and
/// the window in ms for a windowed top-k.
pub fn info(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Info>()?;
    let mut key = Key::readable(ctx, args.raw(1));
    let t = topk_in(&mut key)?;
    let p = t.params();
    let window = t.ring().map(|r| r.window_ms());
    host::reply_map(ctx, 4 + usize::from(window.is_some()));
    for (label, value) in [("k", p.k), ("width", p.width), ("depth", p.depth)] {
        host::reply_bulk(ctx, label.as_bytes());
        host::reply_integer(ctx, i64::from(value));
    }
    host::reply_bulk(ctx, b"decay");
    host::reply_decimal(ctx, p.decay);
    if let Some(w) = window {
        host::reply_bulk(ctx, b"window");
        host::reply_integer(ctx, w as i64);
    }
    Ok(())
}

/// `TOPK._ROTATEX key slot_ms`: a windowed top-k moved to a slot by a
/// master's write. Internal.
pub fn rotate(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "topk._rotatex")?;
    args.parse::<Rotate>()?;
    let slot = parse_rotate(args)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let t = topk_in(&mut key)?;
    let before = t.size();
    t.rotate_to(slot)?;
    track_growth(before, t.size());
    host::replicate_verbatim(ctx);
    host::notify(ctx, events::ROTATE, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// `TOPK._LOADX key HEADER | BUCKETS | SLOT …`: the AOF form of a top-k. Internal.
pub fn load(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "topk._loadx")?;
    args.parse::<Load>()?;
    let bad = || WardenError::BadFilterData;
    let chunk = LoadTopK::parse(args)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let existing = key.value::<TopK>()?;
    match chunk {
        LoadTopK::Header {
            kind,
            k,
            width,
            depth,
            decay,
            window_ms,
            head_ms,
            rng,
        } => {
            if existing.is_some() || kind != KIND {
                return Err(bad());
            }
            let header = check_header(kind, (k, width, depth, decay), window_ms);
            let (params, window) = header.ok_or_else(bad)?;
            let mut t = TopK::new(params, window, rng, max_bytes(ctx))?;
            t.set_rng(rng)?;
            if window.is_some() {
                t.rotate_to(head_ms)?;
            } else if head_ms != 0 {
                return Err(bad());
            }
            track_new(&t);
            key.set_value(Box::new(t));
        }
        LoadTopK::Buckets { sub, offset, bytes } => {
            let t = existing.ok_or_else(|| error(text::KEY_MISSING))?;
            let buckets = buckets_from_le(bytes).ok_or_else(bad)?;
            t.load_buckets(sub, offset, &buckets)?;
        }
        LoadTopK::Slot { index, count, item } => {
            let t = existing.ok_or_else(|| error(text::KEY_MISSING))?;
            let count = u32::try_from(count).map_err(|_| bad())?;
            let before = t.size();
            t.load_slot(index, count, item)?;
            track_growth(before, t.size());
        }
    }
    chunk.emit(Sink::Replication(ctx), name);
    host::notify(ctx, events::LOAD, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}
