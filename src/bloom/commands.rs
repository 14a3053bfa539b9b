//! BF.*X commands: Bloom filters on the `warden-bf` type.
//!
//! Adds are deterministic, so the effect of an add is the add itself: only
//! items that were new are replicated (as `BF.ADDX` / `BF.MADDX`), and a
//! filter created implicitly is replicated first as an explicit `BF.RESERVEX`
//! with the parameters used, so a replica with other defaults builds the same
//! filter. Reads and adds of present items replicate nothing.
//!
//! An aging filter's add depends on the clock (which block takes the item,
//! which blocks retire), so it replicates as `BF._ADDATX key unix_ms items`:
//! the items that changed the filter, applied as of the master's time. Most
//! adds change only the newest block (no block retired or opened, no item
//! refused): those replicate as they were sent, and a replica or the AOF
//! replays an aging filter's `BF.ADDX` / `BF.MADDX` as "set the items in the
//! newest block", without a clock.
//!
//! Called by RedisBloom's names (`aliases redisbloom`: `BF.ADD` for
//! `BF.ADDX`, …) the same handlers reply as RedisBloom does (booleans in
//! RESP3, `BF.INFO`'s five fields) and replicate their X form, never the
//! alias, so a replica or AOF without the option follows.

use std::ffi::CStr;

use crate::bloom::config;
use crate::bloom::core::aging::Aging;
use crate::bloom::core::dump::LoadingFilter;
use crate::bloom::core::errors;
use crate::bloom::core::filter::{Added, BloomFilter, BloomParams, Layer};
use crate::bloom::data_type::{self as bloom_type};
use crate::bloom::events;
use crate::bloom::requests::{
    Add, AddAt, Card, CreateOptions, Exists, Info, Insert, MultiAdd, MultiExists, Reserve,
    INFO_FIELDS,
};
use crate::bloom::wire::{float_text, LoadFilter};
use crate::common::error::WardenError;
use crate::common::le_words::words_from_le;
use crate::glue::args::{internal_only, Args};
use crate::glue::host::{self, Ctx, Key, RStr, Sink};

/// The size cap for this call: `bf-max-bytes`, and never more than the
/// machine's physical memory (a filter that large would get the server killed
/// by the kernel); except for writes applied from a master or the AOF, which
/// must rebuild what already exists (they are held only to the largest value
/// the setting accepts).
pub fn max_bytes(ctx: Ctx) -> u64 {
    if host::is_replay(ctx) {
        config::BF_MAX_BYTES.max as u64
    } else {
        config::bf_max_bytes().min(host::physical_memory())
    }
}

/// The filter in a key: `Ok(None)` when the key is empty; an error when it
/// holds a filter that `BF.LOADCHUNKX` has not finished loading.
pub fn filter_in(key: &mut Key) -> Result<Option<&mut BloomFilter>, WardenError> {
    key.value_unless::<BloomFilter, LoadingFilter>(|| WardenError::FilterLoading)
}

/// The server clock for a command on filter `f`: read (once) only for an
/// aging filter, which is the only kind that uses it.
fn clock_for(f: &BloomFilter) -> u64 {
    match f.aging() {
        Some(_) => host::now_ms().max(0) as u64,
        None => 0,
    }
}

/// Replicates the creation of `f` as an explicit reserve.
fn replicate_reserve(ctx: Ctx, key: RStr, f: &BloomFilter) {
    let rate = float_text(f.error_rate());
    let rate = rate.as_c_str();
    // The option that shapes the filter, with its value: AGE, EXPANSION, or
    // NONSCALING alone.
    let (capacity, option) = match f.aging() {
        Some(a) => (a.capacity(), Some((c"AGE", a.window_ms() as i64))),
        None if f.expansion() == 0 => (f.layers()[0].capacity(), None),
        None => (
            f.layers()[0].capacity(),
            Some((c"EXPANSION", i64::from(f.expansion()))),
        ),
    };
    let sink = Sink::Replication(ctx);
    let capacity = capacity as i64;
    match option {
        Some((word, value)) => host::emit(sink, c"BF.RESERVEX", (key, rate, capacity, word, value)),
        None => host::emit(sink, c"BF.RESERVEX", (key, rate, capacity, c"NONSCALING")),
    }
}

