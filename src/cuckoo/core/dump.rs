//! `CF.SCANDUMPX` / `CF.LOADCHUNKX`: a cuckoo filter as a header chunk and
//! slot chunks, with RedisBloom's SCANDUMP iterators (`common::chunks`: the
//! sub-filters' words laid end to end, at most 16 MiB a chunk), and a filter
//! rebuilt from them in order.
//!
//! **Header** (little-endian): the magic `wardencf`, the format version
//! (u32, 2), the filter's hash (u32, `ItemHash::code`), capacity (u64), bucket size, max iterations, expansion and
//! fingerprint bits (u32 each), items and deletes (u64 each), the
//! sub-filter count (u32), then each sub-filter's bucket count (u64). Every
//! field is checked as the RDB loader checks it, and the whole size against
//! the caller's cap, before anything is allocated. A version 1 header,
//! written before filters had a choice of hash, has no hash field: its
//! filter hashes with murmur3.
//!
//! **Slots** are each sub-filter's 64-bit words, little-endian, as in RDB.
//! A filter being loaded answers no command but `CF.LOADCHUNKX` (and keyspace
//! commands); after its last chunk its item count must match its slots.

use crate::common::chunks::{chunk_at, Chunk, HEADER_ITERATOR};
use crate::common::error::WardenError;
use crate::common::le_words::{words_from_le, Fields};
use crate::cuckoo::core::errors;
use crate::cuckoo::core::filter::{words_for, CuckooFilter, CuckooParams, ItemHash, MAX_FILTERS};

const MAGIC: &[u8; 8] = b"wardencf";

/// Whether `data` starts as warden's header chunk does (its magic).
pub fn is_wardens_header(data: &[u8]) -> bool {
    data.starts_with(MAGIC)
}

/// Version of the header format (a later one is refused, not guessed at).
const FORMAT_VERSION: u32 = 2;

/// The header version written before filters had a choice of hash.
const FORMAT_VERSION_MURMUR3: u32 = 1;

/// The sizes in bytes of a filter's sub-filters.
pub fn sizes(f: &CuckooFilter) -> impl Iterator<Item = u64> + '_ {
    f.filters().iter().map(|s| s.bytes())
}

/// The words of the chunk of `len` bytes at byte `offset` of sub-filter
/// `sub` (as `chunk_at` gives them).
pub fn chunk_words(f: &CuckooFilter, sub: usize, offset: u64, len: u64) -> &[u64] {
    &f.filters()[sub].words()[(offset / 8) as usize..][..(len / 8) as usize]
}

/// The header chunk of a filter.
pub fn encode_header(f: &CuckooFilter) -> Vec<u8> {
    let p = f.params();
    let mut out = Vec::with_capacity(60 + 8 * f.filters().len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(f.item_hash().code() as u32).to_le_bytes());
    out.extend_from_slice(&p.capacity.to_le_bytes());
    for v in [
        p.bucket_size,
        p.max_iterations,
        p.expansion,
        f.fingerprint_bits(),
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&f.items().to_le_bytes());
    out.extend_from_slice(&f.deletes().to_le_bytes());
    out.extend_from_slice(&(f.filters().len() as u32).to_le_bytes());
    for sub in f.filters() {
        out.extend_from_slice(&sub.buckets().to_le_bytes());
    }
    out
}

/// A filter being loaded from a header chunk: every field checked, each
/// sub-filter's bucket count the one its parameters give, the size within
/// `max_bytes`; its slots zero until their chunks come.
pub fn from_header(bytes: &[u8], max_bytes: u64) -> Result<CuckooFilter, WardenError> {
    let bad = || WardenError::BadFilterData;
    let mut r = Fields(bytes);
    if &r.take::<8>()? != MAGIC {
        return Err(bad());
    }
    let item_hash = match r.u32()? {
        FORMAT_VERSION_MURMUR3 => ItemHash::Murmur3,
        FORMAT_VERSION => ItemHash::from_code(u64::from(r.u32()?)).ok_or_else(bad)?,
        _ => return Err(bad()),
    };
    let params = CuckooParams {
        capacity: r.u64()?,
        bucket_size: r.u32()?,
        max_iterations: r.u32()?,
        expansion: r.u32()?,
    };
    let fingerprint_bits = r.u32()?;
    let (items, deletes) = (r.u64()?, r.u64()?);
    let count = u64::from(r.u32()?);
    CuckooFilter::check_header(params, fingerprint_bits, count, deletes).map_err(|_| bad())?;
    if count > MAX_FILTERS as u64 {
        return Err(bad());
    }
    let mut buckets = Vec::with_capacity(count as usize);
    for _ in 0..count {
        buckets.push(r.u64()?);
    }
    if !r.0.is_empty() {
        return Err(bad());
    }
    // Sizes first, so a forged header allocates nothing.
    let mut total = 0u64;
    for (k, &m) in buckets.iter().enumerate() {
        if params.buckets_of(k) != Some(m) {
            return Err(bad());
        }
        let words = m
            .checked_mul(u64::from(params.bucket_size))
            .map(|slots| words_for(slots, fingerprint_bits))
            .ok_or_else(bad)?;
        total = total.saturating_add(words.saturating_mul(8));
    }
    if total > max_bytes {
        return Err(errors::TOO_LARGE);
    }
    let mut f =
        CuckooFilter::stored_empty(params, fingerprint_bits, (items, deletes), count, u64::MAX)?
            .with_item_hash(item_hash);
    f.set_loading(Some(0));
    Ok(f)
}

