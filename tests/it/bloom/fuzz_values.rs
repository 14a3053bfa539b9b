//! The Bloom family's part of the command fuzzer (`common/grammar.rs`): its commands,
//! keys, values and option words, and the `BF.SCANDUMPX` headers and chunks it sends
//! (`scandump.rs` and `module/defrag.rs` load them too).

use crate::common::grammar::{layer_words, FamilyFuzz, Fill, Gen, WINDOWS};
use crate::common::payload::Rng;

use Fill::Word;

pub const BF_KEYS: &[&str] = &["bf:0", "bf:1", "bf:2", "bf:ns", "bf:ld"];

const ERROR_RATES: &[&str] = &["0.01", "0.001", "0.1", "0.5", "0.9999", "1e-5", "0.25"];

const CAPACITIES: &[&str] = &["1", "2", "10", "100", "1000", "20000"];

const EXPANSIONS: &[&str] = &["1", "2", "4", "32768"];

/// Error rates of a filter's layers: tighter than the filter's, as the module sizes them.
const LAYER_RATES: &[&str] = &["0.005", "0.01", "0.0025", "0.05"];

pub const FUZZ: FamilyFuzz = FamilyFuzz {
    commands: &[
        "BF.RESERVEX",
        "BF.ADDX",
        "BF.MADDX",
        "BF.EXISTSX",
        "BF.MEXISTSX",
        "BF.INSERTX",
        "BF.INFOX",
        "BF.CARDX",
        "BF._LOADX",
        "BF._ADDATX",
        "BF.SCANDUMPX",
        "BF.LOADCHUNKX",
    ],
    keys: &[BF_KEYS],
    values: &[
        ("BF.", "key", Word(|g, r, _| g.key(r, BF_KEYS))),
        ("BF.", "item", Word(|g, r, _| g.item(r))),
        ("BF.", "error_rate", Word(|g, r, _| g.pick(r, ERROR_RATES))),
        ("BF.", "capacity", Word(|g, r, _| g.pick(r, CAPACITIES))),
        ("BF.", "expansion", Word(|g, r, _| g.pick(r, EXPANSIONS))),
        ("BF.", "window_ms", Word(|g, r, _| g.pick(r, WINDOWS))),
        ("BF.INFOX", "field", Word(info_field)),
        ("BF._ADDATX", "unix_ms", Word(added_at)),
        ("BF._LOADX", "index", Word(|g, r, _| g.int(r, 3))),
        (
            "BF._LOADX",
            "layer_error",
            Word(|g, r, _| g.pick(r, LAYER_RATES)),
        ),
        ("BF._LOADX", "hashes", Word(|g, r, _| g.int(r, 20))),
        ("BF._LOADX", "items", Word(|g, r, _| g.int(r, 100))),
        ("BF._LOADX", "bits", Word(layer_bits)),
        ("BF._LOADX", "opened", Word(block_opened)),
        ("BF._LOADX", "word_offset", Word(|g, r, _| g.int(r, 64))),
        ("BF._LOADX", "bytes", Word(layer_words)),
        ("BF.SCANDUMPX", "iterator", Word(scan_iterator)),
        ("BF.LOADCHUNKX", "iterator", Word(chunk_iterator)),
        ("BF.LOADCHUNKX", "data", Word(chunk_data)),
    ],
    words: &[
        "EXPANSION",
        "NONSCALING",
        "AGE",
        "CAPACITY",
        "ERROR",
        "NOCREATE",
        "ITEMS",
        "SIZE",
        "FILTERS",
        "LAYER",
        "BITS",
        "ITEM",
        "WINDOW",
    ],
};

/// One layer of a `DUMP_SHAPES` filter: capacity, error rate, hashes.
pub type DumpLayer = (u64, f64, u32);

/// Filters a `BF.SCANDUMPX` header may describe: error rate, expansion, and per layer
/// capacity, error rate and hashes (each layer sized as the module sizes it).
pub const DUMP_SHAPES: &[(f64, u32, &[DumpLayer])] = &[
    (0.01, 2, &[(100, 0.005, 8)]),
    (0.1, 0, &[(10, 0.1, 3)]),
    (0.01, 2, &[(10, 0.005, 8), (20, 0.0025, 9)]),
];

/// Bytes of a layer's bit array: −ln p / ln²2 bits per item in whole 64-bit words.
pub fn dump_layer_bytes(capacity: u64, rate: f64) -> u64 {
    let ln2 = std::f64::consts::LN_2;
    let bits = (capacity as f64 * -rate.ln() / (ln2 * ln2)).ceil() as u64;
    bits.max(64).div_ceil(64) * 8
}

