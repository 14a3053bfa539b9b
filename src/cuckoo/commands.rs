//! CF.*X commands: cuckoo filters on the `warden-cf` type.
//!
//! Replication: where an item goes is decided by the filter's state and,
//! when both its buckets are full, by a random walk. A write that needed no
//! walk replays from its arguments on a replica (the same state places it
//! in the same slot, or moves the same fingerprint to make room for it) and
//! is replicated as it was sent; a call that created
//! its filter, or was made by RedisBloom's name, is replicated as an
//! explicit creation (`CF._LOADX … HEADER`, which names the filter's hash)
//! and `CF.INSERTX … NOCREATE`. A write where a walk
//! ran (placed, failed, or grew the filter) is replicated as its effect,
//! `CF._PLACEX key filters slots`: the slots it wrote with their final
//! values, so a replica never re-decides a kick. Reads, refused writes and
//! adds of present items (NX) replicate nothing.

use std::borrow::Cow;
use std::ffi::CStr;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::common::chunks::{chunk_at, Chunk, HEADER_ITERATOR};
use crate::common::error::WardenError;
use crate::common::le_words::words_from_le;
use crate::common::le_words::words_to_le;
use crate::cuckoo::config::{self, CF_MAX_BYTES};
use crate::cuckoo::core::dump::{self, encode_header, sizes};
use crate::cuckoo::core::errors;
use crate::cuckoo::core::filter::{CuckooFilter, Inserted, ItemHash, KickRng, Touched};
use crate::cuckoo::data_type::{self as cuckoo_type};
use crate::cuckoo::events;
use crate::cuckoo::requests::{
    Add, AddNx, Compact, Count, CreateOptions, Del, Exists, Info, Insert, Load, LoadChunk,
    MultiExists, Place, ScanDump,
};
use crate::cuckoo::wire::{decode_placed, emit_placed, encode_placed, LoadFilter};
use crate::glue::args::{internal_only, Args};
use crate::glue::host::{self, Ctx, Key, RStr, Sink};

