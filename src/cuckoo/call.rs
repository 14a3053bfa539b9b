//! What the CF commands share: the creation options of `CF.RESERVEX` and
//! `CF.INSERTX(NX)`, the grammars of the commands on a filter and its items,
//! the size cap and the filter in a key, the hash and the random walks of the
//! filters it creates, adds (with their replies and replication) and reads.

use std::ffi::CStr;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::common::error::WardenError;
use crate::common::grammar::{arg, items, key, Arg, Kind};
use crate::common::parse::parse_i64;
use crate::cuckoo::config::{
    self, CF_BUCKET_SIZE, CF_EXPANSION, CF_INITIAL_CAPACITY, CF_MAX_BYTES, CF_MAX_ITERATIONS,
};
use crate::cuckoo::core::errors::{self, BUCKET_SIZE, EXPANSION, MAX_CAPACITY, MAX_ITERATIONS};
use crate::cuckoo::core::filter::{
    CuckooFilter, CuckooParams, Inserted, ItemHash, KickRng, Touched,
};
use crate::cuckoo::data_type::{self as cuckoo_type};
use crate::cuckoo::wire::{emit_placed, encode_placed, LoadFilter};
use crate::glue::args::Args;
use crate::glue::host::{self, Ctx, Key, RStr, Sink};

/// An integer in `range`, else `err`.
fn int_in(
    bytes: &[u8],
    range: std::ops::RangeInclusive<i64>,
    err: WardenError,
) -> Result<u32, WardenError> {
    match parse_i64(bytes) {
        Some(v) if range.contains(&v) => Ok(v as u32),
        _ => Err(err),
    }
}

/// Creation options of CF.RESERVEX and CF.INSERTX(NX), with the module's
/// defaults (`cf-*` configuration) for what is not given.
#[derive(Default)]
pub struct CreateOptions {
    /// `capacity` or `CAPACITY c`.
    pub capacity: Option<u64>,
    /// `BUCKETSIZE b`.
    pub bucket_size: Option<u32>,
    /// `MAXITERATIONS m`.
    pub max_iterations: Option<u32>,
    /// `EXPANSION e`.
    pub expansion: Option<u32>,
    /// `NOCREATE` (CF.INSERTX only).
    pub nocreate: bool,
}

impl CreateOptions {
    /// Parameters of a new filter, checked.
    pub fn params(&self) -> Result<CuckooParams, WardenError> {
        let params = CuckooParams {
            capacity: self.capacity.unwrap_or(CF_INITIAL_CAPACITY.get() as u64),
            bucket_size: self.bucket_size.unwrap_or(CF_BUCKET_SIZE.get() as u32),
            max_iterations: self
                .max_iterations
                .unwrap_or(CF_MAX_ITERATIONS.get() as u32),
            expansion: self.expansion.unwrap_or(CF_EXPANSION.get() as u32),
        };
        params.validate()?;
        Ok(params)
    }

    /// Takes one creation option's value.
    pub fn take(&mut self, arg: &'static Arg, word: &[u8]) -> Result<(), WardenError> {
        match arg.name {
            "capacity" => {
                let c = int_in(word, 1..=MAX_CAPACITY as i64, errors::bad_capacity())?;
                self.capacity = Some(u64::from(c));
            }
            "bucketsize" => self.bucket_size = Some(BUCKET_SIZE.parse(word)? as u32),
            "maxiterations" => self.max_iterations = Some(MAX_ITERATIONS.parse(word)? as u32),
            "expansion" => self.expansion = Some(EXPANSION.parse(word)? as u32),
            "NOCREATE" => self.nocreate = true,
            _ => {}
        }
        Ok(())
    }
}

/// One item.
pub const ONE_ITEM: &[Arg] = &[key(), arg("item", Kind::Str)];

/// Items to the end.
pub const ITEMS: &[Arg] = &[key(), items("item")];

/// The key alone.
pub const KEY_ONLY: &[Arg] = &[key()];