/// Loads the chunk that came with `iterator` into a filter being loaded:
/// it must be the next one, of its exact length. Returns whether the filter
/// is now whole (then its item count has been checked against its slots).
/// Refused with nothing changed.
pub fn load_chunk(f: &mut CuckooFilter, iterator: u64, data: &[u8]) -> Result<bool, WardenError> {
    let loaded = f.loading().ok_or(WardenError::FilterLoaded)?;
    let Chunk::Bits {
        layer,
        offset,
        len,
        next,
    } = chunk_at(sizes(f), loaded + HEADER_ITERATOR)?
    else {
        return Err(WardenError::BadFilterData);
    };
    if iterator != next {
        return Err(WardenError::ChunkOutOfOrder(next));
    }
    if data.len() as u64 != len {
        return Err(WardenError::ChunkLength(len));
    }
    let words = words_from_le(data).ok_or(WardenError::BadFilterData)?;
    let (b, fb) = (f.params().bucket_size, f.fingerprint_bits());
    let sub = &mut f.filters_mut()[layer];
    let before = sub.words()[(offset / 8) as usize..][..words.len()].to_vec();
    sub.load_words(b, fb, (offset / 8) as usize, &words)?;
    let now = loaded + len;
    let whole = now == sizes(f).sum::<u64>();
    if whole && !f.counts_agree() {
        f.filters_mut()[layer].load_words(b, fb, (offset / 8) as usize, &before)?;
        return Err(WardenError::BadFilterData);
    }
    f.set_loading(if whole { None } else { Some(now) });
    Ok(whole)
}

