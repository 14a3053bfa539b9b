//! Unit tests of `rate` (its `tests` module), kept apart so the code reads on its own.

use super::*;
use crate::rate::core::errors;

#[test]
fn binary_gcd_matches_euclid() {
    fn euclid(mut a: u128, mut b: u128) -> u128 {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    }
    let mut values = vec![0, 1, 2, 3, 12, 18, 1_000_000, NS_PER_MS * 100, 1 << 100];
    values.extend([
        MAX_PERIOD_NS,
        MAX_COUNT * NS_PER_MS,
        u128::MAX,
        u128::MAX - 1,
    ]);
    let mut x: u128 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..200 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        values.push(x >> (x % 120));
    }
    for &a in &values {
        for &b in values.iter().step_by(7) {
            assert_eq!(gcd(a, b), euclid(a, b), "gcd({a}, {b})");
        }
    }
}

#[test]
fn rates_take_every_decimal_form_a_program_prints() {
    let same = |a: &[u8], b: &[u8]| assert_eq!(Rate::parse(a), Rate::parse(b), "{a:?}");
    same(b".5", b"0.5");
    same(b"5.", b"5");
    same(b"1e2", b"100");
    same(b"1E+2", b"100");
    same(b"2.5e2", b"250");
    same(b"+3", b"3");
    same(b"1e-3", b"0.001");
    same(b"1e-3/m", b"0.001/m");
    same(b"0.0000", b"0");
    same(b"0e5", b"0");
    same(b"00012.50", b"12.5");
    // 1e-3 events per second is one per 10^6 ms, exactly.
    assert_eq!(
        Rate::parse(b"1e-3"),
        Ok(Rate::Finite {
            ticks_per_token: 1_000_000,
            ticks_per_ms: 1
        })
    );
    for bad in [
        &b""[..],
        b".",
        b"e5",
        b"1e",
        b"1e+",
        b"--1",
        b"-1",
        b"1.2.3",
        b"1e5.5",
        b"nan",
        b"0x10",
        b"1 ",
        b"1e999999",
        b"1/0ms",
        b"1/05s",
        b"1/",
    ] {
        assert_eq!(Rate::parse(bad), Err(errors::BAD_RATE), "{bad:?}");
    }
    for far in [
        &b"1e400"[..],
        b"1e-400",
        b"2000000000000/ms",
        b"1e16",
        b"1/999999999999d",
        b"1e-13/ms",
        b"1/1000000000001ms",
        b"1/99999999999999999999999999999999999999d",
        b"1/9999999999999999999999999999999999999999999ms",
        // Periods past 2^128 ns (red team: a period saturated at 2^128
        // let these through as one event per 341 ms).
        b"1e30/100000000000000000000000000000000000000000000ms",
        b"1e30/99999999999999999999999999999999999999ms",
        b"1e30/1100000000000000000000000000000000000000000000h",
        b"1e30/10000000000000000000000000d",
    ] {
        assert_eq!(
            Rate::parse(far),
            Err(WardenError::OutOfRange("rate")),
            "{far:?}"
        );
    }
    assert!(Rate::parse(b"1000000000000/ms").is_ok(), "the largest rate");
    // The longest period, however it is written.
    assert_eq!(
        Rate::parse(b"1/1000000000000ms"),
        Rate::parse(b"1/1000000000s")
    );
    assert!(Rate::parse(b"1/1000000000s").is_ok());
    // A period past 10^9 s is out of range even with a count that
    // brings the rate into it (docs/operations.md, number ranges).
    for long in [&b"1e20/10000000000000000000000ms"[..], b"2/1000000000001ms"] {
        assert_eq!(
            Rate::parse(long),
            Err(WardenError::OutOfRange("rate")),
            "{long:?}"
        );
    }
    assert!(
        Rate::parse(b"0.000000000001/ms").is_ok(),
        "the smallest rate"
    );
}

