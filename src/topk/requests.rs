//! The top-k family's typed requests: each command's grammar (what `COMMAND
//! DOCS` shows, its arity, and how a call is read) and the values a call
//! carries, checked as they are read with RedisBloom's error texts. The
//! internal `TOPK._ROTATEX` and `TOPK._LOADX` are read by their wire format
//! (`wire`); their grammars here are what `COMMAND DOCS` shows.

use crate::common::error::WardenError;
use crate::common::grammar::{
    arg, block, chosen, flag, items, key, one_of, option, optional, pairs, required,
    shape_only_request, tokened_block, Arg, Grammar, Kind, Request,
};
use crate::common::parse::{parse_f64, parse_i64};
use crate::common::sketch::parse_window;
use crate::topk::config::{TOPK_DECAY, TOPK_DEPTH, TOPK_WIDTH};
use crate::topk::core::heavy_keeper::{bad_param, error, text, Params, MAX_INCREMENT, MAX_PARAM};

/// An integer from 1 to 2^32 − 1, else RedisBloom's `TopK: invalid <name>`.
fn param(word: &[u8], name: &str) -> Result<u32, WardenError> {
    match parse_i64(word) {
        Some(v) if v >= 1 && v as u64 <= MAX_PARAM => Ok(v as u32),
        _ => Err(bad_param(name)),
    }
}

/// `TOPK.RESERVEX key k [width depth decay] [WINDOW ms]`
#[derive(Default)]
pub struct Reserve {
    k: u32,
    width: Option<u32>,
    depth: Option<u32>,
    decay: Option<f64>,
    /// `WINDOW ms`.
    pub window: Option<u64>,
}

impl Reserve {
    /// The top-k's parameters: those given, else the module's defaults
    /// (`topk-*`, RedisBloom's 8, 7 and 0.9 unless set).
    pub fn params(&self) -> Params {
        Params {
            k: self.k,
            width: self.width.unwrap_or(TOPK_WIDTH.get() as u32),
            depth: self.depth.unwrap_or(TOPK_DEPTH.get() as u32),
            decay: self.decay.unwrap_or(TOPK_DECAY.get()),
        }
    }
}

impl<'a> Request<'a> for Reserve {
    const NAME: &'static str = "topk.reservex";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        arg("k", Kind::Int),
        optional(block(
            "params",
            &[
                arg("width", Kind::Int),
                arg("depth", Kind::Int),
                arg("decay", Kind::Double),
            ],
        )),
        option("WINDOW", "window_ms", Kind::Int),
    ]);

    fn empty() -> Self {
        Reserve::default()
    }

    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "k" => self.k = param(word, "k")?,
            "width" => self.width = Some(param(word, "width")?),
            "depth" => self.depth = Some(param(word, "depth")?),
            "decay" => {
                let d = parse_f64(word).unwrap_or(f64::NAN);
                self.decay = Some(Params::check_decay(d)?);
            }
            "window_ms" => self.window = Some(parse_window(word)?),
            _ => {}
        }
        Ok(())
    }
}

/// An increment: 0 to 100,000 (RedisBloom's text otherwise).
pub fn increment(word: &[u8]) -> Result<u32, WardenError> {
    match parse_i64(word) {
        Some(v) if (0..=MAX_INCREMENT as i64).contains(&v) => Ok(v as u32),
        _ => Err(error(text::BAD_INCREMENT)),
    }
}

/// `TOPK.INCRBYX key item increment [item increment ...]`: the increments
/// are checked as they are read; the handler reads the pairs by position.
pub struct IncrBy;

impl<'a> Request<'a> for IncrBy {
    const NAME: &'static str = "topk.incrbyx";
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

/// A command on one top-k whose items are the rest of the call (read by
/// position): `N` picks it.
pub struct Items<const N: u8>;

/// `TOPK.ADDX key item [item ...]`
pub type Add = Items<0>;
/// `TOPK.QUERYX key item [item ...]`
pub type Query = Items<1>;
/// `TOPK.COUNTX key item [item ...]`
pub type Count = Items<2>;

impl<'a, const N: u8> Request<'a> for Items<N> {
    const NAME: &'static str = match N {
        0 => "topk.addx",
        1 => "topk.queryx",
        _ => "topk.countx",
    };
    const GRAMMAR: Grammar = Grammar::new(&[key(), items("item")]);

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

/// `TOPK.LISTX key [WITHCOUNT]`
#[derive(Default)]
pub struct List {
    /// `WITHCOUNT`: each item followed by its count.
    pub with_count: bool,
}

impl<'a> Request<'a> for List {
    const NAME: &'static str = "topk.listx";
    const GRAMMAR: Grammar = Grammar::new(&[key(), flag("WITHCOUNT")]);

    fn empty() -> Self {
        List::default()
    }

    fn take(&mut self, _: &'static Arg, _: &'a [u8]) -> Result<(), WardenError> {
        self.with_count = true;
        Ok(())
    }
}

shape_only_request!(
    /// `TOPK.INFOX key`
    Info,
    "topk.infox",
    Grammar::new(&[key()])
);

shape_only_request!(
    /// `TOPK._ROTATEX key slot_ms`: a windowed top-k moved to the slot
    /// starting at `slot_ms` (see `wire`).
    Rotate,
    "topk._rotatex",
    Grammar::new(&[key(), arg("slot_ms", Kind::Int)])
);

shape_only_request!(
    /// `TOPK._LOADX key HEADER … | BUCKETS … | SLOT …`: the AOF form of a
    /// top-k (see `wire::LoadTopK`).
    Load,
    "topk._loadx",
    Grammar::new(&[
        key(),
        required(one_of(
            "chunk",
            &[
                chosen(tokened_block("HEADER", "header", &[
                        arg("kind", Kind::Int),
                        arg("k", Kind::Int),
                        arg("width", Kind::Int),
                        arg("depth", Kind::Int),
                        arg("decay", Kind::Double),
                        arg("window_ms", Kind::Int),
                        arg("head_ms", Kind::Int),
                        arg("rng", Kind::Int),
                    ])),
                chosen(tokened_block("BUCKETS", "buckets", &[
                        arg("sub", Kind::Int),
                        arg("offset", Kind::Int),
                        arg("bytes", Kind::Str),
                    ])),
                chosen(tokened_block("SLOT", "slot", &[
                        arg("index", Kind::Int),
                        arg("count", Kind::Int),
                        arg("item", Kind::Str),
                    ])),
            ],
        )),
    ])
);
