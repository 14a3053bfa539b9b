//! Unit tests of `dump` (its `tests` module), kept apart so the code reads on its own.

use super::*;
use crate::bloom::core::errors;
use crate::bloom::core::filter::{BloomParams, ItemHash, MAX_HASHES, MAX_LAYERS};

fn filter(p: f64, capacity: u64, expansion: u32, items: u64) -> BloomFilter {
    let params = BloomParams {
        error_rate: p,
        capacity,
        expansion,
    };
    let mut f = BloomFilter::new(params, u64::MAX).expect("filter");
    for i in 0..items {
        let _ = f.add(ItemHash::of(format!("item:{i}").as_bytes()), 0, u64::MAX);
    }
    f
}

/// Every chunk of `f` as `BF.SCANDUMPX` answers them: (iterator, bytes).
fn dump(f: &BloomFilter, max_chunk: u64) -> Vec<(u64, Vec<u8>)> {
    let mut out = vec![(HEADER_ITERATOR, encode_header(f.parts()))];
    let mut at = HEADER_ITERATOR;
    loop {
        match chunk_in(sizes(f.layers()), at, max_chunk).expect("chunk") {
            Chunk::Bits {
                layer,
                offset,
                len,
                next,
            } => {
                let words =
                    &f.layers()[layer].words()[(offset / 8) as usize..][..(len / 8) as usize];
                out.push((next, words.iter().flat_map(|w| w.to_le_bytes()).collect()));
                at = next;
            }
            Chunk::End => return out,
            Chunk::Header => panic!("header at {at}"),
        }
    }
}

/// Loads a whole dump; the filter after its last chunk.
fn load(chunks: &[(u64, Vec<u8>)], max_chunk: u64) -> BloomFilter {
    let mut l = LoadingFilter::from_header_in(&chunks[0].1, u64::MAX, max_chunk).expect("header");
    for (i, (it, data)) in chunks[1..].iter().enumerate() {
        match l.load(*it, data).expect("chunk") {
            Some(f) => {
                assert_eq!(i, chunks.len() - 2, "complete before the last chunk");
                return f;
            }
            None => assert!(i < chunks.len() - 2, "incomplete after the last chunk"),
        }
    }
    panic!("never complete")
}

fn shapes() -> Vec<BloomFilter> {
    vec![
        filter(0.01, 100, 2, 0),
        filter(0.01, 100, 2, 50),
        filter(0.01, 100, 0, 100),
        filter(0.01, 50, 2, 2_000),
        filter(0.1, 5, 1, 200),
        filter(0.001, 3, 9, 500),
        filter(0.05, 10, 32_768, 30),
        filter(1e-300, 20, 0, 20),
        filter(4.9e-324, 5, 0, 5),
        filter(0.999, 1, 2, 100),
    ]
}

#[test]
fn every_shape_round_trips_in_chunks() {
    for f in shapes() {
        for max_chunk in [8, 16, 24, 64, 4096, MAX_CHUNK_BYTES] {
            let chunks = dump(&f, max_chunk);
            assert_eq!(load(&chunks, max_chunk), f, "max_chunk {max_chunk}");
            assert!(chunks[1..].iter().all(|(_, c)| c.len() as u64 <= max_chunk));
        }
    }
    let tiny = filter(1e-300, 20, 0, 20);
    assert!(
        tiny.layers()[0].hashes() > 900,
        "{}",
        tiny.layers()[0].hashes()
    );
}

