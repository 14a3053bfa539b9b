//! Module data types: persistence (RDB, AOF rewrite), digest, copy, memory.

pub mod lock;
