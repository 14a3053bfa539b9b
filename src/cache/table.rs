//! The cache family's commands (`CACHE.*`), one row each: name, handler,
//! flags, the docs `COMMAND DOCS` shows, and the grammar that gives the
//! arity and arguments and reads calls (`common::grammar`).

use crate::cache::commands as cache;
use crate::cache::requests as req;
use crate::common::grammar::Request;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};

/// `CACHE.*`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    Command {
        name: <req::Set as Request>::NAME,
        func: command_fn!(cache::set),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Caches a value, fresh for ttl_ms then served stale for STALE ms: 1, or 0 when refused (an older VERSION than the stored one, or a LEASE token that is no longer current). Hands the value to clients waiting for a refresh.",
            complexity: "O(N) where N is the value's length",
            grammar: <req::Set as Request>::GRAMMAR,
            since: "0.2.0",
        },
    },
    Command {
        name: <req::Get as Request>::NAME,
        func: command_fn!(cache::get),
        alias: None,
        flags: "write blocking",
        doc: Doc {
            summary: "The value when fresh (and at least MINVERSION), else nil. HOT keeps an often-read key fresh. LEASE turns a miss into one refresh: [value, 0] when fresh, [stale value or nil, token] for the caller who refreshes, [stale value or nil, 0] while another does; WAIT blocks for the refreshed value instead of nil.",
            complexity: "O(1)",
            grammar: <req::Get as Request>::GRAMMAR,
            since: "0.2.0",
        },
    },
    Command {
        name: <req::Info as Request>::NAME,
        func: command_fn!(cache::info),
        alias: None,
        flags: "readonly fast",
        doc: Doc {
            summary: "version, fresh_ms (negative once stale), stale_ms (until the value is dropped), reads in the current HOT window, the live lease token (0 if none) and waiters of a cache key; nil when it is missing.",
            complexity: "O(1)",
            grammar: <req::Info as Request>::GRAMMAR,
            since: "0.2.0",
        },
    },
    Command {
        name: <req::SetWhole as Request>::NAME,
        func: command_fn!(cache::set_entry),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: sets a cache entry (value and version:fresh_until:stale_until:lease:lease_until) with absolute times (replication and AOF).",
            complexity: "O(N) where N is the value's length",
            grammar: <req::SetWhole as Request>::GRAMMAR,
            since: "0.2.0",
        },
    },
    Command {
        name: <req::SetMeta as Request>::NAME,
        func: command_fn!(cache::set_meta),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: sets a cache entry's state but its value (version:fresh_until:stale_until:lease:lease_until) with absolute times (replication and AOF).",
            complexity: "O(1)",
            grammar: <req::SetMeta as Request>::GRAMMAR,
            since: "0.2.0",
        },
    },
];
