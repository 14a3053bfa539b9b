//! Unit tests of `chain`: RedisBloom 2.8.2's own dumps, replayed.

use super::chain::*;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// Every chunk of `c` from iterator 1, as `(iterator after it, bytes)`.
fn chunks(c: &Chain) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut iter = 1;
    while let Some((next, bytes)) = c.chunk(iter) {
        out.push((next, bytes.to_vec()));
        iter = next;
    }
    out
}

const NO_CAP: u64 = u64::MAX;

/// `BF.RESERVE a 0.01 10 EXPANSION 3`, then `BF.ADD a item0` … `item24`
/// on RedisBloom 2.8.2: its `BF.SCANDUMP` and `BF.DEBUG`, byte for byte.
#[test]
fn a_scaling_filter_is_redisblooms() {
    let mut c = Chain::new(
        NewChain {
            capacity: 10,
            error: 0.01,
            growth: 3,
            nonscaling: false,
        },
        NO_CAP,
    )
    .expect("new");
    for i in 0..25 {
        assert!(c.add(format!("item{i}").as_bytes(), NO_CAP).expect("add"));
    }
    assert_eq!(
        c.encode_header(),
        hex("1900000000000000020000000500000003000000100000000000000080000000000000000a00000000000000\
             7b14ae47e17a743fe9862fb2350e2640080000000a000000000000000030000000000000008001000000000000\
             0f000000000000007b14ae47e17a643f4af7d49edef02840090000001e0000000000000000")
    );
    assert_eq!(
        chunks(&c),
        [
            (17, hex("a5d8f59a8d6a88c68707d084d1c42a1b")),
            (
                65,
                hex("8108a1cd0095105c3550840034008502400e45400540e50105970c390680c0107f000c54c845210084450680514152e5")
            ),
        ]
    );
    assert_eq!(
        c.debug_lines(),
        [
            "size:25",
            "bytes:16 bits:128 hashes:8 hashwidth:64 capacity:10 size:10 ratio:0.005",
            "bytes:48 bits:384 hashes:9 hashwidth:64 capacity:30 size:15 ratio:0.0025",
        ]
    );
    assert_eq!((c.capacity(), c.size(), c.items), (40, 224, 25));
    for i in 0..25 {
        assert!(c.contains(format!("item{i}").as_bytes()));
        assert!(!c
            .add(format!("item{i}").as_bytes(), NO_CAP)
            .expect("re-add"));
    }
}

/// Sizes RedisBloom 2.8.2's `BF.DEBUG` shows for fresh filters.
#[test]
fn new_filters_are_sized_as_redisbloom_sizes_them() {
    for (capacity, error, nonscaling, want) in [
        (
            1000,
            0.001,
            true,
            "bytes:1800 bits:14400 hashes:10 hashwidth:64 capacity:1000 size:0 ratio:0.001",
        ),
        (
            3,
            0.1,
            false,
            "bytes:8 bits:64 hashes:5 hashwidth:64 capacity:3 size:0 ratio:0.05",
        ),
        (
            7,
            0.0001,
            false,
            "bytes:24 bits:192 hashes:15 hashwidth:64 capacity:7 size:0 ratio:5e-05",
        ),
    ] {
        let p = NewChain {
            capacity,
            error,
            growth: 2,
            nonscaling,
        };
        let c = Chain::new(p, NO_CAP).expect("new");
        assert_eq!(c.debug_lines()[1], want);
    }
}