#[test]
fn iterators_follow_redisbloom() {
    // Layers of 8, 48 and 200 bytes in chunks of at most 16 bytes.
    let sizes = [8u64, 48, 200];
    let step = |it| chunk_in(sizes, it, 16);
    assert_eq!(step(0), Ok(Chunk::Header));
    assert_eq!(
        step(1),
        Ok(Chunk::Bits {
            layer: 0,
            offset: 0,
            len: 8,
            next: 9
        })
    );
    // A chunk ends at its layer's end, and the next layer starts a chunk.
    assert_eq!(
        step(9),
        Ok(Chunk::Bits {
            layer: 1,
            offset: 0,
            len: 16,
            next: 25
        })
    );
    assert_eq!(
        step(41),
        Ok(Chunk::Bits {
            layer: 1,
            offset: 32,
            len: 16,
            next: 57
        })
    );
    assert_eq!(
        step(249),
        Ok(Chunk::Bits {
            layer: 2,
            offset: 192,
            len: 8,
            next: 257
        })
    );
    assert_eq!(step(257), Ok(Chunk::End));
    assert_eq!(step(u64::MAX), Ok(Chunk::End));
    for inside in [2, 8, 10, 24, 26, 56, 58, 100, 256] {
        assert_eq!(step(inside), Err(WardenError::BadIterator), "{inside}");
    }
    // The real chunk size: a ~100 MB layer in 16 MiB chunks.
    let big = 100_000_000u64 / 8 * 8;
    let mut at = 1;
    let mut lens = Vec::new();
    while let Ok(Chunk::Bits { len, next, .. }) = chunk_at([big], at) {
        lens.push(len);
        at = next;
    }
    assert_eq!(lens.len(), 6);
    assert!(lens[..5].iter().all(|l| *l == MAX_CHUNK_BYTES));
    assert_eq!(lens.iter().sum::<u64>(), big);
    assert_eq!(at, big + 1);
    assert_eq!(chunk_at([big], at), Ok(Chunk::End));
    assert_eq!(chunk_at([] as [u64; 0], 1), Ok(Chunk::End));
}

#[test]
fn chunks_out_of_order_or_of_the_wrong_length_change_nothing() {
    let f = filter(0.01, 50, 2, 2_000);
    assert!(f.layers().len() >= 4);
    let chunks = dump(&f, 16);
    let mut l = LoadingFilter::from_header_in(&chunks[0].1, u64::MAX, 16).expect("header");
    l.load(chunks[1].0, &chunks[1].1).expect("first chunk");
    let before = l.clone();
    let expected = chunks[2].0;
    let cases: [(u64, &[u8], WardenError); 7] = [
        (
            chunks[1].0,
            &chunks[1].1,
            WardenError::ChunkOutOfOrder(expected),
        ),
        (
            chunks[3].0,
            &chunks[3].1,
            WardenError::ChunkOutOfOrder(expected),
        ),
        (
            HEADER_ITERATOR,
            &chunks[0].1,
            WardenError::ChunkOutOfOrder(expected),
        ),
        (
            expected + 8,
            &chunks[2].1,
            WardenError::ChunkOutOfOrder(expected),
        ),
        (expected, &chunks[2].1[..8], WardenError::ChunkLength(16)),
        (expected, &[], WardenError::ChunkLength(16)),
        (expected, &[0; 24], WardenError::ChunkLength(16)),
    ];
    for (it, data, err) in cases {
        assert_eq!(
            l.load(it, data),
            Err(err),
            "iterator {it}, {} bytes",
            data.len()
        );
        assert_eq!(l, before, "iterator {it}");
    }
    for (it, data) in &chunks[2..chunks.len() - 1] {
        assert_eq!(l.load(*it, data), Ok(None));
    }
    let (it, data) = chunks.last().expect("last");
    assert_eq!(l.load(*it, data), Ok(Some(f)));
    // What is left is empty and takes no more chunks.
    assert_eq!(l.load(*it, data), Err(WardenError::FilterLoaded));
    assert_eq!(l.next_chunk(), Chunk::End);
}