/// The size cap for this call: `cf-max-bytes` and the machine's memory;
/// writes applied from a master or the AOF only to the largest value the
/// setting accepts (they rebuild what exists already).
pub fn max_bytes(ctx: Ctx) -> u64 {
    if host::is_replay(ctx) {
        CF_MAX_BYTES.max as u64
    } else {
        config::cf_max_bytes().min(host::physical_memory())
    }
}

/// The kicks' generator state (xorshift64), seeded once from the clock: a
/// static, not a thread-local, so that an add that never kicks does not pay
/// for a thread-local address (commands run on the main thread only).
static KICKS: AtomicU64 = AtomicU64::new(0);

/// The generator random walks draw from.
struct Kicks;

impl KickRng for Kicks {
    fn next_u64(&mut self) -> u64 {
        let mut x = KICKS.load(Ordering::Relaxed);
        if x == 0 {
            x = (host::now_ms() as u64 ^ 0x9e37_79b9_7f4a_7c15) | 1;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        KICKS.store(x, Ordering::Relaxed);
        x
    }
}

/// The hash of a filter this call creates. A client's call makes one with
/// the newest hash. A creating `CF.RESERVEX`, `CF.ADDX` or `CF.INSERTX` from
/// a master or the AOF was written by an older version (this one replicates
/// and logs creation as `CF._LOADX … HEADER`, which names the hash), and
/// older versions hashed with murmur3.
pub fn created_hash(ctx: Ctx) -> ItemHash {
    match host::is_replay(ctx) {
        true => ItemHash::Murmur3,
        false => ItemHash::NEWEST,
    }
}

/// Replicates the creation of `f`, empty, with every parameter and its
/// hash explicit: `CF._LOADX key HEADER … 0 0 1 hash`.
pub fn replicate_reserve(ctx: Ctx, key: RStr, f: &CuckooFilter) {
    LoadFilter::Header {
        params: f.params(),
        fingerprint_bits: f.fingerprint_bits(),
        items: 0,
        deletes: 0,
        filters: 1,
        item_hash: f.item_hash(),
    }
    .emit(Sink::Replication(ctx), key);
}

/// Replicates `CF.INSERTX` (or `CF.INSERTNXX`) `key NOCREATE ITEMS items`.
fn replicate_items(ctx: Ctx, nx: bool, key: RStr, items: &[RStr]) {
    let name = if nx { c"CF.INSERTNXX" } else { c"CF.INSERTX" };
    host::emit(
        Sink::Replication(ctx),
        name,
        (key, c"NOCREATE", c"ITEMS", items),
    );
}

/// The filter in a key: `Ok(None)` when the key is empty; an error when
/// `CF.LOADCHUNKX` has not finished loading it.
pub fn filter_in(key: &mut Key) -> Result<Option<&mut CuckooFilter>, WardenError> {
    match key.value::<CuckooFilter>()? {
        Some(f) if f.loading().is_some() => Err(WardenError::FilterLoading),
        found => Ok(found),
    }
}

/// How an add-like call replies per item.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `CF.ADDX`: 1, or the error.
    Add,
    /// `CF.ADDNXX`: 1 or 0, or the error.
    AddNx,
    /// `CF.INSERTX`: an array of 1 or -1 (no room).
    Insert,
    /// `CF.INSERTNXX`: an array of 1, 0 or -1.
    InsertNx,
}

impl Shape {
    fn nx(self) -> bool {
        matches!(self, Shape::AddNx | Shape::InsertNx)
    }

    fn many(self) -> bool {
        matches!(self, Shape::Insert | Shape::InsertNx)
    }
}