/// `BF.RESERVEX key error_rate capacity [EXPANSION n] [NONSCALING] [AGE window_ms]`
pub fn reserve(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let Reserve(options) = args.parse::<Reserve>()?;
    let params = options.params()?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    if filter_in(&mut key)?.is_some() {
        return Err(WardenError::ItemExists);
    }
    let filter = match options.age {
        Some(window) => {
            BloomFilter::new_aging(params.error_rate, params.capacity, window, max_bytes(ctx))?
        }
        None => BloomFilter::new(params, max_bytes(ctx))?,
    };
    replicate_reserve(ctx, name, &filter);
    bloom_type::track_new(&filter);
    key.set_value(Box::new(filter));
    host::notify(ctx, events::RESERVE, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// How a call that added items reaches replicas and the AOF.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AddEffect {
    /// The call itself, when every item was new on an existing filter (adds
    /// are deterministic, and replayed adds are not held to bf-max-bytes).
    VerbatimWhenAllNew,
    /// Always `BF.MADDX key <new items>`.
    NewItems,
}

/// Adds `args[first..]` to the filter in key `args[1]`, creating it from
/// `create` when missing (or failing with `ERR not found` without `create`).
/// `emit` gets each item's outcome once the filter exists. Replicates the
/// creation as an explicit reserve, then the items that were new, and emits
/// the keyspace event `event` when the key changed. An aging filter adds as
/// of `at` when given (a master's time, `BF._ADDATX`), else of the clock.
fn add_items(
    ctx: Ctx,
    args: &Args,
    (first, at): (usize, Option<u64>),
    create: Option<BloomParams>,
    (effect, event): (AddEffect, &CStr),
    mut emit: impl FnMut(Result<Added, WardenError>),
) -> Result<(), WardenError> {
    let name = args.raw(1);
    let max_bytes = max_bytes(ctx);
    let mut key = Key::writable(ctx, name);
    let mut created: Option<Box<BloomFilter>> = None;
    let filter: &mut BloomFilter = match filter_in(&mut key)? {
        Some(f) => f,
        None => {
            let params = create.ok_or(WardenError::NotFound)?;
            created
                .insert(Box::new(BloomFilter::new(params, max_bytes)?))
                .as_mut()
        }
    };
    let size_before = filter.size();
    let shape_before = filter.aging_shape();
    // An aging filter's add that reached a replica or the AOF as it was sent
    // changed only the master's newest block (see below): it replays as that.
    let to_newest = shape_before.is_some() && at.is_none() && host::is_replay(ctx);
    let now = match to_newest {
        true => 0,
        false => at.unwrap_or_else(|| clock_for(filter)),
    };
    // Items that changed nothing; usually none, so usually no allocation.
    let mut not_added: Vec<usize> = Vec::new();
    let mut failed = false;
    for i in first..args.len() {
        let item = args.bytes(i);
        let outcome = match to_newest {
            true => filter.add_to_newest(filter.hash(item)),
            false => filter.add_item(item, now, max_bytes),
        };
        failed |= outcome.is_err();
        if !matches!(outcome, Ok(Added::New | Added::Refreshed)) {
            not_added.push(i);
        }
        emit(outcome);
    }
    let size_after = filter.size();
    let added_any = not_added.len() < args.len() - first;
    let aging = shape_before.is_some();
    let newest_only = !failed && filter.aging_shape() == shape_before;
    match created {
        Some(f) => {
            replicate_reserve(ctx, name, &f);
            if added_any {
                replicate_changed(ctx, args, (first, None), &not_added);
            }
            bloom_type::track_new(&f);
            key.set_value(f);
            host::notify(ctx, event, name);
        }
        None => {
            bloom_type::track_growth(size_before, size_after);
            if aging {
                if added_any
                    && newest_only
                    && effect == AddEffect::VerbatimWhenAllNew
                    && !args.by_alias()
                {
                    // Clock-free on replay: no block retired or opened and no
                    // item failed, so every item was set in the newest block
                    // or was there already, which `add_to_newest` repeats.
                    host::replicate_verbatim(ctx);
                } else if added_any && newest_only && effect == AddEffect::VerbatimWhenAllNew {
                    // The alias's call as its X form (`BF.MADDX`), which
                    // replays the same way.
                    replicate_changed(ctx, args, (first, None), &not_added);
                } else if added_any {
                    replicate_changed(ctx, args, (first, Some(now)), &not_added);
                }
            } else if not_added.is_empty()
                && effect == AddEffect::VerbatimWhenAllNew
                && !args.by_alias()
            {
                // Time-independent: the same items set the same bits.
                host::replicate_verbatim(ctx);
            } else if added_any {
                replicate_changed(ctx, args, (first, None), &not_added);
            }
            if added_any {
                host::notify(ctx, event, name);
            }
        }
    }
    Ok(())
}

/// Replicates the items of `args[first..]` that changed the filter (all but
/// those at `not_added`): as `BF._ADDATX key at items` for an aging filter's
/// add at `at` (the replica adds them as of the master's time), else as
/// `BF.MADDX key items`.
fn replicate_changed(
    ctx: Ctx,
    args: &Args,
    (first, at): (usize, Option<u64>),
    not_added: &[usize],
) {
    let send = |items: &[RStr]| {
        let sink = Sink::Replication(ctx);
        match at {
            Some(at) => host::emit(sink, c"BF._ADDATX", (args.raw(1), at as i64, items)),
            None => host::emit(sink, c"BF.MADDX", (args.raw(1), items)),
        }
    };
    if not_added.is_empty() {
        send(args.raw_from(first));
    } else {
        let items: Vec<RStr> = (first..args.len())
            .filter(|i| !not_added.contains(i))
            .map(|i| args.raw(i))
            .collect();
        send(&items);
    }
}

/// Replies with whether an item was new (adds) or may be present (reads):
/// 1/0, or RedisBloom's boolean when called by its name.
fn reply_flag(ctx: Ctx, args: &Args, v: bool) {
    match args.by_alias() {
        true => host::reply_bool(ctx, v),
        false => host::reply_integer(ctx, i64::from(v)),
    }
}

/// Sends a reply array of `count` per-item outcomes, one at a time.
struct ItemReplies<'c, 'a> {
    ctx: Ctx,
    args: &'c Args<'a>,
    count: usize,
    started: bool,
}

impl<'c, 'a> ItemReplies<'c, 'a> {
    fn new(ctx: Ctx, args: &'c Args<'a>, count: usize) -> ItemReplies<'c, 'a> {
        ItemReplies {
            ctx,
            args,
            count,
            started: false,
        }
    }

    fn emit(&mut self, outcome: Result<Added, WardenError>) {
        if !self.started {
            self.started = true;
            host::reply_array(self.ctx, self.count);
        }
        match outcome {
            Ok(a) => reply_flag(self.ctx, self.args, a == Added::New),
            Err(e) => host::reply_error(self.ctx, &e.to_string()),
        }
    }
}

/// `BF.ADDX key item`
pub fn add(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Add>()?;
    let params = CreateOptions::default().params()?;
    let mut outcome = Err(WardenError::Internal);
    add_items(
        ctx,
        args,
        (2, None),
        Some(params),
        (AddEffect::VerbatimWhenAllNew, events::ADD),
        |o| outcome = o,
    )?;
    reply_flag(ctx, args, outcome? == Added::New);
    Ok(())
}

/// `BF.MADDX key item [item ...]`
pub fn madd(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<MultiAdd>()?;
    let params = CreateOptions::default().params()?;
    let mut replies = ItemReplies::new(ctx, args, args.len() - 2);
    add_items(
        ctx,
        args,
        (2, None),
        Some(params),
        (AddEffect::VerbatimWhenAllNew, events::MADD),
        |o| replies.emit(o),
    )
}

/// `BF._ADDATX key unix_ms item [item ...]`: an aging filter's adds as of a
/// master's time (the replication and AOF form of its adds). Internal.
pub fn add_at(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "bf._addatx")?;
    let at = args.parse::<AddAt>()?.at;
    {
        let mut key = Key::readable(ctx, args.raw(1));
        let aging = filter_in(&mut key)?.is_some_and(|f| f.aging().is_some());
        if !aging {
            return Err(WardenError::InvalidState("not an aging filter"));
        }
    }
    let mut replies = ItemReplies::new(ctx, args, args.len() - 3);
    add_items(
        ctx,
        args,
        (3, Some(at)),
        None,
        (AddEffect::NewItems, events::MADD),
        |o| replies.emit(o),
    )
}

