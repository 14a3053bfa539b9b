//! The one error type of warden. Each variant is one message Redis clients see.

use std::fmt;

/// Every error a warden command can reply with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WardenError {
    /// Wrong number of arguments for the named (lower-case) command.
    WrongArity(&'static str),
    /// The key holds a value of another type.
    WrongType,
    /// An unknown option or a missing option value.
    Syntax,
    /// A lease length that is not a positive integer or overflows the clock.
    TtlNotPositive,
    /// A lock owner given as the empty string.
    OwnerEmpty,
    /// A WAIT timeout that is negative or not an integer.
    TimeoutNegative,
    /// A hold count, token or hold total that would overflow.
    HoldsOverflow,
    /// The per-key waiter cap (`dlock-max-waiters`) is reached.
    TooManyWaiters,
    /// An internal state command got a value out of range.
    InvalidState(&'static str),
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
            WardenError::Syntax => f.write_str("ERR syntax error"),
            WardenError::TtlNotPositive => f.write_str("ERR ttl must be a positive integer"),
            WardenError::OwnerEmpty => f.write_str("ERR owner must not be empty"),
            WardenError::TimeoutNegative => {
                f.write_str("ERR timeout must be a non-negative integer")
            }
            WardenError::HoldsOverflow => f.write_str("ERR lock hold count overflow"),
            WardenError::TooManyWaiters => f.write_str("ERR too many waiters for this lock"),
            WardenError::InvalidState(what) => write!(f, "ERR invalid lock state: {what}"),
            WardenError::BadModuleArgument(msg) => write!(f, "ERR {msg}"),
            WardenError::Internal => {
                f.write_str("ERR internal error in warden (the command changed nothing)")
            }
        }
    }
}

impl std::error::Error for WardenError {}
