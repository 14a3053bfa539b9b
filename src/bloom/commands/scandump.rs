//! `BF.SCANDUMPX`: a filter read in chunks, with RedisBloom's `BF.SCANDUMP`
//! protocol (the header format is warden's).

use crate::bloom::call::filter_in;
use crate::bloom::core::dump::{chunk_at, encode_header, Chunk, HEADER_ITERATOR, SCAN_ITERATOR};
use crate::bloom::core::filter::Layer;
use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, Arg, Grammar, Kind, Request};
use crate::common::le_words::words_to_le;
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

/// `BF.SCANDUMPX key iterator`
pub struct ScanDump {
    /// Which chunk.
    pub iterator: u64,
}

impl<'a> Request<'a> for ScanDump {
    const NAME: &'static str = "bf.scandumpx";
    const GRAMMAR: Grammar = Grammar::new(&[key(), arg("iterator", Kind::Int)]);

    fn empty() -> Self {
        ScanDump { iterator: 0 }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        if arg.name == "iterator" {
            self.iterator = SCAN_ITERATOR.parse(word)? as u64;
        }
        Ok(())
    }
}

/// Replies `[iterator, data]`.
fn reply_chunk(ctx: Ctx, iterator: u64, data: &[u8]) {
    host::reply_array(ctx, 2);
    host::reply_integer(ctx, iterator as i64);
    host::reply_bulk(ctx, data);
}

/// `BF.SCANDUMPX key iterator`: `[1, header]` for iterator 0, then
/// `[next, bits]` for each chunk, and `[0, ""]` after the last.
pub fn scandump(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let iterator = args.parse::<ScanDump>()?.iterator;
    let mut key = Key::readable(ctx, args.raw(1));
    let f = filter_in(&mut key)?.ok_or(WardenError::NotFound)?;
    match chunk_at(f.layers().iter().map(Layer::bytes), iterator)? {
        Chunk::Header => reply_chunk(ctx, HEADER_ITERATOR, &encode_header(f.parts())),
        Chunk::Bits {
            layer,
            offset,
            len,
            next,
        } => {
            let words = &f.layers()[layer].words()[(offset / 8) as usize..][..(len / 8) as usize];
            reply_chunk(ctx, next, &words_to_le(words));
        }
        Chunk::End => reply_chunk(ctx, 0, b""),
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <ScanDump as Request>::NAME,
    func: command_fn!(scandump),
    alias: None,
    flags: "readonly",
    doc: Doc {
        summary: "Reads a filter in chunks, as RedisBloom's BF.SCANDUMP: iterator 0 gives [1, header], each returned iterator [next, up to 16 MiB of bits], and the end [0, \"\"].",
        complexity: "O(n) where n is the size of the chunk",
        grammar: <ScanDump as Request>::GRAMMAR,
        since: "0.2.0",
    },
};
