//! Module data types: persistence (RDB, AOF rewrite), digest, copy, memory.

pub mod bloom;
pub mod lock;
pub mod rate;
