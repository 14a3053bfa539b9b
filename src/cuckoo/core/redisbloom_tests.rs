//! Unit tests of `redisbloom`: RedisBloom 2.8.2's own dumps, replayed.

use super::redisbloom::*;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// Every chunk of `f` from iterator 1, as `(iterator after it, hex)`.
fn chunks(f: &RbFilter) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    let mut iter = 1;
    while let Some((next, bytes)) = f.chunk(iter) {
        out.push((next, bytes.iter().map(|b| format!("{b:02x}")).collect()));
        iter = next;
    }
    out
}

fn header(f: &RbFilter) -> Vec<u8> {
    f.encode_header().to_vec()
}

const NO_CAP: u64 = u64::MAX;

fn new(capacity: u64, bucket_size: u16, max_iterations: u16, expansion: u16) -> RbFilter {
    let p = NewRb {
        capacity,
        bucket_size,
        max_iterations,
        expansion,
    };
    RbFilter::new(p, NO_CAP).expect("new")
}

/// `CF.RESERVE a 10`, then `CF.ADD a item0` … `item59` on RedisBloom 2.8.2:
/// its walks and growth (4 tables), `CF.SCANDUMP` and `CF.DEBUG`, byte for
/// byte.
#[test]
fn growth_and_walks_are_redisblooms() {
    let mut f = new(10, 2, 20, 1);
    for i in 0..60 {
        let item = format!("item{i}");
        assert_eq!(f.insert(item.as_bytes(), false, NO_CAP), Insert::Added);
    }
    assert_eq!(
        header(&f),
        hex("3c00000000000000080000000000000000000000000000000400000000000000020014000100")
    );
    let want = [
        (17, "0439b4079c839c74ada538b41996aa00"),
        (33, "0906e6a625a2612a1e4b8814b9df3468"),
        (49, "e9604de9fd77702478ec3982879a8f62"),
        (65, "740408005caa0c483c37c30020c22800"),
    ];
    let got = chunks(&f);
    assert_eq!(
        got.iter()
            .map(|(n, h)| (*n, h.as_str()))
            .collect::<Vec<_>>(),
        want
    );
    assert_eq!(
        f.debug_line(),
        "bktsize:2 buckets:8 items:60 deletes:0 filters:4 max_iterations:20 expansion:1"
    );
    assert_eq!(f.size(), 168);
    assert!((0..60).all(|i| f.contains(format!("item{i}").as_bytes())));
}

/// `CF.RESERVE b 16 BUCKETSIZE 4 MAXITERATIONS 5 EXPANSION 3` (expansion 4),
/// `CF.INSERT b ITEMS x0 … x149`, then `CF.DEL` of every third item (which
/// compacts on its own once deletes pass a tenth of the items), then
/// `CF.COMPACT`, on RedisBloom 2.8.2.
#[test]
fn deletes_and_compaction_are_redisblooms() {
    let mut f = new(16, 4, 5, 3);
    for i in 0..150 {
        let item = format!("x{i}");
        assert_eq!(f.insert(item.as_bytes(), false, NO_CAP), Insert::Added);
    }
    assert_eq!(
        header(&f),
        hex("9600000000000000040000000000000000000000000000000300000000000000040005000400")
    );
    let before = chunks(&f);
    assert_eq!(
        before[0],
        (17, "65b3fc6241e27b86cec547c012287cda".to_string())
    );
    assert_eq!(before[1].0, 81);
    assert_eq!(
        before[1].1,
        "a096970049d4000000000000acc2de7e1d45b71d20b5fb5cf83093453f4dc700a1360000cf00000043000000b2ea148c72945d8a14280615361cb19800000000"
    );
    assert_eq!(before[2].0, 337);
    assert_eq!(f.size(), 424);
    for i in (0..150).step_by(3) {
        assert!(f.delete(format!("x{i}").as_bytes()), "x{i}");
    }
    let after = [
        (17, "a02bfc6241467b86cec57e951228c5da"),
        (81, "a0969787494d696841eb080aac7bde7e1dcab71d156ffb5cb33093453f4dc7b1a1366036fd40776d43204c0241ea148c93945d8a93287f52361ab1989d862073"),
        (337, "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000bf00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000c3000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000008700000000000000000000000000005f8d0000e90000000000000000eb0000000000000000000000000000a400000000000000f900000000f00000000000007d00002e000000003000410072795320001900000000000000af0000"),
    ];
    let got = chunks(&f);
    assert_eq!(
        got.iter()
            .map(|(n, h)| (*n, h.as_str()))
            .collect::<Vec<_>>(),
        after
    );
    assert_eq!(
        f.debug_line(),
        "bktsize:4 buckets:4 items:100 deletes:0 filters:3 max_iterations:5 expansion:4"
    );
    // Nothing more moves, and no delete is counted: CF.COMPACT changes nothing.
    assert!(!f.compact(true));
    assert_eq!(chunks(&f), got);
    for i in 0..150 {
        let present = f.contains(format!("x{i}").as_bytes());
        assert!(i % 3 == 0 || present, "x{i}");
    }
}

