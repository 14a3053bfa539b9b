//! The `warden-rl` data type: the state of one rate limiter.
//!
//! RDB layout, encoding version 3: one string of the limiter kind and the
//! number of its limits (a byte each), then for each limit its fields as
//! varints (`common::varint`): for bucket kinds last_ms, deficit, ticks per
//! token, ticks per ms, burst; for the sliding window start_ms, window_ms,
//! previous, current. A one-limit key saves 13 to 20 bytes of it, where
//! version 2 saved each field as its own RDB integer.
//!
//! Version 2 (still loaded) saved the same fields as RDB integers: the kind
//! and count (unsigned), then per limit last_ms (signed), deficit high and
//! low 64 bits, ticks per token, ticks per ms, burst (unsigned), or
//! start_ms, window_ms (signed), previous, current (unsigned). Version 1
//! (still loaded) had no count (one limit) and no burst: a version 1 token
//! bucket reads its deficit against the burst of the next call, as version
//! 1 did. Every version is validated on load. AOF rewrite emits `RL._SET`,
//! the same command replication uses.

use redis_module::error::Error;
use redis_module::native_types::RedisType;

use crate::common::relocate::Mover;
use crate::common::varint::{Reader, Writer, MAX_U128_BYTES, MAX_U64_BYTES};
use crate::glue::data_type::{methods, Digest, StoredValue};
use crate::glue::host::{Io, RStr, Sink};
use crate::rate::core::rate::{BucketState, MAX_LIMITS};
use crate::rate::core::window::WindowState;
use crate::rate::limiter::{Limiter, LimiterKind, LimiterRef, Scratch};
use crate::rate::wire::{SetLimiter, STATE_TEXT};

/// Current RDB encoding version of limiter values.
pub const LIMITER_ENCODING_VERSION: i32 = 3;

/// Most bytes a version 3 value takes: kind, count, and eight bucket limits
/// of the widest fields.
const MAX_SAVED_BYTES: usize = 2 + MAX_LIMITS * (4 * MAX_U64_BYTES + MAX_U128_BYTES);

/// The Redis data type of limiter keys.
pub static LIMITER_TYPE: RedisType =
    RedisType::new("warden-rl", LIMITER_ENCODING_VERSION, methods::<Limiter>());

/// The four fields of a window limit.
fn load_window(rdb: Io) -> Result<[i128; 4], Error> {
    Ok([
        i128::from(rdb.load_signed()?),
        i128::from(rdb.load_signed()?),
        i128::from(rdb.load_unsigned()?),
        i128::from(rdb.load_unsigned()?),
    ])
}

/// The first four fields of a bucket limit (last_ms, deficit, ticks per
/// token, ticks per ms); a deficit of 2^127 or more reads as negative and
/// is refused.
fn load_bucket(rdb: Io) -> Result<[i128; 4], Error> {
    let last = rdb.load_signed()?;
    let high = rdb.load_unsigned()?;
    let low = rdb.load_unsigned()?;
    Ok([
        i128::from(last),
        ((u128::from(high) << 64) | u128::from(low)) as i128,
        i128::from(rdb.load_unsigned()?),
        i128::from(rdb.load_unsigned()?),
    ])
}

/// A limiter saved by `save` in encoding version 3, `None` when any byte
/// or field is out of place.
fn parse_v3(bytes: &[u8]) -> Option<Limiter> {
    if bytes.len() > MAX_SAVED_BYTES {
        return None;
    }
    let mut r = Reader::new(bytes);
    let kind = LimiterKind::from_code(i64::from(r.byte()?))?;
    let n = Limiter::check_count(kind, i128::from(r.byte()?)).ok()?;
    let mut field = |wide: bool| -> Option<i128> {
        let v = if wide {
            r.u128()?
        } else {
            u128::from(r.u64()?)
        };
        i128::try_from(v).ok()
    };
    let limiter = if kind == LimiterKind::Window {
        let mut states = [WindowState::NONE; MAX_LIMITS];
        for s in states.iter_mut().take(n) {
            let f = [field(false)?, field(false)?, field(false)?, field(false)?];
            *s = Limiter::window_limit(f).ok()?;
        }
        LimiterRef::Window(&states[..n]).to_limiter()
    } else {
        let mut states = [BucketState::default(); MAX_LIMITS];
        for s in states.iter_mut().take(n) {
            let f = [
                field(false)?,
                field(true)?,
                field(false)?,
                field(false)?,
                field(false)?,
            ];
            *s = Limiter::bucket_limit(kind, f).ok()?;
        }
        LimiterRef::Bucket(kind, &states[..n]).to_limiter()
    };
    r.is_done().then_some(limiter)
}

