//! The `warden-rl` data type: the state of one rate limiter.
//!
//! RDB layout, encoding version 1: the limiter kind (unsigned), then for
//! bucket kinds last_ms (signed), deficit high and low 64 bits, ticks per
//! token, ticks per ms (unsigned); for the sliding window start_ms,
//! window_ms (signed), previous, current (unsigned). Validated on load.
//! AOF rewrite emits `RL._SET`, the same command replication uses.

use std::ffi::{c_int, c_void};

use redis_module::error::Error;
use redis_module::native_types::RedisType;
use redis_module::raw;

use crate::core::error::WardenError;
use crate::core::parse::FieldText;
use crate::core::rate::{BucketState, WindowState};
use crate::host::{api, shield};
use crate::types::{methods, Callbacks};

/// Current RDB encoding version of limiter values.
pub const LIMITER_ENCODING_VERSION: i32 = 1;

/// Which command owns a limiter key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimiterKind {
    /// RL.TOKEN
    Token = 1,
    /// RL.LEAKY
    Leaky = 2,
    /// RL.GCRA
    Gcra = 3,
    /// RL.WINDOW
    Window = 4,
}

impl LimiterKind {
    /// The kind stored as `code`.
    pub fn from_code(code: i64) -> Option<LimiterKind> {
        match code {
            1 => Some(LimiterKind::Token),
            2 => Some(LimiterKind::Leaky),
            3 => Some(LimiterKind::Gcra),
            4 => Some(LimiterKind::Window),
            _ => None,
        }
    }
}

/// A stored limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limiter {
    /// Token bucket, leaky bucket or GCRA.
    Bucket(LimiterKind, BucketState),
    /// Sliding-window counter.
    Window(WindowState),
}

impl Limiter {
    /// The command that owns this limiter.
    pub fn kind(&self) -> LimiterKind {
        match self {
            Limiter::Bucket(kind, _) => *kind,
            Limiter::Window(_) => LimiterKind::Window,
        }
    }

    /// The four integers that follow the kind in `RL._SET` and the RDB.
    pub fn fields(&self) -> [i128; 4] {
        match self {
            Limiter::Bucket(_, s) => [
                i128::from(s.last_ms),
                s.deficit as i128,
                i128::from(s.ticks_per_token),
                i128::from(s.ticks_per_ms),
            ],
            Limiter::Window(w) => [
                i128::from(w.start_ms),
                i128::from(w.window_ms),
                i128::from(w.previous),
                i128::from(w.current),
            ],
        }
    }

    /// Rebuilds a limiter from its kind and fields, checking every range.
    pub fn from_fields(kind: LimiterKind, f: [i128; 4]) -> Result<Limiter, WardenError> {
        let bad = || WardenError::InvalidState("rate limiter field out of range");
        let i64_of = |v: i128| i64::try_from(v).map_err(|_| bad());
        let u64_of = |v: i128| u64::try_from(v).map_err(|_| bad());
        match kind {
            LimiterKind::Window => {
                let w = WindowState {
                    start_ms: i64_of(f[0])?,
                    window_ms: i64_of(f[1])?,
                    previous: u64_of(f[2])?,
                    current: u64_of(f[3])?,
                };
                if w.window_ms <= 0 || w.start_ms < 0 {
                    return Err(bad());
                }
                Ok(Limiter::Window(w))
            }
            _ => {
                let s = BucketState {
                    last_ms: i64_of(f[0])?,
                    deficit: u128::try_from(f[1]).map_err(|_| bad())?,
                    ticks_per_token: u64_of(f[2])?,
                    ticks_per_ms: u64_of(f[3])?,
                };
                if s.ticks_per_token == 0 || s.last_ms < 0 {
                    return Err(bad());
                }
                Ok(Limiter::Bucket(kind, s))
            }
        }
    }
}

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
        free: Some(free),
        copy: Some(copy),
    }),
);