/// A RedisBloom 2.8 header of one link (73 bytes: size, nfilters, options,
/// growth, then bytes, bits, size, error, bpe, hashes, entries, n2).
fn redisbloom_header() -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&0u64.to_le_bytes());
    h.extend_from_slice(&1u32.to_le_bytes());
    h.extend_from_slice(&3u32.to_le_bytes());
    h.extend_from_slice(&2u32.to_le_bytes());
    h.extend_from_slice(&1200u64.to_le_bytes());
    h.extend_from_slice(&9600u64.to_le_bytes());
    h.extend_from_slice(&0u64.to_le_bytes());
    h.extend_from_slice(&0.005f64.to_le_bytes());
    h.extend_from_slice(&11.03f64.to_le_bytes());
    h.extend_from_slice(&8u32.to_le_bytes());
    h.extend_from_slice(&1000u64.to_le_bytes());
    h.push(0);
    assert_eq!(h.len(), 73);
    h
}

/// Offsets of the fields of layer `i` in a header.
fn at(i: usize, field: usize) -> usize {
    FIXED_BYTES + LAYER_BYTES * i + [0, 8, 16, 20, 28][field]
}

#[test]
fn forged_headers_are_refused_before_allocating() {
    let f = filter(0.01, 50, 2, 2_000);
    let good = encode_header(f.parts());
    let n = f.layers().len();
    assert_eq!(good.len(), FIXED_BYTES + LAYER_BYTES * n);
    let load = |h: &[u8]| LoadingFilter::from_header(h, 1 << 30).map(|_| ());
    assert_eq!(load(&good), Ok(()));
    let bad = Err(WardenError::BadFilterData);
    let foreign = Err(errors::FOREIGN_DUMP);
    assert_eq!(load(&[]), foreign);
    assert_eq!(load(b"wardenb"), foreign);
    // RedisBloom's shape: its options and layers are checked.
    let mut rb = redisbloom_header();
    assert_eq!(load(&rb), Err(errors::REDISBLOOM_HASH32));
    rb[12..16].copy_from_slice(&5u32.to_le_bytes());
    assert_eq!(load(&rb), bad, "9600 bits is not RedisBloom's size");
    rb[28..36].copy_from_slice(&11_072u64.to_le_bytes());
    rb[20..28].copy_from_slice(&1384u64.to_le_bytes());
    assert_eq!(load(&rb), Ok(()));
    assert_eq!(load(&good[..FIXED_BYTES - 1]), bad);
    assert_eq!(load(&good[..good.len() - 1]), bad);
    assert_eq!(load(&[&good[..], &[0]].concat()), bad);
    assert_eq!(load(&good[..FIXED_BYTES]), bad, "no layers given");
    let set = |at: usize, v: &[u8]| {
        let mut h = good.clone();
        h[at..at + v.len()].copy_from_slice(v);
        h
    };
    let u32s = |v: u32| v.to_le_bytes().to_vec();
    let u64s = |v: u64| v.to_le_bytes().to_vec();
    let f64s = |v: f64| v.to_le_bytes().to_vec();
    // The version, then the filter's own fields.
    assert_eq!(load(&set(8, &u32s(2))), bad);
    assert_eq!(load(&set(8, &u32s(4))), bad);
    assert_eq!(load(&set(8, &u32s(0))), bad);
    for rate in [0.0, 1.0, -0.01, f64::NAN, f64::INFINITY] {
        assert_eq!(load(&set(12, &f64s(rate))), bad, "{rate}");
    }
    assert_eq!(load(&set(20, &u32s(32_769))), bad);
    assert_eq!(load(&set(20, &u32s(u32::MAX))), bad);
    assert_eq!(load(&set(20, &u32s(0))), bad, "non-scaling with {n} layers");
    for count in [
        0,
        n as u32 - 1,
        n as u32 + 1,
        MAX_LAYERS as u32 + 1,
        u32::MAX,
    ] {
        assert_eq!(load(&set(24, &u32s(count))), bad, "{count} layers");
    }
    // Each layer's fields.
    for i in [0, n - 1] {
        assert_eq!(load(&set(at(i, 0), &u64s(0))), bad, "capacity 0");
        assert_eq!(load(&set(at(i, 0), &u64s(u64::MAX))), bad, "huge capacity");
        for rate in [0.0, 1.0, f64::NAN] {
            assert_eq!(load(&set(at(i, 1), &f64s(rate))), bad, "{rate}");
        }
        assert_eq!(load(&set(at(i, 2), &u32s(0))), bad, "no hashes");
        assert_eq!(load(&set(at(i, 2), &u32s(MAX_HASHES + 1))), bad);
        assert_eq!(load(&set(at(i, 3), &u64s(u64::MAX))), bad, "items");
        assert_eq!(load(&set(at(i, 4), &u64s(0))), bad, "no bits");
        let bits = f.layers()[i].bytes() * 8;
        assert_eq!(load(&set(at(i, 4), &u64s(bits + 1))), bad, "part word");
        assert_eq!(load(&set(at(i, 4), &u64s(bits / 2))), bad, "truncated");
    }
    // Sizes above the cap, or beyond any machine, are refused before allocating.
    let huge = set(at(n - 1, 4), &u64s(u64::MAX / 64 * 64));
    assert_eq!(load(&huge), Err(errors::TOO_LARGE));
    let over = set(at(0, 4), &u64s(1 << 40));
    assert_eq!(load(&over), Err(errors::TOO_LARGE));
    let size = f.size();
    assert!(LoadingFilter::from_header(&good, size).is_ok());
    assert_eq!(
        LoadingFilter::from_header(&good, size - 1),
        Err(errors::TOO_LARGE)
    );
    // Two layers of 2^62 bits: refused under the largest cap (1 TiB).
    let two = filter(0.01, 100, 2, 150);
    let mut forged = encode_header(two.parts());
    for i in 0..2 {
        forged[at(i, 4)..at(i, 4) + 8].copy_from_slice(&u64s(1 << 62));
    }
    assert_eq!(
        LoadingFilter::from_header(&forged, 1 << 40),
        Err(errors::TOO_LARGE)
    );
}