/// `CF.RESERVE c 4 EXPANSION 0` and 12 items: 4 fit, the walks of the others
/// fail and are undone (the table is RedisBloom's after them).
#[test]
fn a_full_filter_that_cannot_grow_is_left_as_it_was() {
    let mut f = new(4, 2, 20, 0);
    let got: Vec<Insert> = (0..12)
        .map(|i| f.insert(format!("z{i}").as_bytes(), false, NO_CAP))
        .collect();
    assert_eq!(&got[..4], &[Insert::Added; 4]);
    assert!(got[4..].iter().all(|o| *o == Insert::NoSpace));
    assert_eq!(
        header(&f),
        hex("0400000000000000020000000000000000000000000000000100000000000000020014000000")
    );
    assert_eq!(chunks(&f), [(5, "04f72829".to_string())]);
    assert_eq!(f.size(), 60);
}

/// `CF.RESERVE d 4` (2 buckets): `CF.COUNT` after each add; an item whose
/// two buckets are one counts its copies there twice, as RedisBloom does.
#[test]
fn counts_are_redisblooms() {
    let mut f = new(4, 2, 20, 1);
    let counts: Vec<u64> = (0..6)
        .map(|i| {
            let item = format!("k{i}");
            assert_eq!(f.insert(item.as_bytes(), false, NO_CAP), Insert::Added);
            f.count(item.as_bytes())
        })
        .collect();
    assert_eq!(counts, [2, 1, 2, 2, 2, 1]);
    assert_eq!(
        chunks(&f),
        [(5, "2fd04c92".to_string()), (9, "89007600".to_string())]
    );
    assert_eq!(f.size(), 80);
}

#[test]
fn nx_inserts_and_deletes() {
    let mut f = new(1000, 2, 20, 1);
    assert_eq!(f.insert(b"a", true, NO_CAP), Insert::Added);
    assert_eq!(f.insert(b"a", true, NO_CAP), Insert::Exists);
    assert_eq!(f.insert(b"a", false, NO_CAP), Insert::Added);
    assert_eq!(f.count(b"a"), 2);
    assert!(f.delete(b"a") && f.delete(b"a"));
    assert!(!f.delete(b"a"));
    assert_eq!((f.items, f.deletes), (0, 2));
    assert!(f.compact(true));
    assert_eq!(f.deletes, 0);
}

/// Sizes RedisBloom 2.8.2 reports for fresh filters (`CF.INFO`, `CF.DEBUG`).
#[test]
fn new_filters_are_sized_as_redisbloom_sizes_them() {
    let f = new(1000, 2, 20, 1);
    assert_eq!((f.buckets, f.size()), (512, 1080));
    let f = new(10_000, 2, 20, 1);
    assert_eq!(
        f.debug_line(),
        "bktsize:2 buckets:8192 items:0 deletes:0 filters:1 max_iterations:20 expansion:1"
    );
    let f = new(9, 2, 20, 0);
    assert_eq!((f.buckets, f.size()), (4, 64));
    let f = new(67_108_864, 255, 65_535, 32_768);
    assert_eq!((f.buckets, f.expansion), (524_288, 32_768));
    let f = new(100, 2, 20, 3);
    assert_eq!(f.expansion, 4);
}

/// `CF.SCANDUMP` at any iterator of a filter of four 16-byte tables, and
/// `CF.LOADCHUNK` at any iterator, as RedisBloom 2.8.2 answers them.
#[test]
fn chunks_at_any_iterator_are_redisblooms() {
    let mut f = new(10, 2, 20, 1);
    for i in 0..60 {
        f.insert(format!("item{i}").as_bytes(), false, NO_CAP);
    }
    let table = |i: usize| f.tables[i].slots.clone();
    // A table of up to 16 MiB is answered whole from any offset in it.
    for (iter, next, t) in [
        (1, 17, 0),
        (2, 18, 0),
        (16, 32, 0),
        (17, 33, 1),
        (20, 36, 1),
        (40, 56, 2),
        (64, 80, 3),
    ] {
        let (n, bytes) = f.chunk(iter).expect("inside");
        assert_eq!((n, bytes.to_vec()), (next, table(t)), "{iter}");
    }
    for iter in [0, 65, 66, 100] {
        assert_eq!(f.chunk(iter), None);
    }
    // Loads: at the iterator minus the length minus one; past the end, into
    // the newest table at what is left of the offset.
    assert!(f.load_chunk(17, &[b'A'; 16]));
    assert!(f.load_chunk(70, b"BBB"));
    assert_eq!(&f.tables[3].slots[2..5], b"BBB");
    assert!(!f.load_chunk(66, &[b'C'; 17]));
    assert!(!f.load_chunk(100, &[b'D'; 16]));
    assert!(f.load_chunk(81, &[b'E'; 16]));
    assert!(!f.load_chunk(82, &[b'F'; 16]));
    assert!(f.load_chunk(2, b"G"));
    assert!(!f.load_chunk(1, b""));
    assert!(!f.load_chunk(1, b"x"));
    assert!(!f.load_chunk(0, b"x"));
    assert!(!f.load_chunk(i64::MIN, b"x"));
    assert_eq!(f.tables[0].slots, hex("47414141414141414141414141414141"));
    assert_eq!(f.tables[3].slots, [b'E'; 16]);
}

