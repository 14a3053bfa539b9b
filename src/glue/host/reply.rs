//! Replies to the running command.

use std::ffi::{c_char, CStr};

use redis_module::raw;

use crate::glue::host::{api, Ctx};

/// Replies with an integer.
pub fn reply_integer(ctx: Ctx, v: i64) {
    // SAFETY: `ctx` is the live context of a call that owes a reply.
    unsafe { api!(RedisModule_ReplyWithLongLong)(ctx.as_ptr(), v) };
}

/// Replies with a boolean: `true`/`false` in RESP3, the integer 1/0 in RESP2
/// (RedisBloom's replies).
pub fn reply_bool(ctx: Ctx, v: bool) {
    // SAFETY: `ctx` is the live context of a call that owes a reply.
    unsafe { api!(RedisModule_ReplyWithBool)(ctx.as_ptr(), std::ffi::c_int::from(v)) };
}

/// Replies with nil.
pub fn reply_null(ctx: Ctx) {
    // SAFETY: as above.
    unsafe { api!(RedisModule_ReplyWithNull)(ctx.as_ptr()) };
}

/// Replies with a decimal: a double in RESP3, and in RESP2 a bulk string of
/// the fewest digits that read back as `v`, with an exponent below 10^-4 as
/// `%g` writes them (`0.1` where the server's own `%.17g` would send
/// `0.10000000000000001`; `0.001`; `1e-10`).
pub fn reply_decimal(ctx: Ctx, v: f64) {
    if is_resp3(ctx) {
        // SAFETY: as above.
        unsafe { api!(RedisModule_ReplyWithDouble)(ctx.as_ptr(), v) };
    } else {
        let text = if v != 0.0 && v.abs() < 1e-4 {
            format!("{v:e}")
        } else {
            v.to_string()
        };
        reply_bulk(ctx, text.as_bytes());
    }
}

/// Replies with a double as the server writes one: a double in RESP3, in
/// RESP2 a bulk string of `%.17g` (`0.90000000000000002`), as other
/// modules' replies are.
pub fn reply_double(ctx: Ctx, v: f64) {
    // SAFETY: as above.
    unsafe { api!(RedisModule_ReplyWithDouble)(ctx.as_ptr(), v) };
}

/// Replies with a binary-safe bulk string.
pub fn reply_bulk(ctx: Ctx, v: &[u8]) {
    // SAFETY: as above; `v` is readable for its length and copied by Redis.
    unsafe { api!(RedisModule_ReplyWithStringBuffer)(ctx.as_ptr(), v.as_ptr().cast(), v.len()) };
}

/// Replies with a status string such as `OK`.
pub fn reply_status(ctx: Ctx, v: &CStr) {
    // SAFETY: as above; `v` is a C string.
    unsafe { api!(RedisModule_ReplyWithSimpleString)(ctx.as_ptr(), v.as_ptr()) };
}

/// Starts an array of `len` elements (the elements follow).
pub fn reply_array(ctx: Ctx, len: usize) {
    // SAFETY: as above; the elements follow.
    unsafe { api!(RedisModule_ReplyWithArray)(ctx.as_ptr(), len as std::ffi::c_long) };
}

/// Starts a map of `pairs` entries in RESP3, and in RESP2 an array of
/// `pairs` values (the keys the caller leaves out): RedisBloom's reply to
/// an INFO asking for one field. Returns whether the keys are owed (RESP3).
pub fn reply_map_or_values(ctx: Ctx, pairs: usize) -> bool {
    if is_resp3(ctx) {
        reply_map(ctx, pairs);
        true
    } else {
        reply_array(ctx, pairs);
        false
    }
}

/// Whether the calling client speaks RESP3.
pub fn is_resp3(ctx: Ctx) -> bool {
    // SAFETY: a live command context.
    let flags = unsafe { api!(RedisModule_GetContextFlags)(ctx.as_ptr()) } as u32;
    flags & raw::REDISMODULE_CTX_FLAGS_RESP3 != 0
}

/// Starts a map of `pairs` entries (a flat array of 2×pairs in RESP2).
pub fn reply_map(ctx: Ctx, pairs: usize) {
    // SAFETY: as above; the entries follow.
    unsafe { api!(RedisModule_ReplyWithMap)(ctx.as_ptr(), pairs as std::ffi::c_long) };
}

/// Replies with a simple string (`+text` in RESP), such as a label.
pub fn reply_simple(ctx: Ctx, text: &str) {
    with_line(text, |line| {
        // SAFETY: as above; `line` is a C string, copied by Redis.
        unsafe { api!(RedisModule_ReplyWithSimpleString)(ctx.as_ptr(), line) };
    });
}

/// Replies with an error; `message` starts with its code (`ERR`, `WRONGTYPE`).
pub fn reply_error(ctx: Ctx, message: &str) {
    with_line(message, |line| {
        // SAFETY: as above; `line` is a C string, copied by Redis.
        unsafe { api!(RedisModule_ReplyWithError)(ctx.as_ptr(), line) };
    });
}

/// Runs `f` with `text` as a NUL-terminated line (its NUL, CR and LF bytes
/// left out, which a simple string or an error cannot hold): copied on the
/// stack, or for a long text on the heap.
fn with_line(text: &str, f: impl FnOnce(*const c_char)) {
    const ON_STACK: usize = 128;
    let bytes = text
        .bytes()
        .filter(|b| *b != 0 && *b != b'\r' && *b != b'\n');
    if text.len() < ON_STACK {
        let mut line = [0u8; ON_STACK];
        line.iter_mut().zip(bytes).for_each(|(to, b)| *to = b);
        f(line.as_ptr().cast());
    } else {
        let mut line: Vec<u8> = bytes.collect();
        line.push(0);
        f(line.as_ptr().cast());
    }
}
