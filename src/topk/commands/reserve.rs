//! `TOPK.RESERVEX`: an empty top-k (with a window: over the last `ms`).

use crate::common::error::WardenError;
use crate::common::grammar::{arg, block, key, option, optional, Arg, Grammar, Kind, Request};
use crate::common::parse::{parse_f64, parse_i64};
use crate::common::sketch::parse_window;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, emit, Ctx, Key, RStr, Sink};
use crate::topk::call::{max_bytes, seed_of};
use crate::topk::config::{TOPK_DECAY, TOPK_DEPTH, TOPK_WIDTH};
use crate::topk::core::heavy_keeper::{bad_param, error, text, Params, TopK, MAX_PARAM};
use crate::topk::data_type::track_new;
use crate::topk::events;

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

/// `TOPK.RESERVEX key k [width depth decay] [WINDOW ms]`: replicated with
/// every parameter.
pub fn reserve(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let request = args.parse::<Reserve>()?;
    let params = request.params();
    let name = args.raw(1);
    let mut key = Key::writable(ctx, name);
    match key.value::<TopK>() {
        Ok(None) => {}
        Ok(Some(_)) | Err(WardenError::WrongType) => return Err(error(text::KEY_EXISTS)),
        Err(e) => return Err(e),
    }
    let t = TopK::new(params, request.window, seed_of(name), max_bytes(ctx))?;
    replicate_reserve(ctx, name, params, request.window);
    track_new(&t);
    key.set_value(Box::new(t));
    host::notify(ctx, events::RESERVE, name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// Replicates `TOPK.RESERVEX key k width depth decay [WINDOW ms]`.
fn replicate_reserve(ctx: Ctx, key: RStr, p: Params, window: Option<u64>) {
    let sink = Sink::Replication(ctx);
    let decay = p.decay.to_string();
    let (k, w, d) = (i64::from(p.k), i64::from(p.width), i64::from(p.depth));
    let decay = decay.as_bytes();
    match window {
        None => emit(sink, c"TOPK.RESERVEX", (key, k, w, d, decay)),
        Some(ms) => emit(
            sink,
            c"TOPK.RESERVEX",
            (key, k, w, d, decay, c"WINDOW", ms as i64),
        ),
    }
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Reserve as Request>::NAME,
    func: command_fn!(reserve),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Creates an empty top-k keeping the k items counted highest, with depth rows of width buckets decaying at decay (topk-width, topk-depth and topk-decay when not given: 8, 7 and 0.9); with WINDOW, one over the last window (at least ms, at most 1.25 × ms).",
        complexity: "O(1)",
        grammar: <Reserve as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
