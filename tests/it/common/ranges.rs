//! Numeric argument ranges (issue #10), shared by the `numeric_ranges_*` suites: the
//! documented limits, a rule per range with its two error texts and the values tried
//! against it, and the reply classifier and failure report of the table-driven checks.

use super::*;

/// 10 years in milliseconds: the longest lease, WAIT, MAXWAIT or window.
pub const TEN_YEARS_MS: u128 = 315_360_000_000;

/// The largest count a rate limiter takes (burst, capacity, limit, cost, quantity).
pub const MAX_COUNT: u128 = 1_000_000_000_000_000;

pub const I64_MAX: &str = "9223372036854775807";

pub const U64_MAX: &str = "18446744073709551615";

/// An all-digit integer beyond u64.
pub const BEYOND_U64: &str = "99999999999999999999999999";

/// `int_rule!("name", min, max)`: the `Rule` of the integer argument `name` in
/// `min..=max` (`min` 0 or 1) with the module's two error texts for it, `ERR name
/// must be a positive integer` (`non-negative` for 0) and `ERR name is out of range`.
macro_rules! int_rule {
    ($name:literal, 0, $max:expr) => {
        Rule::int(
            0,
            $max,
            concat!("ERR ", $name, " must be a non-negative integer"),
            concat!("ERR ", $name, " is out of range"),
        )
    };
    ($name:literal, 1, $max:expr) => {
        Rule::int(
            1,
            $max,
            concat!("ERR ", $name, " must be a positive integer"),
            concat!("ERR ", $name, " is out of range"),
        )
    };
}
pub(crate) use int_rule;

/// Where a value falls for a rule.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Verdict {
    /// Inside the range: the call must succeed.
    In,
    /// Below the range, or not an integer: the `must be` error.
    Below,
    /// An all-digit integer above the range: the `out of range` error.
    Above,
}

/// A documented range and its two error texts.
#[derive(Clone, Copy)]
pub struct Rule {
    pub kind: RuleKind,
    pub below: &'static str,
    pub above: &'static str,
}

#[derive(Clone, Copy)]
pub enum RuleKind {
    /// An integer in `min..=max`.
    Int { min: u128, max: u128 },
    /// A number strictly between 0 and 1 (a Bloom error rate).
    Fraction,
}

impl Rule {
    pub const fn int(min: u128, max: u128, below: &'static str, above: &'static str) -> Rule {
        Rule {
            kind: RuleKind::Int { min, max },
            below,
            above,
        }
    }

    pub fn verdict(&self, v: &str) -> Verdict {
        match self.kind {
            RuleKind::Int { min, max } => {
                if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                    return Verdict::Below;
                }
                match v.parse::<u128>() {
                    Ok(n) if n < min => Verdict::Below,
                    Ok(n) if n <= max => Verdict::In,
                    _ => Verdict::Above,
                }
            }
            RuleKind::Fraction => match v.parse::<f64>() {
                Ok(p) if p > 0.0 && p < 1.0 => Verdict::In,
                _ => Verdict::Below,
            },
        }
    }

    /// The error a value must get; None inside the range.
    pub fn error_for(&self, v: &str) -> Option<&'static str> {
        match self.verdict(v) {
            Verdict::In => None,
            Verdict::Below => Some(self.below),
            Verdict::Above => Some(self.above),
        }
    }

    /// The values tried: 0, 1, max, max+1, -1, i64::MAX, u64::MAX, an integer beyond
    /// u64, a decimal and a word, plus `extra`.
    pub fn values(&self, extra: &[&str]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut push = |s: String| {
            if !out.contains(&s) {
                out.push(s);
            }
        };
        match self.kind {
            RuleKind::Int { max, .. } => {
                for s in ["0".to_string(), "1".to_string(), max.to_string()] {
                    push(s);
                }
                push((max + 1).to_string());
            }
            RuleKind::Fraction => {
                for s in [
                    "0",
                    "1",
                    "0.5",
                    "0.999999",
                    "1e-6",
                    "1.0000001",
                    "nan",
                    "inf",
                ] {
                    push(s.to_string());
                }
            }
        }
        for s in ["-1", I64_MAX, U64_MAX, BEYOND_U64, "1.5", "abc"] {
            push(s.to_string());
        }
        for s in extra {
            push(s.to_string());
        }
        out
    }
}

/// A reply, its error text, or the I/O problem (a timeout: no reply).
#[derive(Debug)]
pub enum Got {
    Reply(Value),
    Error(String),
    NoReply(String),
}

pub fn got(r: redis::RedisResult<Value>) -> Got {
    match r {
        Ok(v) => match err_of(&v) {
            Some(e) => Got::Error(e),
            None => Got::Reply(v),
        },
        Err(e) if e.is_timeout() || e.is_io_error() => Got::NoReply(e.to_string()),
        Err(e) => Got::Error(err_text(&e)),
    }
}
