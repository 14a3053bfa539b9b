//! Module configurations: given as `loadmodule` arguments (`name value`
//! pairs), as `warden.<name> value` lines in redis.conf, or at run time with
//! `CONFIG SET warden.<name>`. Values are checked before they are applied.

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_longlong, c_void, CString};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use redis_module::raw;
use redis_module::RedisString;

use crate::bloom::core::filter::{validate_error_rate, MAX_EXPANSION};
use crate::common::error::WardenError;
use crate::common::parse::{parse_f64, parse_i64, parse_memory};
use crate::glue::commands::{AliasSet, AliasSets};
use crate::glue::host::{api, Ctx, OwnedString, RStr};

/// An integer configuration with its range.
pub struct IntConfig {
    /// Name without the `warden.` prefix.
    pub name: &'static str,
    /// Value when nothing sets it.
    pub default: i64,
    /// Smallest accepted value.
    pub min: i64,
    /// Largest accepted value.
    pub max: i64,
    /// Whether `CONFIG SET` accepts memory units (`128mb`).
    pub memory: bool,
    value: AtomicI64,
}

impl IntConfig {
    const fn new(name: &'static str, default: i64, min: i64, max: i64, memory: bool) -> IntConfig {
        IntConfig {
            name,
            default,
            min,
            max,
            memory,
            value: AtomicI64::new(default),
        }
    }

    /// Current value.
    pub fn get(&self) -> i64 {
        self.value.load(Ordering::Relaxed)
    }

    /// Reads a module argument's value in the forms `CONFIG SET` accepts
    /// for this configuration (a memory one takes units: `64mb`).
    fn parse(&self, text: &[u8]) -> Result<i64, WardenError> {
        let value = if self.memory {
            parse_memory(text)
        } else {
            parse_i64(text)
        };
        match value {
            Some(v) if (self.min..=self.max).contains(&v) => Ok(v),
            _ => Err(WardenError::BadModuleArgument(format!(
                "module argument '{}' must be {} from {} to {}",
                self.name,
                if self.memory {
                    "a byte count (units as in CONFIG SET: 64mb)"
                } else {
                    "an integer"
                },
                self.min,
                self.max
            ))),
        }
    }
}

/// Most clients blocked in `DLOCK.ACQUIRE … WAIT` on one key.
pub static DLOCK_MAX_WAITERS: IntConfig =
    IntConfig::new("dlock-max-waiters", 10_000, 1, 10_000_000, false);
/// Capacity of a filter created by ADDX / MADDX / INSERTX without one.
pub static BF_INITIAL_CAPACITY: IntConfig =
    IntConfig::new("bf-initial-capacity", 100, 1, 1 << 30, false);
/// Expansion of a filter created without one.
pub static BF_EXPANSION: IntConfig =
    IntConfig::new("bf-expansion", 2, 1, MAX_EXPANSION as i64, false);
/// Largest filter, in bytes; bigger reserves or growths are refused.
pub static BF_MAX_BYTES: IntConfig = IntConfig::new("bf-max-bytes", 128 << 20, 1024, 1 << 40, true);
/// Capacity of a cuckoo filter created by ADDX / INSERTX without one.
pub static CF_INITIAL_CAPACITY: IntConfig =
    IntConfig::new("cf-initial-capacity", 1024, 4, 1 << 30, false);
/// Slots per bucket of a cuckoo filter created without `BUCKETSIZE`.
pub static CF_BUCKET_SIZE: IntConfig = IntConfig::new("cf-bucket-size", 2, 1, 255, false);
/// Kicks per insert of a cuckoo filter created without `MAXITERATIONS`.
pub static CF_MAX_ITERATIONS: IntConfig =
    IntConfig::new("cf-max-iterations", 500, 1, 65_535, false);
/// Expansion of a cuckoo filter created without `EXPANSION`.
pub static CF_EXPANSION: IntConfig = IntConfig::new("cf-expansion", 1, 0, 32_768, false);
/// Largest cuckoo filter, in bytes; bigger reserves or growths are refused.
pub static CF_MAX_BYTES: IntConfig = IntConfig::new("cf-max-bytes", 128 << 20, 1024, 1 << 40, true);
/// Most clients blocked in `CACHE.GET … WAIT` on one key.
pub static CACHE_MAX_WAITERS: IntConfig =
    IntConfig::new("cache-max-waiters", 10_000, 1, 10_000_000, false);
