//! The cache family's commands (`CACHE.*`), one row each: name, handler,
//! flags, the docs `COMMAND DOCS` shows, and the grammar that gives the
//! arity and arguments and reads calls (`common::grammar`).

use crate::cache::commands as cache;
use crate::common::grammar::{arg, key, option, Arg, Grammar, Kind};
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};

/// `CACHE.*`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    Command {
        name: "cache.set",
        func: command_fn!(cache::set),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Caches a value, fresh for ttl_ms then served stale for STALE ms: 1, or 0 when refused (an older VERSION than the stored one, or a LEASE token that is no longer current). Hands the value to clients waiting for a refresh.",
            complexity: "O(N) where N is the value's length",
            grammar: Grammar::new(&[key(), arg("value", Kind::Str), arg("ttl_ms", Kind::Int), option("STALE", "stale_ms", Kind::Int), option("VERSION", "version", Kind::Int), option("LEASE", "token", Kind::Int)]),
            since: "0.2.0",
        },
    },
    Command {
        name: "cache.get",
        func: command_fn!(cache::get),
        flags: "write blocking",
        doc: Doc {
            summary: "The value when fresh (and at least MINVERSION), else nil. HOT keeps an often-read key fresh. LEASE turns a miss into one refresh: [value, 0] when fresh, [stale value or nil, token] for the caller who refreshes, [stale value or nil, 0] while another does; WAIT blocks for the refreshed value instead of nil.",
            complexity: "O(1)",
            grammar: Grammar::new(&[
                key(),
                option("MINVERSION", "version", Kind::Int),
                Arg { name: "hot", kind: Kind::Block(&[arg("reads", Kind::Int), arg("window_ms", Kind::Int), Arg { name: "ttl_ms", kind: Kind::Int, token: Some("EXTEND"), optional: false, multiple: false }]), token: Some("HOT"), optional: true, multiple: false },
                Arg { name: "lease", kind: Kind::Block(&[arg("lease_ms", Kind::Int), option("WAIT", "timeout_ms", Kind::Int)]), token: Some("LEASE"), optional: true, multiple: false },
            ]),
            since: "0.2.0",
        },
    },
    Command {
        name: "cache.info",
        func: command_fn!(cache::info),
        flags: "readonly fast",
        doc: Doc {
            summary: "version, fresh_ms (negative once stale), stale_ms (until the value is dropped), reads in the current HOT window, the live lease token (0 if none) and waiters of a cache key; nil when it is missing.",
            complexity: "O(1)",
            grammar: Grammar::new(&[key()]),
            since: "0.2.0",
        },
    },
    Command {
        name: "cache._set",
        func: command_fn!(cache::set_entry),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: sets a cache entry (value and version:fresh_until:stale_until:lease:lease_until) with absolute times (replication and AOF).",
            complexity: "O(N) where N is the value's length",
            grammar: Grammar::new(&[key(), arg("value", Kind::Str), arg("state", Kind::Str)]),
            since: "0.2.0",
        },
    },
    Command {
        name: "cache._meta",
        func: command_fn!(cache::set_meta),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: sets a cache entry's state but its value (version:fresh_until:stale_until:lease:lease_until) with absolute times (replication and AOF).",
            complexity: "O(1)",
            grammar: Grammar::new(&[key(), arg("state", Kind::Str)]),
            since: "0.2.0",
        },
    },
];