/// `BF.INSERTX key [CAPACITY c] [ERROR e] [EXPANSION n] [NOCREATE] [NONSCALING] ITEMS item ...`
pub fn insert(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let Insert { options, items } = args.parse::<Insert>()?;
    let first = args.len() - items;
    let params = options.params()?;
    let create = (!options.nocreate).then_some(params);
    let mut replies = ItemReplies::new(ctx, args, args.len() - first);
    add_items(
        ctx,
        args,
        (first, None),
        create,
        (AddEffect::NewItems, events::INSERT),
        |o| replies.emit(o),
    )
}

/// Runs `answer` on the filter in key `args[1]` for reads; `None` if missing.
fn read_filter<R>(
    ctx: Ctx,
    args: &Args,
    answer: impl FnOnce(&BloomFilter) -> R,
) -> Result<Option<R>, WardenError> {
    let mut key = Key::readable(ctx, args.raw(1));
    Ok(filter_in(&mut key)?.map(|f| answer(f)))
}

/// `BF.EXISTSX key item`
pub fn exists(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Exists>()?;
    let found = read_filter(ctx, args, |f| {
        f.contains_item(args.bytes(2), || clock_for(f))
    })?;
    reply_flag(ctx, args, found.unwrap_or(false));
    Ok(())
}

