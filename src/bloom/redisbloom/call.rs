//! What RedisBloom's Bloom names share: what a key holds, RedisBloom's
//! reading of numbers and options, creation with the defaults, adds with
//! their replication, and the replies.

use crate::bloom::call::max_bytes;
use crate::bloom::config::{bf_max_bytes, BF_ERROR_RATE, BF_EXPANSION, BF_INITIAL_CAPACITY};
use crate::bloom::core::chain::{Chain, ChainError, NewChain};
use crate::bloom::core::dump::LoadingFilter;
use crate::bloom::core::errors::MAX_BYTES_SETTING;
use crate::bloom::core::filter::BloomFilter;
use crate::bloom::redisbloom::data_type::{track_growth, track_new};
use crate::bloom::wire::float_text;
use crate::common::error::WardenError;
use crate::common::parse::is_keyword;
use crate::glue::args::{Args, Called};
use crate::glue::commands::Handler;
use crate::glue::host::{self, Ctx, Either, Key, RStr, Sink};

/// Runs `read` on the chain in key `args[1]`: `ERR not found` for an
/// empty key, `WRONGTYPE` for another type.
pub fn read_chain(ctx: Ctx, args: &Args, read: impl FnOnce(&Chain)) -> Result<(), WardenError> {
    let mut key = Key::readable(ctx, args.raw(1));
    match held(&mut key)? {
        Held::Chain(c) => {
            read(c);
            Ok(())
        }
        Held::Empty => Err(WardenError::NotFound),
        Held::Warden => Err(WardenError::WrongType),
    }
}

/// `answer` of the chain in key `args[1]`; `None` when it holds none (any
/// other type included, as RedisBloom's reads answer).
pub fn with_chain<R>(ctx: Ctx, args: &Args, answer: impl FnOnce(&Chain) -> R) -> Option<R> {
    let mut key = Key::readable(ctx, args.raw(1));
    match held(&mut key) {
        Ok(Held::Chain(c)) => Some(answer(c)),
        _ => None,
    }
}

/// What a key holds, as RedisBloom's names see it.
pub enum Held<'k> {
    /// Nothing.
    Empty,
    /// A RedisBloom filter.
    Chain(&'k mut Chain),
    /// One of warden's own filters (complete or being loaded): the X
    /// commands answer it.
    Warden,
}

/// What `key` holds; `WRONGTYPE` for any other type.
pub fn held<'k>(key: &'k mut Key) -> Result<Held<'k>, WardenError> {
    if key.holds::<LoadingFilter>() {
        return Ok(Held::Warden);
    }
    Ok(match key.either::<Chain, BloomFilter>()? {
        Either::Empty => Held::Empty,
        Either::First(c) => Held::Chain(c),
        Either::Second(_) => Held::Warden,
    })
}

/// Whether key `args[1]` holds one of warden's own filters.
pub fn holds_wardens(ctx: Ctx, args: &Args) -> bool {
    let key = Key::readable(ctx, args.raw(1));
    key.holds::<BloomFilter>() || key.holds::<LoadingFilter>()
}

/// Runs the X command `handler` on this call, in RedisBloom's reply style.
pub fn answer_as_x(ctx: Ctx, args: &Args, handler: Handler) -> Result<(), WardenError> {
    handler(ctx, &Args::new(args.raw_from(0), Called::Alias))
}

/// The index of the first argument equal to `word` (any case), as
/// RedisBloom finds its options: anywhere in the call.
pub fn arg_index(args: &Args, word: &str) -> Option<usize> {
    (0..args.len()).find(|&i| is_keyword(args.bytes(i), word))
}

/// A new filter with this module's defaults (`bf-error-rate`,
/// `bf-initial-capacity`, `bf-expansion`).
pub fn defaults() -> NewChain {
    NewChain {
        capacity: BF_INITIAL_CAPACITY.get() as u64,
        error: BF_ERROR_RATE.get(),
        growth: BF_EXPANSION.get() as u32,
        nonscaling: false,
    }
}

/// A refusal of a chain's add or load, with this call's cap.
pub fn refusal(ctx: Ctx, e: &ChainError) -> WardenError {
    let cap = match host::is_replay(ctx) {
        true => max_bytes(ctx),
        false => bf_max_bytes(),
    };
    e.to_warden(MAX_BYTES_SETTING, cap)
}

