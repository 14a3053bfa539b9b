//! The fuzzer's calls: drawn from the command's `COMMAND DOCS` tree with the values
//! of `grammar.rs` (`draw`), and as sent and as answered: safe WAIT timeouts, a call
//! shown and built, the errors in a reply, and the reply shape each command must
//! answer with (`fits`).

use super::docs::DocArg;
use super::grammar::{b, value_row, Fill, Gen, VALUES};
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

/// Arguments (after the name) of a call of `name` drawn from `docs`, its `COMMAND DOCS`
/// tree: the positionals in order, an optional one present half the time; each option
/// present a third of the time (a required one always), in random order but for a
/// token that takes the rest of the call (`ITEMS item ...`), which comes last; one
/// part of a one-of; a block's parts in order, an optional one half the time; a
/// repeated argument 1 to n times (`repeats`); tokens in random case; values from
/// `VALUES`. A fuzzed call (`g.p > 0`) now and then has an option twice, or two parts
/// of a one-of (`AGE … EXPANSION …`), which the docs do not allow.
pub fn draw(g: &Gen, rng: &mut Rng, name: &str, docs: &[DocArg]) -> Vec<Vec<u8>> {
    draw_with(g, rng, name, docs, false)
}

/// `draw`, with one of `PLAIN` where no `VALUES` row fills an argument when
/// `plain` (else that panics).
fn draw_with(g: &Gen, rng: &mut Rng, name: &str, docs: &[DocArg], plain: bool) -> Vec<Vec<u8>> {
    let mut call = Call {
        g,
        name,
        words: Vec::new(),
        rest: false,
        plain,
    };
    let split = docs
        .iter()
        .position(|a| !a.is_positional())
        .unwrap_or(docs.len());
    let (positionals, options) = docs.split_at(split);
    for a in positionals {
        if !a.optional || rng.chance(1, 2) {
            call.arg(rng, a);
        }
    }
    let mut chosen: Vec<&DocArg> = options
        .iter()
        .filter(|a| !a.optional || rng.chance(1, 3))
        .collect();
    if g.p > 0 && !options.is_empty() && rng.chance(1, 6) {
        chosen.push(&options[rng.below(options.len())]);
    }
    for i in (1..chosen.len()).rev() {
        let j = rng.below(i + 1);
        chosen.swap(i, j);
    }
    chosen.sort_by_key(|a| a.token.is_some() && a.multiple);
    for a in chosen {
        call.arg(rng, a);
    }
    call.words
}

/// A valid call of `name` (as the server lists it, any case) drawn from its
/// docs: good values only, and safe `WAIT` timeouts.
pub fn valid_call(rng: &mut Rng, name: &str, docs: &[DocArg]) -> Vec<Vec<u8>> {
    let g = Gen {
        p: 0,
        now: now_ms(),
    };
    let mut call = draw(&g, rng, &name.to_uppercase(), docs);
    sanitize_wait(rng, &mut call);
    call
}

/// Plain values for arguments no `VALUES` row fills (`any_call`).
const PLAIN: &[&str] = &["1", "2", "3", "10", "0.01"];

/// As `valid_call`, with a plain number (`PLAIN`) in arguments no `VALUES` row
/// fills: those of the commands the command fuzzer does not draw (the foreign
/// names of `aliases`), for calls that need not all be valid.
pub fn any_call(rng: &mut Rng, name: &str, docs: &[DocArg]) -> Vec<Vec<u8>> {
    let g = Gen {
        p: 0,
        now: now_ms(),
    };
    let mut call = draw_with(&g, rng, &name.to_uppercase(), docs, true);
    sanitize_wait(rng, &mut call);
    call
}

/// How many times a repeated argument comes: a group (`rate burst`) mostly once, else
/// 2 to 9 times (up to one more than a key holds); a word (`item`) 1 to 12 times, now
/// and then up to 200.
fn repeats(rng: &mut Rng, a: &DocArg) -> usize {
    if a.kind == "block" {
        if rng.chance(1, 4) {
            2 + rng.below(8)
        } else {
            1
        }
    } else {
        let spread = if rng.chance(1, 10) { 200 } else { 12 };
        1 + rng.below(spread)
    }
}

/// A call being drawn.
struct Call<'g> {
    g: &'g Gen,
    name: &'g str,
    words: Vec<Vec<u8>>,
    /// A `Rest` value has taken the end of the call.
    rest: bool,
    /// One of `PLAIN` where no `VALUES` row fills an argument.
    plain: bool,
}

impl Call<'_> {
    /// Argument `a`: its token, then its value once, or 1 to n times if it repeats.
    fn arg(&mut self, rng: &mut Rng, a: &DocArg) {
        if self.rest {
            return;
        }
        if let Some(t) = &a.token {
            let w = self.g.word(rng, t);
            self.words.push(w);
        }
        let n = if a.multiple { repeats(rng, a) } else { 1 };
        for _ in 0..n {
            self.value(rng, a);
        }
    }

    /// One value of `a`: nothing for a pure token, one part of a one-of (two now and
    /// then in a fuzzed call), a block's parts, else its `VALUES` row's.
    fn value(&mut self, rng: &mut Rng, a: &DocArg) {
        match a.kind.as_str() {
            "pure-token" => {}
            "oneof" => {
                let n = if self.g.p > 0 && rng.chance(1, 3) {
                    2
                } else {
                    1
                };
                for _ in 0..n {
                    let part = &a.parts[rng.below(a.parts.len())];
                    self.arg(rng, part);
                }
            }
            "block" => {
                for p in &a.parts {
                    if !p.optional || rng.chance(1, 2) {
                        self.arg(rng, p);
                    }
                }
            }
            _ if self.plain && value_row(self.name, &a.name).is_none() => {
                self.words.push(b(rng.pick(PLAIN)));
            }
            _ => {
                let row = value_row(self.name, &a.name).unwrap_or_else(|| {
                    panic!(
                        "no value for argument `{}` of {} in VALUES",
                        a.name, self.name
                    )
                });
                match VALUES[row].2 {
                    Fill::Word(f) => {
                        let w = f(self.g, rng, &self.words);
                        self.words.push(w);
                    }
                    Fill::Rest(f) => {
                        let rest = f(self.g, rng, &self.words);
                        self.words.extend(rest);
                        self.rest = true;
                    }
                }
            }
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
