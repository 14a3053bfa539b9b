//! What RedisBloom's cuckoo names share: what a key holds, RedisBloom's
//! reading of numbers and options, the defaults of a filter they create,
//! creation and adds with their replication, and RedisBloom's replies.

use std::ffi::CStr;

use crate::common::error::WardenError;
use crate::common::parse::{is_keyword, parse_i64};
use crate::cuckoo::call::max_bytes;
use crate::cuckoo::config::{cf_max_bytes, CF_BUCKET_SIZE, CF_EXPANSION, CF_INITIAL_CAPACITY};
use crate::cuckoo::core::errors::MAX_BYTES_SETTING;
use crate::cuckoo::core::filter::CuckooFilter;
use crate::cuckoo::core::redisbloom::{
    Insert, NewRb, RbError, RbFilter, DEFAULT_MAX_ITERATIONS, MAX_EXPANSIONS,
};
use crate::cuckoo::redisbloom::data_type::{track_growth, track_new};
use crate::glue::args::{Args, Called};
use crate::glue::commands::Handler;
use crate::glue::host::{self, Ctx, Either, Key, RStr, Sink};

/// What a key holds, as RedisBloom's names see it.
pub enum Held<'k> {
    /// Nothing.
    Empty,
    /// A RedisBloom filter.
    Filter(&'k mut RbFilter),
    /// One of warden's own filters (complete or being loaded): the X
    /// commands answer it.
    Warden,
}

/// What `key` holds; `WRONGTYPE` for any other type.
pub fn held<'k>(key: &'k mut Key) -> Result<Held<'k>, WardenError> {
    Ok(match key.either::<RbFilter, CuckooFilter>()? {
        Either::Empty => Held::Empty,
        Either::First(f) => Held::Filter(f),
        Either::Second(_) => Held::Warden,
    })
}

/// Whether key `args[1]` holds one of warden's own filters.
pub fn holds_wardens(ctx: Ctx, args: &Args) -> bool {
    Key::readable(ctx, args.raw(1)).holds::<CuckooFilter>()
}

/// Runs the X command `handler` on this call, in RedisBloom's reply style.
pub fn answer_as_x(ctx: Ctx, args: &Args, handler: Handler) -> Result<(), WardenError> {
    handler(ctx, &Args::new(args.raw_from(0), Called::Alias))
}

/// `answer` of the filter in key `args[1]`; `None` when it holds none (any
/// other type included, as RedisBloom's reads answer).
pub fn with_filter<R>(ctx: Ctx, args: &Args, answer: impl FnOnce(&RbFilter) -> R) -> Option<R> {
    let mut key = Key::readable(ctx, args.raw(1));
    match held(&mut key) {
        Ok(Held::Filter(f)) => Some(answer(f)),
        _ => None,
    }
}

/// Runs `read` on the filter in key `args[1]`: `ERR not found` for an
/// empty key, `WRONGTYPE` for another type.
pub fn read_filter(ctx: Ctx, args: &Args, read: impl FnOnce(&RbFilter)) -> Result<(), WardenError> {
    let mut key = Key::readable(ctx, args.raw(1));
    match held(&mut key)? {
        Held::Filter(f) => {
            read(f);
            Ok(())
        }
        Held::Empty => Err(WardenError::NotFound),
        Held::Warden => Err(WardenError::WrongType),
    }
}

/// An integer as RedisBloom reads one (`RedisModule_StringToLongLong`).
pub fn parse_long(bytes: &[u8]) -> Option<i64> {
    parse_i64(bytes)
}

/// The index of the first argument equal to `word` (any case), as
/// RedisBloom finds its options: anywhere in the call.
pub fn arg_index(args: &Args, word: &str) -> Option<usize> {
    (0..args.len()).find(|&i| is_keyword(args.bytes(i), word))
}

/// The parameters of a filter created without them. A client's call takes
/// `cf-initial-capacity`, `cf-bucket-size` and `cf-expansion` (whose
/// defaults are RedisBloom's: 1024, 2, 1) and RedisBloom's 20 kicks (warden's
/// `cf-max-iterations` is for its own, fuller tables). A creating call from
/// a master or the AOF was written by RedisBloom (warden replicates a
/// creation as an explicit `CF.RESERVE`): it gets RedisBloom's defaults.
pub fn defaults(ctx: Ctx) -> NewRb {
    match host::is_replay(ctx) {
        true => NewRb {
            capacity: 1024,
            bucket_size: 2,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            expansion: 1,
        },
        false => NewRb {
            capacity: CF_INITIAL_CAPACITY.get() as u64,
            bucket_size: CF_BUCKET_SIZE.get() as u16,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            expansion: CF_EXPANSION.get() as u16,
        },
    }
}

/// The cap this call is held to, as its refusal names it.
fn cap_shown(ctx: Ctx) -> u64 {
    match host::is_replay(ctx) {
        true => max_bytes(ctx),
        false => cf_max_bytes(),
    }
}

/// Why `needed` bytes are refused: RedisBloom's text, then `it would take`
/// (`lead` ends the text with its punctuation and that pronoun).
fn over_cap(ctx: Ctx, lead: &str, needed: u64) -> WardenError {
    WardenError::RefusedWith(format!(
        "{lead} would take {needed} bytes, over {MAX_BYTES_SETTING} ({}); raise it with \
         CONFIG SET warden.{MAX_BYTES_SETTING} {needed}",
        cap_shown(ctx)
    ))
}