/// The size cap for this call: `cf-max-bytes` and the machine's memory;
/// writes applied from a master or the AOF only to the largest value the
/// setting accepts (they rebuild what exists already).
fn max_bytes(ctx: Ctx) -> u64 {
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
fn created_hash(ctx: Ctx) -> ItemHash {
    match host::is_replay(ctx) {
        true => ItemHash::Murmur3,
        false => ItemHash::NEWEST,
    }
}

/// Replicates the creation of `f`, empty, with every parameter and its
/// hash explicit: `CF._LOADX key HEADER … 0 0 1 hash`.
fn replicate_reserve(ctx: Ctx, key: RStr, f: &CuckooFilter) {
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
fn filter_in(key: &mut Key) -> Result<Option<&mut CuckooFilter>, WardenError> {
    match key.value::<CuckooFilter>()? {
        Some(f) if f.loading().is_some() => Err(WardenError::FilterLoading),
        found => Ok(found),
    }
}

/// `CF.SCANDUMPX key iterator`: `[1, header]` for iterator 0, then
/// `[next, slots]` for each chunk, and `[0, ""]` after the last.
pub fn scandump(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let iterator = args.parse::<ScanDump>()?.iterator;
    let mut key = Key::readable(ctx, args.raw(1));
    let f = filter_in(&mut key)?.ok_or(WardenError::NotFound)?;
    let (next, data) = match chunk_at(sizes(f), iterator)? {
        Chunk::Header => (HEADER_ITERATOR, Cow::Owned(encode_header(f))),
        Chunk::Bits {
            layer,
            offset,
            len,
            next,
        } => {
            let words = dump::chunk_words(f, layer, offset, len);
            (next, words_to_le(words))
        }
        Chunk::End => (0, Cow::Borrowed(&b""[..])),
    };
    host::reply_array(ctx, 2);
    host::reply_integer(ctx, next as i64);
    host::reply_bulk(ctx, &data);
    Ok(())
}

/// `CF.LOADCHUNKX key iterator data`: the header (iterator 1) creates the
/// key as a filter being loaded; each chunk must be the next one, of its
/// exact length; after the last one the filter answers commands.
/// Replicated as it is (its effect does not depend on time or configuration).
pub fn loadchunk(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let crate::cuckoo::requests::Chunk { iterator, data } = args.parse::<LoadChunk>()?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    match key.value::<CuckooFilter>()? {
        None if iterator == HEADER_ITERATOR => {
            let f = dump::from_header(data, max_bytes(ctx))?;
            cuckoo_type::track_new(&f);
            key.set_value(Box::new(f));
        }
        None => return Err(WardenError::NotFound),
        Some(f) => {
            dump::load_chunk(f, iterator, data)?;
        }
    }
    // The chunk carries the bytes it writes; the clock plays no part.
    match args.by_alias() {
        true => host::replicate_as(ctx, c"CF.LOADCHUNKX", args.raw_from(1)),
        false => host::replicate_verbatim(ctx),
    }
    host::notify(ctx, events::LOADCHUNK, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// `CF.RESERVEX key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]`
pub fn reserve(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let options = args.parse::<crate::cuckoo::requests::Reserve>()?.0;
    let params = options.params()?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    if filter_in(&mut key)?.is_some() {
        return Err(WardenError::ItemExists);
    }
    let filter = CuckooFilter::new(params, max_bytes(ctx))?.with_item_hash(created_hash(ctx));
    replicate_reserve(ctx, name, &filter);
    cuckoo_type::track_new(&filter);
    key.set_value(Box::new(filter));
    host::notify(ctx, events::RESERVE, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// How an add-like call replies per item.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
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
fn add_items(
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

/// `CF.ADDX key item`
pub fn add(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Add>()?;
    if !args.by_alias() && add_without_walk(ctx, args)? {
        return Ok(());
    }
    add_items(
        ctx,
        args,
        2,
        (Some(CreateOptions::default()), None),
        (Shape::Add, events::ADD),
    )
}

/// The common `CF.ADDX key item`: the filter exists and the item goes in
/// without a random walk (a free slot of its buckets, or one fingerprint
/// moved). Replies, replicates and notifies as `add_items` would and
/// answers true; answers false with nothing done (the key not written,
/// nothing replied) for every other case, which `add_items` takes. Out of
/// line and short, so the add most calls make runs little code.
#[inline(never)]
fn add_without_walk(ctx: Ctx, args: &Args) -> Result<bool, WardenError> {
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let Some(filter) = filter_in(&mut key)? else {
        return Ok(false);
    };
    if !filter.insert_without_walk(filter.hash(args.bytes(2))) {
        return Ok(false);
    }
    // Placed by the filter's state alone: a replica or the AOF replaying
    // the call stores it in the same slot (and moves the same fingerprint);
    // the clock plays no part.
    host::replicate_verbatim(ctx);
    host::notify(ctx, events::ADD, name);
    host::reply_integer(ctx, 1);
    Ok(true)
}

/// `CF.ADDNXX key item`
pub fn addnx(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<AddNx>()?;
    add_items(
        ctx,
        args,
        2,
        (Some(CreateOptions::default()), None),
        (Shape::AddNx, events::ADD),
    )
}

/// `CF.INSERTX` / `CF.INSERTNXX key [CAPACITY c] [NOCREATE] ITEMS item ...`
fn insert_common<const NX: bool>(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let Insert { options, items } = args.parse::<Insert<NX>>()?;
    let first = args.len() - items;
    // CAPACITY's range was checked as it was read; its floor, 2 ×
    // BUCKETSIZE, against the bucket size of the filter written: the one
    // created (cf-bucket-size), or an existing one's own (the same on a
    // replica, whatever its defaults).
    let capacity = options.capacity;
    let create = (!options.nocreate).then_some(options);
    let shape = if NX { Shape::InsertNx } else { Shape::Insert };
    add_items(
        ctx,
        args,
        first,
        (create, capacity),
        (shape, events::INSERT),
    )
}

/// `CF.INSERTX key [CAPACITY c] [NOCREATE] ITEMS item ...`
pub fn insert(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    insert_common::<false>(ctx, args)
}

/// `CF.INSERTNXX key [CAPACITY c] [NOCREATE] ITEMS item ...`
pub fn insertnx(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    insert_common::<true>(ctx, args)
}

/// Runs `answer` on the filter in `args[1]` for reads; `None` if missing.
fn read_filter<R>(
    ctx: Ctx,
    args: &Args,
    answer: impl FnOnce(&CuckooFilter) -> R,
) -> Result<Option<R>, WardenError> {
    let mut key = Key::readable(ctx, args.raw(1));
    Ok(filter_in(&mut key)?.map(|f| answer(f)))
}

/// Replies whether an item may be present: 1/0, RedisBloom's boolean by its name.
fn reply_flag(ctx: Ctx, args: &Args, v: bool) {
    match args.by_alias() {
        true => host::reply_bool(ctx, v),
        false => host::reply_integer(ctx, i64::from(v)),
    }
}

/// `CF.EXISTSX key item`
pub fn exists(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Exists>()?;
    let found = read_filter(ctx, args, |f| f.contains(f.hash(args.bytes(2))))?;
    reply_flag(ctx, args, found.unwrap_or(false));
    Ok(())
}

/// `CF.MEXISTSX key item [item ...]`
pub fn mexists(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<MultiExists>()?;
    let mut key = Key::readable(ctx, args.raw(1));
    let f = filter_in(&mut key)?;
    host::reply_array(ctx, args.len() - 2);
    for i in 2..args.len() {
        let hit = f
            .as_ref()
            .is_some_and(|f| f.contains(f.hash(args.bytes(i))));
        reply_flag(ctx, args, hit);
    }
    Ok(())
}

/// `CF.COUNTX key item`
pub fn count(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Count>()?;
    let n = read_filter(ctx, args, |f| f.count(f.hash(args.bytes(2))))?;
    host::reply_integer(ctx, n.unwrap_or(0) as i64);
    Ok(())
}

/// `CF.DELX key item`: 1 when a copy of the item's fingerprint was removed.
pub fn del(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Del>()?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let f = filter_in(&mut key)?.ok_or(WardenError::NotFound)?;
    let deleted = f.delete(f.hash(args.bytes(2)));
    if deleted {
        // The state alone decides which copy goes; the clock plays no part.
        match args.by_alias() {
            true => host::replicate_as(ctx, c"CF.DELX", args.raw_from(1)),
            false => host::replicate_verbatim(ctx),
        }
        host::notify(ctx, events::DEL, name);
    }
    reply_flag(ctx, args, deleted);
    Ok(())
}

/// `CF.COMPACTX key`: moves fingerprints into older sub-filters and drops
/// the newest ones left empty. Deterministic: replicated as it is.
pub fn compact(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Compact>()?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let f = filter_in(&mut key)?.ok_or(WardenError::NotFound)?;
    let before = f.size();
    f.compact();
    cuckoo_type::track_growth(before, f.size());
    // Compaction is decided by the state alone; the clock plays no part.
    match args.by_alias() {
        true => host::replicate_as(ctx, c"CF.COMPACTX", args.raw_from(1)),
        false => host::replicate_verbatim(ctx),
    }
    host::notify(ctx, events::COMPACT, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// The fields of CF.INFOX, in order; RedisBloom's `CF.INFO` shows all but
/// the last.
pub const INFO_FIELDS: [&str; 9] = [
    "Size",
    "Number of buckets",
    "Number of filters",
    "Number of items inserted",
    "Number of items deleted",
    "Bucket size",
    "Expansion rate",
    "Max iterations",
    "Fingerprint bits",
];

/// `CF.INFOX key`
pub fn info(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Info>()?;
    let mut key = Key::readable(ctx, args.raw(1));
    let f = filter_in(&mut key)?.ok_or(WardenError::NotFound)?;
    let p = f.params();
    let values = [
        f.slot_bytes(),
        f.filters()[0].buckets(),
        f.filters().len() as u64,
        f.items(),
        f.deletes(),
        u64::from(p.bucket_size),
        u64::from(p.expansion),
        u64::from(p.max_iterations),
        u64::from(f.fingerprint_bits()),
    ];
    let shown = if args.by_alias() { 8 } else { 9 };
    host::reply_map(ctx, shown);
    for (label, value) in INFO_FIELDS.iter().zip(values).take(shown) {
        match args.by_alias() {
            true => {
                host::reply_simple(ctx, label);
            }
            false => host::reply_bulk(ctx, label.as_bytes()),
        }
        host::reply_integer(ctx, value as i64);
    }
    Ok(())
}

/// `CF._PLACEX key filters slots`: a write a random walk placed, as its
/// effect. Internal.
pub fn place(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "cf._placex")?;
    args.parse::<Place>()?;
    let bad = || WardenError::BadFilterData;
    let filters = crate::common::parse::parse_i64(args.bytes(2))
        .and_then(|v| usize::try_from(v).ok())
        .ok_or_else(bad)?;
    let slots = decode_placed(args.bytes(3)).ok_or_else(bad)?;
    let name = args.raw(1);
    let max_bytes = max_bytes(ctx);
    let mut key = Key::writable(ctx, name);
    let f = filter_in(&mut key)?.ok_or(WardenError::NotFound)?;
    let before = f.size();
    f.place_all(filters, &slots, max_bytes)?;
    cuckoo_type::track_growth(before, f.size());
    // The slots' final values, explicit: an effect, no clock.
    host::replicate_verbatim(ctx);
    host::notify(ctx, events::ADD, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// `CF._LOADX key HEADER …` and `CF._LOADX key WORDS …`: the AOF form of a
/// filter. Internal.
pub fn load(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "cf._loadx")?;
    args.parse::<Load>()?;
    let bad = || WardenError::BadFilterData;
    let chunk = LoadFilter::parse(args)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let existing = filter_in(&mut key)?;
    match chunk {
        LoadFilter::Header {
            params,
            fingerprint_bits,
            items,
            deletes,
            filters,
            item_hash,
        } => {
            if existing.is_some() {
                return Err(bad());
            }
            // The stored width, also where the parameters now give another.
            let f = CuckooFilter::stored_empty(
                params,
                fingerprint_bits,
                (items, deletes),
                filters,
                max_bytes(ctx),
            )?
            .with_item_hash(item_hash);
            cuckoo_type::track_new(&f);
            key.set_value(Box::new(f));
        }
        LoadFilter::Words {
            index,
            word_offset,
            bytes,
        } => {
            let f = existing.ok_or(WardenError::NotFound)?;
            let words = words_from_le(bytes).ok_or_else(bad)?;
            let (b, fb) = (f.params().bucket_size, f.fingerprint_bits());
            let sub = f.filters_mut().get_mut(index).ok_or_else(bad)?;
            sub.load_words(b, fb, word_offset, &words)?;
        }
    }
    chunk.emit(Sink::Replication(ctx), name);
    host::notify(ctx, events::LOAD, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}