#[test]
fn whole_rates_take_the_short_path_to_the_same_ratio() {
    // The general parse of the same text (count × 10^0 per period).
    let general = |text: &str| {
        let (count, period) = text.split_once('/').unwrap_or((text, "s"));
        let (digits, exp10) = parse_decimal(count.as_bytes()).expect("decimal");
        assert_eq!(exp10, 0);
        let period_ns = parse_period_ns(period.as_bytes()).expect("period");
        Rate::per_period(digits, period_ns).expect("rate")
    };
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut texts: Vec<String> = [
        "1",
        "7",
        "10",
        "100",
        "999999999999",
        "000012",
        "1000000",
        "1000/h",
        "300/15m",
        "5/ms",
        "1/3650d",
        "7/11574d",
        "999999999999/1ms",
        "2/3s",
    ]
    .iter()
    .map(|t| t.to_string())
    .collect();
    let units = ["ms", "s", "m", "h", "d"];
    for _ in 0..3_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let count = 1 + x % 10u64.pow(1 + (x >> 60) as u32 % 12);
        texts.push(match x % 3 {
            0 => count.to_string(),
            1 => format!("{count}/{}", units[(x >> 8) as usize % 5]),
            _ => format!(
                "{count}/{}{}",
                1 + (x >> 16) % 5_000,
                units[(x >> 8) as usize % 5]
            ),
        });
    }
    for t in &texts {
        let fast = Rate::whole_per_period(t.as_bytes()).expect("short path");
        assert_eq!(fast, general(t), "{t}");
        assert_eq!(Rate::parse(t.as_bytes()), Ok(fast), "{t}");
    }
    for other in [
        &b"0"[..],
        b"0000",
        b"0/s",
        b"1000000000000",
        b"1.5",
        b"",
        b"1e3",
        b"1/",
        b"/s",
        b"1/0s",
        b"1/11575d",
        b"1/999999999999d",
        b"inf",
        b"12a",
        b"1//s",
        b"+1",
        b"-1",
    ] {
        assert_eq!(Rate::whole_per_period(other), None, "{other:?}");
    }
    assert_eq!(
        Rate::parse(b"1/11575d"),
        Err(WardenError::OutOfRange("rate")),
        "beyond the longest period, as the general parse says"
    );
}

#[test]
fn wide_products_compare_like_exact_ones() {
    let big = u128::MAX;
    assert_eq!(wide_mul(big, big), (big - 1, 1));
    assert_eq!(wide_mul(1 << 64, 1 << 64), (1, 0));
    assert_eq!(wide_mul(12345, 678), (0, 12345 * 678));
    assert!(wide_mul(big, 3) > wide_mul(big / 2, 5));
    assert!(wide_mul(1 << 100, 1 << 30) < wide_mul(1 << 101, 1 << 30));
}

#[test]
fn a_rate_beyond_the_fixed_point_is_the_nearest_ratio_it_holds() {
    // Python's str(2/3) and Go's FormatFloat(2.0/3, 'f', -1, 64).
    let Ok(Rate::Finite {
        ticks_per_token,
        ticks_per_ms,
    }) = Rate::parse(b"0.6666666666666666")
    else {
        panic!("2/3 refused");
    };
    let held = ticks_per_ms as f64 / ticks_per_token as f64;
    assert!((held - 0.6666666666666666e-3).abs() < 1e-18, "{held}");
    assert!(u128::from(ticks_per_token) <= MAX_TICKS && u128::from(ticks_per_ms) <= MAX_TICKS);
    // The continued-fraction step against brute force on small bounds.
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..300 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let (num, den) = (
            u128::from(x % 100_000 + 1),
            u128::from((x >> 20) % 100_000 + 1),
        );
        let bound = 60;
        let (p, q) = nearest_ratio(num, den, bound);
        assert!(p <= bound && q <= bound && q > 0, "{num}/{den} -> {p}/{q}");
        let target = num as f64 / den as f64;
        let err = |p: u128, q: u128| (p as f64 / q as f64 - target).abs();
        let best = (1..=bound)
            .flat_map(|q| (0..=bound).map(move |p| (p, q)))
            .map(|(p, q)| err(p, q))
            .fold(f64::INFINITY, f64::min);
        assert!(
            err(p, q) <= best + 1e-12,
            "{num}/{den}: {p}/{q} vs best error {best}"
        );
    }
}

