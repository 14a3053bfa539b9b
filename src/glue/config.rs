//! Module configurations: given as `loadmodule` arguments (`name value`
//! pairs), as `warden.<name> value` lines in redis.conf, or at run time with
//! `CONFIG SET warden.<name>`. Values are checked before they are applied.
//! Each family declares its own (`Family::configs`); this file holds the
//! kinds of configuration, the ones the families share, and registration.

use std::ffi::{c_char, c_int, c_longlong, c_void, CString};
use std::sync::atomic::{AtomicI64, AtomicPtr, AtomicU64, Ordering};

use redis_module::raw;
use redis_module::RedisString;

use crate::common::error::WardenError;
use crate::common::parse::{parse_i64, parse_memory};
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
    /// A configuration `name` with `default`, taking `min` to `max` (with
    /// `memory`, in the units Redis's memory settings take).
    pub const fn new(
        name: &'static str,
        default: i64,
        min: i64,
        max: i64,
        memory: bool,
    ) -> IntConfig {
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

/// 1: lock and limiter writes replicate their effect in the client's own
/// call (`effect`); 0: always as internal commands, for replicas that still
/// run a warden without the in-place form.
pub static FAST_REPLICATION: IntConfig = IntConfig::new("fast-replication", 1, 0, 1, false);

/// The configurations the families share.
pub static SHARED: [Config; 1] = [Config::Int(&FAST_REPLICATION)];

/// A decimal configuration, read by its family's rule.
pub struct DecimalConfig {
    /// Name without the `warden.` prefix.
    pub name: &'static str,
    /// Value when nothing sets it.
    pub default: f64,
    /// The family's reading of a value (its error names what is wrong).
    pub parse: fn(&[u8]) -> Result<f64, WardenError>,
    /// The value's bits.
    bits: AtomicU64,
    /// The text `CONFIG GET` shows (set on the main thread).
    text: AtomicPtr<raw::RedisModuleString>,
}

impl DecimalConfig {
    /// A configuration `name` with `default`, values read by `parse`.
    pub const fn new(
        name: &'static str,
        default: f64,
        parse: fn(&[u8]) -> Result<f64, WardenError>,
    ) -> DecimalConfig {
        DecimalConfig {
            name,
            default,
            parse,
            bits: AtomicU64::new(default.to_bits()),
            text: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Current value.
    pub fn get(&self) -> f64 {
        f64::from_bits(self.bits.load(Ordering::Relaxed))
    }
}

/// A configuration of one of the kinds above.
#[derive(Clone, Copy)]
pub enum Config {
    /// An integer (or a byte count).
    Int(&'static IntConfig),
    /// A decimal.
    Decimal(&'static DecimalConfig),
}

impl Config {
    fn name(self) -> &'static str {
        match self {
            Config::Int(c) => c.name,
            Config::Decimal(c) => c.name,
        }
    }
}

/// Whether effects may be replicated in the client's own call.
pub fn fast_replication() -> bool {
    FAST_REPLICATION.get() != 0
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

unsafe extern "C" fn get_decimal(
    _name: *const c_char,
    privdata: *mut c_void,
) -> *mut raw::RedisModuleString {
    // SAFETY: `privdata` is the `&'static DecimalConfig` given when the config was registered.
    unsafe { &*privdata.cast::<DecimalConfig>() }
        .text
        .load(Ordering::Relaxed)
}

unsafe extern "C" fn set_decimal(
    _name: *const c_char,
    value: *mut raw::RedisModuleString,
    privdata: *mut c_void,
    err: *mut *mut raw::RedisModuleString,
) -> c_int {
    // SAFETY: as above.
    let config = unsafe { &*privdata.cast::<DecimalConfig>() };
    // SAFETY: Redis passes the new value, alive and unchanged during this callback.
    let text = unsafe { RStr::from_raw(value) };
    match (config.parse)(text.bytes()) {
        Ok(p) => {
            config.bits.store(p.to_bits(), Ordering::Relaxed);
            // SAFETY: `value` is the live new value; retaining it keeps it past the callback.
            unsafe { api!(RedisModule_RetainString)(std::ptr::null_mut(), value) };
            let old = config.text.swap(value, Ordering::Relaxed);
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

/// A configuration's default as the module arguments set it.
enum Default {
    Int(i64),
    /// The text, as given (what `CONFIG GET` shows).
    Decimal(Vec<u8>),
}

/// Reads `loadmodule` arguments: each a known name of `configs` (or
/// `aliases`) and a valid value. Returns each configuration's default, in
/// order, and the alias sets.
fn module_arg_defaults(
    args: &[RedisString],
    configs: &[Config],
) -> Result<(Vec<Default>, AliasSets), WardenError> {
    if !args.len().is_multiple_of(2) {
        return Err(WardenError::BadModuleArgument(
            "module arguments must be name value pairs".to_string(),
        ));
    }
    let mut defaults: Vec<Default> = configs
        .iter()
        .map(|c| match c {
            Config::Int(c) => Default::Int(c.default),
            Config::Decimal(c) => Default::Decimal(format!("{}", c.default).into_bytes()),
        })
        .collect();
    let mut aliases = AliasSets::default();
    for pair in args.chunks(2) {
        let (name, value) = (pair[0].as_slice(), pair[1].as_slice());
        if name == ALIASES_ARG.as_bytes() {
            aliases = parse_aliases(value)?;
            continue;
        }
        let Some(i) = configs.iter().position(|c| c.name().as_bytes() == name) else {
            return Err(WardenError::BadModuleArgument(format!(
                "unknown module argument '{}'",
                String::from_utf8_lossy(name)
            )));
        };
        defaults[i] = match configs[i] {
            Config::Int(c) => Default::Int(c.parse(value)?),
            Config::Decimal(c) => {
                (c.parse)(value).map_err(|e| {
                    let msg = e.to_string();
                    WardenError::BadModuleArgument(format!(
                        "module argument '{}': {}",
                        c.name,
                        msg.strip_prefix("ERR ").unwrap_or(&msg)
                    ))
                })?;
                Default::Decimal(value.to_vec())
            }
        };
    }
    Ok((defaults, aliases))
}

/// Registers `configs` (module arguments become the defaults, a
/// `warden.<name>` line in redis.conf overrides them) and loads them.
/// Returns the alias sets the module arguments chose.
pub fn register(
    ctx: Ctx,
    args: &[RedisString],
    configs: &[Config],
) -> Result<AliasSets, WardenError> {
    let (defaults, aliases) = module_arg_defaults(args, configs)?;
    let failed = |name: &str| WardenError::BadModuleArgument(format!("cannot register {name}"));
    for (config, default) in configs.iter().zip(defaults) {
        let name = CString::new(config.name()).map_err(|_| failed(config.name()))?;
        // SAFETY: called from OnLoad with the load context; the name is a C
        // string, the callbacks match the config's kind and its private data
        // is the `'static` configuration they read.
        let status = unsafe {
            match (config, default) {
                (Config::Int(c), Default::Int(default)) => {
                    let flags = if c.memory {
                        raw::REDISMODULE_CONFIG_MEMORY
                    } else {
                        0
                    };
                    api!(RedisModule_RegisterNumericConfig)(
                        ctx.as_ptr(),
                        name.as_ptr(),
                        default,
                        flags,
                        c.min,
                        c.max,
                        Some(get_int),
                        Some(set_int),
                        None,
                        (*c as *const IntConfig).cast_mut().cast::<c_void>(),
                    )
                }
                (Config::Decimal(c), Default::Decimal(text)) => {
                    let Ok(text) = CString::new(text) else {
                        return Err(failed(c.name));
                    };
                    api!(RedisModule_RegisterStringConfig)(
                        ctx.as_ptr(),
                        name.as_ptr(),
                        text.as_ptr(),
                        0,
                        Some(get_decimal),
                        Some(set_decimal),
                        None,
                        (*c as *const DecimalConfig).cast_mut().cast::<c_void>(),
                    )
                }
                _ => raw::REDISMODULE_ERR as c_int,
            }
        };
        if status != raw::REDISMODULE_OK as c_int {
            return Err(failed(config.name()));
        }
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
