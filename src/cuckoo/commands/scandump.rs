//! `CF.SCANDUMPX`: a filter read in chunks, with RedisBloom's `CF.SCANDUMP`
//! iterators.

use std::borrow::Cow;

use crate::common::chunks::{chunk_at, Chunk, HEADER_ITERATOR, SCAN_ITERATOR};
use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, Arg, Grammar, Kind, Request};
use crate::common::le_words::words_to_le;
use crate::cuckoo::call::filter_in;
use crate::cuckoo::core::dump::{self, encode_header, sizes};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Key};

/// `CF.SCANDUMPX key iterator`
pub struct ScanDump {
    /// Which chunk.
    pub iterator: u64,
}

impl<'a> Request<'a> for ScanDump {
    const NAME: &'static str = "cf.scandumpx";
    const GRAMMAR: Grammar = Grammar::new(&[key(), arg("iterator", Kind::Int)]);

    fn empty() -> Self {
        ScanDump { iterator: 0 }
    }

    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        if arg.name == "iterator" {
            self.iterator = SCAN_ITERATOR.parse(word)? as u64;
        }
        Ok(())
    }
}

/// `CF.SCANDUMPX key iterator`: `[1, header]` for iterator 0, then
/// `[next, slots]` for each chunk, and `[0, ""]` after the last.
pub fn scandump(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let iterator = args.parse::<ScanDump>()?.iterator;
    let mut key = Key::readable(ctx, args.raw(1));
    let f = filter_in(&mut key)?.ok_or(WardenError::NotFound)?;
    let (next, data) = match chunk_at(sizes(f), iterator)? {
        Chunk::Header => (HEADER_ITERATOR, Cow::Owned(encode_header(f))),
        Chunk::Bits {
            layer,
            offset,
            len,
            next,
        } => {
            let words = dump::chunk_words(f, layer, offset, len);
            (next, words_to_le(words))
        }
        Chunk::End => (0, Cow::Borrowed(&b""[..])),
    };
    host::reply_array(ctx, 2);
    host::reply_integer(ctx, next as i64);
    host::reply_bulk(ctx, &data);
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <ScanDump as Request>::NAME,
    func: command_fn!(scandump),
    alias: None,
    flags: "readonly",
    doc: Doc {
        summary: "Reads a filter in chunks, with RedisBloom's CF.SCANDUMP iterators: iterator 0 gives [1, header], each returned iterator [next, up to 16 MiB of slots], and the end [0, \"\"].",
        complexity: "O(n) where n is the size of the chunk",
        grammar: <ScanDump as Request>::GRAMMAR,
        since: "0.4.0",
    },
};
