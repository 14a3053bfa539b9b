//! The Bloom family's typed requests: each command's grammar (what `COMMAND
//! DOCS` shows, its arity, and how a call is read) and the values a call
//! carries, checked as they are read. `BF._LOADX` is read by its wire format
//! (`wire::LoadFilter`); its grammar here is what `COMMAND DOCS` shows.

use crate::bloom::config::{BF_ERROR_RATE, BF_EXPANSION, BF_INITIAL_CAPACITY};
use crate::bloom::core::aging::{validate_window, WINDOW};
use crate::bloom::core::dump::{LOAD_ITERATOR, SCAN_ITERATOR};
use crate::bloom::core::errors;
use crate::bloom::core::filter::{BloomParams, CAPACITY};
use crate::bloom::core::sizing::parse_error_rate;
use crate::common::error::WardenError;
use crate::common::grammar::{
    arg, chosen, flag, items, key, one_of, option, optional, repeated, required,
    shape_only_request, tokened_block, Arg, Grammar, Kind, Request,
};
use crate::common::parse::{is_keyword, parse_i64};

/// A capacity in its range.
fn capacity_arg(bytes: &[u8]) -> Result<u64, WardenError> {
    CAPACITY.parse(bytes).map(|c| c as u64)
}

/// An expansion in its range (`errors::EXPANSION`).
fn expansion_arg(bytes: &[u8]) -> Result<u32, WardenError> {
    errors::EXPANSION.parse(bytes).map(|e| e as u32)
}

/// Creation options shared by BF.RESERVEX and BF.INSERTX (and the defaults
/// BF.ADDX and BF.MADDX create with).
#[derive(Default)]
pub struct CreateOptions {
    /// `error_rate` or `ERROR e`.
    pub error_rate: Option<f64>,
    /// `capacity` or `CAPACITY c`.
    pub capacity: Option<u64>,
    /// `EXPANSION n`.
    pub expansion: Option<u32>,
    /// `NONSCALING`.
    pub nonscaling: bool,
    /// `NOCREATE` (BF.INSERTX only).
    pub nocreate: bool,
    /// `AGE window_ms` (BF.RESERVEX only).
    pub age: Option<u64>,
}

impl CreateOptions {
    /// Parameters of a new filter, with module defaults for what is missing.
    pub fn params(&self) -> Result<BloomParams, WardenError> {
        if self.age.is_some() && (self.nonscaling || self.expansion.is_some()) {
            return Err(errors::AGE_WITH_SCALING);
        }
        if self.nonscaling && self.expansion.is_some() {
            return Err(errors::NON_SCALING_EXPANSION);
        }
        let expansion = if self.nonscaling {
            0
        } else {
            self.expansion.unwrap_or(BF_EXPANSION.get() as u32)
        };
        let params = BloomParams {
            error_rate: self.error_rate.unwrap_or_else(|| BF_ERROR_RATE.get()),
            capacity: self.capacity.unwrap_or(BF_INITIAL_CAPACITY.get() as u64),
            expansion,
        };
        params.validate()?;
        Ok(params)
    }
}

impl CreateOptions {
    /// Takes one creation option's value.
    fn take(&mut self, arg: &'static Arg, word: &[u8]) -> Result<(), WardenError> {
        match arg.name {
            "error_rate" => self.error_rate = Some(parse_error_rate(word)?),
            "capacity" => self.capacity = Some(capacity_arg(word)?),
            "expansion" => self.expansion = Some(expansion_arg(word)?),
            "NONSCALING" => self.nonscaling = true,
            "NOCREATE" => self.nocreate = true,
            "window_ms" => {
                let window = WINDOW.parse(word)? as u64;
                validate_window(window)?;
                self.age = Some(window);
            }
            _ => {}
        }
        Ok(())
    }
}

/// `BF.RESERVEX key error_rate capacity [EXPANSION n | NONSCALING | AGE window_ms]`:
/// the choice is checked by `CreateOptions::params`, which names a combination.
pub struct Reserve(pub CreateOptions);

impl<'a> Request<'a> for Reserve {
    const NAME: &'static str = "bf.reservex";
    const GRAMMAR: Grammar = Grammar::choices_checked_by_request(&[
        key(),
        arg("error_rate", Kind::Double),
        arg("capacity", Kind::Int),
        one_of(
            "shape",
            &[
                chosen(option("EXPANSION", "expansion", Kind::Int)),
                chosen(flag("NONSCALING")),
                chosen(option("AGE", "window_ms", Kind::Int)),
            ],
        ),
    ]);

    fn empty() -> Self {
        Reserve(CreateOptions::default())
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        self.0.take(arg, word)
    }
}

/// `BF.INSERTX key [CAPACITY c] [ERROR e] [EXPANSION n] [NOCREATE] [NONSCALING] ITEMS item ...`
pub struct Insert {
    /// The options of a filter it creates.
    pub options: CreateOptions,
    /// How many items (the last words of the call).
    pub items: usize,
}

impl<'a> Request<'a> for Insert {
    const NAME: &'static str = "bf.insertx";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        option("CAPACITY", "capacity", Kind::Int),
        option("ERROR", "error_rate", Kind::Double),
        option("EXPANSION", "expansion", Kind::Int),
        flag("NOCREATE"),
        flag("NONSCALING"),
        required(repeated(option("ITEMS", "item", Kind::Str))),
    ]);

    fn empty() -> Self {
        Insert {
            options: CreateOptions::default(),
            items: 0,
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        if arg.name == "item" {
            self.items += 1;
            return Ok(());
        }
        self.options.take(arg, word)
    }
}

/// A command on one filter and items that are the rest of the call (read
/// from the call by position): `BF.ADDX`, `BF.MADDX`, `BF.EXISTSX`,
/// `BF.MEXISTSX`, `BF.CARDX`. `N` picks the command.
pub struct Items<const N: u8>;