/// Largest value `CACHE.SET` stores, in bytes (Redis strings stop at 512 MB).
pub static CACHE_MAX_VALUE_BYTES: IntConfig =
    IntConfig::new("cache-max-value-bytes", 64 << 20, 1, 512 << 20, true);
/// 1: lock and limiter writes replicate their effect in the client's own
/// call (`effect`); 0: always as internal commands, for replicas that still
/// run a warden without the in-place form.
pub static FAST_REPLICATION: IntConfig = IntConfig::new("fast-replication", 1, 0, 1, false);

/// Renewals per second the kept locks (`KEEP`) of this server may need
/// together (a lock with a lease of t ms needs 3000 / t); past it new kept
/// leases are refused rather than existing ones left to lapse.
pub static DLOCK_KEEP_MAX_RENEWALS: IntConfig =
    IntConfig::new("dlock-keep-max-renewals", 50_000, 1, 100_000_000, false);

/// Replicas a master must see (online, within `dlock-min-replicas-max-lag`)
/// to grant a lock, extend one or run DLOCK.GUARD; 0: no such rule.
pub static DLOCK_MIN_REPLICAS: IntConfig = IntConfig::new("dlock-min-replicas", 0, 0, 1000, false);
/// Largest replication lag, in seconds, of a replica `dlock-min-replicas` counts.
pub static DLOCK_MIN_REPLICAS_MAX_LAG: IntConfig =
    IntConfig::new("dlock-min-replicas-max-lag", 10, 0, 86_400, false);

const INT_CONFIGS: [&IntConfig; 15] = [
    &DLOCK_MAX_WAITERS,
    &DLOCK_KEEP_MAX_RENEWALS,
    &DLOCK_MIN_REPLICAS,
    &DLOCK_MIN_REPLICAS_MAX_LAG,
    &CACHE_MAX_WAITERS,
    &CACHE_MAX_VALUE_BYTES,
    &BF_INITIAL_CAPACITY,
    &BF_EXPANSION,
    &BF_MAX_BYTES,
    &CF_INITIAL_CAPACITY,
    &CF_BUCKET_SIZE,
    &CF_MAX_ITERATIONS,
    &CF_EXPANSION,
    &CF_MAX_BYTES,
    &FAST_REPLICATION,
];

/// Name of the default error-rate configuration.
pub const BF_ERROR_RATE_NAME: &str = "bf-error-rate";
/// Default error rate of filters created without one.
pub const BF_ERROR_RATE_DEFAULT: f64 = 0.01;
static BF_ERROR_RATE: AtomicU64 = AtomicU64::new(0x3F84_7AE1_47AE_147B); // 0.01

thread_local! {
    /// The error-rate text `CONFIG GET` shows (main thread only).
    static BF_ERROR_RATE_TEXT: Cell<*mut raw::RedisModuleString> = const { Cell::new(std::ptr::null_mut()) };
}

/// Current `dlock-max-waiters`.
pub fn dlock_max_waiters() -> usize {
    DLOCK_MAX_WAITERS.get().max(1) as usize
}

/// Current `dlock-keep-max-renewals`.
pub fn dlock_keep_max_renewals() -> u64 {
    DLOCK_KEEP_MAX_RENEWALS.get().max(1) as u64
}

/// Current `cache-max-waiters`.
pub fn cache_max_waiters() -> usize {
    CACHE_MAX_WAITERS.get().max(1) as usize
}

/// Current `cache-max-value-bytes`.
pub fn cache_max_value_bytes() -> usize {
    CACHE_MAX_VALUE_BYTES.get().max(1) as usize
}

/// Whether effects may be replicated in the client's own call.
pub fn fast_replication() -> bool {
    FAST_REPLICATION.get() != 0
}

/// Current default error rate.
pub fn bf_error_rate() -> f64 {
    f64::from_bits(BF_ERROR_RATE.load(Ordering::Relaxed))
}

/// Current byte cap per cuckoo filter.
pub fn cf_max_bytes() -> u64 {
    CF_MAX_BYTES.get().max(0) as u64
}