/// A new chain, or RedisBloom's refusal to create it (with the size cap
/// named when that is why).
pub fn create(ctx: Ctx, p: NewChain) -> Result<Chain, WardenError> {
    Chain::new(p, max_bytes(ctx)).map_err(|e| match e {
        ChainError::TooLarge { needed } => WardenError::RefusedWith(format!(
            "ERR could not create filter: it would take {needed} bytes, over {MAX_BYTES_SETTING} \
             ({}); raise it with CONFIG SET warden.{MAX_BYTES_SETTING}",
            bf_max_bytes()
        )),
        _ => WardenError::Refused("ERR could not create filter"),
    })
}

/// Replicates the creation of a chain with `p` as an explicit `BF.RESERVE`.
pub fn replicate_reserve(ctx: Ctx, key: RStr, p: NewChain) {
    let rate = float_text(p.error);
    let sink = Sink::Replication(ctx);
    let (rate, capacity) = (rate.as_c_str(), p.capacity as i64);
    match p.nonscaling {
        true => host::emit(sink, c"BF.RESERVE", (key, rate, capacity, c"NONSCALING")),
        false => host::emit(
            sink,
            c"BF.RESERVE",
            (key, rate, capacity, c"EXPANSION", i64::from(p.growth)),
        ),
    }
}

/// An item's outcome in an add.
pub type Outcome = Result<bool, ChainError>;

/// Adds the items `args[first..]` to the chain in key `args[1]`, creating
/// it with `create` when the key is empty (`ERR not found` without it), as
/// RedisBloom does: every item in turn, stopping after a non-scaling
/// filter's `Full`. Returns the outcomes. Replicates the creation as an
/// explicit `BF.RESERVE`, then the items that were new as `BF.MADD`, and
/// emits `event` when the key changed.
pub fn add_items(
    ctx: Ctx,
    args: &Args,
    first: usize,
    create: Option<NewChain>,
    event: &std::ffi::CStr,
) -> Result<Vec<Outcome>, WardenError> {
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    let mut created: Option<Box<Chain>> = None;
    let chain: &mut Chain = match held(&mut key)? {
        Held::Chain(c) => c,
        Held::Empty => {
            let p = create.ok_or(WardenError::NotFound)?;
            let chain = create_chain(ctx, name, p)?;
            created.insert(Box::new(chain)).as_mut()
        }
        Held::Warden => return Err(WardenError::Internal),
    };
    let cap = max_bytes(ctx);
    let size_before = chain.size();
    let mut outcomes = Vec::with_capacity(args.len() - first);
    let mut new_items: Vec<RStr> = Vec::new();
    for i in first..args.len() {
        let outcome = chain.add(args.bytes(i), cap);
        if outcome == Ok(true) {
            new_items.push(args.raw(i));
        }
        let full = outcome == Err(ChainError::Full);
        outcomes.push(outcome);
        if full {
            break;
        }
    }
    let size_after = chain.size();
    if !new_items.is_empty() {
        host::emit(
            Sink::Replication(ctx),
            c"BF.MADD",
            (name, new_items.as_slice()),
        );
    }
    match created {
        Some(c) => {
            track_new(&c);
            key.set_value(c);
            host::notify(ctx, event, name);
        }
        None => {
            track_growth(size_before, size_after);
            if !new_items.is_empty() {
                host::notify(ctx, event, name);
            }
        }
    }
    Ok(outcomes)
}

/// A new chain for key `name`, its creation replicated.
fn create_chain(ctx: Ctx, name: RStr, p: NewChain) -> Result<Chain, WardenError> {
    let chain = create(ctx, p)?;
    replicate_reserve(ctx, name, p);
    Ok(chain)
}

/// Replies with the outcomes of an add: one flag, or an array of flags and
/// errors.
pub fn reply_outcomes(ctx: Ctx, outcomes: &[Outcome], array: bool) {
    if array {
        host::reply_array(ctx, outcomes.len());
    }
    for o in outcomes {
        match o {
            Ok(new) => reply_flag(ctx, *new),
            Err(e) => host::reply_error(ctx, &refusal(ctx, e).to_string()),
        }
    }
}

/// RedisBloom's flag: a boolean in RESP3, 1/0 in RESP2.
pub fn reply_flag(ctx: Ctx, v: bool) {
    host::reply_bool(ctx, v);
}