/// `BF.MEXISTSX key item [item ...]`
pub fn mexists(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<MultiExists>()?;
    let items = 2..args.len();
    let found = read_filter(ctx, args, |f| {
        let now = clock_for(f);
        items
            .clone()
            .map(|i| f.contains_item(args.bytes(i), || now))
            .collect::<Vec<bool>>()
    })?;
    host::reply_array(ctx, items.len());
    for i in 0..items.len() {
        let hit = found.as_ref().is_some_and(|f| f[i]);
        reply_flag(ctx, args, hit);
    }
    Ok(())
}

/// `BF.CARDX key`
pub fn card(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    args.parse::<Card>()?;
    let items = read_filter(ctx, args, |f| f.items(clock_for(f)))?;
    host::reply_integer(ctx, items.unwrap_or(0) as i64);
    Ok(())
}

fn reply_info_value(ctx: Ctx, f: &BloomFilter, field: usize, now: u64) {
    let live_blocks = |a: &Aging| f.layers().len() - a.first_live(now);
    match field {
        0 => host::reply_integer(ctx, f.capacity() as i64),
        1 => host::reply_integer(ctx, f.size() as i64),
        2 => host::reply_integer(ctx, f.aging().map_or(f.layers().len(), live_blocks) as i64),
        3 => host::reply_integer(ctx, f.items(now) as i64),
        4 if f.expansion() == 0 => host::reply_null(ctx),
        4 => host::reply_integer(ctx, i64::from(f.expansion())),
        5 => host::reply_decimal(ctx, f.error_rate()),
        _ => match f.aging() {
            Some(a) => host::reply_integer(ctx, a.window_ms() as i64),
            None => host::reply_null(ctx),
        },
    };
}

/// How many of `INFO_FIELDS` RedisBloom's `BF.INFO` shows (through
/// Expansion rate).
const REDISBLOOM_INFO_FIELDS: usize = 5;

/// `BF.INFO key [field]` as RedisBloom replies: its five fields as a map of
/// simple-string labels (a flat array in RESP2); one field as a map of one
/// (RESP3) or an array of its value alone (RESP2).
fn reply_redisbloom_info(ctx: Ctx, f: &BloomFilter, only: Option<usize>, now: u64) {
    let label = |field: usize| host::reply_simple(ctx, INFO_FIELDS[field].1);
    match only {
        Some(field) => {
            if host::reply_map_or_values(ctx, 1) {
                label(field);
            }
            reply_info_value(ctx, f, field, now);
        }
        None => {
            host::reply_map(ctx, REDISBLOOM_INFO_FIELDS);
            for field in 0..REDISBLOOM_INFO_FIELDS {
                label(field);
                reply_info_value(ctx, f, field, now);
            }
        }
    }
}

