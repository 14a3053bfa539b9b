//! CMS.*X commands: count-min sketches on the `warden-cm` type, with
//! RedisBloom's `CMS.*` replies and error texts (after `ERR `).
//!
//! Replication: creation, increments and merges of a sketch without a
//! window do not depend on time, so they replicate as they were sent
//! (`CMS.INITBYPROBX` as the `CMS.INITBYDIMX` of the sizes it worked out).
//! A windowed sketch's write first moves it to the current slot; when that
//! moved it, the move is replicated as its effect, `CMS._ROTATEX key
//! slot_ms`, before the write, and the write itself after it. Applied from a
//! master or the AOF, a write never reads the clock: it counts in the slot
//! the sketch is at (a merge is made as of that slot). Reads, refused calls
//! and increments of 0 that moved nothing replicate nothing.

use std::ffi::CStr;

use crate::cms::config::{self, CMS_MAX_BYTES};
use crate::cms::core::sketch::{self, error, text, CountMin, Dims, KIND};
use crate::cms::data_type::{check_header, track_new};
use crate::cms::events;
use crate::cms::requests::{
    increment, IncrBy, Info, InitByDim, InitByProb, Load, Merge, Query, Rotate,
};
use crate::cms::stats::CMS_ROTATIONS;
use crate::cms::wire::{emit_rotate, parse_rotate, LoadSketch};
use crate::common::error::WardenError;
use crate::common::grammar::Request;
use crate::common::le_words::u32s_from_le;
use crate::common::sketch::RowHash;
use crate::glue::args::{internal_only, Args};
use crate::glue::commands::answer_keys_request;
use crate::glue::host::{self, emit, Ctx, Key, RStr, Sink};
use crate::glue::stats::count;

/// The size cap for this call: `cms-max-bytes` and the machine's memory;
/// writes applied from a master or the AOF only the largest value the
/// setting accepts (they rebuild what exists already).
fn max_bytes(ctx: Ctx) -> u64 {
    if host::is_replay(ctx) {
        CMS_MAX_BYTES.max as u64
    } else {
        config::cms_max_bytes().min(host::physical_memory())
    }
}

/// The sketch in `key`: RedisBloom's `CMS: key does not exist` when empty.
fn sketch_in(key: &mut Key) -> Result<&mut CountMin, WardenError> {
    key.value::<CountMin>()?
        .ok_or_else(|| error(text::KEY_MISSING))
}

/// Moves a windowed sketch to the current slot on a client's write (a
/// master's or the AOF's write counts in the slot the sketch is at): the
/// slot it moved to, if it moved.
fn rotate_for_write(ctx: Ctx, s: &mut CountMin) -> Result<Option<u64>, WardenError> {
    let Some(ring) = s.ring() else {
        return Ok(None);
    };
    if host::is_replay(ctx) {
        return Ok(None);
    }
    let slot = ring.slot_of(host::now_ms().max(0) as u64);
    let moved = s.rotate_to(slot)?;
    if moved {
        count(&CMS_ROTATIONS);
    }
    Ok(moved.then_some(slot))
}

/// Replicates a write: as it was sent, or after the slot move it made.
fn replicate_write(ctx: Ctx, args: &Args, name: &CStr, rotated: Option<u64>) {
    match rotated {
        Some(slot) => {
            emit_rotate(Sink::Replication(ctx), args.raw(1), slot);
            host::replicate_as(ctx, name, args.raw_from(1));
        }
        None => host::replicate_verbatim(ctx),
    }
}

