//! Numbers formatted as C's `printf` writes them, for replies that other
//! modules' clients compare as text.

/// `v` as `%g` writes it: 6 significant digits, trailing zeros dropped,
/// exponent form (`1e-05`, `2.5e+07`) below 10^-4 and from 10^6 on.
pub fn g(v: f64) -> String {
    const PRECISION: i32 = 6;
    if v == 0.0 || !v.is_finite() {
        return match v {
            v if v.is_nan() => "nan".to_string(),
            v if v.is_infinite() && v > 0.0 => "inf".to_string(),
            v if v.is_infinite() => "-inf".to_string(),
            _ if v.is_sign_negative() => "-0".to_string(),
            _ => "0".to_string(),
        };
    }
    // The exponent after rounding to 6 significant digits.
    let scientific = format!("{:.*e}", (PRECISION - 1) as usize, v);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..PRECISION).contains(&exponent) {
        let fixed = format!("{:.*}", (PRECISION - 1 - exponent) as usize, v);
        trim_zeros(&fixed).to_string()
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim_zeros(mantissa), exponent.abs())
    }
}

/// `text` without the zeros after its decimal point (and the point, when
/// nothing is left after it).
fn trim_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::g;

    /// What glibc's `printf("%g")` writes for the same values.
    #[test]
    fn matches_printf() {
        for (v, want) in [
            (0.0, "0"),
            (0.01, "0.01"),
            (0.005, "0.005"),
            (0.0025, "0.0025"),
            (0.000125, "0.000125"),
            (0.0000625, "6.25e-05"),
            (1e-10, "1e-10"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.333333"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (999999.5, "1e+06"),
            (-2.5, "-2.5"),
            (0.9999999999999999, "1"),
            (100.0, "100"),
        ] {
            assert_eq!(g(v), want, "{v}");
        }
    }
}
