//! Redis-facing code the families share: the host API (`host`), the command
//! row type and its panic guard (`commands`), argument access (`args`),
//! data-type plumbing (`data_type`), waiting clients (`waiting`), replicated
//! effects (`effect`), the fencing clock's server side (`fence`),
//! configuration, INFO, counters and the allocator.

pub mod alloc;
pub mod args;
pub mod commands;
pub mod config;
pub mod data_type;
pub mod effect;
pub mod fence;
pub mod host;
pub mod info;
pub mod stats;
pub mod waiting;