/// A `BF.SCANDUMPX` header for shape `s` with `items` items in each layer.
pub fn dump_header(s: usize, items: u64) -> Vec<u8> {
    let (rate, expansion, layers) = DUMP_SHAPES[s];
    let mut h = b"wardenbf".to_vec();
    h.extend_from_slice(&1u32.to_le_bytes());
    h.extend_from_slice(&rate.to_le_bytes());
    h.extend_from_slice(&expansion.to_le_bytes());
    h.extend_from_slice(&(layers.len() as u32).to_le_bytes());
    for &(capacity, layer_rate, hashes) in layers {
        h.extend_from_slice(&capacity.to_le_bytes());
        h.extend_from_slice(&layer_rate.to_le_bytes());
        h.extend_from_slice(&hashes.to_le_bytes());
        h.extend_from_slice(&items.min(capacity).to_le_bytes());
        h.extend_from_slice(&(dump_layer_bytes(capacity, layer_rate) * 8).to_le_bytes());
    }
    h
}

/// The iterator of chunk `j` (after the header) of shape `s`, and its length.
pub fn dump_chunk(s: usize, j: usize) -> (u64, u64) {
    let layers = DUMP_SHAPES[s].2;
    let sizes: Vec<u64> = layers.iter().map(|l| dump_layer_bytes(l.0, l.1)).collect();
    let j = j % sizes.len();
    (1 + sizes[..=j].iter().sum::<u64>(), sizes[j])
}

/// A field of BF.INFOX.
fn info_field(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let w = rng.pick(&[
        "CAPACITY",
        "SIZE",
        "FILTERS",
        "ITEMS",
        "EXPANSION",
        "ERROR",
        "WINDOW",
    ]);
    g.word(rng, w)
}

/// BF._ADDATX's time: within two seconds of now.
fn added_at(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let at = g.now + rng.below(4_000) as i64 - 2_000;
    g.val(rng, |_| at.to_string().into_bytes())
}

/// A number of `word`, if it is one.
fn number<T: std::str::FromStr>(word: &[u8]) -> Option<T> {
    std::str::from_utf8(word).ok()?.parse().ok()
}

/// A layer's bits (`LAYER … capacity layer_error hashes items bits`): mostly the size
/// the module gives the capacity and error drawn before them, else a multiple of 64.
fn layer_bits(g: &Gen, rng: &mut Rng, drawn: &[Vec<u8>]) -> Vec<u8> {
    let n = drawn.len();
    let sized = (n >= 4)
        .then(|| Some((number::<u64>(&drawn[n - 4])?, number::<f64>(&drawn[n - 3])?)))
        .flatten()
        .and_then(|(capacity, rate)| dump_layer_bytes(capacity, rate).checked_mul(8));
    g.val(rng, |r| {
        let bits = match sized {
            Some(bits) if r.chance(3, 4) => bits,
            _ => 64 * (1 + r.below(64) as u64),
        };
        bits.to_string().into_bytes()
    })
}

/// When an aging filter's block opened: in the last ten seconds.
fn block_opened(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let opened = g.now - rng.below(10_000) as i64;
    g.val(rng, |_| opened.to_string().into_bytes())
}

/// A BF.SCANDUMPX iterator: the start, a chunk's, or past the end.
fn scan_iterator(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    g.val(rng, |r| {
        let (it, _) = dump_chunk(r.below(DUMP_SHAPES.len()), r.below(2));
        let it = r.pick(&[0, 0, 1, it, it + 8, 1 << 40]);
        it.to_string().into_bytes()
    })
}

/// A BF.LOADCHUNKX iterator: the header's (1), or a chunk's of a `DUMP_SHAPES` filter.
fn chunk_iterator(g: &Gen, rng: &mut Rng, _: &[Vec<u8>]) -> Vec<u8> {
    let s = rng.below(DUMP_SHAPES.len());
    let it = if rng.chance(1, 2) {
        1
    } else {
        dump_chunk(s, rng.below(2)).0
    };
    g.val(rng, |_| it.to_string().into_bytes())
}

/// BF.LOADCHUNKX's data for the iterator drawn before it: a header after 1, bytes of
/// the chunk's length after a chunk's iterator, else any bytes.
fn chunk_data(g: &Gen, rng: &mut Rng, drawn: &[Vec<u8>]) -> Vec<u8> {
    let it = drawn.last().and_then(|w| number::<u64>(w));
    let s = rng.below(DUMP_SHAPES.len());
    let chunk = (0..DUMP_SHAPES.len())
        .flat_map(|s| (0..2).map(move |j| dump_chunk(s, j)))
        .find(|&(at, _)| Some(at) == it);
    g.val(rng, |r| match (it, chunk) {
        (Some(1), _) => dump_header(s, r.below(30) as u64),
        (_, Some((_, len))) => r.bytes(len as usize),
        _ => {
            let words = r.below(64);
            r.bytes(8 * words)
        }
    })
}
