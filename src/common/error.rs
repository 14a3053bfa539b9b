//! The one error type of warden. Each variant is one message Redis clients see.

use std::borrow::Cow;
use std::fmt;

use crate::common::limit::Limit;

/// Every error a warden command can reply with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WardenError {
    /// Wrong number of arguments for the named (lower-case) command.
    WrongArity(Cow<'static, str>),
    /// The key holds a value of another type.
    WrongType,
    /// A lock request of another kind than the key's (`SHARED`, `LIMIT n`).
    LockKindMismatch,
    /// `KEEP` from a caller that is no client connection (a script, a
    /// module's call): nothing would ever end the grant.
    KeepNeedsConnection,
    /// `KEEP` on a replica, which renews nothing.
    KeepNeedsMaster,
    /// `KEEP` with a ttl below the shortest one renewals can keep (ms).
    KeepTtlTooShort(i64),
    /// Kept leases would need more renewals per second than
    /// `dlock-keep-max-renewals` (the value given).
    KeepCapacity(u64),
    /// DLOCK.GUARD: the key (lossy text) is not held by the owner with the token.
    Fenced(String),
    /// DLOCK.GUARD: the command named cannot run guarded, for the reason given.
    NotGuardable(String, &'static str),
    /// No command of this name (DLOCK.GUARD).
    UnknownCommand(String),
    /// The named command has no such subcommand (DLOCK.GUARD).
    UnknownSubcommand(String),
    /// The guarded command touches what this cluster node does not serve.
    NotServedHere,
    /// The user may not run the named command, or not on these keys
    /// (DLOCK.GUARD: Redis 7.0 does not tell a module which one it was).
    NoPermission(String),
    /// `maxmemory` is reached and the guarded command may use more.
    OutOfMemory,
    /// A write on a read-only replica.
    ReadOnlyReplica,
    /// The cluster is down.
    ClusterDown,
    /// The server refused to run the guarded command for another reason (errno).
    CallRefused(i32),
    /// An unknown option or a missing option value.
    Syntax,
    /// An integer argument (named) that must be positive and is not.
    NotPositive(&'static str),
    /// An integer argument (named) that must be zero or more and is not.
    Negative(&'static str),
    /// An integer argument (named) above its documented maximum.
    OutOfRange(&'static str),
    /// An internal command (named, lower case) called by an ordinary client.
    InternalCommand(&'static str),
    /// A lock owner given as the empty string.
    OwnerEmpty,
    /// A hold count, token or hold total that would overflow.
    HoldsOverflow,
    /// Fencing tokens reached their maximum (only after forged data).
    TokensExhausted,
    /// The per-key waiter cap (`dlock-max-waiters`, `cache-max-waiters`) is reached.
    TooManyWaiters,
    /// `dlock-min-replicas`: a lock grant or GUARD needs `needed` replicas
    /// with lag at most `max_lag_s` seconds; this master sees `seen`.
    NotEnoughReplicas {
        /// `dlock-min-replicas`.
        needed: i64,
        /// `dlock-min-replicas-max-lag`.
        max_lag_s: i64,
        /// Replicas online within that lag.
        seen: i64,
    },
    /// A `CACHE.SET` value above `cache-max-value-bytes`.
    ValueTooLarge,
    /// `CACHE.GET … WAIT` without `LEASE` (only a lease can be waited for).
    WaitWithoutLease,
    /// An internal state command (`DLOCK._SET`, `RL._SET`) got a bad value.
    InvalidState(&'static str),
    /// A Bloom error rate that is not a number in (0, 1).
    BadErrorRate,
    /// A Bloom expansion that is not an integer from 1 to 32768.
    BadExpansion,
    /// A filter (or its growth) would exceed `bf-max-bytes`.
    FilterTooLarge,
    /// A non-scaling filter holds its capacity.
    FilterFull,
    /// An aging filter got more than its capacity within one window.
    AgingFull,
    /// A window outside 100 ms to 10 years.
    BadWindow,
    /// `AGE` given together with `EXPANSION` or `NONSCALING`.
    AgeWithScaling,
    /// Stored or loaded filter data is inconsistent.
    BadFilterData,
    /// `BF.RESERVEX` on a key that already exists.
    ItemExists,
    /// `NOCREATE` on a missing filter.
    NotFound,
    /// `EXPANSION` given together with `NONSCALING`.
    NonScalingExpansion,
    /// A filter that `BF.LOADCHUNKX` has not finished loading.
    FilterLoading,
    /// A `BF.LOADCHUNKX` chunk for a key that holds a complete filter.
    FilterLoaded,
    /// A cuckoo `BUCKETSIZE` outside 1..=255.
    BadBucketSize,
    /// A cuckoo `MAXITERATIONS` outside 1..=65535.
    BadMaxIterations,
    /// A cuckoo `EXPANSION` outside 0..=32768.
    BadCuckooExpansion,
    /// A cuckoo capacity outside 2 × BUCKETSIZE ..= 2^30.
    BadCuckooCapacity,
    /// A cuckoo filter that has all its sub-filters and no room.
    MaxExpansions,
    /// A cuckoo filter that cannot grow (`EXPANSION 0`) and has no room.
    CuckooFull,
    /// A cuckoo filter (or its growth) would exceed `cf-max-bytes`.
    CuckooTooLarge,
    /// A `BF.LOADCHUNKX` chunk that is not the next one (its expected iterator).
    ChunkOutOfOrder(u64),
    /// A `BF.LOADCHUNKX` chunk of the wrong length (the expected length).
    ChunkLength(u64),
    /// A `BF.SCANDUMPX` iterator inside a chunk.
    BadIterator,
    /// A `BF.LOADCHUNKX` header that neither `BF.SCANDUMPX` nor RedisBloom
    /// 2.x's `BF.SCANDUMP` made.
    ForeignDump,
    /// A RedisBloom header of a filter hashed with its 32-bit legacy hash.
    RedisBloomHash32,
    /// A RedisBloom header of a filter sized to powers of two (`n2`).
    RedisBloomPowerOfTwo,
    /// A RedisBloom header with option bits RedisBloom 2.x does not define.
    RedisBloomOptions(u32),
    /// A rate that is not a number, `inf`, or count/period.
    BadRate,
    /// Rate-limiter arithmetic that would overflow.
    RateOverflow,
    /// A rate-limiter key written by another RL command.
    LimiterKindMismatch,
    /// More limits in one RL call than a key holds (`MAX_LIMITS`).
    TooManyLimits,
    /// An integer argument outside its declared range.
    NotInRange(Limit),
    /// A value (named) would grow past the size cap of a setting (named).
    WouldExceed {
        /// What would grow (`filter`).
        what: &'static str,
        /// The setting that caps it.
        setting: &'static str,
    },
    /// A family's own refusal: its whole message, declared in its folder.
    Refused(&'static str),
    /// A family's own refusal whose message carries a value, worked out when
    /// it happens.
    RefusedWith(String),
    /// A module argument at load time is unknown or out of range.
    BadModuleArgument(String),
    /// A handler panicked; the panic was caught at the command boundary.
    Internal,
}

impl fmt::Display for WardenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WardenError::WrongArity(cmd) => {
                write!(f, "ERR wrong number of arguments for '{cmd}' command")
            }
            WardenError::WrongType => {
                f.write_str("WRONGTYPE Operation against a key holding the wrong kind of value")
            }
            WardenError::LockKindMismatch => f.write_str("ERR key holds a lock of another kind"),
            WardenError::KeepNeedsMaster => {
                f.write_str("ERR KEEP needs a master: a replica renews no lease")
            }
            WardenError::KeepTtlTooShort(min) => {
                write!(f, "ERR KEEP needs a ttl of at least {min} ms")
            }
            WardenError::KeepCapacity(max) => write!(
                f,
                "ERR KEEP renewal capacity reached: kept locks would need more than {max} renewals per second (dlock-keep-max-renewals); use a longer ttl"
            ),
            WardenError::KeepNeedsConnection => f.write_str(
                "ERR KEEP binds a lock to the client connection: not from a script or a module call",
            ),
            WardenError::Fenced(key) => {
                write!(f, "FENCED {key} is not held by this owner with this token")
            }
            WardenError::NotGuardable(cmd, why) => {
                write!(f, "ERR DLOCK.GUARD cannot run '{cmd}': {why}")
            }
            WardenError::UnknownCommand(cmd) => write!(f, "ERR unknown command '{cmd}'"),
            WardenError::UnknownSubcommand(cmd) => {
                write!(f, "ERR unknown subcommand or wrong use of '{cmd}'")
            }
            WardenError::NotServedHere => {
                f.write_str("ERR the command reaches keys or channels this node does not serve")
            }
            WardenError::NoPermission(cmd) => write!(
                f,
                "NOPERM this user has no permissions to run the '{cmd}' command or to access one of its keys"
            ),
            WardenError::OutOfMemory => {
                f.write_str("OOM command not allowed when used memory > 'maxmemory'.")
            }
            WardenError::ReadOnlyReplica => {
                f.write_str("READONLY You can't write against a read only replica.")
            }
            WardenError::ClusterDown => f.write_str("CLUSTERDOWN The cluster is down"),
            WardenError::CallRefused(errno) => {
                write!(f, "ERR the server refused to run the command (errno {errno})")
            }
            WardenError::Syntax => f.write_str("ERR syntax error"),
            WardenError::NotPositive(arg) => write!(f, "ERR {arg} must be a positive integer"),
            WardenError::Negative(arg) => write!(f, "ERR {arg} must be a non-negative integer"),
            WardenError::OutOfRange(arg) => write!(f, "ERR {arg} is out of range"),
            WardenError::InternalCommand(cmd) => write!(f, "ERR {cmd} is an internal command"),
            WardenError::OwnerEmpty => f.write_str("ERR owner must not be empty"),
            WardenError::HoldsOverflow => f.write_str("ERR lock hold count overflow"),
            WardenError::TokensExhausted => {
                f.write_str("ERR fencing tokens are exhausted on this server for this key (INFO warden: warden_fence_tokens_left)")
            }
            WardenError::TooManyWaiters => f.write_str("ERR too many waiters for this key"),
            WardenError::NotEnoughReplicas {
                needed,
                max_lag_s,
                seen,
            } => write!(
                f,
                "NOREPLICAS lock grants need {needed} replicas with lag <= {max_lag_s} s (dlock-min-replicas); this master sees {seen}"
            ),
            WardenError::ValueTooLarge => {
                f.write_str("ERR value is larger than cache-max-value-bytes")
            }
            WardenError::WaitWithoutLease => f.write_str("ERR WAIT needs LEASE"),
            WardenError::InvalidState(what) => write!(f, "ERR invalid state: {what}"),
            WardenError::BadErrorRate => {
                f.write_str("ERR error rate must be a number between 0 and 1")
            }
            WardenError::BadExpansion => {
                f.write_str("ERR expansion must be an integer from 1 to 32768")
            }
            WardenError::FilterTooLarge => f.write_str("ERR filter would exceed bf-max-bytes"),
            WardenError::FilterFull => f.write_str("ERR non scaling filter is full"),
            WardenError::AgingFull => {
                f.write_str("ERR aging filter is full (far more than its capacity within one window)")
            }
            WardenError::BadWindow => {
                f.write_str("ERR window must be from 100 ms to 10 years (3650 days)")
            }
            WardenError::AgeWithScaling => {
                f.write_str("ERR AGE cannot be used with EXPANSION or NONSCALING")
            }
            WardenError::BadFilterData => f.write_str("ERR invalid filter data"),
            WardenError::ItemExists => f.write_str("ERR item exists"),
            WardenError::NotFound => f.write_str("ERR not found"),
            WardenError::NonScalingExpansion => {
                f.write_str("ERR expansion cannot be used with a non scaling filter")
            }
            WardenError::FilterLoading => f.write_str("ERR filter is still being loaded"),
            WardenError::FilterLoaded => f.write_str("ERR key already holds a complete filter"),
            WardenError::BadBucketSize => {
                f.write_str("ERR BUCKETSIZE must be an integer from 1 to 255")
            }
            WardenError::BadMaxIterations => {
                f.write_str("ERR MAXITERATIONS must be an integer from 1 to 65535")
            }
            WardenError::BadCuckooExpansion => {
                f.write_str("ERR EXPANSION must be an integer from 0 to 32768")
            }
            WardenError::BadCuckooCapacity => {
                f.write_str("ERR capacity must be an integer from 2 * BUCKETSIZE to 1073741824")
            }
            WardenError::MaxExpansions => f.write_str("ERR Maximum expansions reached"),
            WardenError::CuckooFull => f.write_str("ERR filter is full"),
            WardenError::CuckooTooLarge => f.write_str("ERR filter would exceed cf-max-bytes"),
            WardenError::ChunkOutOfOrder(next) => {
                write!(f, "ERR chunk out of order (expected iterator {next})")
            }
            WardenError::ChunkLength(len) => {
                write!(f, "ERR chunk must be {len} bytes at this iterator")
            }
            WardenError::BadIterator => f.write_str("ERR iterator does not start a chunk"),
            WardenError::ForeignDump => f.write_str(
                "ERR not a BF.SCANDUMPX header nor a RedisBloom 2.x BF.SCANDUMP header",
            ),
            WardenError::RedisBloomHash32 => f.write_str(
                "ERR unsupported RedisBloom filter: 32-bit legacy hashing (no FORCE64 option)",
            ),
            WardenError::RedisBloomPowerOfTwo => f.write_str(
                "ERR unsupported RedisBloom filter: power-of-two sizing (no NOROUND option, or n2 set)",
            ),
            WardenError::RedisBloomOptions(bits) => {
                write!(f, "ERR unsupported RedisBloom filter options {bits:#x}")
            }
            WardenError::BadRate => f.write_str(
                "ERR rate must be a non-negative number, inf, or count/period such as 100/s or 300/15m",
            ),
            WardenError::RateOverflow => f.write_str("ERR rate limiter arithmetic would overflow"),
            WardenError::LimiterKindMismatch => {
                f.write_str("ERR key holds a different kind of rate limiter")
            }
            WardenError::TooManyLimits => {
                f.write_str("ERR too many limits: a key holds at most 8")
            }
            WardenError::NotInRange(limit) => write!(
                f,
                "ERR {} must be an integer from {} to {}",
                limit.arg, limit.min, limit.max
            ),
            WardenError::WouldExceed { what, setting } => {
                write!(f, "ERR {what} would exceed {setting}")
            }
            WardenError::Refused(text) => f.write_str(text),
            WardenError::RefusedWith(text) => f.write_str(text),
            WardenError::BadModuleArgument(msg) => write!(f, "ERR {msg}"),
            WardenError::Internal => {
                f.write_str("ERR internal error in warden (the command changed nothing)")
            }
        }
    }
}

impl std::error::Error for WardenError {}