/// Adds `args[first..]` to the filter in `args[1]`, creating it from
/// `create` when missing (`ERR not found` without). `capacity` is a
/// `CAPACITY` the call gave: an existing filter holds it to 2 × its own
/// bucket size (what it is held to when it creates one). Replies per
/// `shape`, replicates as the module doc says, and emits `event` when it
/// changed.
pub fn add_items(
    ctx: Ctx,
    args: &Args,
    first: usize,
    (create, capacity): (Option<CreateOptions>, Option<u64>),
    (shape, event): (Shape, &CStr),
) -> Result<(), WardenError> {
    let name = args.raw(1);
    let budget = || max_bytes(ctx);
    let mut key = Key::writable(ctx, name);
    let mut created: Option<Box<CuckooFilter>> = None;
    let existing = filter_in(&mut key)?;
    let is_new = existing.is_none();
    let filter: &mut CuckooFilter = match existing {
        Some(f) => {
            // The filter's own bucket size, not this server's default: a
            // replica checks it the same way.
            if capacity.is_some_and(|c| c < 2 * u64::from(f.params().bucket_size)) {
                return Err(errors::bad_capacity());
            }
            f
        }
        None => {
            let params = create.ok_or(WardenError::NotFound)?.params()?;
            created
                .insert(Box::new(
                    CuckooFilter::new(params, budget())?.with_item_hash(created_hash(ctx)),
                ))
                .as_mut()
        }
    };
    let filters_before = filter.filters().len();
    let mut touched = Touched::default();
    let mut changed = false;
    let count = args.len() - first;
    if shape.many() {
        host::reply_array(ctx, count);
    }
    for i in first..args.len() {
        let h = filter.hash(args.bytes(i));
        let outcome = match shape.nx() {
            true => filter.insert_unique(h, &mut Kicks, budget, &mut touched),
            false => filter.insert(h, &mut Kicks, budget, &mut touched),
        };
        changed |= outcome == Ok(Inserted::Added);
        match (shape, outcome) {
            (Shape::Insert, Err(_)) if args.by_alias() && host::is_resp3(ctx) => {
                host::reply_bool(ctx, false)
            }
            (Shape::Insert | Shape::InsertNx, Err(_)) => host::reply_integer(ctx, -1),
            (Shape::Add | Shape::AddNx, Err(e)) => {
                if !changed && !is_new {
                    return Err(e);
                }
                host::reply_error(ctx, &e.to_string());
            }
            (Shape::InsertNx, Ok(o)) => host::reply_integer(ctx, i64::from(o == Inserted::Added)),
            (_, Ok(o)) => match args.by_alias() {
                true => host::reply_bool(ctx, o == Inserted::Added),
                false => host::reply_integer(ctx, i64::from(o == Inserted::Added)),
            },
        }
    }
    if is_new {
        replicate_reserve(ctx, name, filter);
    }
    let grew = filter.filters().len() != filters_before;
    let growth = grew.then(|| (filter.size_with(filters_before), filter.size()));
    if touched.random && (changed || grew) {
        let slots = encode_placed(filter, &touched);
        emit_placed(Sink::Replication(ctx), name, filter.filters().len(), &slots);
    } else if changed && (is_new || args.by_alias()) {
        replicate_items(ctx, shape.nx(), name, args.raw_from(first));
    } else if changed {
        // No walk ran on an existing filter: its state alone placed the
        // items (a free slot, or one fingerprint moved); no clock.
        host::replicate_verbatim(ctx);
    }
    match created {
        Some(f) => {
            cuckoo_type::track_new(&f);
            key.set_value(f);
            host::notify(ctx, event, name);
        }
        None => {
            if let Some((before, after)) = growth {
                cuckoo_type::track_growth(before, after);
            }
            if changed {
                host::notify(ctx, event, name);
            }
        }
    }
    Ok(())
}

/// Runs `answer` on the filter in `args[1]` for reads; `None` if missing.
pub fn read_filter<R>(
    ctx: Ctx,
    args: &Args,
    answer: impl FnOnce(&CuckooFilter) -> R,
) -> Result<Option<R>, WardenError> {
    let mut key = Key::readable(ctx, args.raw(1));
    Ok(filter_in(&mut key)?.map(|f| answer(f)))
}

/// Replies whether an item may be present: 1/0, RedisBloom's boolean by its name.
pub fn reply_flag(ctx: Ctx, args: &Args, v: bool) {
    match args.by_alias() {
        true => host::reply_bool(ctx, v),
        false => host::reply_integer(ctx, i64::from(v)),
    }
}
