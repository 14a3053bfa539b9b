//! `CMS.INITBYPROBX`: a count-min sketch sized for an error and a probability.

use crate::cms::call::create;
use crate::cms::core::sketch::{error, Dims};
use crate::cms::events;
use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, option, Arg, Grammar, Kind, Request};
use crate::common::parse::parse_f64;
use crate::common::sketch::parse_window;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;

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

/// `CMS.INITBYPROBX key error probability [WINDOW ms]`
pub fn initbyprob(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let r = args.parse::<InitByProb>()?;
    create(ctx, args, (r.dims, r.window), events::INITBYPROB)
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <InitByProb as Request>::NAME,
    func: command_fn!(initbyprob),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Creates an empty count-min sketch sized as RedisBloom sizes it for an over-count of at most error × the total with the given probability of exceeding it (width ceil(2 / error), depth ceil(log2(1 / probability))); WINDOW as CMS.INITBYDIMX.",
        complexity: "O(1)",
        grammar: <InitByProb as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