#[test]
fn parses_every_rate_form() {
    let per = |c: u128, ns: u128| Rate::per_period(c, ns).expect("rate");
    assert_eq!(Rate::parse(b"100"), Ok(per(100, 1_000_000_000)));
    assert_eq!(Rate::parse(b"0.5"), Ok(per(1, 2_000_000_000)));
    assert_eq!(Rate::parse(b"inf"), Ok(Rate::Inf));
    assert_eq!(Rate::parse(b"INF"), Ok(Rate::Inf));
    assert_eq!(Rate::parse(b"100/m"), Ok(per(100, 60_000_000_000)));
    assert_eq!(Rate::parse(b"300/15m"), Ok(per(300, 900_000_000_000)));
    assert_eq!(Rate::parse(b"5/ms"), Ok(per(5, 1_000_000)));
    assert_eq!(Rate::parse(b"2/h"), Ok(per(2, 3_600_000_000_000)));
    assert_eq!(Rate::parse(b"1/d"), Ok(per(1, 86_400_000_000_000)));
    assert_eq!(
        Rate::parse(b"0"),
        Ok(Rate::Finite {
            ticks_per_token: 1,
            ticks_per_ms: 0
        })
    );
    assert_eq!(
        per(1, 1_000_000_000),
        Rate::Finite {
            ticks_per_token: 1000,
            ticks_per_ms: 1
        }
    );
}

#[test]
fn rejects_malformed_rates() {
    for bad in [
        &b"10/"[..],
        b"/s",
        b"5/0s",
        b"1e400",
        b"-1",
        b"abc",
        b"",
        b"5/x",
        b"5/2",
        b"5/s/s",
        b"5/01s",
        b"\xff",
        b"nan",
    ] {
        assert!(
            Rate::parse(bad).is_err(),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}

fn cell(state: &mut Option<BucketState>, args: (u64, u64, u64, u64), now: i64) -> [i64; 5] {
    let out = gcra(state.as_ref(), args.0, args.1, args.2, args.3, now).expect("ok");
    if let Some((s, _)) = out.store {
        *state = Some(s);
    }
    let r = out.reply;
    [
        r.limited,
        r.limit,
        r.remaining,
        r.retry_after_s,
        r.reset_after_s,
    ]
}

#[test]
fn gcra_matches_redis_cell_documented_example() {
    let mut s = None;
    assert_eq!(cell(&mut s, (15, 30, 60, 1), 0), [0, 16, 15, -1, 2]);
    assert_eq!(cell(&mut s, (15, 30, 60, 1), 0), [0, 16, 14, -1, 4]);
    assert_eq!(cell(&mut s, (15, 30, 60, 1), 0), [0, 16, 13, -1, 6]);
}

#[test]
fn gcra_limits_after_the_burst_and_tells_when_to_retry() {
    let mut s = None;
    for _ in 0..6 {
        assert_eq!(cell(&mut s, (5, 1, 1, 1), 0)[0], 0);
    }
    assert_eq!(cell(&mut s, (5, 1, 1, 1), 0), [1, 6, 0, 1, 6]);
    assert_eq!(
        cell(&mut s, (5, 1, 1, 100), 0)[3],
        -1,
        "quantity above limit never fits"
    );
}

#[test]
fn gcra_never_reports_more_remaining_than_its_limit() {
    let mut s = None;
    for now in 0..50 {
        let r = cell(&mut s, (6000, 6000, 1, 1), now * 3);
        assert!(r[2] <= r[1], "{r:?}");
    }
}

#[test]
fn gcra_rejects_zero_rates() {
    assert_eq!(
        gcra(None, 1, 0, 1, 1, 0),
        Err(WardenError::NotPositive("count"))
    );
    assert_eq!(
        gcra(None, 1, 1, 0, 1, 0),
        Err(WardenError::NotPositive("period"))
    );
    assert_eq!(gcra(None, u64::MAX, 1, 1, 1, 0), Err(errors::OVERFLOW));
}