/// A filter with RedisBloom's hashing, made and filled as RedisBloom's.
fn rb_filter(p: f64, capacity: u64, expansion: u32, items: u64) -> BloomFilter {
    let params = BloomParams {
        error_rate: p,
        capacity,
        expansion,
    };
    let mut f = BloomFilter::new_with(Hashing::RedisBloom, params, u64::MAX).expect("filter");
    for i in 0..items {
        let _ = f.add(
            ItemHash::redisbloom(format!("item:{i}").as_bytes()),
            0,
            u64::MAX,
        );
    }
    f
}

/// The header RedisBloom 2.x's BF.SCANDUMP gives for the same filter.
fn redisbloom_header_of(f: &BloomFilter) -> Vec<u8> {
    let mut h = Vec::new();
    let items: u64 = f.layers().iter().map(Layer::items).sum();
    let options = match f.expansion() {
        0 => 13,
        _ => 5,
    };
    let growth = if f.expansion() == 0 { 2 } else { f.expansion() };
    h.extend_from_slice(&items.to_le_bytes());
    h.extend_from_slice(&(f.layers().len() as u32).to_le_bytes());
    h.extend_from_slice(&(options as u32).to_le_bytes());
    h.extend_from_slice(&growth.to_le_bytes());
    for l in f.layers() {
        h.extend_from_slice(&l.bytes().to_le_bytes());
        h.extend_from_slice(&(l.bytes() * 8).to_le_bytes());
        h.extend_from_slice(&l.items().to_le_bytes());
        h.extend_from_slice(&l.error_rate().to_le_bytes());
        h.extend_from_slice(&(-l.error_rate().ln() / 0.480453013918201).to_le_bytes());
        h.extend_from_slice(&l.hashes().to_le_bytes());
        h.extend_from_slice(&l.capacity().to_le_bytes());
        h.push(0);
    }
    h
}

