//! The Bloom family's commands (`BF.*X`), one row each: name, handler,
//! flags, the docs `COMMAND DOCS` shows, and the grammar that gives the
//! arity and arguments and reads calls (`common::grammar`).

use crate::bloom::commands as bloom;
use crate::bloom::dump as bloom_dump;
use crate::bloom::requests as req;
use crate::common::grammar::Request;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Alias, AliasSet, Command};

/// `BF.*X`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    Command {
        name: <req::Reserve as Request>::NAME,
        func: command_fn!(bloom::reserve),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "bf.reserve",
        }),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Creates an empty Bloom filter sized for capacity items at error_rate; with AGE, an aging filter that forgets items after window_ms (capacity is then per window).",
            complexity: "O(1)",
            grammar: <req::Reserve as Request>::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: <req::Add as Request>::NAME,
        func: command_fn!(bloom::add),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "bf.add",
        }),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Adds an item to a Bloom filter (created with the defaults if missing): 1 if new, 0 if it may have been present.",
            complexity: "O(k)",
            grammar: <req::Add as Request>::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: <req::MultiAdd as Request>::NAME,
        func: command_fn!(bloom::madd),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "bf.madd",
        }),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Adds items to a Bloom filter: one 1/0 (or error) per item.",
            complexity: "O(k * n)",
            grammar: <req::MultiAdd as Request>::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: <req::Insert as Request>::NAME,
        func: command_fn!(bloom::insert),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "bf.insert",
        }),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Adds items to a Bloom filter, creating it with the given parameters unless NOCREATE.",
            complexity: "O(k * n)",
            grammar: <req::Insert as Request>::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: <req::Exists as Request>::NAME,
        func: command_fn!(bloom::exists),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "bf.exists",
        }),
        flags: "readonly fast",
        doc: Doc {
            summary: "1 if the item may be in the filter, 0 if it certainly is not (0 for a missing key).",
            complexity: "O(k)",
            grammar: <req::Exists as Request>::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: <req::MultiExists as Request>::NAME,
        func: command_fn!(bloom::mexists),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "bf.mexists",
        }),
        flags: "readonly fast",
        doc: Doc {
            summary: "For each item, 1 if it may be in the filter, 0 if it certainly is not.",
            complexity: "O(k * n)",
            grammar: <req::MultiExists as Request>::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: <req::Info as Request>::NAME,
        func: command_fn!(bloom::info),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "bf.info",
        }),
        flags: "readonly fast",
        doc: Doc {
            summary: "Capacity, Size, Number of filters, Number of items inserted, Expansion rate, Error rate and (aging filters) Window of a filter.",
            complexity: "O(1)",
            grammar: <req::Info as Request>::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: <req::Card as Request>::NAME,
        func: command_fn!(bloom::card),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "bf.card",
        }),
        flags: "readonly fast",
        doc: Doc {
            summary: "Number of items added to a filter as new (0 for a missing key).",
            complexity: "O(1)",
            grammar: <req::Card as Request>::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: <req::ScanDump as Request>::NAME,
        func: command_fn!(bloom_dump::scandump),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "bf.scandump",
        }),
        flags: "readonly",
        doc: Doc {
            summary: "Reads a filter in chunks, as RedisBloom's BF.SCANDUMP: iterator 0 gives [1, header], each returned iterator [next, up to 16 MiB of bits], and the end [0, \"\"].",
            complexity: "O(n) where n is the size of the chunk",
            grammar: <req::ScanDump as Request>::GRAMMAR,
            since: "0.2.0",
        },
    },
    Command {
        name: <req::LoadChunk as Request>::NAME,
        func: command_fn!(bloom_dump::loadchunk),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "bf.loadchunk",
        }),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Rebuilds a filter from BF.SCANDUMPX's chunks (or RedisBloom 2.x BF.SCANDUMP's: an import that keeps RedisBloom's hashing), in order: the header creates the key (not readable until the last chunk), each chunk must be the next one, of its exact length.",
            complexity: "O(n) where n is the size of the chunk",
            grammar: <req::LoadChunk as Request>::GRAMMAR,
            since: "0.2.0",
        },
    },
    Command {
        name: <req::AddAt as Request>::NAME,
        func: command_fn!(bloom::add_at),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: adds items to an aging filter as of a master's Unix ms (replication and AOF of its adds).",
            complexity: "O(k) per item",
            grammar: <req::AddAt as Request>::GRAMMAR,
            since: "0.3.0",
        },
    },
    Command {
        name: <req::Load as Request>::NAME,
        func: command_fn!(bloom::load),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: rebuilds a filter layer by layer, its bits in chunks (AOF).",
            complexity: "O(n)",
            grammar: <req::Load as Request>::GRAMMAR,
            since: "0.1.0",
        },
    },
];
