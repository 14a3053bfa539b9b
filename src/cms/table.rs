//! The count-min family's commands (`CMS.*X`), one row each: name, handler,
//! flags, the docs `COMMAND DOCS` shows, and the grammar that gives the
//! arity and arguments and reads calls (`common::grammar`).

use crate::cms::commands as cms;
use crate::cms::requests as req;
use crate::common::grammar::Request;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};

/// `CMS.*X`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    Command {
        name: <req::InitByDim as Request>::NAME,
        func: command_fn!(cms::initbydim),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Creates an empty count-min sketch of depth rows of width counters; with WINDOW, one that counts over the last window (at least ms, at most 1.25 × ms).",
            complexity: "O(1)",
            grammar: <req::InitByDim as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::InitByProb as Request>::NAME,
        func: command_fn!(cms::initbyprob),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Creates an empty count-min sketch sized as RedisBloom sizes it for an over-count of at most error × the total with the given probability of exceeding it (width ceil(2 / error), depth ceil(log2(1 / probability))); WINDOW as CMS.INITBYDIMX.",
            complexity: "O(1)",
            grammar: <req::InitByProb as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::IncrBy as Request>::NAME,
        func: command_fn!(cms::incrby),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Adds each increment to its item's count: the counts after it (never below the true ones), or the error CMS: INCRBY overflow for an item whose counters saturated.",
            complexity: "O(n) where n is the number of items times the depth",
            grammar: <req::IncrBy as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Query as Request>::NAME,
        func: command_fn!(cms::query),
        alias: None,
        flags: "readonly fast",
        doc: Doc {
            summary: "Each item's count: at least its true count (over the window, for a windowed sketch).",
            complexity: "O(n) where n is the number of items times the depth",
            grammar: <req::Query as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Merge as Request>::NAME,
        func: command_fn!(cms::merge),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Sets the existing sketch dest to the sum of the sources times their WEIGHTS (default 1), counter by counter: all of one size and window, every sum from 0 to 4294967295.",
            complexity: "O(n) where n is the number of counters times the number of sources",
            grammar: <req::Merge as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Info as Request>::NAME,
        func: command_fn!(cms::info),
        alias: None,
        flags: "readonly fast",
        doc: Doc {
            summary: "width, depth and count (the total of the increments, over the window for a windowed sketch), and window (ms) for a windowed sketch.",
            complexity: "O(1)",
            grammar: <req::Info as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Rotate as Request>::NAME,
        func: command_fn!(cms::rotate),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: a windowed sketch moved to the slot a master's write started (replication and AOF).",
            complexity: "O(n) where n is the number of counters cleared",
            grammar: <req::Rotate as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Load as Request>::NAME,
        func: command_fn!(cms::load),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: rebuilds a sketch, its counters in chunks (AOF).",
            complexity: "O(n)",
            grammar: <req::Load as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
];