/// Filters RedisBloom made before 2.0 (no FORCE64: 32-bit hashing; no
/// NOROUND: power-of-two links), loaded from a header and grown by adds on
/// RedisBloom 2.8.2: the same bits, links and header here.
#[test]
fn legacy_hashing_and_power_of_two_links_are_redisblooms() {
    let link = |n2: u8| LinkFields {
        capacity: 10,
        error: 0.01,
        bpe: (0.01f64.ln() / 0.480453013918201).abs(),
        hashes: 7,
        n2,
        items: 0,
        bits: 128,
        bytes: 16,
    };
    let header = |options: u32, n2: u8| {
        Chain {
            items: 0,
            options,
            growth: 2,
            links: vec![Link::from_fields(link(n2), vec![0; 16])],
        }
        .encode_header()
    };
    let cases = [
        (OPT_NOROUND, 0, "2200000000000000030000000100000002000000100000000000000080000000000000000a000000000000007b14ae47e17a843f88168ac58c2b2340070000000a00000000000000002000000000000000000100000000000014000000000000007b14ae47e17a743fe9862fb2350e2640080000001400000000000000004000000000000000000200000000000004000000000000007b14ae47e17a643f4af7d49edef0284009000000280000000000000000",
            ["b4d9916391228d35114cc51e02371659", "0305561fbc5312415ea6047944c0c20cd5b36b56cf02ffdfae8ce528adddab09", "00010000082000000401008002200014000080000000300400000004084000800100002800000001800020000010000810000200030040500000100200004000"]),
        (OPT_FORCE64, 7, "2200000000000000030000000400000002000000100000000000000080000000000000000a000000000000007b14ae47e17a843f88168ac58c2b2340070000000a00000000000000072000000000000000000100000000000017000000000000007b14ae47e17a743fe9862fb2350e2640080000001700000000000000088000000000000000000400000000000001000000000000007b14ae47e17a643f4af7d49edef028400900000052000000000000000a",
            ["7612b8ba50c610361123d5081e00525d", "069f657e18b3344686a342cbed8bcafbace6db2f9be62ee371273a2f632f8c93", "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000100040010004000000100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000020008002000800000"]),
        (0, 7, "2200000000000000030000000000000002000000100000000000000080000000000000000a000000000000007b14ae47e17a843f88168ac58c2b2340070000000a00000000000000072000000000000000000100000000000017000000000000007b14ae47e17a743fe9862fb2350e2640080000001700000000000000088000000000000000000400000000000001000000000000007b14ae47e17a643f4af7d49edef028400900000052000000000000000a",
            ["b4d9916391228d35114cc51e02371659", "0305563fbc731241dea624f946c0c20cd5b3eb56cf02ffdfae8cf52aadddeb09", "0000000000000000000000000000000000000000000020000000000400000080000000000000000000000000000000000000000000000000000000000000000000000000080000000001000000200000000000000000000000000000000000000000000000000000000000000010000000000200000040000000000000000000"]),
    ];
    for (options, n2, want_header, want_chunks) in cases {
        let mut c = Chain::from_header(&header(options, n2), NO_CAP).expect("header");
        let mut items: Vec<Vec<u8>> = vec![
            b"hello".to_vec(),
            b"world".to_vec(),
            b"warden imports RedisBloom".to_vec(),
            vec![b'a'; 9],
        ];
        items.extend((0..30).map(|i| format!("i{i}").into_bytes()));
        for item in &items {
            c.add(item, NO_CAP).expect("add");
        }
        assert_eq!(c.encode_header(), hex(want_header), "options {options}");
        let got: Vec<Vec<u8>> = chunks(&c).into_iter().map(|(_, b)| b).collect();
        let want: Vec<Vec<u8>> = want_chunks.iter().map(|h| hex(h)).collect();
        assert_eq!(got, want, "options {options}");
        assert!(items.iter().all(|i| c.contains(i)));
    }
}

#[test]
fn a_nonscaling_filter_refuses_past_its_capacity() {
    let p = NewChain {
        capacity: 3,
        error: 0.01,
        growth: 2,
        nonscaling: true,
    };
    let mut c = Chain::new(p, NO_CAP).expect("new");
    let mut added = 0;
    for i in 0..100 {
        match c.add(format!("n{i}").as_bytes(), NO_CAP) {
            Ok(new) => added += u64::from(new),
            Err(e) => {
                assert_eq!(e, ChainError::Full);
                break;
            }
        }
    }
    assert_eq!((added, c.items, c.links.len()), (3, 3, 1));
    assert!(!c.is_scaling());
}