/// `BF.INFOX key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION|ERROR]`
pub fn info(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let only = args.parse::<Info>()?.only;
    let mut key = Key::readable(ctx, args.raw(1));
    let f = filter_in(&mut key)?.ok_or(WardenError::NotFound)?;
    let now = clock_for(f);
    if args.by_alias() {
        reply_redisbloom_info(ctx, f, only, now);
        return Ok(());
    }
    match only {
        Some(field) => {
            host::reply_array(ctx, 1);
            reply_info_value(ctx, f, field, now);
        }
        None => {
            let shown = if f.aging().is_some() {
                INFO_FIELDS.len()
            } else {
                INFO_FIELDS.len() - 1
            };
            host::reply_map(ctx, shown);
            for (field, (_, label)) in INFO_FIELDS.iter().enumerate().take(shown) {
                host::reply_bulk(ctx, label.as_bytes());
                reply_info_value(ctx, f, field, now);
            }
        }
    }
    Ok(())
}

/// `BF._LOADX key LAYER error_rate expansion index capacity layer_error hashes items bits`
/// and `BF._LOADX key BITS index word_offset bytes`: the AOF form of a filter,
/// its bit arrays in chunks. Internal.
pub fn load(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "bf._loadx")?;
    let bad = || WardenError::BadFilterData;
    let chunk = LoadFilter::parse(args)?;
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let existing = filter_in(&mut key)?;
    let max_bytes = max_bytes(ctx);
    match chunk {
        LoadFilter::Age {
            error_rate,
            capacity,
            window_ms,
        } => {
            if existing.is_some() {
                return Err(bad());
            }
            let filter = BloomFilter::new_aging(error_rate, capacity, window_ms, max_bytes)
                .map_err(|e| match e {
                    errors::TOO_LARGE => e,
                    _ => bad(),
                })?;
            bloom_type::track_new(&filter);
            key.set_value(Box::new(filter));
        }
        LoadFilter::Layer {
            hashing,
            error_rate,
            expansion,
            index,
            capacity,
            layer_rate,
            hashes,
            items,
            bits,
            opened,
        } => match existing {
            None if index == 0 && opened.is_none() => {
                let budget = max_bytes.saturating_sub(BloomFilter::single_layer_overhead());
                let header = (capacity, layer_rate, hashes, items);
                let layer = Layer::zeroed(hashing, header, bits, budget)?;
                let expansion = u64::from(expansion);
                let filter =
                    BloomFilter::from_parts(hashing, error_rate, expansion, vec![layer], None)?;
                bloom_type::track_new(&filter);
                key.set_value(Box::new(filter));
            }
            Some(f)
                if index == f.layers().len()
                    && f.expansion() == expansion
                    && f.hashing() == hashing =>
            {
                let budget = f.layer_budget(max_bytes);
                let header = (capacity, layer_rate, hashes, items);
                let layer = Layer::zeroed(hashing, header, bits, budget)?;
                let before = f.size();
                f.push_layer(layer, opened)?;
                bloom_type::track_growth(before, f.size());
            }
            _ => return Err(bad()),
        },
        LoadFilter::Bits {
            index,
            word_offset,
            bytes,
        } => {
            let f = existing.ok_or(WardenError::NotFound)?;
            let words = words_from_le(bytes).ok_or_else(bad)?;
            let layer = f.layers_mut().get_mut(index).ok_or_else(bad)?;
            let target = layer.words_mut();
            let end = word_offset
                .checked_add(words.len())
                .filter(|e| *e <= target.len())
                .ok_or_else(bad)?;
            target[word_offset..end].copy_from_slice(&words);
        }
    }
    chunk.emit(Sink::Replication(ctx), name);
    host::notify(ctx, events::LOAD, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}