/// `BF.ADDX key item`
pub type Add = Items<0>;
/// `BF.MADDX key item [item ...]`
pub type MultiAdd = Items<1>;
/// `BF.EXISTSX key item`
pub type Exists = Items<2>;
/// `BF.MEXISTSX key item [item ...]`
pub type MultiExists = Items<3>;
/// `BF.CARDX key`
pub type Card = Items<4>;

/// One item.
const ONE_ITEM: &[Arg] = &[key(), arg("item", Kind::Str)];
/// Items to the end.
const ITEMS: &[Arg] = &[key(), items("item")];
/// The key alone.
const KEY_ONLY: &[Arg] = &[key()];

impl<'a, const N: u8> Request<'a> for Items<N> {
    const NAME: &'static str = match N {
        0 => "bf.addx",
        1 => "bf.maddx",
        2 => "bf.existsx",
        3 => "bf.mexistsx",
        _ => "bf.cardx",
    };
    const GRAMMAR: Grammar = Grammar::new(match N {
        0 | 2 => ONE_ITEM,
        1 | 3 => ITEMS,
        _ => KEY_ONLY,
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

/// The fields of BF.INFOX, in order, with the word that selects each alone;
/// the last, the window, only for an aging filter.
pub const INFO_FIELDS: [(&str, &str); 7] = [
    ("CAPACITY", "Capacity"),
    ("SIZE", "Size"),
    ("FILTERS", "Number of filters"),
    ("ITEMS", "Number of items inserted"),
    ("EXPANSION", "Expansion rate"),
    ("ERROR", "Error rate"),
    ("WINDOW", "Window"),
];

/// `BF.INFOX key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION|ERROR|WINDOW]`
pub struct Info {
    /// The one field asked for (an index of `INFO_FIELDS`), or all.
    pub only: Option<usize>,
}

impl<'a> Request<'a> for Info {
    const NAME: &'static str = "bf.infox";
    const GRAMMAR: Grammar = Grammar::new(&[key(), optional(arg("field", Kind::Str))]);

    fn empty() -> Self {
        Info { only: None }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        if arg.name == "field" {
            let at = INFO_FIELDS.iter().position(|(w, _)| is_keyword(word, w));
            self.only = Some(at.ok_or(WardenError::Syntax)?);
        }
        Ok(())
    }
}

/// `BF.SCANDUMPX key iterator` and `BF.LOADCHUNKX key iterator data`
/// (`LOAD` picks the second).
pub struct Chunk<'a, const LOAD: bool> {
    /// Which chunk.
    pub iterator: u64,
    /// LOADCHUNKX's data.
    pub data: &'a [u8],
}

/// The arguments of `BF.SCANDUMPX`.
const SCAN_DUMP: &[Arg] = &[key(), arg("iterator", Kind::Int)];
/// The arguments of `BF.LOADCHUNKX`.
const LOAD_CHUNK: &[Arg] = &[key(), arg("iterator", Kind::Int), arg("data", Kind::Str)];

/// `BF.SCANDUMPX key iterator`
pub type ScanDump<'a> = Chunk<'a, false>;
/// `BF.LOADCHUNKX key iterator data`
pub type LoadChunk<'a> = Chunk<'a, true>;

impl<'a, const LOAD: bool> Request<'a> for Chunk<'a, LOAD> {
    const NAME: &'static str = if LOAD {
        "bf.loadchunkx"
    } else {
        "bf.scandumpx"
    };
    const GRAMMAR: Grammar = Grammar::new(if LOAD { LOAD_CHUNK } else { SCAN_DUMP });

    fn empty() -> Self {
        Chunk {
            iterator: 0,
            data: &[],
        }
    }

    #[inline(always)]
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

/// `BF._ADDATX key unix_ms item [item ...]`: an aging filter's adds as of a
/// master's time.
pub struct AddAt {
    /// The master's time.
    pub at: u64,
}

impl<'a> Request<'a> for AddAt {
    const NAME: &'static str = "bf._addatx";
    const GRAMMAR: Grammar = Grammar::new(&[key(), arg("unix_ms", Kind::Int), items("item")]);

    fn empty() -> Self {
        AddAt { at: 0 }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        if arg.name == "unix_ms" {
            self.at = parse_i64(word)
                .and_then(|ms| u64::try_from(ms).ok())
                .ok_or(WardenError::InvalidState("time"))?;
        }
        Ok(())
    }
}

shape_only_request!(
    /// `BF._LOADX key LAYER … | BITS … | AGE …`: the AOF form of a filter.
    /// Read by its wire format (`wire::LoadFilter`); this is its documented
    /// grammar.
    Load,
    "bf._loadx",
    Grammar::new(&[
        key(),
        required(one_of(
            "chunk",
            &[
                chosen(tokened_block("LAYER", "layer", &[
                        arg("error_rate", Kind::Double),
                        arg("expansion", Kind::Int),
                        arg("index", Kind::Int),
                        arg("capacity", Kind::Int),
                        arg("layer_error", Kind::Double),
                        arg("hashes", Kind::Int),
                        arg("items", Kind::Int),
                        arg("bits", Kind::Int),
                        optional(arg("opened", Kind::Int)),
                    ])),
                chosen(tokened_block("BITS", "bits", &[
                        arg("index", Kind::Int),
                        arg("word_offset", Kind::Int),
                        arg("bytes", Kind::Str),
                    ])),
                chosen(tokened_block("AGE", "age", &[
                        arg("error_rate", Kind::Double),
                        arg("capacity", Kind::Int),
                        arg("window_ms", Kind::Int),
                    ])),
            ],
        )),
    ])
);