#[test]
fn growth_and_headers_respect_the_cap() {
    let p = NewChain {
        capacity: 100,
        error: 0.01,
        growth: 2,
        nonscaling: false,
    };
    let small = Chain::new(p, NO_CAP).expect("new").size();
    assert_eq!(
        Chain::new(p, small - 1),
        Err(ChainError::TooLarge { needed: small })
    );
    let mut c = Chain::new(p, small).expect("at the cap");
    let refused = (0..1000)
        .map(|i| c.add(format!("g{i}").as_bytes(), small))
        .find_map(Result::err);
    assert!(matches!(refused, Some(ChainError::TooLarge { .. })));
    assert_eq!((c.links.len(), c.items), (1, 100));
    let header = c.encode_header();
    assert_eq!(
        Chain::from_header(&header, small - 1),
        Err(ChainError::HeaderTooLarge { needed: small })
    );
    assert!(Chain::from_header(&header, small).is_ok());
    // A growth of 0 cannot make a link (RedisBloom: "problem inserting").
    let mut zero = Chain::new(NewChain { growth: 0, ..p }, NO_CAP).expect("new");
    let refused = (0..1000)
        .map(|i| zero.add(format!("z{i}").as_bytes(), NO_CAP))
        .find_map(Result::err);
    assert_eq!(refused, Some(ChainError::CannotGrow));
}

/// A header and its chunks rebuild the filter; bad headers are refused.
#[test]
fn dumps_round_trip_and_bad_headers_are_refused() {
    let mut c = Chain::new(
        NewChain {
            capacity: 50,
            error: 0.001,
            growth: 2,
            nonscaling: false,
        },
        NO_CAP,
    )
    .expect("new");
    for i in 0..400 {
        c.add(format!("r{i}").as_bytes(), NO_CAP).expect("add");
    }
    let header = c.encode_header();
    let mut copy = Chain::from_header(&header, NO_CAP).expect("header");
    for (iter, bytes) in chunks(&c) {
        copy.load_chunk(iter as i64, &bytes).expect("chunk");
    }
    assert_eq!(copy, c);
    // Any iterator answers: inside a link, the rest of it.
    let (next, rest) = c.chunk(5).expect("inside the first link");
    assert_eq!(rest, &c.links[0].bits[4..]);
    assert_eq!(next, 5 + rest.len() as u64);
    assert_eq!(c.chunk(0), None);
    assert_eq!(
        c.chunk(c.links.iter().map(|l| l.bits.len() as u64).sum::<u64>() + 1),
        None
    );
    // Chunks that fit nowhere.
    assert_eq!(copy.load_chunk(0, b"x"), Err(ChainError::BadData));
    assert_eq!(copy.load_chunk(1, b"xy"), Err(ChainError::BadData));
    assert_eq!(copy.load_chunk(i64::MAX, b"x"), Err(ChainError::NoLink));
    let first = c.links[0].bits.len() as i64;
    assert_eq!(
        copy.load_chunk(first + 2, &vec![0; first as usize + 1]),
        Err(ChainError::ChunkTooBig)
    );
    // Headers: cut, a zeroed link size, unknown options, a count that lies.
    assert_eq!(
        Chain::from_header(&header[..19], NO_CAP),
        Err(ChainError::BadData)
    );
    assert_eq!(
        Chain::from_header(&header[..header.len() - 1], NO_CAP),
        Err(ChainError::BadData)
    );
    for (at, len, byte) in [
        (72, 8, 0u8),
        (12, 4, 255),
        (0, 4, 255),
        (8, 4, 255),
        (44, 8, 0),
    ] {
        let mut bad = header.clone();
        bad[at..at + len].fill(byte);
        assert_eq!(
            Chain::from_header(&bad, NO_CAP),
            Err(ChainError::BadData),
            "{at}"
        );
    }
    let mut nan = header.clone();
    nan[44..52].copy_from_slice(&f64::NAN.to_le_bytes());
    assert_eq!(Chain::from_header(&nan, NO_CAP), Err(ChainError::BadData));
}

