//! How layers are sized: warden's (`geometry`, per `Sizing`) and
//! RedisBloom's for imported filters (`redisbloom_geometry`).

use std::f64::consts::LN_2;

use crate::bloom::core::errors;
use crate::bloom::core::hashing::Hashing;
use crate::bloom::core::redisbloom;
use crate::common::error::WardenError;
use crate::common::parse::parse_f64;

/// Most hash functions per layer: enough for the optimal count of any error
/// rate a double holds (−log2 p is at most 1074), as RedisBloom sizes them.
pub const MAX_HASHES: u32 = 1100;

/// Checks that an error rate is a number in (0, 1).
pub fn validate_error_rate(p: f64) -> Result<(), WardenError> {
    if p.is_finite() && p > 0.0 && p < 1.0 {
        Ok(())
    } else {
        Err(errors::BAD_ERROR_RATE)
    }
}

/// Reads an error rate (an argument, a configuration): a number in (0, 1).
pub fn parse_error_rate(bytes: &[u8]) -> Result<f64, WardenError> {
    let p = parse_f64(bytes).ok_or(errors::BAD_ERROR_RATE)?;
    validate_error_rate(p)?;
    Ok(p)
}

/// Bits and hash count of one layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Bit count, a multiple of 64.
    pub bits: u64,
    /// Number of probes per item.
    pub hashes: u32,
}

/// Expected false-positive rate of a layer with `bits` bits and `hashes`
/// probes once it holds `items` items.
pub fn expected_fpr(bits: u64, hashes: u32, items: u64) -> f64 {
    let k = f64::from(hashes);
    (1.0 - (-k * items as f64 / bits as f64).exp()).powf(k)
}

/// How a layer's bits are chosen for its error rate `p`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sizing {
    /// −ln p / ln²2 bits per item rounded up to whole 64-bit words (as
    /// RedisBloom sizes): used for the layers of a scaling filter, whose rates
    /// p/2, p/4, … leave slack under the asked rate.
    Nominal,
    /// The fewest 64-bit words for which the expected rate with the whole
    /// number of hashes used is at or below p: a non-scaling filter's only
    /// layer carries the whole guarantee.
    Guaranteed,
}

impl Sizing {
    /// The sizing of a filter with this expansion (0: non-scaling).
    pub fn for_expansion(expansion: u32) -> Sizing {
        if expansion == 0 {
            Sizing::Guaranteed
        } else {
            Sizing::Nominal
        }
    }
}

/// The whole number of hashes (either side of ln2 · bits/item) with the lower
/// expected rate for `bits` bits and `capacity` items.
fn best_hashes(bits: u64, capacity: u64) -> u32 {
    let ideal = LN_2 * bits as f64 / capacity as f64;
    let low = (ideal.floor() as u32).clamp(1, MAX_HASHES);
    let high = (ideal.ceil() as u32).clamp(1, MAX_HASHES);
    if expected_fpr(bits, low, capacity) <= expected_fpr(bits, high, capacity) {
        low
    } else {
        high
    }
}

fn whole_words(bits: f64) -> Result<u64, WardenError> {
    if !bits.is_finite() || bits >= (u64::MAX / 4) as f64 {
        return Err(errors::TOO_LARGE);
    }
    Ok((bits.ceil() as u64).max(64).div_ceil(64) * 64)
}

/// Geometry of a layer for `capacity` items at error rate `p`.
pub fn geometry(capacity: u64, p: f64, sizing: Sizing) -> Result<Geometry, WardenError> {
    validate_error_rate(p)?;
    if capacity == 0 {
        return Err(WardenError::NotPositive("capacity"));
    }
    let n = capacity as f64;
    let nominal = whole_words(n * -p.ln() / (LN_2 * LN_2))?;
    let mut bits = match sizing {
        Sizing::Nominal => nominal,
        Sizing::Guaranteed => {
            // For k hashes the rate is at most p from −k·n / ln(1 − p^(1/k)) bits.
            let k0 = (-p.log2()).floor().max(1.0) as u32;
            let needed = |k: u32| -f64::from(k) * n / (1.0 - p.powf(1.0 / f64::from(k))).ln();
            let around = |k: u32| k.clamp(1, MAX_HASHES);
            let fewest = (around(k0.saturating_sub(1))..=around(k0 + 2))
                .map(needed)
                .fold(f64::INFINITY, f64::min);
            whole_words(fewest)?.max(nominal)
        }
    };
    if sizing == Sizing::Guaranteed {
        // Floating-point slack: a few more words at most.
        while expected_fpr(bits, best_hashes(bits, capacity), capacity) > p {
            bits = bits.checked_add(64).ok_or(errors::TOO_LARGE)?;
        }
    }
    Ok(Geometry {
        bits,
        hashes: best_hashes(bits, capacity),
    })
}

/// Geometry of a new layer of a scaling filter with this hashing.
pub fn layer_geometry(hashing: Hashing, capacity: u64, p: f64) -> Result<Geometry, WardenError> {
    match hashing {
        Hashing::Warden => geometry(capacity, p, Sizing::Nominal),
        Hashing::RedisBloom => redisbloom_geometry(capacity, p),
    }
}

/// Geometry of a layer RedisBloom makes for `capacity` items at rate `p`
/// (`redisbloom::sizing`).
pub fn redisbloom_geometry(capacity: u64, p: f64) -> Result<Geometry, WardenError> {
    validate_error_rate(p)?;
    if capacity == 0 {
        return Err(WardenError::NotPositive("capacity"));
    }
    match redisbloom::sizing(capacity, p) {
        Some((bits, hashes)) if (1..=u64::from(MAX_HASHES)).contains(&hashes) => Ok(Geometry {
            bits,
            hashes: hashes as u32,
        }),
        _ => Err(errors::TOO_LARGE),
    }
}

/// Checks a stored layer of RedisBloom's scheme (its capacity and rate are
/// checked by the caller): whole 64-bit words, at most as many items as its
/// capacity, and the bits and hashes RedisBloom gives that capacity and
/// rate, give or take one word and one hash (another host's `ln` may round
/// differently at the edges).
pub fn check_redisbloom_layer(
    capacity: u64,
    error_rate: f64,
    hashes: u32,
    items: u64,
    bits: u64,
) -> Result<(), WardenError> {
    let bad = WardenError::BadFilterData;
    let g = redisbloom_geometry(capacity, error_rate).map_err(|_| bad.clone())?;
    let consistent = items <= capacity
        && (1..=MAX_HASHES).contains(&hashes)
        && hashes.abs_diff(g.hashes) <= 1
        && bits >= 64
        && bits.is_multiple_of(64)
        && bits.abs_diff(g.bits) <= 64;
    if consistent {
        Ok(())
    } else {
        Err(bad)
    }
}
