//! The Bloom family's commands (`BF.*X`), one row each: name, handler,
//! flags, the docs `COMMAND DOCS` shows, and the grammar that gives the
//! arity and arguments and reads calls (`common::grammar`).

use crate::bloom::commands as bloom;
use crate::bloom::dump as bloom_dump;
use crate::common::grammar::{
    arg, chosen, flag, items, key, one_of, option, optional, required, Arg, Grammar, Kind,
};
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};

/// `BF.*X`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    Command {
        name: "bf.reservex",
        func: command_fn!(bloom::reserve),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Creates an empty Bloom filter sized for capacity items at error_rate; with AGE, an aging filter that forgets items after window_ms (capacity is then per window).",
            complexity: "O(1)",
            grammar: Grammar::new(&[key(), arg("error_rate", Kind::Double), arg("capacity", Kind::Int), one_of("shape", &[chosen(option("EXPANSION", "expansion", Kind::Int)), chosen(flag("NONSCALING")), chosen(option("AGE", "window_ms", Kind::Int))])]),
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.addx",
        func: command_fn!(bloom::add),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Adds an item to a Bloom filter (created with the defaults if missing): 1 if new, 0 if it may have been present.",
            complexity: "O(k)",
            grammar: Grammar::new(&[key(), arg("item", Kind::Str)]),
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.maddx",
        func: command_fn!(bloom::madd),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Adds items to a Bloom filter: one 1/0 (or error) per item.",
            complexity: "O(k * n)",
            grammar: Grammar::new(&[key(), items("item")]),
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.insertx",
        func: command_fn!(bloom::insert),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Adds items to a Bloom filter, creating it with the given parameters unless NOCREATE.",
            complexity: "O(k * n)",
            grammar: Grammar::new(&[
                key(),
                option("CAPACITY", "capacity", Kind::Int),
                option("ERROR", "error_rate", Kind::Double),
                option("EXPANSION", "expansion", Kind::Int),
                flag("NOCREATE"),
                flag("NONSCALING"),
                Arg { name: "item", kind: Kind::Str, token: Some("ITEMS"), optional: false, multiple: true },
            ]),
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.existsx",
        func: command_fn!(bloom::exists),
        flags: "readonly fast",
        doc: Doc {
            summary: "1 if the item may be in the filter, 0 if it certainly is not (0 for a missing key).",
            complexity: "O(k)",
            grammar: Grammar::new(&[key(), arg("item", Kind::Str)]),
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.mexistsx",
        func: command_fn!(bloom::mexists),
        flags: "readonly fast",
        doc: Doc {
            summary: "For each item, 1 if it may be in the filter, 0 if it certainly is not.",
            complexity: "O(k * n)",
            grammar: Grammar::new(&[key(), items("item")]),
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.infox",
        func: command_fn!(bloom::info),
        flags: "readonly fast",
        doc: Doc {
            summary: "Capacity, Size, Number of filters, Number of items inserted, Expansion rate, Error rate and (aging filters) Window of a filter.",
            complexity: "O(1)",
            grammar: Grammar::new(&[key(), Arg { name: "field", kind: Kind::Str, token: None, optional: true, multiple: false }]),
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.cardx",
        func: command_fn!(bloom::card),
        flags: "readonly fast",
        doc: Doc {
            summary: "Number of items added to a filter as new (0 for a missing key).",
            complexity: "O(1)",
            grammar: Grammar::new(&[key()]),
            since: "0.1.0",
        },
    },
    Command {
        name: "bf.scandumpx",
        func: command_fn!(bloom_dump::scandump),
        flags: "readonly",
        doc: Doc {
            summary: "Reads a filter in chunks, as RedisBloom's BF.SCANDUMP: iterator 0 gives [1, header], each returned iterator [next, up to 16 MiB of bits], and the end [0, \"\"].",
            complexity: "O(n) where n is the size of the chunk",
            grammar: Grammar::new(&[key(), arg("iterator", Kind::Int)]),
            since: "0.2.0",
        },
    },
    Command {
        name: "bf.loadchunkx",
        func: command_fn!(bloom_dump::loadchunk),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Rebuilds a filter from BF.SCANDUMPX's chunks, in order: the header creates the key (not readable until the last chunk), each chunk must be the next one, of its exact length.",
            complexity: "O(n) where n is the size of the chunk",
            grammar: Grammar::new(&[key(), arg("iterator", Kind::Int), arg("data", Kind::Str)]),
            since: "0.2.0",
        },
    },
    Command {
        name: "bf._addatx",
        func: command_fn!(bloom::add_at),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: adds items to an aging filter as of a master's Unix ms (replication and AOF of its adds).",
            complexity: "O(k) per item",
            grammar: Grammar::new(&[key(), arg("unix_ms", Kind::Int), items("item")]),
            since: "0.3.0",
        },
    },
    Command {
        name: "bf._loadx",
        func: command_fn!(bloom::load),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: rebuilds a filter layer by layer, its bits in chunks (AOF).",
            complexity: "O(n)",
            grammar: Grammar::new(&[
                key(),
                required(one_of(
                    "chunk",
                    &[
                        chosen(Arg {
                            kind: Kind::Block(&[
                                arg("error_rate", Kind::Double),
                                arg("expansion", Kind::Int),
                                arg("index", Kind::Int),
                                arg("capacity", Kind::Int),
                                arg("layer_error", Kind::Double),
                                arg("hashes", Kind::Int),
                                arg("items", Kind::Int),
                                arg("bits", Kind::Int),
                                optional(arg("opened", Kind::Int)),
                            ]),
                            ..option("LAYER", "layer", Kind::Int)
                        }),
                        chosen(Arg {
                            kind: Kind::Block(&[
                                arg("index", Kind::Int),
                                arg("word_offset", Kind::Int),
                                arg("bytes", Kind::Str),
                            ]),
                            ..option("BITS", "bits", Kind::Int)
                        }),
                        chosen(Arg {
                            kind: Kind::Block(&[
                                arg("error_rate", Kind::Double),
                                arg("capacity", Kind::Int),
                                arg("window_ms", Kind::Int),
                            ]),
                            ..option("AGE", "age", Kind::Int)
                        }),
                    ],
                )),
            ]),
            since: "0.1.0",
        },
    },
];