fn load_limiter(rdb: *mut raw::RedisModuleIO) -> Result<Option<Limiter>, Error> {
    let kind = raw::load_unsigned(rdb)?;
    let Some(kind) = i64::try_from(kind).ok().and_then(LimiterKind::from_code) else {
        return Ok(None);
    };
    let fields = if kind == LimiterKind::Window {
        [
            i128::from(raw::load_signed(rdb)?),
            i128::from(raw::load_signed(rdb)?),
            i128::from(raw::load_unsigned(rdb)?),
            i128::from(raw::load_unsigned(rdb)?),
        ]
    } else {
        let last = raw::load_signed(rdb)?;
        let high = raw::load_unsigned(rdb)?;
        let low = raw::load_unsigned(rdb)?;
        [
            i128::from(last),
            ((u128::from(high) << 64) | u128::from(low)) as i128,
            i128::from(raw::load_unsigned(rdb)?),
            i128::from(raw::load_unsigned(rdb)?),
        ]
    };
    Ok(Limiter::from_fields(kind, fields).ok())
}

unsafe extern "C" fn rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    shield(std::ptr::null_mut(), || {
        if encver != LIMITER_ENCODING_VERSION {
            return std::ptr::null_mut();
        }
        match load_limiter(rdb) {
            Ok(Some(l)) => Box::into_raw(Box::new(l)).cast::<c_void>(),
            _ => std::ptr::null_mut(),
        }
    })
}

unsafe extern "C" fn rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    shield((), || {
        let limiter = unsafe { &*value.cast::<Limiter>() };
        raw::save_unsigned(rdb, limiter.kind() as u64);
        match limiter {
            Limiter::Bucket(_, s) => {
                raw::save_signed(rdb, s.last_ms);
                raw::save_unsigned(rdb, (s.deficit >> 64) as u64);
                raw::save_unsigned(rdb, s.deficit as u64);
                raw::save_unsigned(rdb, s.ticks_per_token);
                raw::save_unsigned(rdb, s.ticks_per_ms);
            }
            Limiter::Window(w) => {
                raw::save_signed(rdb, w.start_ms);
                raw::save_signed(rdb, w.window_ms);
                raw::save_unsigned(rdb, w.previous);
                raw::save_unsigned(rdb, w.current);
            }
        }
    })
}

/// The one-argument state of `RL._SET`: kind, the four fields and the
/// absolute expiry in ms (-1: none), joined by ':'.
pub fn state_text(limiter: &Limiter, expires: Option<i64>) -> FieldText {
    let f = limiter.fields();
    FieldText::new(&[
        limiter.kind() as i128,
        f[0],
        f[1],
        f[2],
        f[3],
        i128::from(expires.unwrap_or(-1)),
    ])
}

unsafe extern "C" fn aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    shield((), || {
        let limiter = unsafe { &*value.cast::<Limiter>() };
        // The key's expiry follows as its own PEXPIREAT.
        let state = state_text(limiter, None);
        let state = state.as_bytes();
        unsafe {
            api!(RedisModule_EmitAOF)(
                aof,
                c"RL._SET".as_ptr(),
                c"sb".as_ptr(),
                key,
                state.as_ptr(),
                state.len(),
            )
        };
    })
}

unsafe extern "C" fn mem_usage(_value: *const c_void) -> usize {
    std::mem::size_of::<Limiter>()
}

unsafe extern "C" fn digest(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    shield((), || {
        let limiter = unsafe { &*value.cast::<Limiter>() };
        let state = state_text(limiter, None);
        let state = state.as_bytes();
        unsafe {
            api!(RedisModule_DigestAddStringBuffer)(md, state.as_ptr().cast(), state.len());
            api!(RedisModule_DigestEndSequence)(md);
        }
    })
}

unsafe extern "C" fn free(value: *mut c_void) {
    if !value.is_null() {
        drop(unsafe { Box::from_raw(value.cast::<Limiter>()) });
    }
}

unsafe extern "C" fn copy(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    shield(std::ptr::null_mut(), || {
        Box::into_raw(Box::new(unsafe { *value.cast::<Limiter>() })).cast::<c_void>()
    })
}
