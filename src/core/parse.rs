//! Strict parsing of command arguments given as bytes.

/// Parses a decimal i64 the way Redis does: optional '-', digits only, no
/// leading '+', spaces or leading zeros; `None` when it is not one.
pub fn parse_i64(bytes: &[u8]) -> Option<i64> {
    let (negative, digits) = match bytes.strip_prefix(b"-") {
        Some(rest) => (true, rest),
        None => (false, bytes),
    };
    if digits.is_empty() || digits.len() > 19 || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    // Accumulate negatively so i64::MIN fits.
    let mut value: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_sub(i64::from(d - b'0'))?;
    }
    if negative {
        Some(value)
    } else {
        value.checked_neg()
    }
}

const TEN_19: u128 = 10_000_000_000_000_000_000;

/// Writes the decimal digits of `n` ending before `at`, at least `min_width`
/// (zero-padded); returns the new start.
fn push_digits(mut n: u64, digits: &mut [u8; 40], mut at: usize, min_width: usize) -> usize {
    let end = at;
    while n > 0 || end - at < min_width {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    at
}

/// Integers joined by ':' in a fixed buffer: the one-argument form of an
/// internal state (`1796000000000000:1:1796000030000`), built without allocating.
pub struct FieldText {
    buf: [u8; 256],
    len: usize,
}

impl FieldText {
    /// Joins `fields` in decimal with ':'.
    pub fn new(fields: &[i128]) -> FieldText {
        let mut text = FieldText {
            buf: [0; 256],
            len: 0,
        };
        for (i, &f) in fields.iter().enumerate() {
            if i > 0 {
                text.push(b':');
            }
            let mut digits = [0u8; 40];
            let mut at = digits.len();
            // One 128-bit division splits the value into 64-bit halves, whose
            // digits are cheap: `high` < 2^64 since |f| < 2^127.
            let magnitude = f.unsigned_abs();
            let (high, low) = ((magnitude / TEN_19) as u64, (magnitude % TEN_19) as u64);
            at = push_digits(low, &mut digits, at, if high > 0 { 19 } else { 1 });
            if high > 0 {
                at = push_digits(high, &mut digits, at, 1);
            }
            if f < 0 {
                text.push(b'-');
            }
            for &d in &digits[at..] {
                text.push(d);
            }
        }
        text
    }

    fn push(&mut self, b: u8) {
        // 6 fields of at most 40 characters fit; more is a caller bug, cut off.
        if self.len < self.buf.len() {
            self.buf[self.len] = b;
            self.len += 1;
        }
    }

    /// The text.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Parses exactly `N` ':'-separated decimal integers.
pub fn parse_fields<const N: usize>(bytes: &[u8]) -> Option<[i128; N]> {
    let mut out = [0i128; N];
    let mut parts = bytes.split(|b| *b == b':');
    for slot in out.iter_mut() {
        let part = parts.next()?;
        let digits = part.strip_prefix(b"-").unwrap_or(part);
        if digits.is_empty() || digits.len() > 39 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        *slot = std::str::from_utf8(part).ok()?.parse().ok()?;
    }
    parts.next().is_none().then_some(out)
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

/// Whether `arg` equals the ASCII keyword `word`, ignoring case.
pub fn is_keyword(arg: &[u8], word: &str) -> bool {
    arg.eq_ignore_ascii_case(word.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_integers() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-17"), Some(-17));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
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
            b"9223372036854775808",
            b"99999999999999999999",
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
    fn keywords_ignore_case() {
        assert!(is_keyword(b"wait", "WAIT"));
        assert!(is_keyword(b"WaIt", "WAIT"));
        assert!(!is_keyword(b"WAITS", "WAIT"));
    }
}
