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

/// Writes `v` in decimal into `buf` and returns the digits (no allocation).
pub fn format_i64(v: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut n = v.unsigned_abs();
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
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
    fn formats_integers() {
        let mut buf = [0u8; 20];
        for v in [0, 7, -7, 1_796_003_647_837_000, i64::MAX, i64::MIN] {
            assert_eq!(format_i64(v, &mut buf), v.to_string().as_bytes());
        }
    }

    #[test]
    fn keywords_ignore_case() {
        assert!(is_keyword(b"wait", "WAIT"));
        assert!(is_keyword(b"WaIt", "WAIT"));
        assert!(!is_keyword(b"WAITS", "WAIT"));
    }
}
