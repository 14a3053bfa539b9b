//! Module configurations: set as `loadmodule` arguments (`name value` pairs)
//! or at run time with `CONFIG SET warden.<name>`.

use std::sync::atomic::{AtomicI64, Ordering};

use redis_module::RedisString;

use crate::core::error::WardenError;
use crate::core::parse::parse_i64;

/// Most clients that may wait on one lock key at a time.
pub static DLOCK_MAX_WAITERS: AtomicI64 = AtomicI64::new(DLOCK_MAX_WAITERS_DEFAULT);
/// Default of `dlock-max-waiters`.
pub const DLOCK_MAX_WAITERS_DEFAULT: i64 = 10_000;
/// Range of `dlock-max-waiters`.
pub const DLOCK_MAX_WAITERS_RANGE: (i64, i64) = (1, 10_000_000);

/// Current `dlock-max-waiters`.
pub fn dlock_max_waiters() -> usize {
    DLOCK_MAX_WAITERS.load(Ordering::Relaxed).max(1) as usize
}

/// Integer configurations: name and allowed range.
const INTEGER_CONFIGS: &[(&str, (i64, i64))] = &[("dlock-max-waiters", DLOCK_MAX_WAITERS_RANGE)];

/// Checks `loadmodule` arguments: `name value` pairs of known names with values
/// in range. The values themselves are applied by the configuration registry.
pub fn check_module_args(args: &[RedisString]) -> Result<(), WardenError> {
    if !args.len().is_multiple_of(2) {
        return Err(WardenError::BadModuleArgument(
            "module arguments must be name value pairs".to_string(),
        ));
    }
    for pair in args.chunks(2) {
        let name = String::from_utf8_lossy(pair[0].as_slice()).into_owned();
        let Some((_, (min, max))) = INTEGER_CONFIGS.iter().find(|(n, _)| *n == name) else {
            return Err(WardenError::BadModuleArgument(format!(
                "unknown module argument '{name}'"
            )));
        };
        match parse_i64(pair[1].as_slice()) {
            Some(v) if (*min..=*max).contains(&v) => {}
            _ => {
                return Err(WardenError::BadModuleArgument(format!(
                    "{name} must be an integer from {min} to {max}"
                )))
            }
        }
    }
    Ok(())
}
