//! The `warden-rl` data type: the state of one rate limiter.
//!
//! RDB layout, encoding version 2: the limiter kind and the number of its
//! limits (unsigned), then for each limit: for bucket kinds last_ms
//! (signed), deficit high and low 64 bits, ticks per token, ticks per ms,
//! burst (unsigned); for the sliding window start_ms, window_ms (signed),
//! previous, current (unsigned). Version 1 (still loaded) had no count (one
//! limit) and no burst: a version 1 token bucket reads its deficit against
//! the burst of the next call, as version 1 did. Validated on load. AOF
//! rewrite emits `RL._SET`, the same command replication uses.

use std::ffi::{c_int, c_void};

use redis_module::error::Error;
use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::glue::data_type::{copy_boxed, free_boxed, methods, Callbacks};
use crate::glue::host::{api, shield, ModuleValue, Sink};
use crate::rate::core::rate::{BucketState, MAX_LIMITS};
use crate::rate::core::window::WindowState;
use crate::rate::limiter::{Limiter, LimiterKind, LimiterRef};
use crate::rate::wire::{SetLimiter, STATE_TEXT};

/// Current RDB encoding version of limiter values.
pub const LIMITER_ENCODING_VERSION: i32 = 2;

/// The Redis data type of limiter keys.
pub static LIMITER_TYPE: RedisType = RedisType::new(
    "warden-rl",
    LIMITER_ENCODING_VERSION,
    methods(Callbacks {
        rdb_load: Some(rdb_load),
        rdb_save: Some(rdb_save),
        aof_rewrite: Some(aof_rewrite),
        mem_usage: Some(mem_usage),
        digest: Some(digest),
        free: Some(free_boxed::<Limiter>),
        copy: Some(copy_boxed::<Limiter>),
    }),
);

/// The four fields of a window limit.
fn load_window(rdb: *mut raw::RedisModuleIO) -> Result<[i128; 4], Error> {
    Ok([
        i128::from(raw::load_signed(rdb)?),
        i128::from(raw::load_signed(rdb)?),
        i128::from(raw::load_unsigned(rdb)?),
        i128::from(raw::load_unsigned(rdb)?),
    ])
}

/// The first four fields of a bucket limit (last_ms, deficit, ticks per
/// token, ticks per ms); a deficit of 2^127 or more reads as negative and
/// is refused.
fn load_bucket(rdb: *mut raw::RedisModuleIO) -> Result<[i128; 4], Error> {
    let last = raw::load_signed(rdb)?;
    let high = raw::load_unsigned(rdb)?;
    let low = raw::load_unsigned(rdb)?;
    Ok([
        i128::from(last),
        ((u128::from(high) << 64) | u128::from(low)) as i128,
        i128::from(raw::load_unsigned(rdb)?),
        i128::from(raw::load_unsigned(rdb)?),
    ])
}

fn load_limiter(rdb: *mut raw::RedisModuleIO, encver: c_int) -> Result<Option<Limiter>, Error> {
    let kind = raw::load_unsigned(rdb)?;
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
    let Ok(n) = Limiter::check_count(kind, i128::from(raw::load_unsigned(rdb)?)) else {
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
        let burst = i128::from(raw::load_unsigned(rdb)?);
        let Ok(b) = Limiter::bucket_limit(kind, [last, deficit, tpt, tpm, burst]) else {
            return Ok(None);
        };
        *s = b;
    }
    Ok(Some(LimiterRef::Bucket(kind, &states[..n]).to_limiter()))
}

unsafe extern "C" fn rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    shield(std::ptr::null_mut(), || {
        if !(1..=LIMITER_ENCODING_VERSION).contains(&encver) {
            return std::ptr::null_mut();
        }
        match load_limiter(rdb, encver) {
            Ok(Some(l)) => Box::into_raw(Box::new(l)).cast::<c_void>(),
            _ => std::ptr::null_mut(),
        }
    })
}

unsafe extern "C" fn rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    shield((), || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `Limiter`.
        let limiter = unsafe { &*value.cast::<Limiter>() };
        let view = limiter.view();
        raw::save_unsigned(rdb, view.kind() as u64);
        raw::save_unsigned(rdb, view.count() as u64);
        match view {
            LimiterRef::Bucket(_, states) => {
                for s in states {
                    raw::save_signed(rdb, s.last_ms);
                    raw::save_unsigned(rdb, (s.deficit >> 64) as u64);
                    raw::save_unsigned(rdb, s.deficit as u64);
                    raw::save_unsigned(rdb, s.ticks_per_token);
                    raw::save_unsigned(rdb, s.ticks_per_ms);
                    raw::save_unsigned(rdb, s.burst);
                }
            }
            LimiterRef::Window(states) => {
                for w in states {
                    raw::save_signed(rdb, w.start_ms);
                    raw::save_signed(rdb, w.window_ms);
                    raw::save_unsigned(rdb, w.previous);
                    raw::save_unsigned(rdb, w.current);
                }
            }
        }
    })
}

unsafe extern "C" fn aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    shield((), || {
        // SAFETY: Redis passes the value it stored for this type.
        let limiter = unsafe { &*value.cast::<Limiter>() };
        // The key's expiry follows as its own PEXPIREAT.
        SetLimiter::emit(limiter.view(), None, Sink::AofRewrite(aof), key);
    })
}

unsafe extern "C" fn mem_usage(value: *const c_void) -> usize {
    shield(0, || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `Limiter`.
        unsafe { &*value.cast::<Limiter>() }.mem_usage()
    })
}

unsafe extern "C" fn digest(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    shield((), || {
        // SAFETY: Redis passes a value it stored for this type: a boxed `Limiter`.
        let limiter = unsafe { &*value.cast::<Limiter>() };
        let state = SetLimiter::state_text::<STATE_TEXT>(limiter.view(), None, None);
        let state = state.as_bytes();
        // SAFETY: `md` is the digest Redis passed; the bytes outlive the call.
        unsafe {
            api!(RedisModule_DigestAddStringBuffer)(md, state.as_ptr().cast(), state.len());
            api!(RedisModule_DigestEndSequence)(md);
        }
    })
}

impl ModuleValue for Limiter {
    fn redis_type() -> &'static RedisType {
        &LIMITER_TYPE
    }
}
