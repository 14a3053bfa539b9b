//! The top-k family's commands (`TOPK.*X`), one row each: name, handler,
//! flags, the docs `COMMAND DOCS` shows, and the grammar that gives the
//! arity and arguments and reads calls (`common::grammar`).

use crate::common::grammar::Request;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::topk::commands as topk;
use crate::topk::requests as req;

/// `TOPK.*X`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    Command {
        name: <req::Reserve as Request>::NAME,
        func: command_fn!(topk::reserve),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Creates an empty top-k keeping the k items counted highest, with depth rows of width buckets decaying at decay (topk-width, topk-depth and topk-decay when not given: 8, 7 and 0.9); with WINDOW, one over the last window (at least ms, at most 1.25 × ms).",
            complexity: "O(1)",
            grammar: <req::Reserve as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Add as Request>::NAME,
        func: command_fn!(topk::add),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Counts each item once: per item, the item it pushed out of the top k, or nil.",
            complexity: "O(n * k) where n is the number of items",
            grammar: <req::Add as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::IncrBy as Request>::NAME,
        func: command_fn!(topk::incrby),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Counts each item increment times (0 to 100000): per item, the item it pushed out of the top k, or nil.",
            complexity: "O(n * k) where n is the number of items",
            grammar: <req::IncrBy as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Query as Request>::NAME,
        func: command_fn!(topk::query),
        alias: None,
        flags: "readonly fast",
        doc: Doc {
            summary: "For each item, 1 if it is in the top k, else 0.",
            complexity: "O(n * k) where n is the number of items",
            grammar: <req::Query as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Count as Request>::NAME,
        func: command_fn!(topk::count_items),
        alias: None,
        flags: "readonly fast",
        doc: Doc {
            summary: "Each item's estimated count (it may be below the true count; over the window for a windowed top-k).",
            complexity: "O(n * k) where n is the number of items",
            grammar: <req::Count as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::List as Request>::NAME,
        func: command_fn!(topk::list),
        alias: None,
        flags: "readonly",
        doc: Doc {
            summary: "The top k items, largest count first; WITHCOUNT follows each with its count.",
            complexity: "O(k log k)",
            grammar: <req::List as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Info as Request>::NAME,
        func: command_fn!(topk::info),
        alias: None,
        flags: "readonly fast",
        doc: Doc {
            summary: "k, width, depth and decay, and window (ms) for a windowed top-k.",
            complexity: "O(1)",
            grammar: <req::Info as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Rotate as Request>::NAME,
        func: command_fn!(topk::rotate),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: a windowed top-k moved to the slot a master's write started (replication and AOF).",
            complexity: "O(n) where n is the number of buckets cleared and heap items counted",
            grammar: <req::Rotate as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Load as Request>::NAME,
        func: command_fn!(topk::load),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: rebuilds a top-k, its buckets in chunks and its heap slot by slot (AOF).",
            complexity: "O(n)",
            grammar: <req::Load as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
];
