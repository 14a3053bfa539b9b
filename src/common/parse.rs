//! Strict parsing of command arguments given as bytes.

use crate::common::error::WardenError;
use crate::common::limit::Limit;

/// Parses a decimal i64 the way Redis does: optional '-', digits only, no
/// leading '+', spaces or leading zeros; `None` when it is not one.
pub fn parse_i64(bytes: &[u8]) -> Option<i64> {
    let (negative, digits) = match bytes {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() || digits.len() > 19 || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    // At most 19 digits: below 10^19, which fits a u64 without a check per digit.
    let mut magnitude: u64 = 0;
    for &d in digits {
        let digit = d.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        magnitude = magnitude * 10 + u64::from(digit);
    }
    match (negative, magnitude) {
        (true, 0) => None, // "-0", which Redis refuses too
        // 2^63 itself is i64::MIN, whose negation wraps to itself.
        (true, m) if m <= 1 << 63 => Some((m as i64).wrapping_neg()),
        (true, _) => None,
        (false, m) => i64::try_from(m).ok(),
    }
}

/// An integer argument with its documented range: the one place a command's
/// numbers are checked, so each error names the argument.
#[derive(Debug, Clone, Copy)]
pub struct IntArg {
    /// The argument's name in error messages (`ttl`, `timeout`, `burst`).
    pub name: &'static str,
    /// Smallest accepted value (0 or 1).
    pub min: i64,
    /// Largest accepted value.
    pub max: i64,
    /// A duration in ms, which also takes a unit: `1500ms`, `90s`, `15m`,
    /// `1h`, `1d`.
    pub duration: bool,
}

impl IntArg {
    /// The value of `bytes`: `ERR <name> is out of range` for an integer
    /// above `max` (however many digits), otherwise `ERR <name> must be a
    /// positive / non-negative integer` for anything that is not an integer
    /// in range.
    #[inline]
    pub fn parse(&self, bytes: &[u8]) -> Result<i64, WardenError> {
        // A plain integer first: it never has a unit (`with_unit` needs a
        // digit, then a letter), so the order does not change the answer.
        let value = parse_i64(bytes);
        if value.is_none() && self.duration {
            if let Some(ms) = self.with_unit(bytes) {
                return ms;
            }
        }
        match value {
            Some(v) if v > self.max => Err(WardenError::OutOfRange(self.name)),
            Some(v) if v >= self.min => Ok(v),
            None if is_large_positive_integer(bytes) => Err(WardenError::OutOfRange(self.name)),
            _ if self.min > 0 => Err(WardenError::NotPositive(self.name)),
            _ => Err(WardenError::Negative(self.name)),
        }
    }
}

/// An integer as redis-cell's `CL.THROTTLE` reads it (Rust's integer syntax:
/// an optional '+' or '-', leading zeros allowed) in the canonical form
/// `parse_i64` takes: `+060` is `60`, `-0` and `000` are `0`. Anything else is
/// returned unchanged, to be refused by the parse that follows.
pub fn cell_integer(bytes: &[u8]) -> &[u8] {
    let (negative, digits) = match bytes {
        [b'+', rest @ ..] => (false, rest),
        [b'-', rest @ ..] => (true, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return bytes;
    }
    let significant = digits
        .iter()
        .position(|d| *d != b'0')
        .map_or(&b"0"[..], |at| &digits[at..]);
    match significant {
        b"0" => b"0",
        // A negative number stays as written: the caller's range check refuses it.
        _ if negative => bytes,
        _ => significant,
    }
}

impl IntArg {
    /// A duration written with a unit (`90s`): its value in ms, range-checked
    /// like a plain number; `None` when `bytes` has no unit.
    fn with_unit(&self, bytes: &[u8]) -> Option<Result<i64, WardenError>> {
        let at = bytes
            .iter()
            .position(|b| !b.is_ascii_digit())
            .filter(|at| *at > 0)?;
        let ms_per_unit = i64::try_from(unit_ns(&bytes[at..])? / 1_000_000).ok()?;
        let count = IntArg {
            max: i64::MAX,
            duration: false,
            ..*self
        };
        Some(count.parse(&bytes[..at]).and_then(|n| {
            n.checked_mul(ms_per_unit)
                .filter(|ms| *ms <= self.max)
                .ok_or(WardenError::OutOfRange(self.name))
        }))
    }
}

/// Nanoseconds in a duration unit: `ms`, `s`, `m`, `h` or `d`.
pub fn unit_ns(unit: &[u8]) -> Option<u128> {
    match unit {
        b"ms" => Some(1_000_000),
        b"s" => Some(1_000_000_000),
        b"m" => Some(60_000_000_000),
        b"h" => Some(3_600_000_000_000),
        b"d" => Some(86_400_000_000_000),
        _ => None,
    }
}

/// Whether `bytes` is a positive decimal integer too large for i64.
fn is_large_positive_integer(bytes: &[u8]) -> bool {
    bytes.len() > 18 && bytes[0] != b'0' && bytes.iter().all(u8::is_ascii_digit)
}

/// The longest lease, wait or window any command accepts: 10 years of 365
/// days in ms. Far below where Redis's timer arithmetic (µs in 64 bits) or
/// `now + ttl` could overflow.
pub const MAX_DURATION_MS: i64 = 10 * 365 * 86_400_000;

/// The largest count (events, burst, cost) any command accepts.
pub const MAX_EVENTS: i64 = 1_000_000_000_000_000;

const TEN_19: u128 = 10_000_000_000_000_000_000;

/// "00" to "99": two decimal digits per table lookup.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Integers joined by ':' in a fixed buffer of `N` bytes: the one-argument
/// form of an internal state (`1796000000000000:1:1796000030000`), built
/// without allocating. It sits on the replication path of every lock grant
/// and limiter write, so digits go four, then two, at a time and 128-bit division
/// happens only for values beyond 64 bits. Optionally led by a mark byte
/// (`@`, the in-place effect's separator, see `effect`).
pub struct Fields<const N: usize> {
    buf: [u8; N],
    len: usize,
    /// Fields pushed so far.
    count: usize,
}

/// The common size: up to six fields of 41 characters.
pub type FieldText = Fields<256>;

impl<const N: usize> Fields<N> {
    /// Joins `fields` in decimal with ':'. Inlined so the buffer is built in
    /// the caller's frame instead of copied out.
    #[inline]
    pub fn new(fields: &[i128]) -> Fields<N> {
        let mut text = Fields::empty();
        for &f in fields {
            text.push_field(f);
        }
        text
    }

    /// No fields yet.
    #[inline]
    pub fn empty() -> Fields<N> {
        Fields {
            buf: [0; N],
            len: 0,
            count: 0,
        }
    }

    /// Fields led by the byte `mark` (not a field itself).
    #[inline]
    pub fn marked(mark: u8) -> Fields<N> {
        let mut text = Fields::empty();
        text.push(mark);
        text
    }

    /// Appends one field (after a ':' unless it is the first).
    #[inline]
    pub fn push_field(&mut self, f: i128) {
        if self.count > 0 {
            self.push(b':');
        }
        self.count += 1;
        if f < 0 {
            self.push(b'-');
        }
        let magnitude = f.unsigned_abs();
        match u64::try_from(magnitude) {
            Ok(small) => self.push_u64(small, 1),
            Err(_) => {
                // `high` < 2^64 because |f| < 2^127.
                self.push_u64((magnitude / TEN_19) as u64, 1);
                self.push_u64((magnitude % TEN_19) as u64, 19);
            }
        }
    }

    /// Appends the digits of `n`, zero-padded to at least `min_width` (at
    /// most 20), written backwards into a scratch buffer of zeros.
    #[inline]
    fn push_u64(&mut self, mut n: u64, min_width: usize) {
        let mut digits = [b'0'; 20];
        let mut at = digits.len();
        // Four digits per division while there are more than four: a
        // millisecond time takes three steps instead of six.
        while n >= 10_000 {
            let four = (n % 10_000) as usize;
            n /= 10_000;
            let (high, low) = (four / 100 * 2, four % 100 * 2);
            at -= 4;
            digits[at..at + 2].copy_from_slice(&DIGIT_PAIRS[high..high + 2]);
            digits[at + 2..at + 4].copy_from_slice(&DIGIT_PAIRS[low..low + 2]);
        }
        while n >= 100 {
            let pair = (n % 100) as usize * 2;
            n /= 100;
            at -= 2;
            digits[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        }
        if n >= 10 {
            let pair = n as usize * 2;
            at -= 2;
            digits[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        } else {
            at -= 1;
            digits[at] = b'0' + n as u8;
        }
        let text = &digits[at.min(digits.len().saturating_sub(min_width))..];
        // Callers size `N` for their most fields; more is a caller bug, cut off.
        if let Some(room) = self.buf.get_mut(self.len..self.len + text.len()) {
            room.copy_from_slice(text);
            self.len += text.len();
        }
    }

    fn push(&mut self, b: u8) {
        if self.len < self.buf.len() {
            self.buf[self.len] = b;
            self.len += 1;
        }
    }

    /// The text (with its mark, if any).
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Parses exactly `N` ':'-separated decimal integers.
pub fn parse_fields<const N: usize>(bytes: &[u8]) -> Option<[i128; N]> {
    match parse_some_fields::<N>(bytes)? {
        (fields, n) if n == N => Some(fields),
        _ => None,
    }
}

/// Parses one to `N` ':'-separated decimal integers: the fields (the first
/// `count` are set) and their count; `None` for anything else.
pub fn parse_some_fields<const N: usize>(bytes: &[u8]) -> Option<([i128; N], usize)> {
    let mut out = [0i128; N];
    let mut count = 0;
    for part in bytes.split(|b| *b == b':') {
        let digits = part.strip_prefix(b"-").unwrap_or(part);
        if digits.is_empty() || digits.len() > 39 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        *out.get_mut(count)? = std::str::from_utf8(part).ok()?.parse().ok()?;
        count += 1;
    }
    Some((out, count))
}

/// Parses a byte count the way Redis reads its memory settings (and
/// `CONFIG SET` a module's memory configuration): digits, then an optional
/// unit of any case: `b`, `k` (1000), `kb` (1024), `m`, `mb`, `g`, `gb`;
/// `None` when it is not one or exceeds an i64.
pub fn parse_memory(bytes: &[u8]) -> Option<i64> {
    let split = bytes
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(bytes.len());
    let (digits, unit) = bytes.split_at(split);
    const UNITS: [(&str, i64); 7] = [
        ("b", 1),
        ("k", 1000),
        ("kb", 1 << 10),
        ("m", 1_000_000),
        ("mb", 1 << 20),
        ("g", 1_000_000_000),
        ("gb", 1 << 30),
    ];
    let scale = if unit.is_empty() {
        1
    } else {
        UNITS.iter().find(|(name, _)| is_keyword(unit, name))?.1
    };
    parse_i64(digits)?.checked_mul(scale)
}

/// Parses a finite decimal number ("0.01", "1e-3"); `None` for text, NaN,
/// infinities and values that overflow (such as "1e400").
pub fn parse_f64(bytes: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(bytes).ok()?;
    let valid = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'));
    let v: f64 = if valid {
        text.parse().ok()?
    } else {
        return None;
    };
    v.is_finite().then_some(v)
}

/// A decimal as the module API's `RedisModule_StringToDouble` reads one
/// (what other modules' commands take): any `strtod` text but NaN, no
/// leading space; infinities are numbers here.
pub fn parse_c_double(bytes: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(bytes).ok()?;
    if text.is_empty() || text.starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    let v: f64 = text.parse().ok()?;
    (!v.is_nan()).then_some(v)
}

/// Whether `arg` equals the ASCII keyword `word`, ignoring case. A byte
/// typed as declared matches at once; only a letter is compared folded (the
/// same answer as `eq_ignore_ascii_case`, without folding every byte).
#[inline]
pub fn is_keyword(arg: &[u8], word: &str) -> bool {
    let word = word.as_bytes();
    arg.len() == word.len()
        && arg
            .iter()
            .zip(word)
            .all(|(&a, &w)| a == w || (w.is_ascii_alphabetic() && a | 0x20 == w | 0x20))
}

impl Limit {
    /// `value` if it is in the range, else the range's error.
    pub fn check(&self, value: u64) -> Result<u64, WardenError> {
        match self.contains(value) {
            true => Ok(value),
            false => Err(self.error()),
        }
    }

    /// An integer in the range, parsed from `word`; the range's error for
    /// anything else.
    pub fn parse(&self, word: &[u8]) -> Result<u64, WardenError> {
        match parse_i64(word).and_then(|v| u64::try_from(v).ok()) {
            Some(v) => self.check(v),
            None => Err(self.error()),
        }
    }

    /// The error a value out of the range gets.
    pub const fn error(&self) -> WardenError {
        WardenError::NotInRange(*self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_sizes_read_as_redis_reads_them() {
        let cases: [(&[u8], Option<i64>); 14] = [
            (b"1024", Some(1024)),
            (b"0", Some(0)),
            (b"1mb", Some(1 << 20)),
            (b"1MB", Some(1 << 20)),
            (b"64m", Some(64_000_000)),
            (b"2kb", Some(2048)),
            (b"2K", Some(2000)),
            (b"3gb", Some(3 << 30)),
            (b"7b", Some(7)),
            (b"1tb", None),
            (b"-1mb", None),
            (b"mb", None),
            (b"1.5mb", None),
            (b"9223372036854775807gb", None),
        ];
        for (text, want) in cases {
            assert_eq!(
                parse_memory(text),
                want,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn int_args_name_themselves_at_every_edge() {
        let ttl = IntArg {
            name: "ttl",
            min: 1,
            max: 100,
            duration: false,
        };
        let timeout = IntArg {
            name: "timeout",
            min: 0,
            max: 100,
            duration: false,
        };
        let positive = WardenError::NotPositive("ttl");
        let range = WardenError::OutOfRange("ttl");
        for (text, want) in [
            (&b"0"[..], Err(positive.clone())),
            (b"1", Ok(1)),
            (b"100", Ok(100)),
            (b"101", Err(range.clone())),
            (b"-1", Err(positive.clone())),
            (b"9223372036854775807", Err(range.clone())),
            (b"9223372036854775808", Err(range.clone())),
            (b"18446744073709551615", Err(range.clone())),
            (b"99999999999999999999999999", Err(range.clone())),
            (b"-99999999999999999999999999", Err(positive.clone())),
            (b"007", Err(positive.clone())),
            (b"1.5", Err(positive.clone())),
            (b"", Err(positive.clone())),
        ] {
            assert_eq!(ttl.parse(text), want, "{}", String::from_utf8_lossy(text));
        }
        assert_eq!(timeout.parse(b"0"), Ok(0));
        assert_eq!(timeout.parse(b"-1"), Err(WardenError::Negative("timeout")));
        assert_eq!(
            timeout.parse(b"18446744073709551615"),
            Err(WardenError::OutOfRange("timeout"))
        );
    }

    #[test]
    fn keywords_match_as_eq_ignore_ascii_case_does() {
        let words = ["WAIT", "max_wait", "X1", "A_B", "", "inf"];
        // Every byte against each position of each word, so each letter meets
        // its other case, its neighbours and the bytes 0x20 apart from it.
        for word in words {
            for at in 0..word.len() {
                for b in 0..=255u8 {
                    let mut arg = word.as_bytes().to_vec();
                    arg[at] = b;
                    assert_eq!(
                        is_keyword(&arg, word),
                        arg.eq_ignore_ascii_case(word.as_bytes()),
                        "{arg:?} vs {word}"
                    );
                }
            }
            assert!(is_keyword(word.to_lowercase().as_bytes(), word));
            assert!(!is_keyword(format!("{word}x").as_bytes(), word));
        }
    }

    #[test]
    fn parses_plain_integers() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-17"), Some(-17));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
    }

    #[test]
    fn agrees_with_std_at_every_length() {
        // Against the standard parse, on values of every length and at the
        // 18/19-digit boundary where overflow becomes possible.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut values = vec![
            i64::MAX,
            i64::MIN,
            999_999_999_999_999_999,
            -999_999_999_999_999_999,
        ];
        for len in 1..=19u32 {
            for _ in 0..200 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let v = (x % 10u64.pow(len)) as i64;
                values.extend([v, -v]);
            }
        }
        for v in values {
            let text = v.to_string();
            assert_eq!(parse_i64(text.as_bytes()), Some(v), "{text}");
            if v == 0 {
                continue; // "00" has a leading zero, refused as Redis does
            }
            let padded = format!("{text}0");
            assert_eq!(
                parse_i64(padded.as_bytes()),
                padded.parse().ok(),
                "{padded}"
            );
        }
    }

    #[test]
    fn rejects_everything_else() {
        for bad in [
            &b""[..],
            b"-",
            b"+1",
            b" 1",
            b"1 ",
            b"1.5",
            b"1e3",
            b"01",
            b"-0",
            b"9223372036854775808",
            b"-9223372036854775809",
            b"9999999999999999999",
            b"-9999999999999999999",
            b"99999999999999999999",
            b"1/",
            b"1:",
            b"abc",
            b"\xff",
        ] {
            assert_eq!(parse_i64(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn parses_finite_decimals_only() {
        assert_eq!(parse_f64(b"0.01"), Some(0.01));
        assert_eq!(parse_f64(b"1e-3"), Some(0.001));
        assert_eq!(parse_f64(b"-2"), Some(-2.0));
        for bad in [
            &b""[..],
            b"abc",
            b"nan",
            b"NaN",
            b"inf",
            b"-inf",
            b"1e400",
            b"0x10",
            b" 1",
            b"1,5",
        ] {
            assert_eq!(parse_f64(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn fields_round_trip() {
        let fields = [
            1_796_003_647_837_000,
            -1,
            0,
            i128::from(u64::MAX) * 3,
            i128::MIN + 1,
        ];
        let text = FieldText::new(&fields);
        assert_eq!(parse_fields::<5>(text.as_bytes()), Some(fields));
        assert_eq!(FieldText::new(&[7, 0, -3]).as_bytes(), b"7:0:-3");
        assert_eq!(parse_fields::<2>(b"1:2:3"), None);
        assert_eq!(parse_fields::<3>(b"1:2"), None);
        assert_eq!(parse_fields::<2>(b"1:x"), None);
        assert_eq!(parse_fields::<2>(b"1::2"), None);
        assert_eq!(parse_fields::<1>(b"+1"), None);
    }

    #[test]
    fn marked_fields_and_field_lists() {
        let mut text = Fields::<64>::marked(b'@');
        for f in [4, 1, -2] {
            text.push_field(f);
        }
        assert_eq!(text.as_bytes(), b"@4:1:-2");
        let (fields, n) = parse_some_fields::<4>(b"1:2:3").expect("fields");
        assert_eq!((&fields[..n], n), (&[1, 2, 3][..], 3));
        assert_eq!(parse_some_fields::<2>(b"1:2:3"), None, "more than N");
        assert_eq!(parse_some_fields::<4>(b""), None);
        assert_eq!(parse_some_fields::<4>(b"1:"), None);
    }

    #[test]
    fn field_digits_match_std_formatting() {
        let mut values: Vec<i128> = vec![i128::MAX, i128::MIN + 1, 0];
        let mut power: i128 = 1;
        while let Some(next) = power.checked_mul(10) {
            for v in [power - 1, power, power + 1] {
                values.extend([v, -v]);
            }
            power = next;
        }
        for v in [u64::MAX as i128, u64::MAX as i128 + 1, TEN_19 as i128 * 7] {
            values.extend([v - 1, v, v + 1, -v]);
        }
        // A fixed xorshift sequence over every magnitude.
        let mut x: u128 = 0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C834;
        for shift in 0..127 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push((x >> (shift + 1)) as i128);
        }
        for chunk in values.chunks(6) {
            let expected: Vec<String> = chunk.iter().map(|v| v.to_string()).collect();
            let text = FieldText::new(chunk);
            assert_eq!(text.as_bytes(), expected.join(":").as_bytes());
        }
    }

    #[test]
    fn durations_take_a_unit() {
        let ttl = IntArg {
            name: "ttl",
            min: 1,
            max: 3_600_000,
            duration: true,
        };
        let range = Err(WardenError::OutOfRange("ttl"));
        let positive = Err(WardenError::NotPositive("ttl"));
        for (text, want) in [
            (&b"1500"[..], Ok(1500)),
            (b"1500ms", Ok(1500)),
            (b"90s", Ok(90_000)),
            (b"15m", Ok(900_000)),
            (b"1h", Ok(3_600_000)),
            (b"2h", range.clone()),
            (b"1d", range.clone()),
            (b"99999999999999999999s", range.clone()),
            (b"9223372036854775807m", range.clone()),
            (b"0s", positive.clone()),
            (b"s", positive.clone()),
            (b"5x", positive.clone()),
            (b"5 s", positive.clone()),
            (b"05s", positive.clone()),
            (b"-5s", positive.clone()),
            (b"5S", positive.clone()),
            (b"5s@1:2:3", positive.clone()),
        ] {
            assert_eq!(ttl.parse(text), want, "{}", String::from_utf8_lossy(text));
        }
        let plain = IntArg {
            duration: false,
            ..ttl
        };
        assert_eq!(plain.parse(b"90s"), positive);
    }

    #[test]
    fn cell_integers_take_rust_integer_syntax() {
        for (text, canonical) in [
            (&b"+60"[..], &b"60"[..]),
            (b"060", b"60"),
            (b"+000", b"0"),
            (b"-0", b"0"),
            (b"-000", b"0"),
            (b"0", b"0"),
            (b"15", b"15"),
            (b"-5", b"-5"),
            (b"+", b"+"),
            (b"", b""),
            (b"1_000", b"1_000"),
            (b" 5", b" 5"),
            (b"+-5", b"+-5"),
            (b"00009223372036854775808", b"9223372036854775808"),
        ] {
            assert_eq!(
                cell_integer(text),
                canonical,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn keywords_ignore_case() {
        assert!(is_keyword(b"wait", "WAIT"));
        assert!(is_keyword(b"WaIt", "WAIT"));
        assert!(!is_keyword(b"WAITS", "WAIT"));
    }

    const L: Limit = Limit::new("BUCKETSIZE", 1, 255);

    #[test]
    fn parses_the_range_and_names_it_when_refusing() {
        assert_eq!(L.parse(b"1"), Ok(1));
        assert_eq!(L.parse(b"255"), Ok(255));
        for bad in [
            &b"0"[..],
            b"256",
            b"-1",
            b"x",
            b"",
            b"1.0",
            b"18446744073709551616",
        ] {
            assert_eq!(L.parse(bad), Err(L.error()), "{bad:?}");
        }
        assert_eq!(
            L.error().to_string(),
            "ERR BUCKETSIZE must be an integer from 1 to 255"
        );
    }
}
