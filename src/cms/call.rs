//! What the CMS commands share: the size cap, reading a sketch from a key,
//! moving a windowed one to the current slot, creating one, and replicating
//! writes.

use crate::cms::config::{self, CMS_MAX_BYTES};
use crate::cms::core::sketch::{error, text, CountMin, Dims};
use crate::cms::data_type::track_new;
use crate::cms::stats::CMS_ROTATIONS;
use crate::cms::wire::emit_rotate;
use crate::common::error::WardenError;
use crate::common::parse::parse_i64;
use crate::glue::args::Args;
use crate::glue::host::{self, emit, Ctx, Key, RStr, Sink};
use crate::glue::stats::count;
use std::ffi::CStr;

/// An increment: a non-negative integer (RedisBloom's texts otherwise).
pub fn increment(word: &[u8]) -> Result<u64, WardenError> {
    match parse_i64(word) {
        Some(v) if v >= 0 => Ok(v as u64),
        Some(_) => Err(error(text::NEGATIVE)),
        None => Err(error(text::NOT_A_NUMBER)),
    }
}

/// The size cap for this call: `cms-max-bytes` and the machine's memory;
/// writes applied from a master or the AOF only the largest value the
/// setting accepts (they rebuild what exists already).
pub fn max_bytes(ctx: Ctx) -> u64 {
    if host::is_replay(ctx) {
        CMS_MAX_BYTES.max as u64
    } else {
        config::cms_max_bytes().min(host::physical_memory())
    }
}

/// The sketch in `key`: RedisBloom's `CMS: key does not exist` when empty.
pub fn sketch_in(key: &mut Key) -> Result<&mut CountMin, WardenError> {
    key.value::<CountMin>()?
        .ok_or_else(|| error(text::KEY_MISSING))
}

/// Moves a windowed sketch to the current slot on a client's write (a
/// master's or the AOF's write counts in the slot the sketch is at): the
/// slot it moved to, if it moved.
pub fn rotate_for_write(ctx: Ctx, s: &mut CountMin) -> Result<Option<u64>, WardenError> {
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
pub fn replicate_write(ctx: Ctx, args: &Args, name: &CStr, rotated: Option<u64>) {
    match rotated {
        Some(slot) => {
            emit_rotate(Sink::Replication(ctx), args.raw(1), slot);
            host::replicate_as(ctx, name, args.raw_from(1));
        }
        // No slot move: a replica's sketch is at the same slot (every move
        // is replicated) and a replayed write never reads the clock, so the
        // call as sent counts the same there.
        None => host::replicate_verbatim(ctx),
    }
}

/// Creates the sketch in `args[1]`; replicated as `CMS.INITBYDIMX` with
/// the sizes used.
pub fn create(
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