/// Current byte cap per filter.
pub fn bf_max_bytes() -> u64 {
    BF_MAX_BYTES.get().max(0) as u64
}

fn parse_error_rate(text: &[u8]) -> Result<f64, WardenError> {
    let p = parse_f64(text).ok_or(WardenError::BadErrorRate)?;
    validate_error_rate(p)?;
    Ok(p)
}

unsafe extern "C" fn get_int(_name: *const c_char, privdata: *mut c_void) -> c_longlong {
    // SAFETY: `privdata` is the `&'static IntConfig` given when the config was registered.
    unsafe { &*privdata.cast::<IntConfig>() }.get()
}

unsafe extern "C" fn set_int(
    _name: *const c_char,
    value: c_longlong,
    privdata: *mut c_void,
    _err: *mut *mut raw::RedisModuleString,
) -> c_int {
    // Redis has already checked the range given at registration.
    // SAFETY: as above.
    unsafe { &*privdata.cast::<IntConfig>() }
        .value
        .store(value, Ordering::Relaxed);
    raw::REDISMODULE_OK as c_int
}

unsafe extern "C" fn get_error_rate(
    _name: *const c_char,
    _privdata: *mut c_void,
) -> *mut raw::RedisModuleString {
    BF_ERROR_RATE_TEXT.with(Cell::get)
}

unsafe extern "C" fn set_error_rate(
    _name: *const c_char,
    value: *mut raw::RedisModuleString,
    _privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    // SAFETY: Redis passes the new value, alive and unchanged during this callback.
    let text = unsafe { RStr::from_raw(value) };
    match parse_error_rate(text.bytes()) {
        Ok(p) => {
            BF_ERROR_RATE.store(p.to_bits(), Ordering::Relaxed);
            // SAFETY: `value` is the live new value; retaining it keeps it past the callback.
            unsafe { api!(RedisModule_RetainString)(std::ptr::null_mut(), value) };
            let old = BF_ERROR_RATE_TEXT.with(|c| c.replace(value));
            if !old.is_null() {
                // SAFETY: `old` was retained by the previous set and is released once.
                unsafe { api!(RedisModule_FreeString)(std::ptr::null_mut(), old) };
            }
            raw::REDISMODULE_OK as c_int
        }
        Err(e) => {
            let msg = e.to_string();
            let msg = msg.strip_prefix("ERR ").unwrap_or(&msg);
            let text = OwnedString::new(None, msg.as_bytes());
            // SAFETY: `err` is the error slot Redis passed; `text` is a C string Redis copies.
            unsafe {
                *err = api!(RedisModule_HoldString)(std::ptr::null_mut(), text.as_rstr().as_ptr())
            };
            raw::REDISMODULE_ERR as c_int
        }
    }
}

/// The load-only module argument naming the alias sets to register
/// (`aliases redisbloom,redis-cell`); not a configuration.
pub const ALIASES_ARG: &str = "aliases";

/// Reads the value of `aliases`: set names, comma-separated.
fn parse_aliases(value: &[u8]) -> Result<AliasSets, WardenError> {
    value
        .split(|b| *b == b',')
        .try_fold(AliasSets::default(), |sets, name| {
            let set = AliasSet::named(name).ok_or_else(|| {
                WardenError::BadModuleArgument(format!(
                    "unknown alias set '{}' in module argument '{ALIASES_ARG}' (known: {})",
                    String::from_utf8_lossy(name),
                    AliasSet::ALL.map(AliasSet::name).join(", ")
                ))
            })?;
            Ok(sets.with(set))
        })
}

/// What `loadmodule` arguments set: the configurations' defaults, in
/// `INT_CONFIGS` order, the error rate's text, and the alias sets.
type ModuleArgs = ([i64; INT_CONFIGS.len()], Vec<u8>, AliasSets);

