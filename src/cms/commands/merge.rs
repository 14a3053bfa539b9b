//! `CMS.MERGEX`: a sketch made of the (weighted) sum of others of the same size.

use crate::cms::call::{replicate_write, sketch_in};
use crate::cms::core::sketch::{self, error, text, CountMin};
use crate::cms::events;
use crate::cms::stats::CMS_ROTATIONS;
use crate::common::error::WardenError;
use crate::common::grammar::{
    arg, counted_keys, key, option, repeated, Arg, Grammar, Kind, Request,
};
use crate::common::parse::parse_i64;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{answer_keys_request, command_fn, Command};
use crate::glue::host::{self, Ctx, Key, RStr};
use crate::glue::stats::count;

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

/// `CMS.MERGEX dest numkeys src [src ...] [WEIGHTS weight ...]`: `dest`
/// (which must exist, with the sources' size and window) becomes the
/// weighted sum of the sources.
pub fn merge(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    if answer_keys_request(ctx, args, <Merge as Request>::GRAMMAR, true) {
        return Ok(());
    }
    let request = args.parse::<Merge>()?;
    let dest_name = args.raw(1);
    let mut dest_key = Key::writable(ctx, dest_name);
    sketch_in(&mut dest_key)?;
    // Each source key opened once (values are borrowed from their keys).
    let sources: Vec<RStr> = (0..request.numkeys).map(|i| args.raw(3 + i)).collect();
    let mut opened: Vec<(&[u8], Key)> = Vec::new();
    for name in &sources {
        let bytes = name.bytes();
        if bytes == dest_name.bytes() || opened.iter().any(|(b, _)| *b == bytes) {
            continue;
        }
        let mut key = Key::readable(ctx, *name);
        sketch_in(&mut key)?;
        opened.push((bytes, key));
    }
    let dest: &CountMin = sketch_in(&mut dest_key)?;
    let mut views: Vec<(&[u8], &CountMin)> = Vec::with_capacity(opened.len());
    for (bytes, key) in opened.iter_mut() {
        views.push((*bytes, &*sketch_in(key)?));
    }
    let weighted: Vec<(&CountMin, i64)> = sources
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let view = views.iter().find(|(b, _)| *b == name.bytes());
            (view.map_or(dest, |(_, s)| *s), request.weight(i))
        })
        .collect();
    // Applied from a master or the AOF: as of the slot the destination is at.
    let now = match (host::is_replay(ctx), dest.ring()) {
        (true, Some(r)) => r.head_ms(),
        _ => host::now_ms().max(0) as u64,
    };
    let merged = sketch::merge(dest, &weighted, now)?;
    let slot = dest.ring().map(|r| r.slot_of(now));
    let head = dest.ring().map(|r| r.head_ms());
    drop((weighted, views));
    let dest = sketch_in(&mut dest_key)?;
    dest.apply(merged)?;
    let rotated = slot.filter(|s| Some(*s) != head);
    if rotated.is_some() {
        count(&CMS_ROTATIONS);
    }
    replicate_write(ctx, args, c"CMS.MERGEX", rotated);
    host::notify(ctx, events::MERGE, dest_name);
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Merge as Request>::NAME,
    func: command_fn!(merge),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Sets the existing sketch dest to the sum of the sources times their WEIGHTS (default 1), counter by counter: all of one size and window, every sum from 0 to 4294967295.",
        complexity: "O(n) where n is the number of counters times the number of sources",
        grammar: <Merge as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