/// Random items: never a false negative, and a false-positive rate near the
/// asked one over the whole chain.
#[test]
fn no_false_negatives_and_the_rate_holds() {
    let mut rng = crate::common::test_rng::Rng(7);
    let mut c = Chain::new(
        NewChain {
            capacity: 1000,
            error: 0.01,
            growth: 2,
            nonscaling: false,
        },
        NO_CAP,
    )
    .expect("new");
    let items: Vec<[u8; 8]> = (0..5000).map(|_| rng.next_u64().to_le_bytes()).collect();
    for i in &items {
        c.add(i, NO_CAP).expect("add");
    }
    assert!(items.iter().all(|i| c.contains(i)));
    let false_positives = (0..20_000)
        .filter(|n| c.contains(format!("absent{n}").as_bytes()))
        .count();
    assert!(false_positives < 20_000 / 50, "{false_positives}");
}

/// Bits per item no error rate gives (none, negative, NaN or past the
/// smallest rate's) are refused even with the hash count they give: a
/// negative value gives 2^32 − 1 hashes, billions of probes per item.
#[test]
fn bits_per_item_no_rate_gives_are_refused() {
    let c = Chain::new(
        NewChain {
            capacity: 100,
            error: 0.01,
            growth: 2,
            nonscaling: false,
        },
        NO_CAP,
    )
    .expect("new");
    let good = c.links[0].fields();
    assert!(good.is_valid());
    // RedisBloom's ln 2, as `chain` holds it.
    #[allow(clippy::approx_constant)]
    let hashes = |bpe: f64| (0.693147180559945 * bpe).ceil() as i32 as u32;
    for bpe in [-2.0, -0.5, 0.0, f64::NAN, 1551.0, 3e9, f64::INFINITY] {
        let bad = LinkFields {
            bpe,
            hashes: hashes(bpe),
            ..good
        };
        assert!(
            !bad.is_valid(),
            "bits per item {bpe}, {} hashes",
            bad.hashes
        );
        assert_eq!(
            Chain::check(0, c.options, &[bad]),
            Err(ChainError::BadData),
            "{bpe}"
        );
        let mut header = c.encode_header();
        header[52..60].copy_from_slice(&bpe.to_le_bytes());
        header[60..64].copy_from_slice(&bad.hashes.to_le_bytes());
        assert_eq!(
            Chain::from_header(&header, NO_CAP),
            Err(ChainError::BadData),
            "{bpe}"
        );
    }
    // The smallest positive rate's bits per item, and a tiny positive value,
    // are what some rate or a rounding gives.
    let smallest = (f64::from_bits(1).ln() / 0.480453013918201).abs();
    for bpe in [smallest, 1e-9] {
        let ok = LinkFields {
            bpe,
            hashes: hashes(bpe),
            ..good
        };
        assert!(ok.is_valid(), "{bpe}");
    }
}

/// A chain whose items are at the top of their range (as a loaded one may
/// be) refuses an add rather than wrap the count, and stays as it was.
#[test]
fn an_add_past_the_items_range_is_refused() {
    let mut c = Chain::new(
        NewChain {
            capacity: 10,
            error: 0.01,
            growth: 2,
            nonscaling: false,
        },
        NO_CAP,
    )
    .expect("new");
    let mut full = c.links[0].clone();
    (full.capacity, full.items) = (u64::MAX, u64::MAX);
    c.links.insert(0, full);
    c.items = u64::MAX;
    let fields: Vec<LinkFields> = c.links.iter().map(Link::fields).collect();
    assert_eq!(Chain::check(c.items, c.options, &fields), Ok(()));
    let before = c.clone();
    assert_eq!(c.add(b"one more", NO_CAP), Err(ChainError::CannotGrow));
    assert_eq!(c, before);
}