/// Reads `loadmodule` arguments: each a known name and a valid value.
fn module_arg_defaults(args: &[RedisString]) -> Result<ModuleArgs, WardenError> {
    if !args.len().is_multiple_of(2) {
        return Err(WardenError::BadModuleArgument(
            "module arguments must be name value pairs".to_string(),
        ));
    }
    let mut ints = INT_CONFIGS.map(|c| c.default);
    let mut rate = format!("{BF_ERROR_RATE_DEFAULT}").into_bytes();
    let mut aliases = AliasSets::default();
    for pair in args.chunks(2) {
        let (name, value) = (pair[0].as_slice(), pair[1].as_slice());
        if name == ALIASES_ARG.as_bytes() {
            aliases = parse_aliases(value)?;
            continue;
        }
        if name == BF_ERROR_RATE_NAME.as_bytes() {
            parse_error_rate(value).map_err(|e| {
                let msg = e.to_string();
                WardenError::BadModuleArgument(format!(
                    "module argument '{BF_ERROR_RATE_NAME}': {}",
                    msg.strip_prefix("ERR ").unwrap_or(&msg)
                ))
            })?;
            rate = value.to_vec();
            continue;
        }
        let Some(i) = INT_CONFIGS.iter().position(|c| c.name.as_bytes() == name) else {
            return Err(WardenError::BadModuleArgument(format!(
                "unknown module argument '{}'",
                String::from_utf8_lossy(name)
            )));
        };
        ints[i] = INT_CONFIGS[i].parse(value)?;
    }
    Ok((ints, rate, aliases))
}

/// Registers every configuration (module arguments become the defaults, a
/// `warden.<name>` line in redis.conf overrides them) and loads them.
/// Returns the alias sets the module arguments chose.
pub fn register(ctx: Ctx, args: &[RedisString]) -> Result<AliasSets, WardenError> {
    let (defaults, rate, aliases) = module_arg_defaults(args)?;
    let failed = |name: &str| WardenError::BadModuleArgument(format!("cannot register {name}"));
    for (config, default) in INT_CONFIGS.iter().zip(defaults) {
        let name = CString::new(config.name).map_err(|_| failed(config.name))?;
        let flags = if config.memory {
            raw::REDISMODULE_CONFIG_MEMORY
        } else {
            0
        };
        // SAFETY: called from OnLoad with the load context; the name is a C string and the callbacks match the config's kind.
        let status = unsafe {
            api!(RedisModule_RegisterNumericConfig)(
                ctx.as_ptr(),
                name.as_ptr(),
                default,
                flags,
                config.min,
                config.max,
                Some(get_int),
                Some(set_int),
                None,
                (*config as *const IntConfig).cast_mut().cast::<c_void>(),
            )
        };
        if status != raw::REDISMODULE_OK as c_int {
            return Err(failed(config.name));
        }
    }
    let name = CString::new(BF_ERROR_RATE_NAME).map_err(|_| failed(BF_ERROR_RATE_NAME))?;
    let rate = CString::new(rate).map_err(|_| WardenError::BadErrorRate)?;
    // SAFETY: as above.
    let status = unsafe {
        api!(RedisModule_RegisterStringConfig)(
            ctx.as_ptr(),
            name.as_ptr(),
            rate.as_ptr(),
            0,
            Some(get_error_rate),
            Some(set_error_rate),
            None,
            std::ptr::null_mut(),
        )
    };
    if status != raw::REDISMODULE_OK as c_int {
        return Err(failed(BF_ERROR_RATE_NAME));
    }
    // SAFETY: called from OnLoad with the load context.
    if unsafe { api!(RedisModule_LoadConfigs)(ctx.as_ptr()) } != raw::REDISMODULE_OK as c_int {
        return Err(WardenError::BadModuleArgument(
            "a warden.* configuration from redis.conf or MODULE LOADEX ... CONFIG was refused (the server's log names it)"
                .to_string(),
        ));
    }
    Ok(aliases)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_name_known_sets_separated_by_commas() {
        let both = parse_aliases(b"redisbloom,redis-cell").unwrap();
        assert!(both.contains(AliasSet::RedisBloom) && both.contains(AliasSet::RedisCell));
        let one = parse_aliases(b"redis-cell").unwrap();
        assert!(!one.contains(AliasSet::RedisBloom) && one.contains(AliasSet::RedisCell));
        for bad in [
            &b"rebloom"[..],
            b"",
            b"redisbloom,",
            b"RedisBloom",
            b"redisbloom redis-cell",
        ] {
            let e = parse_aliases(bad).unwrap_err().to_string();
            assert!(
                e.contains("unknown alias set") && e.contains("redisbloom, redis-cell"),
                "{e}"
            );
        }
    }
}
