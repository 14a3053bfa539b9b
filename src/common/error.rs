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
    /// No command of this name (a command that runs another).
    UnknownCommand(String),
    /// The named command has no such subcommand.
    UnknownSubcommand(String),
    /// The guarded command touches what this cluster node does not serve.
    NotServedHere,
    /// The user may not run the named command, or not on these keys
    /// (Redis 7.0 does not tell a module which one it was).
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
    /// Fencing tokens reached their maximum (only after forged data).
    TokensExhausted,
    /// The per-key waiter cap (the family's setting) is reached.
    TooManyWaiters,
    /// Too few replicas for a write that asks for them (`NOREPLICAS`, the
    /// family's text): callers retry such a refusal later.
    NotEnoughReplicas(String),
    /// An internal state command (a family's `._SET`) got a bad value.
    InvalidState(&'static str),
    /// Stored or loaded filter data is inconsistent.
    BadFilterData,
    /// A filter reserved on a key that already exists.
    ItemExists,
    /// `NOCREATE` on a missing filter.
    NotFound,
    /// A filter whose chunks are not all loaded yet.
    FilterLoading,
    /// A dump chunk for a key that holds a complete filter.
    FilterLoaded,
    /// A dump chunk that is not the next one (its expected iterator).
    ChunkOutOfOrder(u64),
    /// A dump chunk of the wrong length (the expected length).
    ChunkLength(u64),
    /// A dump iterator inside a chunk.
    BadIterator,
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
            WardenError::TokensExhausted => {
                f.write_str("ERR fencing tokens are exhausted on this server for this key (INFO warden: warden_fence_tokens_left)")
            }
            WardenError::TooManyWaiters => f.write_str("ERR too many waiters for this key"),
            WardenError::NotEnoughReplicas(text) => f.write_str(text),
            WardenError::InvalidState(what) => write!(f, "ERR invalid state: {what}"),
            WardenError::BadFilterData => f.write_str("ERR invalid filter data"),
            WardenError::ItemExists => f.write_str("ERR item exists"),
            WardenError::NotFound => f.write_str("ERR not found"),
            WardenError::FilterLoading => f.write_str("ERR filter is still being loaded"),
            WardenError::FilterLoaded => f.write_str("ERR key already holds a complete filter"),
            WardenError::ChunkOutOfOrder(next) => {
                write!(f, "ERR chunk out of order (expected iterator {next})")
            }
            WardenError::ChunkLength(len) => {
                write!(f, "ERR chunk must be {len} bytes at this iterator")
            }
            WardenError::BadIterator => f.write_str("ERR iterator does not start a chunk"),
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
