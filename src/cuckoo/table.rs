//! The cuckoo family's commands (`CF.*X`), one row each: name, handler,
//! flags, the docs `COMMAND DOCS` shows, and the grammar that gives the
//! arity and arguments and reads calls (`common::grammar`).

use crate::common::grammar::Request;
use crate::cuckoo::commands as cuckoo;
use crate::cuckoo::requests as req;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Alias, AliasSet, Command};

/// `CF.INSERTX`'s request.
type InsertAll = req::Insert<false>;
/// `CF.INSERTNXX`'s request.
type InsertNx = req::Insert<true>;

/// `CF.*X`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    Command {
        name: <req::Reserve as Request>::NAME,
        func: command_fn!(cuckoo::reserve),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "cf.reserve",
        }),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Creates an empty cuckoo filter sized for capacity items (BUCKETSIZE slots per bucket, at most MAXITERATIONS kicks per insert, each new sub-filter EXPANSION times larger; 0 never grows).",
            complexity: "O(1)",
            grammar: <req::Reserve as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Add as Request>::NAME,
        func: command_fn!(cuckoo::add),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "cf.add",
        }),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Adds an item (another copy if present) to a cuckoo filter, created with the defaults if missing: 1, or an error when it has no room.",
            complexity: "O(1)",
            grammar: <req::Add as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::AddNx as Request>::NAME,
        func: command_fn!(cuckoo::addnx),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "cf.addnx",
        }),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Adds an item unless it may be present: 1 if added, 0 if it may be there already.",
            complexity: "O(1)",
            grammar: <req::AddNx as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <InsertAll as Request>::NAME,
        func: command_fn!(cuckoo::insert),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "cf.insert",
        }),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Adds items, creating the filter with CAPACITY unless NOCREATE: 1 per item added, -1 where there was no room.",
            complexity: "O(n)",
            grammar: <InsertAll as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <InsertNx as Request>::NAME,
        func: command_fn!(cuckoo::insertnx),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "cf.insertnx",
        }),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Adds each item unless it may be present: 1 added, 0 may be there already, -1 no room.",
            complexity: "O(n)",
            grammar: <InsertNx as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Exists as Request>::NAME,
        func: command_fn!(cuckoo::exists),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "cf.exists",
        }),
        flags: "readonly fast",
        doc: Doc {
            summary: "1 if the item may be in the filter, 0 if it certainly is not (0 for a missing key).",
            complexity: "O(1)",
            grammar: <req::Exists as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::MultiExists as Request>::NAME,
        func: command_fn!(cuckoo::mexists),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "cf.mexists",
        }),
        flags: "readonly fast",
        doc: Doc {
            summary: "For each item, 1 if it may be in the filter, 0 if it certainly is not.",
            complexity: "O(n)",
            grammar: <req::MultiExists as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Del as Request>::NAME,
        func: command_fn!(cuckoo::del),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "cf.del",
        }),
        flags: "write fast",
        doc: Doc {
            summary: "Removes one copy of the item's fingerprint: 1 if one was there, 0 if not. Delete only items you added: deleting one never added may remove another item's copy.",
            complexity: "O(1)",
            grammar: <req::Del as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Count as Request>::NAME,
        func: command_fn!(cuckoo::count),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "cf.count",
        }),
        flags: "readonly fast",
        doc: Doc {
            summary: "How many copies of the item's fingerprint the filter holds (at least its adds less its deletes; 0 for a missing key).",
            complexity: "O(1)",
            grammar: <req::Count as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Compact as Request>::NAME,
        func: command_fn!(cuckoo::compact),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "cf.compact",
        }),
        flags: "write",
        doc: Doc {
            summary: "Moves fingerprints into older sub-filters and drops the newest ones left empty.",
            complexity: "O(n)",
            grammar: <req::Compact as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Info as Request>::NAME,
        func: command_fn!(cuckoo::info),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "cf.info",
        }),
        flags: "readonly fast",
        doc: Doc {
            summary: "Size, Number of buckets, Number of filters, Number of items inserted, Number of items deleted, Bucket size, Expansion rate, Max iterations and Fingerprint bits of a filter.",
            complexity: "O(1)",
            grammar: <req::Info as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::ScanDump as Request>::NAME,
        func: command_fn!(cuckoo::scandump),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "cf.scandump",
        }),
        flags: "readonly",
        doc: Doc {
            summary: "Reads a filter in chunks, with RedisBloom's CF.SCANDUMP iterators: iterator 0 gives [1, header], each returned iterator [next, up to 16 MiB of slots], and the end [0, \"\"].",
            complexity: "O(n) where n is the size of the chunk",
            grammar: <req::ScanDump as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::LoadChunk as Request>::NAME,
        func: command_fn!(cuckoo::loadchunk),
        alias: Some(Alias {
            set: AliasSet::RedisBloom,
            name: "cf.loadchunk",
        }),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Rebuilds a filter from CF.SCANDUMPX's chunks, in order: the header creates the key (not readable until the last chunk), each chunk must be the next one, of its exact length.",
            complexity: "O(n) where n is the size of the chunk",
            grammar: <req::LoadChunk as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Place as Request>::NAME,
        func: command_fn!(cuckoo::place),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: a write a random walk placed, as the slots it wrote (replication and AOF).",
            complexity: "O(n)",
            grammar: <req::Place as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
    Command {
        name: <req::Load as Request>::NAME,
        func: command_fn!(cuckoo::load),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: rebuilds a filter, its slots in chunks (AOF).",
            complexity: "O(n)",
            grammar: <req::Load as Request>::GRAMMAR,
            since: "0.4.0",
        },
    },
];
