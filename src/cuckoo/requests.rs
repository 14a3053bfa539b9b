//! The cuckoo family's typed requests: each command's grammar (what `COMMAND
//! DOCS` shows, its arity, and how a call is read) and the values a call
//! carries, checked as they are read. The internal `CF._PLACEX` and
//! `CF._LOADX` are read by their wire format (`wire`); their grammars here
//! are what `COMMAND DOCS` shows.

use crate::common::chunks::{LOAD_ITERATOR, SCAN_ITERATOR};
use crate::common::error::WardenError;
use crate::common::grammar::{
    arg, chosen, flag, items, key, one_of, option, optional, repeated, required,
    shape_only_request, tokened_block, Arg, Grammar, Kind, Request,
};
use crate::common::parse::parse_i64;
use crate::cuckoo::config::{CF_BUCKET_SIZE, CF_EXPANSION, CF_INITIAL_CAPACITY, CF_MAX_ITERATIONS};
use crate::cuckoo::core::errors::{self, BUCKET_SIZE, EXPANSION, MAX_CAPACITY, MAX_ITERATIONS};
use crate::cuckoo::core::filter::CuckooParams;

/// An integer in `range`, else `err`.
fn int_in(
    bytes: &[u8],
    range: std::ops::RangeInclusive<i64>,
    err: WardenError,
) -> Result<u32, WardenError> {
    match parse_i64(bytes) {
        Some(v) if range.contains(&v) => Ok(v as u32),
        _ => Err(err),
    }
}

/// Creation options of CF.RESERVEX and CF.INSERTX(NX), with the module's
/// defaults (`cf-*` configuration) for what is not given.
#[derive(Default)]
pub struct CreateOptions {
    /// `capacity` or `CAPACITY c`.
    pub capacity: Option<u64>,
    /// `BUCKETSIZE b`.
    pub bucket_size: Option<u32>,
    /// `MAXITERATIONS m`.
    pub max_iterations: Option<u32>,
    /// `EXPANSION e`.
    pub expansion: Option<u32>,
    /// `NOCREATE` (CF.INSERTX only).
    pub nocreate: bool,
}

impl CreateOptions {
    /// Parameters of a new filter, checked.
    pub fn params(&self) -> Result<CuckooParams, WardenError> {
        let params = CuckooParams {
            capacity: self.capacity.unwrap_or(CF_INITIAL_CAPACITY.get() as u64),
            bucket_size: self.bucket_size.unwrap_or(CF_BUCKET_SIZE.get() as u32),
            max_iterations: self
                .max_iterations
                .unwrap_or(CF_MAX_ITERATIONS.get() as u32),
            expansion: self.expansion.unwrap_or(CF_EXPANSION.get() as u32),
        };
        params.validate()?;
        Ok(params)
    }

    fn take(&mut self, arg: &'static Arg, word: &[u8]) -> Result<(), WardenError> {
        match arg.name {
            "capacity" => {
                let c = int_in(word, 1..=MAX_CAPACITY as i64, errors::bad_capacity())?;
                self.capacity = Some(u64::from(c));
            }
            "bucketsize" => self.bucket_size = Some(BUCKET_SIZE.parse(word)? as u32),
            "maxiterations" => self.max_iterations = Some(MAX_ITERATIONS.parse(word)? as u32),
            "expansion" => self.expansion = Some(EXPANSION.parse(word)? as u32),
            "NOCREATE" => self.nocreate = true,
            _ => {}
        }
        Ok(())
    }
}

/// `CF.RESERVEX key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]`
pub struct Reserve(pub CreateOptions);

impl<'a> Request<'a> for Reserve {
    const NAME: &'static str = "cf.reservex";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        arg("capacity", Kind::Int),
        option("BUCKETSIZE", "bucketsize", Kind::Int),
        option("MAXITERATIONS", "maxiterations", Kind::Int),
        option("EXPANSION", "expansion", Kind::Int),
    ]);

    fn empty() -> Self {
        Reserve(CreateOptions::default())
    }

    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        self.0.take(arg, word)
    }
}

/// `CF.INSERTX key [CAPACITY c] [NOCREATE] ITEMS item ...` and
/// `CF.INSERTNXX …` (`NX` picks the second).
pub struct Insert<const NX: bool> {
    /// The options of a filter it creates.
    pub options: CreateOptions,
    /// How many items (the last words of the call).
    pub items: usize,
}

impl<'a, const NX: bool> Request<'a> for Insert<NX> {
    const NAME: &'static str = if NX { "cf.insertnxx" } else { "cf.insertx" };
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        option("CAPACITY", "capacity", Kind::Int),
        flag("NOCREATE"),
        required(repeated(option("ITEMS", "item", Kind::Str))),
    ]);

    fn empty() -> Self {
        Insert {
            options: CreateOptions::default(),
            items: 0,
        }
    }

    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        if arg.name == "item" {
            self.items += 1;
            return Ok(());
        }
        self.options.take(arg, word)
    }
}