fn load_limiter(rdb: Io, encver: i32) -> Result<Option<Limiter>, Error> {
    if encver >= 3 {
        return Ok(parse_v3(rdb.load_string_buffer()?.as_ref()));
    }
    let kind = rdb.load_unsigned()?;
    let Some(kind) = i64::try_from(kind).ok().and_then(LimiterKind::from_code) else {
        return Ok(None);
    };
    if encver == 1 {
        let fields = if kind == LimiterKind::Window {
            load_window(rdb)?
        } else {
            load_bucket(rdb)?
        };
        return Ok(Limiter::from_v1_fields(kind, fields).ok());
    }
    let Ok(n) = Limiter::check_count(kind, i128::from(rdb.load_unsigned()?)) else {
        return Ok(None);
    };
    if kind == LimiterKind::Window {
        let mut states = [WindowState::NONE; MAX_LIMITS];
        for s in states.iter_mut().take(n) {
            let Ok(w) = Limiter::window_limit(load_window(rdb)?) else {
                return Ok(None);
            };
            *s = w;
        }
        return Ok(Some(LimiterRef::Window(&states[..n]).to_limiter()));
    }
    let mut states = [BucketState::default(); MAX_LIMITS];
    for s in states.iter_mut().take(n) {
        let [last, deficit, tpt, tpm] = load_bucket(rdb)?;
        let burst = i128::from(rdb.load_unsigned()?);
        let Ok(b) = Limiter::bucket_limit(kind, [last, deficit, tpt, tpm, burst]) else {
            return Ok(None);
        };
        *s = b;
    }
    Ok(Some(LimiterRef::Bucket(kind, &states[..n]).to_limiter()))
}

impl StoredValue for Limiter {
    const ENCODING_VERSION: i32 = LIMITER_ENCODING_VERSION;
    const OLDEST_ENCODING_VERSION: i32 = 1;

    fn redis_type() -> &'static RedisType {
        &LIMITER_TYPE
    }

    fn load(rdb: Io, encver: i32) -> Option<Self> {
        load_limiter(rdb, encver).ok().flatten()
    }

    fn save(&self, rdb: Io) {
        let mut buf = [0u8; MAX_SAVED_BYTES];
        let mut w = Writer::new(&mut buf);
        let mut room = Scratch::default();
        let view = self.view(&mut room);
        w.byte(view.kind() as u8);
        w.byte(view.count() as u8);
        match view {
            LimiterRef::Bucket(_, states) => {
                for s in states {
                    // Validated: a time not before 1970.
                    w.u64(s.last_ms as u64);
                    w.u128(s.deficit);
                    w.u64(s.ticks_per_token);
                    w.u64(s.ticks_per_ms);
                    w.u64(s.burst);
                }
            }
            LimiterRef::Window(states) => {
                for s in states {
                    w.u64(s.start_ms as u64);
                    w.u64(s.window_ms as u64);
                    w.u64(s.previous);
                    w.u64(s.current);
                }
            }
        }
        rdb.save_slice(w.bytes());
    }

    fn aof_rewrite(&self, aof: Sink, key: RStr) {
        // The key's expiry follows as its own PEXPIREAT.
        SetLimiter::emit(self.view(&mut Scratch::default()), None, aof, key);
    }

    fn mem_usage(&self) -> usize {
        Limiter::mem_usage(self)
    }

    fn digest(&self, md: &mut Digest) {
        let mut room = Scratch::default();
        let state = SetLimiter::state_text::<STATE_TEXT>(self.view(&mut room), None, None);
        md.add_bytes(state.as_bytes());
    }

    fn defrag(&mut self, m: &mut dyn Mover, _cursor: u64) -> Option<u64> {
        self.relocate(m);
        None
    }
}
