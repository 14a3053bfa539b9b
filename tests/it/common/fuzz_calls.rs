//! The fuzzer's calls as sent and as answered: safe WAIT timeouts, a call shown
//! and built, the errors in a reply, and the reply shape each command must
//! answer with (`fits`).

use super::grammar::b;
use super::payload::Rng;
use super::*;

/// Timeouts that are safe to send outside MULTI: at most 50 ms, or not a number.
pub const SAFE_TIMEOUTS: &[&str] = &[
    "1", "2", "5", "10", "20", "50", "-1", "-50", "abc", "", "1ms", "five",
];

/// Makes every value after a `WAIT` word a safe timeout (never 0, never long).
pub fn sanitize_wait(rng: &mut Rng, a: &mut [Vec<u8>]) {
    for i in 0..a.len().saturating_sub(1) {
        if a[i].eq_ignore_ascii_case(b"WAIT")
            && !SAFE_TIMEOUTS.iter().any(|s| s.as_bytes() == a[i + 1])
        {
            a[i + 1] = b(rng.pick(SAFE_TIMEOUTS));
        }
    }
}

pub fn show_call(name: &[u8], args: &[Vec<u8>]) -> String {
    let mut s = escape(name);
    for a in args {
        s.push(' ');
        if a.len() > 120 {
            s.push_str(&format!("<{} bytes: {}…>", a.len(), escape(&a[..40])));
        } else {
            s.push('"');
            s.push_str(&escape(a));
            s.push('"');
        }
    }
    s
}

pub fn build(name: &[u8], args: &[Vec<u8>]) -> redis::Cmd {
    let mut c = redis::Cmd::new();
    c.arg(name);
    for a in args {
        c.arg(&a[..]);
    }
    c
}

/// Error replies in `v`, nested ones included.
pub fn errors_in(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::ServerError(_) => out.push(err_of(v).unwrap_or_default()),
        Value::Array(a) | Value::Set(a) | Value::Push { data: a, .. } => {
            a.iter().for_each(|x| errors_in(x, out))
        }
        Value::Map(m) => m.iter().for_each(|(k, x)| {
            errors_in(k, out);
            errors_in(x, out);
        }),
        Value::Attribute { data, .. } => errors_in(data, out),
        _ => {}
    }
}

pub fn is_int01(v: &Value) -> bool {
    matches!(v, Value::Int(0) | Value::Int(1))
}

/// What a valid call must answer when it does not answer an error.
#[derive(Clone, Copy, Debug)]
pub enum Shape {
    TokenOrNil,
    Int01,
    IntNonNeg,
    Ok,
    LockInfo,
    Flags(usize),
    FilterInfo,
    /// `[iterator, data]` of BF.SCANDUMPX.
    Chunk,
    Four,
    Five,
    /// A value, nil, or `[value or nil, lease]`.
    CacheGet,
    CacheInfo,
    Any,
}

pub fn fits(shape: Shape, v: &Value) -> bool {
    match shape {
        Shape::TokenOrNil => matches!(v, Value::Nil) || matches!(v, Value::Int(t) if *t > 0),
        Shape::Int01 => is_int01(v),
        Shape::IntNonNeg => matches!(v, Value::Int(n) if *n >= 0),
        Shape::Ok => matches!(v, Value::Okay) || *v == Value::SimpleString("OK".into()),
        // A plain lock's five fields; a set's add mode, holders and (semaphores) limit.
        Shape::LockInfo => match v {
            Value::Nil => true,
            Value::Array(a) => matches!(a.len(), 10 | 14 | 16),
            Value::Map(m) => matches!(m.len(), 5 | 7 | 8),
            _ => false,
        },
        Shape::Flags(n) => match v {
            Value::Array(a) => {
                a.len() == n
                    && a.iter()
                        .all(|x| is_int01(x) || matches!(x, Value::ServerError(_)))
            }
            _ => false,
        },
        Shape::FilterInfo => match v {
            // Aging filters add their window.
            Value::Array(a) => a.len() == 12 || a.len() == 14,
            Value::Map(m) => m.len() == 6 || m.len() == 7,
            _ => false,
        },
        Shape::Chunk => match v {
            Value::Array(a) => {
                a.len() == 2
                    && matches!(a[0], Value::Int(n) if n >= 0)
                    && matches!(a[1], Value::BulkString(_))
            }
            _ => false,
        },
        Shape::Four => match v {
            Value::Array(a) => {
                a.len() == 4 && a.iter().all(|x| matches!(x, Value::Int(_))) && is_int01(&a[0])
            }
            _ => false,
        },
        Shape::Five => match v {
            Value::Array(a) => {
                a.len() == 5 && a.iter().all(|x| matches!(x, Value::Int(_))) && is_int01(&a[0])
            }
            _ => false,
        },
        Shape::CacheGet => match v {
            Value::Nil | Value::BulkString(_) => true,
            Value::Array(a) => {
                a.len() == 2
                    && matches!(a[0], Value::Nil | Value::BulkString(_))
                    && matches!(a[1], Value::Int(t) if t >= 0)
            }
            _ => false,
        },
        Shape::CacheInfo => match v {
            Value::Nil => true,
            Value::Array(a) => a.len() == 12,
            Value::Map(m) => m.len() == 6,
            _ => false,
        },
        Shape::Any => true,
    }
}