/// The chunks a filter being loaded has loaded, as (iterator, sub-filter,
/// byte offset, length): what AOF rewrite replays after its header.
pub fn loaded_chunks(f: &CuckooFilter) -> Vec<(u64, usize, u64, u64)> {
    let mut out = Vec::new();
    let Some(loaded) = f.loading() else {
        return out;
    };
    let mut at = HEADER_ITERATOR;
    while at - HEADER_ITERATOR < loaded {
        match chunk_at(sizes(f), at) {
            Ok(Chunk::Bits {
                layer,
                offset,
                len,
                next,
            }) => {
                out.push((next, layer, offset, len));
                at = next;
            }
            _ => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::le_words::words_to_le;
    use crate::common::test_rng::Rng;
    use crate::cuckoo::core::filter::{KickRng, Touched};

    struct R(Rng);
    impl KickRng for R {
        fn next_u64(&mut self) -> u64 {
            self.0.next_u64()
        }
    }

    fn grown() -> CuckooFilter {
        grown_with(ItemHash::NEWEST)
    }

    fn grown_with(item_hash: ItemHash) -> CuckooFilter {
        let p = CuckooParams {
            capacity: 100,
            bucket_size: 4,
            max_iterations: 10,
            expansion: 2,
        };
        let mut f = CuckooFilter::new(p, u64::MAX)
            .unwrap()
            .with_item_hash(item_hash);
        let mut rng = R(Rng(5));
        for i in 0..700u32 {
            let h = f.hash(&i.to_le_bytes());
            f.insert(h, &mut rng, u64::MAX, &mut Touched::default())
                .unwrap();
        }
        for i in 0..50u32 {
            assert!(f.delete(f.hash(&i.to_le_bytes())));
        }
        assert!(f.filters().len() > 1);
        f
    }

    /// Every chunk of a dump, as SCANDUMPX answers them.
    fn dump(f: &CuckooFilter) -> Vec<(u64, Vec<u8>)> {
        let mut out = vec![(HEADER_ITERATOR, encode_header(f))];
        let mut at = HEADER_ITERATOR;
        loop {
            match chunk_at(sizes(f), at).unwrap() {
                Chunk::Bits {
                    layer,
                    offset,
                    len,
                    next,
                } => {
                    let words = chunk_words(f, layer, offset, len);
                    out.push((next, words_to_le(words).into_owned()));
                    at = next;
                }
                Chunk::End => return out,
                Chunk::Header => unreachable!(),
            }
        }
    }

    #[test]
    fn a_dump_loads_back_into_the_same_filter_and_only_in_order() {
        let f = grown();
        let chunks = dump(&f);
        let mut g = from_header(&chunks[0].1, u64::MAX).unwrap();
        assert_eq!(g.loading(), Some(0));
        assert_eq!(loaded_chunks(&g), vec![]);
        if chunks.len() > 2 {
            let (it, data) = &chunks[2];
            assert!(matches!(
                load_chunk(&mut g, *it, data),
                Err(WardenError::ChunkOutOfOrder(_))
            ));
        }
        let (it, data) = &chunks[1];
        assert!(matches!(
            load_chunk(&mut g, *it, &data[..8]),
            Err(WardenError::ChunkLength(_))
        ));
        for (n, (it, data)) in chunks[1..].iter().enumerate() {
            let whole = load_chunk(&mut g, *it, data).unwrap();
            assert_eq!(whole, n == chunks.len() - 2);
        }
        assert_eq!(g, f);
        assert_eq!(load_chunk(&mut g, 1, b""), Err(WardenError::FilterLoaded));
    }

    /// A header keeps the filter's hash; a version 1 header (no hash
    /// field, written before hashes could differ) loads as murmur3, and an
    /// unknown hash is refused.
    #[test]
    fn headers_carry_the_hash_and_version_1_means_murmur3() {
        for item_hash in [ItemHash::Murmur3, ItemHash::Xxh3] {
            let f = grown_with(item_hash);
            let chunks = dump(&f);
            let mut g = from_header(&chunks[0].1, u64::MAX).unwrap();
            for (it, data) in &chunks[1..] {
                load_chunk(&mut g, *it, data).unwrap();
            }
            assert_eq!(g, f);
            assert_eq!(g.item_hash(), item_hash);
            for i in 50..700u32 {
                assert!(g.contains(g.hash(&i.to_le_bytes())));
            }
        }
        let f = grown_with(ItemHash::Murmur3);
        let header = &dump(&f)[0].1;
        let mut v1 = header[..8].to_vec();
        v1.extend_from_slice(&FORMAT_VERSION_MURMUR3.to_le_bytes());
        v1.extend_from_slice(&header[16..]);
        assert_eq!(
            from_header(&v1, u64::MAX).unwrap().item_hash(),
            ItemHash::Murmur3
        );
        let mut unknown = header.clone();
        unknown[12..16].copy_from_slice(&7u32.to_le_bytes());
        assert_eq!(
            from_header(&unknown, u64::MAX).err(),
            Some(WardenError::BadFilterData)
        );
        let mut later = header.clone();
        later[8..12].copy_from_slice(&3u32.to_le_bytes());
        assert_eq!(
            from_header(&later, u64::MAX).err(),
            Some(WardenError::BadFilterData)
        );
    }

    #[test]
    fn forged_headers_and_counts_are_refused() {
        let f = grown();
        let chunks = dump(&f);
        let header = &chunks[0].1;
        // Any single byte changed: refused, or a filter that is consistent.
        for at in 0..header.len() {
            for v in [0u8, 1, 0x7f, 0xff] {
                let mut forged = header.clone();
                forged[at] = v;
                if let Ok(g) = from_header(&forged, 1 << 30) {
                    assert!(g.size() <= (1 << 30) + 4096);
                }
            }
        }
        assert_eq!(
            from_header(&header[..header.len() - 1], u64::MAX).err(),
            Some(WardenError::BadFilterData)
        );
        assert_eq!(from_header(header, 64).err(), Some(errors::TOO_LARGE));
        // An item count that does not match the slots: the last chunk is refused.
        let mut forged = header.clone();
        forged[40..48].copy_from_slice(&(f.items() + 1).to_le_bytes());
        let mut g = from_header(&forged, u64::MAX).unwrap();
        let last = chunks.len() - 1;
        for (it, data) in &chunks[1..last] {
            load_chunk(&mut g, *it, data).unwrap();
        }
        let before = g.clone();
        assert_eq!(
            load_chunk(&mut g, chunks[last].0, &chunks[last].1),
            Err(WardenError::BadFilterData)
        );
        assert_eq!(g, before);
    }
}
