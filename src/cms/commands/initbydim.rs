//! `CMS.INITBYDIMX`: a count-min sketch of the given width and depth.

use crate::cms::call::create;
use crate::cms::core::sketch::Dims;
use crate::cms::events;
use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, option, Arg, Grammar, Kind, Request};
use crate::common::parse::parse_i64;
use crate::common::sketch::parse_window;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::Ctx;

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

/// `CMS.INITBYDIMX key width depth [WINDOW ms]`
pub fn initbydim(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let r = args.parse::<InitByDim>()?;
    create(ctx, args, (r.dims, r.window), events::INITBYDIM)
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <InitByDim as Request>::NAME,
    func: command_fn!(initbydim),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Creates an empty count-min sketch of depth rows of width counters; with WINDOW, one that counts over the last window (at least ms, at most 1.25 × ms).",
        complexity: "O(1)",
        grammar: <InitByDim as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
