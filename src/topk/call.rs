//! What the TOPK commands share: the size cap, reading a top-k from a key,
//! the clock and seed, the request of the commands that take items, and
//! counting items.

use crate::common::error::WardenError;
use crate::common::grammar::{items, key, Arg, Grammar, Request};
use crate::common::parse::parse_i64;
use crate::glue::args::Args;
use crate::glue::host::{self, Ctx, Key, RStr, Sink};
use crate::glue::stats::count;
use crate::topk::config::{self, TOPK_MAX_BYTES};
use crate::topk::core::heavy_keeper::{error, text, TopK, MAX_INCREMENT};
use crate::topk::stats::{track_growth, TOPK_ROTATIONS};
use crate::topk::wire::emit_rotate;
use std::ffi::CStr;

/// An increment: 0 to 100,000 (RedisBloom's text otherwise).
pub fn increment(word: &[u8]) -> Result<u32, WardenError> {
    match parse_i64(word) {
        Some(v) if (0..=MAX_INCREMENT as i64).contains(&v) => Ok(v as u32),
        _ => Err(error(text::BAD_INCREMENT)),
    }
}

/// A command on one top-k whose items are the rest of the call (read by
/// position): `N` picks it.
pub struct Items<const N: u8>;

impl<'a, const N: u8> Request<'a> for Items<N> {
    const NAME: &'static str = match N {
        0 => "topk.addx",
        1 => "topk.queryx",
        _ => "topk.countx",
    };
    const GRAMMAR: Grammar = Grammar::new(&[key(), items("item")]);

    fn empty() -> Self {
        Items
    }

    fn reads(_: &'static Arg) -> bool {
        false
    }

    fn take(&mut self, _: &'static Arg, _: &'a [u8]) -> Result<(), WardenError> {
        Ok(())
    }
}

/// The size cap for this call: `topk-max-bytes` and the machine's memory;
/// writes applied from a master or the AOF only the largest value the
/// setting accepts (they rebuild what exists already).
pub fn max_bytes(ctx: Ctx) -> u64 {
    if host::is_replay(ctx) {
        TOPK_MAX_BYTES.max as u64
    } else {
        config::topk_max_bytes().min(host::physical_memory())
    }
}

/// The top-k in `key`: RedisBloom's `TopK: key does not exist` when empty.
pub fn topk_in(key: &mut Key) -> Result<&mut TopK, WardenError> {
    key.value::<TopK>()?.ok_or_else(|| error(text::KEY_MISSING))
}

/// The generator seed of a top-k created at `key`: its name hashed, so a
/// replica creating it gets the same.
pub fn seed_of(key: RStr) -> u64 {
    xxhash_rust::xxh3::xxh3_64(key.bytes())
}

/// The server's clock, never before 0.
pub fn now() -> u64 {
    host::now_ms().max(0) as u64
}

/// Adds the items of `args[2..]` (with their increments when `pairs`) to
/// the top-k in `args[1]`: per item, the item it pushed out of the list, or
/// nil.
pub fn add_items(
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
        // No slot move: a replica's top-k is at the same slot (every move
        // is replicated), decays with the generator kept in the value, and a
        // replayed write never reads the clock, so the call as sent is the
        // same there.
        None => host::replicate_verbatim(ctx),
    }
    host::notify(ctx, event, key_name);
    Ok(())
}