/// A new filter, or the refusal to create it: RedisBloom's text, with the
/// size cap named when that is why.
pub fn create(ctx: Ctx, p: NewRb) -> Result<RbFilter, WardenError> {
    RbFilter::new(p, max_bytes(ctx)).map_err(|e| match e {
        RbError::TooLarge { needed } => {
            over_cap(ctx, "ERR Insufficient memory to create filter: it", needed)
        }
        _ => WardenError::Refused("ERR Insufficient memory to create filter"),
    })
}

/// A refused header: RedisBloom's text, with the size cap named when that
/// is why.
pub fn header_refusal(ctx: Ctx, e: RbError) -> WardenError {
    match e {
        RbError::TooLarge { needed } => over_cap(ctx, "Couldn't create filter! It", needed),
        _ => WardenError::Refused("Couldn't create filter!"),
    }
}

/// Replicates the creation of `f`, empty, as an explicit `CF.RESERVE` with
/// every parameter (its capacity the one that gives its bucket count).
pub fn replicate_reserve(ctx: Ctx, key: RStr, f: &RbFilter) {
    let capacity = (f.buckets * u64::from(f.bucket_size)) as i64;
    host::emit(
        Sink::Replication(ctx),
        c"CF.RESERVE",
        (
            key,
            capacity,
            c"BUCKETSIZE",
            i64::from(f.bucket_size),
            c"MAXITERATIONS",
            i64::from(f.max_iterations),
            c"EXPANSION",
            i64::from(f.expansion),
        ),
    );
}

/// How an add-like call replies.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Only when absent (`CF.ADDNX`, `CF.INSERTNX`).
    pub nx: bool,
    /// An array of outcomes (`CF.INSERT`, `CF.INSERTNX`).
    pub multi: bool,
}

/// Adds `args[first..]` to the filter in key `args[1]` as RedisBloom does,
/// creating it with `creation` when the key is empty (`ERR not found`
/// without it), and replies per `shape`: refused past 32 tables; a full
/// filter's item ends a single add with `Filter is full` and is -1 (false
/// in RESP3 for `CF.INSERT`) in an array. Replicates a creation as an
/// explicit `CF.RESERVE`, then the items stored as
/// `CF.INSERT key NOCREATE ITEMS …` (RedisBloom's walks are decided by the
/// state alone), and emits `event` when the key changed.
pub fn add_items(
    ctx: Ctx,
    args: &Args,
    first: usize,
    creation: Option<NewRb>,
    (shape, event): (Shape, &CStr),
) -> Result<(), WardenError> {
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let mut created: Option<Box<RbFilter>> = None;
    let mut is_new = false;
    let filter: &mut RbFilter = match held(&mut key)? {
        Held::Filter(f) => f,
        Held::Empty => {
            let p = creation.ok_or(WardenError::NotFound)?;
            if p.capacity < 2 * u64::from(p.bucket_size) {
                return Err(WardenError::Refused("ERR Could not create filter"));
            }
            is_new = true;
            created.insert(Box::new(create(ctx, p)?)).as_mut()
        }
        Held::Warden => return Err(WardenError::Internal),
    };
    if filter.tables.len() >= MAX_EXPANSIONS {
        return Err(WardenError::Refused("Maximum expansions reached"));
    }
    if is_new {
        replicate_reserve(ctx, name, filter);
    }
    let resp3 = host::is_resp3(ctx);
    let flags = resp3 && (!shape.nx || !shape.multi);
    let cap = max_bytes(ctx);
    let size_before = filter.size();
    let mut stored: Vec<RStr> = Vec::new();
    let mut refusal = None;
    if shape.multi {
        host::reply_array(ctx, args.len() - first);
    }
    for i in first..args.len() {
        match filter.insert(args.bytes(i), shape.nx, cap) {
            Insert::Added => {
                stored.push(args.raw(i));
                match flags {
                    true => host::reply_bool(ctx, true),
                    false => host::reply_integer(ctx, 1),
                }
            }
            Insert::Exists => match flags {
                true => host::reply_bool(ctx, false),
                false => host::reply_integer(ctx, 0),
            },
            Insert::NoSpace | Insert::CannotGrow(_) if shape.multi => match resp3 && !shape.nx {
                true => host::reply_bool(ctx, false),
                false => host::reply_integer(ctx, -1),
            },
            Insert::NoSpace => refusal = Some(WardenError::Refused("Filter is full")),
            Insert::CannotGrow(RbError::TooLarge { needed }) => {
                refusal = Some(over_cap(ctx, "ERR Insufficient memory: it", needed))
            }
            Insert::CannotGrow(_) => {
                refusal = Some(WardenError::Refused("ERR Insufficient memory"))
            }
        }
    }
    if !stored.is_empty() {
        host::emit(
            Sink::Replication(ctx),
            c"CF.INSERT",
            (name, c"NOCREATE", c"ITEMS", stored.as_slice()),
        );
    }
    let size_after = filter.size();
    match created {
        Some(f) => {
            track_new(&f);
            key.set_value(f);
            host::notify(ctx, event, name);
        }
        None => {
            track_growth(size_before, size_after);
            if !stored.is_empty() {
                host::notify(ctx, event, name);
            }
        }
    }
    match refusal {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// RedisBloom's flag: a boolean in RESP3, 1/0 in RESP2.
pub fn reply_flag(ctx: Ctx, v: bool) {
    host::reply_bool(ctx, v);
}
