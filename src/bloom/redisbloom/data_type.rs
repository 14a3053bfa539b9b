//! RedisBloom's `MBbloom--` data type, in its RDB layout (encoding version
//! 4; versions 0 to 3 still load): items, link count, options and growth
//! (unsigned; options from version 2, growth from 4, else 2), then per link
//! its capacity (unsigned), error rate (double), hashes (unsigned), bits per
//! item (double), bits and n2 (unsigned; version 0 has neither: bits are
//! capacity × bits per item), its bit array (string) and its items
//! (unsigned). Every field is checked as the chunk-stream header's are,
//! since RESTORE feeds this code bytes from clients. AOF rewrite emits
//! `BF.LOADCHUNK` commands, as RedisBloom's does.

use std::sync::atomic::Ordering;

use redis_module::native_types::RedisType;

use crate::bloom::core::chain::{Chain, Link, LinkFields};
use crate::bloom::stats::{BF_BYTES, BF_FILTERS};
use crate::common::relocate::{self, Mover};
use crate::glue::data_type::{methods, Digest, StoredValue};
use crate::glue::host::{self, Io, RStr, Sink};

/// The encoding version RedisBloom 2.x saves (`MBbloom--` version 4).
pub const CHAIN_ENCODING_VERSION: i32 = 4;
/// The first version that stores the options.
const OPTIONS_ENCODING_VERSION: i32 = 2;
/// The first version that stores the growth.
const GROWTH_ENCODING_VERSION: i32 = 4;
/// Links read ahead of the data: a count in the stream is a claim, so the
/// room for more grows only as links are read.
const LINKS_AHEAD: u64 = 1024;

/// The Redis data type of RedisBloom's Bloom filter keys.
pub static CHAIN_TYPE: RedisType =
    RedisType::new("MBbloom--", CHAIN_ENCODING_VERSION, methods::<Chain>());

/// Accounts a filter that starts to live in the keyspace.
pub fn track_new(c: &Chain) {
    BF_FILTERS.fetch_add(1, Ordering::Relaxed);
    BF_BYTES.fetch_add(c.size() as i64, Ordering::Relaxed);
}

/// Accounts a change of a live filter's size.
pub fn track_growth(before: u64, after: u64) {
    BF_BYTES.fetch_add(after as i64 - before as i64, Ordering::Relaxed);
}

/// Reads a filter, checking every field: `None` on bad data.
fn load_chain(rdb: Io, encver: i32) -> Option<Chain> {
    let items = rdb.load_unsigned().ok()?;
    let count = rdb.load_unsigned().ok()?;
    let options = match encver >= OPTIONS_ENCODING_VERSION {
        true => u32::try_from(rdb.load_unsigned().ok()?).ok()?,
        false => 0,
    };
    let growth = match encver >= GROWTH_ENCODING_VERSION {
        true => u32::try_from(rdb.load_unsigned().ok()?).ok()?,
        false => 2,
    };
    if count == 0 {
        return None;
    }
    let mut fields = Vec::with_capacity(count.min(LINKS_AHEAD) as usize);
    let mut arrays = Vec::with_capacity(count.min(LINKS_AHEAD) as usize);
    for _ in 0..count {
        let capacity = rdb.load_unsigned().ok()?;
        let error = rdb.load_double().ok()?;
        let hashes = u32::try_from(rdb.load_unsigned().ok()?).ok()?;
        let bpe = rdb.load_double().ok()?;
        let (bits, n2) = match encver {
            0 => ((capacity as f64 * bpe) as u64, 0),
            _ => (
                rdb.load_unsigned().ok()?,
                u8::try_from(rdb.load_unsigned().ok()?).ok()?,
            ),
        };
        let array = rdb.load_string_buffer().ok()?.as_ref().to_vec();
        let link_items = rdb.load_unsigned().ok()?;
        fields.push(LinkFields {
            capacity,
            error,
            bpe,
            hashes,
            n2,
            items: link_items,
            bits,
            bytes: array.len() as u64,
        });
        arrays.push(array);
    }
    Chain::check(items, options, &fields).ok()?;
    let links = fields
        .into_iter()
        .zip(arrays)
        .map(|(f, bits)| Link::from_fields(f, bits))
        .collect();
    Some(Chain {
        items,
        options,
        growth,
        links,
    })
}

impl StoredValue for Chain {
    const ENCODING_VERSION: i32 = CHAIN_ENCODING_VERSION;
    const OLDEST_ENCODING_VERSION: i32 = 0;

    fn redis_type() -> &'static RedisType {
        &CHAIN_TYPE
    }

    fn load(rdb: Io, encver: i32) -> Option<Self> {
        let c = load_chain(rdb, encver)?;
        track_new(&c);
        Some(c)
    }

    fn save(&self, rdb: Io) {
        rdb.save_unsigned(self.items);
        rdb.save_unsigned(self.links.len() as u64);
        rdb.save_unsigned(u64::from(self.options));
        rdb.save_unsigned(u64::from(self.growth));
        for l in &self.links {
            let f = l.fields();
            rdb.save_unsigned(f.capacity);
            rdb.save_double(f.error);
            rdb.save_unsigned(u64::from(f.hashes));
            rdb.save_double(f.bpe);
            rdb.save_unsigned(f.bits);
            rdb.save_unsigned(u64::from(f.n2));
            rdb.save_slice(&l.bits);
            rdb.save_unsigned(f.items);
        }
    }

    fn aof_rewrite(&self, aof: Sink, key: RStr) {
        let header = self.encode_header();
        host::emit(aof, c"BF.LOADCHUNK", (key, 1i64, header.as_slice()));
        let mut iter = 1;
        while let Some((next, chunk)) = self.chunk(iter) {
            host::emit(aof, c"BF.LOADCHUNK", (key, next as i64, chunk));
            iter = next;
        }
    }

    fn mem_usage(&self) -> usize {
        self.size() as usize
    }

    fn digest(&self, md: &mut Digest) {
        md.add_int(self.items as i64);
        md.add_int(i64::from(self.options));
        md.add_int(i64::from(self.growth));
        for l in &self.links {
            let f = l.fields();
            md.add_int(f.capacity as i64);
            md.add_int(f.error.to_bits() as i64);
            md.add_int(f.bpe.to_bits() as i64);
            md.add_int(i64::from(f.hashes));
            md.add_int(i64::from(f.n2));
            md.add_int(f.items as i64);
            md.add_bytes(&l.bits);
        }
    }

    fn copy(&self) -> Self {
        let c = self.clone();
        track_new(&c);
        c
    }

    fn defrag(&mut self, m: &mut dyn Mover, cursor: u64) -> Option<u64> {
        let from = cursor as usize;
        for (i, l) in self.links.iter_mut().enumerate().skip(from) {
            if i > from && m.should_stop() {
                return Some(i as u64);
            }
            relocate::vec(&mut l.bits, m);
        }
        None
    }

    fn free_effort(&self) -> usize {
        crate::bloom::data_type::filter_effort(self.links.len(), self.size())
    }

    fn on_free(&self) {
        BF_FILTERS.fetch_sub(1, Ordering::Relaxed);
        BF_BYTES.fetch_sub(self.size() as i64, Ordering::Relaxed);
    }
}
