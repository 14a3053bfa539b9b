//! The count-min family's typed requests: each command's grammar (what
//! `COMMAND DOCS` shows, its arity, and how a call is read) and the values
//! a call carries, checked as they are read with RedisBloom's error texts.
//! The internal `CMS._ROTATEX` and `CMS._LOADX` are read by their wire
//! format (`wire`); their grammars here are what `COMMAND DOCS` shows.

use crate::cms::core::sketch::{error, text, Dims};
use crate::common::error::WardenError;
use crate::common::grammar::{
    arg, chosen, counted_keys, items, key, one_of, option, pairs, repeated, required,
    shape_only_request, tokened_block, Arg, Grammar, Kind, Request,
};
use crate::common::parse::{parse_f64, parse_i64};
use crate::common::sketch::parse_window;

/// `CMS.INITBYDIMX key width depth [WINDOW ms]`
#[derive(Default)]
pub struct InitByDim {
    /// The width given.
    width: Option<i64>,
    /// The sizes, once both are read.
    pub dims: Option<Dims>,
    /// `WINDOW ms`.
    pub window: Option<u64>,
}

impl<'a> Request<'a> for InitByDim {
    const NAME: &'static str = "cms.initbydimx";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        arg("width", Kind::Int),
        arg("depth", Kind::Int),
        option("WINDOW", "window_ms", Kind::Int),
    ]);

    fn empty() -> Self {
        InitByDim::default()
    }

    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "width" => {
                self.width = parse_i64(word);
                Dims::new(self.width, Some(1))?;
            }
            "depth" => self.dims = Some(Dims::new(self.width, parse_i64(word))?),
            "window_ms" => self.window = Some(parse_window(word)?),
            _ => {}
        }
        Ok(())
    }
}

/// `CMS.INITBYPROBX key error probability [WINDOW ms]`
#[derive(Default)]
pub struct InitByProb {
    /// The error given.
    error: f64,
    /// The sizes RedisBloom works out from them.
    pub dims: Option<Dims>,
    /// `WINDOW ms`.
    pub window: Option<u64>,
}

/// A number strictly between 0 and 1, else `ERR <text>`.
fn fraction(word: &[u8], text: &'static str) -> Result<f64, WardenError> {
    match parse_f64(word) {
        Some(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(error(text)),
    }
}

impl<'a> Request<'a> for InitByProb {
    const NAME: &'static str = "cms.initbyprobx";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        arg("error", Kind::Double),
        arg("probability", Kind::Double),
        option("WINDOW", "window_ms", Kind::Int),
    ]);

    fn empty() -> Self {
        InitByProb::default()
    }

    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "error" => self.error = fraction(word, "ERR CMS: invalid overestimation value")?,
            "probability" => {
                let p = fraction(word, "ERR CMS: invalid prob value")?;
                self.dims = Some(Dims::from_error(self.error, p)?);
            }
            "window_ms" => self.window = Some(parse_window(word)?),
            _ => {}
        }
        Ok(())
    }
}

/// An increment: a non-negative integer (RedisBloom's texts otherwise).
pub fn increment(word: &[u8]) -> Result<u64, WardenError> {
    match parse_i64(word) {
        Some(v) if v >= 0 => Ok(v as u64),
        Some(_) => Err(error(text::NEGATIVE)),
        None => Err(error(text::NOT_A_NUMBER)),
    }
}

/// `CMS.INCRBYX key item increment [item increment ...]`: the increments
/// are checked as they are read; the handler reads the pairs by position.
pub struct IncrBy;

impl<'a> Request<'a> for IncrBy {
    const NAME: &'static str = "cms.incrbyx";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        pairs(
            "pair",
            &[arg("item", Kind::Str), arg("increment", Kind::Int)],
        ),
    ]);

    fn empty() -> Self {
        IncrBy
    }

    fn reads(arg: &'static Arg) -> bool {
        arg.name == "increment"
    }

    fn take(&mut self, _: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        increment(word).map(|_| ())
    }
}

shape_only_request!(
    /// `CMS.QUERYX key item [item ...]`
    Query,
    "cms.queryx",
    Grammar::new(&[key(), items("item")])
);

shape_only_request!(
    /// `CMS.INFOX key`
    Info,
    "cms.infox",
    Grammar::new(&[key()])
);

/// `CMS.MERGEX dest numkeys src [src ...] [WEIGHTS weight [weight ...]]`
#[derive(Default)]
pub struct Merge {
    /// How many sources (they follow it).
    pub numkeys: usize,
    /// `WEIGHTS`, one per source (none given: all 1).
    pub weights: Vec<i64>,
}

impl<'a> Request<'a> for Merge {
    const NAME: &'static str = "cms.mergex";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        arg("numkeys", Kind::Int),
        counted_keys("source"),
        repeated(option("WEIGHTS", "weight", Kind::Int)),
    ]);

    fn empty() -> Self {
        Merge::default()
    }

    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "numkeys" => match parse_i64(word) {
                Some(n) if n > 0 => self.numkeys = n as usize,
                Some(_) => return Err(error(text::NUMKEYS_NOT_POSITIVE)),
                None => return Err(error(text::BAD_NUMKEYS)),
            },
            "weight" => self
                .weights
                .push(parse_i64(word).ok_or_else(|| error(text::BAD_WEIGHT))?),
            _ => {}
        }
        Ok(())
    }

    fn finish(&self) -> Result<(), WardenError> {
        if !self.weights.is_empty() && self.weights.len() != self.numkeys {
            return Err(error(text::KEYS_WEIGHTS));
        }
        Ok(())
    }
}

impl Merge {
    /// Each source's weight, in order.
    pub fn weight(&self, i: usize) -> i64 {
        self.weights.get(i).copied().unwrap_or(1)
    }
}

shape_only_request!(
    /// `CMS._ROTATEX key slot_ms`: a windowed sketch moved to the slot
    /// starting at `slot_ms` (see `wire`).
    Rotate,
    "cms._rotatex",
    Grammar::new(&[key(), arg("slot_ms", Kind::Int)])
);

shape_only_request!(
    /// `CMS._LOADX key HEADER … | CELLS …`: the AOF form of a sketch (see
    /// `wire::LoadSketch`).
    Load,
    "cms._loadx",
    Grammar::new(&[
        key(),
        required(one_of(
            "chunk",
            &[
                chosen(tokened_block("HEADER", "header", &[
                        arg("kind", Kind::Int),
                        arg("width", Kind::Int),
                        arg("depth", Kind::Int),
                        arg("window_ms", Kind::Int),
                        arg("head_ms", Kind::Int),
                    ])),
                chosen(tokened_block("CELLS", "cells", &[
                        arg("sub", Kind::Int),
                        arg("count", Kind::Int),
                        arg("offset", Kind::Int),
                        arg("bytes", Kind::Str),
                    ])),
            ],
        )),
    ])
);