#[test]
fn redisbloom_dumps_load_into_filters_with_its_hashing() {
    for f in [
        rb_filter(0.01, 100, 2, 0),
        rb_filter(0.01, 100, 2, 1_000),
        rb_filter(0.001, 30, 3, 2_000),
        rb_filter(0.01, 100, 0, 100),
        rb_filter(0.2, 7, 1, 100),
    ] {
        for max_chunk in [8, 64, MAX_CHUNK_BYTES] {
            let mut chunks = dump(&f, max_chunk);
            chunks[0].1 = redisbloom_header_of(&f);
            let loaded = load(&chunks, max_chunk);
            assert_eq!(loaded, f);
            assert_eq!(loaded.hashing(), Hashing::RedisBloom);
            // Its own dump (format version 3) round-trips as well.
            let again = dump(&loaded, max_chunk);
            assert_eq!(
                u32::from_le_bytes(again[0].1[8..12].try_into().expect("4")),
                3
            );
            assert_eq!(load(&again, max_chunk), f);
        }
    }
    // A RedisBloom header is held to the caps like any other.
    let f = rb_filter(0.01, 100_000, 2, 0);
    let header = redisbloom_header_of(&f);
    assert!(LoadingFilter::from_header(&header, f.size()).is_ok());
    assert_eq!(
        LoadingFilter::from_header(&header, f.size() - 1),
        Err(errors::TOO_LARGE)
    );
    // Layers that RedisBloom would not have sized so are refused.
    let mut forged = header.clone();
    let bits_at = 20 + 8;
    forged[bits_at..bits_at + 8].copy_from_slice(&(1u64 << 45).to_le_bytes());
    forged[20..28].copy_from_slice(&(1u64 << 42).to_le_bytes());
    assert_eq!(
        LoadingFilter::from_header(&forged, u64::MAX),
        Err(WardenError::BadFilterData)
    );
    // A native header with RedisBloom's hashing for an aging filter: refused.
    let mut v3 = encode_header(f.parts());
    v3[8..12].copy_from_slice(&2u32.to_le_bytes());
    assert!(LoadingFilter::from_header(&v3, u64::MAX).is_err());
}

#[test]
fn a_stored_load_resumes_only_where_a_chunk_starts() {
    let f = filter(0.01, 50, 2, 2_000);
    let chunks = dump(&f, 16);
    let mut l = LoadingFilter::from_header_in(&chunks[0].1, u64::MAX, 16).expect("header");
    for (it, data) in &chunks[1..4] {
        l.load(*it, data).expect("chunk");
    }
    let loaded = l.loaded();
    let stored = || {
        BloomFilter::from_parts(Hashing::Warden, 0.01, 2, l.parts().layers.to_vec(), None)
            .expect("parts")
    };
    assert_eq!(
        LoadingFilter::resume_in(stored(), loaded, 16),
        Ok(l.clone())
    );
    assert!(LoadingFilter::resume_in(stored(), 0, 16).is_ok());
    let total = f.bytes();
    for bad in [loaded + 8, loaded - 1, total, total + 16, u64::MAX] {
        assert_eq!(
            LoadingFilter::resume_in(stored(), bad, 16),
            Err(WardenError::BadFilterData),
            "{bad}"
        );
    }
    // The chunks loaded so far are what BF.LOADCHUNKX would replay.
    let replay: Vec<(u64, u64)> = l.loaded_chunks().map(|(it, _, _, len)| (it, len)).collect();
    let sent: Vec<(u64, u64)> = chunks[1..4]
        .iter()
        .map(|(it, c)| (*it, c.len() as u64))
        .collect();
    assert_eq!(replay, sent);
    let fresh = LoadingFilter::from_header(&chunks[0].1, u64::MAX).expect("header");
    assert_eq!(fresh.loaded_chunks().count(), 0);
    assert_eq!(fresh.size(), f.size());
}
