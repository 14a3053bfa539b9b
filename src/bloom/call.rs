//! What the BF commands share: the creation options of `BF.RESERVEX` and
//! `BF.INSERTX`, the grammars of the commands on a filter and its items, the
//! size cap and the filter in a key, adds (with their replication) and the
//! per-item replies.

use std::ffi::CStr;

use crate::bloom::config::{self, BF_ERROR_RATE, BF_EXPANSION, BF_INITIAL_CAPACITY};
use crate::bloom::core::aging::{validate_window, WINDOW};
use crate::bloom::core::dump::LoadingFilter;
use crate::bloom::core::errors;
use crate::bloom::core::filter::{Added, BloomFilter, BloomParams, CAPACITY};
use crate::bloom::core::sizing::parse_error_rate;
use crate::bloom::data_type::{self as bloom_type};
use crate::bloom::wire::float_text;
use crate::common::error::WardenError;
use crate::common::grammar::{arg, items, key, Arg, Kind};
use crate::glue::args::Args;
use crate::glue::host::{self, Ctx, Key, RStr, Sink};

/// A capacity in its range.
fn capacity_arg(bytes: &[u8]) -> Result<u64, WardenError> {
    CAPACITY.parse(bytes).map(|c| c as u64)
}

/// An expansion in its range (`errors::EXPANSION`).
fn expansion_arg(bytes: &[u8]) -> Result<u32, WardenError> {
    errors::EXPANSION.parse(bytes).map(|e| e as u32)
}

/// Creation options shared by BF.RESERVEX and BF.INSERTX (and the defaults
/// BF.ADDX and BF.MADDX create with).
#[derive(Default)]
pub struct CreateOptions {
    /// `error_rate` or `ERROR e`.
    pub error_rate: Option<f64>,
    /// `capacity` or `CAPACITY c`.
    pub capacity: Option<u64>,
    /// `EXPANSION n`.
    pub expansion: Option<u32>,
    /// `NONSCALING`.
    pub nonscaling: bool,
    /// `NOCREATE` (BF.INSERTX only).
    pub nocreate: bool,
    /// `AGE window_ms` (BF.RESERVEX only).
    pub age: Option<u64>,
}

impl CreateOptions {
    /// Parameters of a new filter, with module defaults for what is missing.
    pub fn params(&self) -> Result<BloomParams, WardenError> {
        if self.age.is_some() && (self.nonscaling || self.expansion.is_some()) {
            return Err(errors::AGE_WITH_SCALING);
        }
        if self.nonscaling && self.expansion.is_some() {
            return Err(errors::NON_SCALING_EXPANSION);
        }
        let expansion = if self.nonscaling {
            0
        } else {
            self.expansion.unwrap_or(BF_EXPANSION.get() as u32)
        };
        let params = BloomParams {
            error_rate: self.error_rate.unwrap_or_else(|| BF_ERROR_RATE.get()),
            capacity: self.capacity.unwrap_or(BF_INITIAL_CAPACITY.get() as u64),
            expansion,
        };
        params.validate()?;
        Ok(params)
    }
}

impl CreateOptions {
    /// Takes one creation option's value.
    pub fn take(&mut self, arg: &'static Arg, word: &[u8]) -> Result<(), WardenError> {
        match arg.name {
            "error_rate" => self.error_rate = Some(parse_error_rate(word)?),
            "capacity" => self.capacity = Some(capacity_arg(word)?),
            "expansion" => self.expansion = Some(expansion_arg(word)?),
            "NONSCALING" => self.nonscaling = true,
            "NOCREATE" => self.nocreate = true,
            "window_ms" => {
                let window = WINDOW.parse(word)? as u64;
                validate_window(window)?;
                self.age = Some(window);
            }
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
pub fn clock_for(f: &BloomFilter) -> u64 {
    match f.aging() {
        Some(_) => host::now_ms().max(0) as u64,
        None => 0,
    }
}

/// Replicates the creation of `f` as an explicit reserve.
pub fn replicate_reserve(ctx: Ctx, key: RStr, f: &BloomFilter) {
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

/// How a call that added items reaches replicas and the AOF.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum AddEffect {
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
pub fn add_items(
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
pub fn reply_flag(ctx: Ctx, args: &Args, v: bool) {
    match args.by_alias() {
        true => host::reply_bool(ctx, v),
        false => host::reply_integer(ctx, i64::from(v)),
    }
}

/// Sends a reply array of `count` per-item outcomes, one at a time.
pub struct ItemReplies<'c, 'a> {
    ctx: Ctx,
    args: &'c Args<'a>,
    count: usize,
    started: bool,
}

impl<'c, 'a> ItemReplies<'c, 'a> {
    /// The replies of `count` items, the array not yet started.
    pub fn new(ctx: Ctx, args: &'c Args<'a>, count: usize) -> ItemReplies<'c, 'a> {
        ItemReplies {
            ctx,
            args,
            count,
            started: false,
        }
    }

    /// Sends one item's outcome (after the array's header, the first time).
    pub fn emit(&mut self, outcome: Result<Added, WardenError>) {
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

/// Runs `answer` on the filter in key `args[1]` for reads; `None` if missing.
pub fn read_filter<R>(
    ctx: Ctx,
    args: &Args,
    answer: impl FnOnce(&BloomFilter) -> R,
) -> Result<Option<R>, WardenError> {
    let mut key = Key::readable(ctx, args.raw(1));
    Ok(filter_in(&mut key)?.map(|f| answer(f)))
}