/// Creates the sketch in `args[1]`; replicated as `CMS.INITBYDIMX` with
/// the sizes used.
fn create(
    ctx: Ctx,
    args: &Args,
    (dims, window): (Option<Dims>, Option<u64>),
    event: &CStr,
) -> Result<(), WardenError> {
    let dims = dims.ok_or(WardenError::Internal)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    match key.value::<CountMin>() {
        Ok(None) => {}
        Ok(Some(_)) | Err(WardenError::WrongType) => return Err(error(text::KEY_EXISTS)),
        Err(e) => return Err(e),
    }
    let s = CountMin::new(dims, window, max_bytes(ctx))?;
    replicate_create(ctx, name, dims, window);
    track_new(&s);
    key.set_value(Box::new(s));
    host::notify(ctx, event, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// Replicates `CMS.INITBYDIMX key width depth [WINDOW ms]`.
fn replicate_create(ctx: Ctx, key: RStr, dims: Dims, window: Option<u64>) {
    let sink = Sink::Replication(ctx);
    let (w, d) = (i64::from(dims.width), i64::from(dims.depth));
    match window {
        None => emit(sink, c"CMS.INITBYDIMX", (key, w, d)),
        Some(ms) => emit(sink, c"CMS.INITBYDIMX", (key, w, d, c"WINDOW", ms as i64)),
    }
}

/// `CMS.INITBYDIMX key width depth [WINDOW ms]`
pub fn initbydim(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let r = args.parse::<InitByDim>()?;
    create(ctx, args, (r.dims, r.window), events::INITBYDIM)
}

/// `CMS.INITBYPROBX key error probability [WINDOW ms]`
pub fn initbyprob(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let r = args.parse::<InitByProb>()?;
    create(ctx, args, (r.dims, r.window), events::INITBYPROB)
}

/// `CMS.INCRBYX key item increment [item increment ...]`: each item's count
/// after its increment, or `CMS: INCRBY overflow` for one that saturated.
pub fn incrby(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<IncrBy>()?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let s = sketch_in(&mut key)?;
    let rotated = rotate_for_write(ctx, s)?;
    let pairs = (args.len() - 2) / 2;
    host::reply_array(ctx, pairs);
    let mut added = false;
    for i in 0..pairs {
        // Checked as the call was read.
        let by = increment(args.bytes(3 + 2 * i)).unwrap_or(0);
        added |= by > 0;
        let estimate = s.incr(&RowHash::of(args.bytes(2 + 2 * i)), by);
        match estimate.overflow {
            true => host::reply_error(ctx, &error(text::INCRBY_OVERFLOW).to_string()),
            false => host::reply_integer(ctx, estimate.value as i64),
        }
    }
    if added {
        replicate_write(ctx, args, c"CMS.INCRBYX", rotated);
        host::notify(ctx, events::INCRBY, name);
    } else if let Some(slot) = rotated {
        emit_rotate(Sink::Replication(ctx), name, slot);
        host::notify(ctx, events::ROTATE, name);
    }
    Ok(())
}

/// `CMS.QUERYX key item [item ...]`: each item's count (over the window,
/// for a windowed sketch).
pub fn query(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Query>()?;
    let mut key = Key::readable(ctx, args.raw(1));
    let s = sketch_in(&mut key)?;
    let now = host::now_ms().max(0) as u64;
    host::reply_array(ctx, args.len() - 2);
    for i in 2..args.len() {
        let estimate = s.query(&RowHash::of(args.bytes(i)), now);
        host::reply_integer(ctx, estimate.value as i64);
    }
    Ok(())
}

/// `CMS.MERGEX dest numkeys src [src ...] [WEIGHTS weight ...]`: `dest`
/// (which must exist, with the sources' size and window) becomes the
/// weighted sum of the sources.
pub fn merge(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if answer_keys_request(ctx, args, <Merge as Request>::GRAMMAR, true) {
        return Ok(());
    }
    let request = args.parse::<Merge>()?;
    let dest_name = args.raw(1);
    let mut dest_key = Key::writable(ctx, dest_name);
    sketch_in(&mut dest_key)?;
    // Each source key opened once (values are borrowed from their keys).
    let sources: Vec<RStr> = (0..request.numkeys).map(|i| args.raw(3 + i)).collect();
    let mut opened: Vec<(&[u8], Key)> = Vec::new();
    for name in &sources {
        let bytes = name.bytes();
        if bytes == dest_name.bytes() || opened.iter().any(|(b, _)| *b == bytes) {
            continue;
        }
        let mut key = Key::readable(ctx, *name);
        sketch_in(&mut key)?;
        opened.push((bytes, key));
    }
    let dest: &CountMin = sketch_in(&mut dest_key)?;
    let mut views: Vec<(&[u8], &CountMin)> = Vec::with_capacity(opened.len());
    for (bytes, key) in opened.iter_mut() {
        views.push((*bytes, &*sketch_in(key)?));
    }
    let weighted: Vec<(&CountMin, i64)> = sources
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let view = views.iter().find(|(b, _)| *b == name.bytes());
            (view.map_or(dest, |(_, s)| *s), request.weight(i))
        })
        .collect();
    // Applied from a master or the AOF: as of the slot the destination is at.
    let now = match (host::is_replay(ctx), dest.ring()) {
        (true, Some(r)) => r.head_ms(),
        _ => host::now_ms().max(0) as u64,
    };
    let merged = sketch::merge(dest, &weighted, now)?;
    let slot = dest.ring().map(|r| r.slot_of(now));
    let head = dest.ring().map(|r| r.head_ms());
    drop((weighted, views));
    let dest = sketch_in(&mut dest_key)?;
    dest.apply(merged)?;
    let rotated = slot.filter(|s| Some(*s) != head);
    if rotated.is_some() {
        count(&CMS_ROTATIONS);
    }
    replicate_write(ctx, args, c"CMS.MERGEX", rotated);
    host::notify(ctx, events::MERGE, dest_name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// `CMS.INFOX key`: width, depth and count (RedisBloom's fields), and the
/// window in ms for a windowed sketch.
pub fn info(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Info>()?;
    let mut key = Key::readable(ctx, args.raw(1));
    let s = sketch_in(&mut key)?;
    let dims = s.dims();
    let now = host::now_ms().max(0) as u64;
    let window = s.ring().map(|r| r.window_ms());
    host::reply_map(ctx, 3 + usize::from(window.is_some()));
    for (label, value) in [
        ("width", u64::from(dims.width)),
        ("depth", u64::from(dims.depth)),
        ("count", s.count(now)),
    ]
    .into_iter()
    .chain(window.map(|w| ("window", w)))
    {
        host::reply_bulk(ctx, label.as_bytes());
        host::reply_integer(ctx, value as i64);
    }
    Ok(())
}

/// `CMS._ROTATEX key slot_ms`: a windowed sketch moved to a slot by a
/// master's write. Internal.
pub fn rotate(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "cms._rotatex")?;
    args.parse::<Rotate>()?;
    let slot = parse_rotate(args)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    sketch_in(&mut key)?.rotate_to(slot)?;
    host::replicate_verbatim(ctx);
    host::notify(ctx, events::ROTATE, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// `CMS._LOADX key HEADER …` and `CMS._LOADX key CELLS …`: the AOF form of
/// a sketch. Internal.
pub fn load(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "cms._loadx")?;
    args.parse::<Load>()?;
    let bad = || WardenError::BadFilterData;
    let chunk = LoadSketch::parse(args)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let existing = key.value::<CountMin>()?;
    match chunk {
        LoadSketch::Header {
            kind,
            width,
            depth,
            window_ms,
            head_ms,
        } => {
            if existing.is_some() || kind != KIND {
                return Err(bad());
            }
            let (dims, window) = check_header(kind, width, depth, window_ms).ok_or_else(bad)?;
            let mut s = CountMin::new(dims, window, max_bytes(ctx))?;
            if window.is_some() {
                s.rotate_to(head_ms)?;
            } else if head_ms != 0 {
                return Err(bad());
            }
            track_new(&s);
            key.set_value(Box::new(s));
        }
        LoadSketch::Cells {
            sub,
            count,
            offset,
            bytes,
        } => {
            let s = existing.ok_or_else(|| error(text::KEY_MISSING))?;
            let values = u32s_from_le(bytes).ok_or_else(bad)?;
            s.load_chunk(sub, count, offset, &values)?;
        }
    }
    chunk.emit(Sink::Replication(ctx), name);
    host::notify(ctx, events::LOAD, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}