/// A command on one filter whose items are the rest of the call (read by
/// position): `N` picks it.
pub struct Items<const N: u8>;

/// `CF.ADDX key item`
pub type Add = Items<0>;
/// `CF.ADDNXX key item`
pub type AddNx = Items<1>;
/// `CF.EXISTSX key item`
pub type Exists = Items<2>;
/// `CF.MEXISTSX key item [item ...]`
pub type MultiExists = Items<3>;
/// `CF.DELX key item`
pub type Del = Items<4>;
/// `CF.COUNTX key item`
pub type Count = Items<5>;
/// `CF.INFOX key`
pub type Info = Items<6>;
/// `CF.COMPACTX key`
pub type Compact = Items<7>;

/// One item.
const ONE_ITEM: &[Arg] = &[key(), arg("item", Kind::Str)];
/// Items to the end.
const ITEMS: &[Arg] = &[key(), items("item")];
/// The key alone.
const KEY_ONLY: &[Arg] = &[key()];

impl<'a, const N: u8> Request<'a> for Items<N> {
    const NAME: &'static str = match N {
        0 => "cf.addx",
        1 => "cf.addnxx",
        2 => "cf.existsx",
        3 => "cf.mexistsx",
        4 => "cf.delx",
        5 => "cf.countx",
        6 => "cf.infox",
        _ => "cf.compactx",
    };
    const GRAMMAR: Grammar = Grammar::new(match N {
        3 => ITEMS,
        6 | 7 => KEY_ONLY,
        _ => ONE_ITEM,
    });

    fn empty() -> Self {
        Items
    }

    fn reads(_: &'static Arg) -> bool {
        false
    }

    fn take(&mut self, _: &'static Arg, _: &'a [u8]) -> Result<(), WardenError> {
        Ok(())
    }
}

/// `CF.SCANDUMPX key iterator` and `CF.LOADCHUNKX key iterator data`
/// (`LOAD` picks the second).
pub struct Chunk<'a, const LOAD: bool> {
    /// Which chunk.
    pub iterator: u64,
    /// LOADCHUNKX's data.
    pub data: &'a [u8],
}

/// The arguments of `CF.SCANDUMPX`.
const SCAN_DUMP: &[Arg] = &[key(), arg("iterator", Kind::Int)];
/// The arguments of `CF.LOADCHUNKX`.
const LOAD_CHUNK: &[Arg] = &[key(), arg("iterator", Kind::Int), arg("data", Kind::Str)];

/// `CF.SCANDUMPX key iterator`
pub type ScanDump<'a> = Chunk<'a, false>;
/// `CF.LOADCHUNKX key iterator data`
pub type LoadChunk<'a> = Chunk<'a, true>;

impl<'a, const LOAD: bool> Request<'a> for Chunk<'a, LOAD> {
    const NAME: &'static str = if LOAD {
        "cf.loadchunkx"
    } else {
        "cf.scandumpx"
    };
    const GRAMMAR: Grammar = Grammar::new(if LOAD { LOAD_CHUNK } else { SCAN_DUMP });

    fn empty() -> Self {
        Chunk {
            iterator: 0,
            data: &[],
        }
    }

    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "iterator" if LOAD => self.iterator = LOAD_ITERATOR.parse(word)? as u64,
            "iterator" => self.iterator = SCAN_ITERATOR.parse(word)? as u64,
            "data" => self.data = word,
            _ => {}
        }
        Ok(())
    }
}

shape_only_request!(
    /// `CF._PLACEX key filters slots`: a write whose placement a random walk
    /// decided, as its effect (see `wire::Placed`).
    Place,
    "cf._placex",
    Grammar::new(&[key(), arg("filters", Kind::Int), arg("slots", Kind::Str)])
);

shape_only_request!(
    /// `CF._LOADX key HEADER … | WORDS …`: the AOF form of a filter (see
    /// `wire::LoadFilter`).
    Load,
    "cf._loadx",
    Grammar::new(&[
        key(),
        required(one_of(
            "chunk",
            &[
                chosen(tokened_block("HEADER", "header", &[
                        arg("capacity", Kind::Int),
                        arg("bucketsize", Kind::Int),
                        arg("maxiterations", Kind::Int),
                        arg("expansion", Kind::Int),
                        arg("fingerprint_bits", Kind::Int),
                        arg("items", Kind::Int),
                        arg("deletes", Kind::Int),
                        arg("filters", Kind::Int),
                        optional(arg("hash", Kind::Int)),
                    ])),
                chosen(tokened_block("WORDS", "words", &[
                        arg("index", Kind::Int),
                        arg("word_offset", Kind::Int),
                        arg("bytes", Kind::Str),
                    ])),
            ],
        )),
    ])
);