/// A table over 16 MiB is answered from the asked offset, 16 MiB at most.
#[test]
fn large_tables_come_in_16_mib_chunks() {
    let f = new(40 << 20, 1, 20, 1);
    let size = f.tables[0].slots.len() as u64;
    assert_eq!(size, 64 << 20);
    assert_eq!(
        f.chunk(1).map(|(n, b)| (n, b.len() as u64)),
        Some((1 + MAX_CHUNK, MAX_CHUNK))
    );
    let last = size - 10;
    assert_eq!(
        f.chunk(1 + last).map(|(n, b)| (n, b.len() as u64)),
        Some((1 + size, 10))
    );
}

/// Headers: a round trip, RedisBloom's checks and warden's stricter ones,
/// and the cap.
#[test]
fn headers_are_checked_and_capped() {
    let mut f = new(100, 2, 20, 2);
    for i in 0..300 {
        f.insert(format!("h{i}").as_bytes(), false, NO_CAP);
    }
    assert!(f.tables.len() > 1);
    let h = f.encode_header();
    let mut copy = RbFilter::from_header(&h, NO_CAP).expect("header");
    let mut iter = 1;
    while let Some((next, bytes)) = f.chunk(iter) {
        assert!(copy.load_chunk(next as i64, bytes));
        iter = next;
    }
    assert_eq!(copy, f);
    assert_eq!(
        RbFilter::from_header(&h, f.size() - 1),
        Err(RbError::TooLarge { needed: f.size() })
    );
    let bad = |at: usize, bytes: &[u8]| {
        let mut b = h;
        b[at..at + bytes.len()].copy_from_slice(bytes);
        RbFilter::from_header(&b, NO_CAP)
    };
    // Buckets 0, not a power of two, past 56 bits; no table; bucket size 0
    // or 256; no kicks; an expansion not a power of two; expansion 0 with
    // two tables.
    for (at, bytes) in [
        (8, &0u64.to_le_bytes()[..]),
        (8, &3u64.to_le_bytes()[..]),
        (8, &(1u64 << 56).to_le_bytes()[..]),
        (24, &0u64.to_le_bytes()[..]),
        (24, &0x1_0000u64.to_le_bytes()[..]),
        (32, &0u16.to_le_bytes()[..]),
        (32, &256u16.to_le_bytes()[..]),
        (34, &0u16.to_le_bytes()[..]),
        (36, &3u16.to_le_bytes()[..]),
        (36, &0u16.to_le_bytes()[..]),
    ] {
        assert_eq!(bad(at, bytes), Err(RbError::BadData), "{at} {bytes:?}");
    }
    // The table count is kept to 16 bits: 65537 tables are one.
    let one = bad(24, &0x1_0001u64.to_le_bytes()).expect("one table");
    assert_eq!(one.tables.len(), 1);
    // A huge filter is refused by the cap before anything is allocated.
    let mut huge = h;
    huge[8..16].copy_from_slice(&(1u64 << 48).to_le_bytes());
    assert!(matches!(
        RbFilter::from_header(&huge, 1 << 30),
        Err(RbError::TooLarge { .. })
    ));
}

#[test]
fn growth_respects_the_cap_and_changes_nothing_when_refused() {
    let mut f = new(8, 2, 20, 1);
    let cap = f.size();
    let mut refused = None;
    for i in 0..100 {
        let before = f.clone();
        match f.insert(format!("c{i}").as_bytes(), false, cap) {
            Insert::Added => {}
            other => {
                assert_eq!(f, before);
                refused = Some(other);
                break;
            }
        }
    }
    assert_eq!(
        refused,
        Some(Insert::CannotGrow(RbError::TooLarge {
            needed: cap + 16 + 8
        }))
    );
    // Sizes past what RedisBloom keeps cannot be made.
    let p = NewRb {
        capacity: 1 << 62,
        bucket_size: 1,
        max_iterations: 20,
        expansion: 1,
    };
    assert_eq!(RbFilter::new(p, NO_CAP), Err(RbError::Impossible));
}

/// Many adds through walks and growth, then compactions: no false
/// negatives; deletes keep the item count.
#[test]
fn walks_growth_and_compaction_lose_nothing() {
    let mut rng = crate::common::test_rng::Rng(11);
    let mut f = new(64, 2, 20, 2);
    let items: Vec<[u8; 8]> = (0..3000).map(|_| rng.next_u64().to_le_bytes()).collect();
    for i in &items {
        assert_eq!(f.insert(i, false, NO_CAP), Insert::Added);
    }
    assert!(items.iter().all(|i| f.contains(i)));
    for i in &items[..1500] {
        assert!(f.delete(i));
    }
    assert_eq!(f.items, 1500);
    f.compact(true);
    assert_eq!((f.items, f.deletes), (1500, 0));
    let held: u64 = f
        .tables
        .iter()
        .map(|t| t.slots.iter().filter(|&&s| s != 0).count() as u64)
        .sum();
    assert_eq!(held, 1500);
}
