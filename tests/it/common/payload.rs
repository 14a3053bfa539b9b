//! DUMP payloads of module values, for the corrupt-payload tests: Redis's CRC64, the
//! module value framing (`RDB_TYPE_MODULE_2`, module id, opcode-tagged fields, EOF),
//! parsing a real DUMP into fields, re-encoding forged fields with a valid trailer, and
//! a small deterministic PRNG with generators of odd values.

/// Redis's CRC64 (Jones polynomial, reflected, init 0, no final xor).
pub fn crc64(data: &[u8]) -> u64 {
    static TABLE: std::sync::OnceLock<[u64; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let poly = 0xad93_d235_94c9_35a9u64.reverse_bits();
        let mut t = [0u64; 256];
        for (i, slot) in t.iter_mut().enumerate() {
            let mut c = i as u64;
            for _ in 0..8 {
                c = if c & 1 == 1 { (c >> 1) ^ poly } else { c >> 1 };
            }
            *slot = c;
        }
        t
    });
    data.iter().fold(0u64, |crc, &b| {
        table[((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8)
    })
}

/// Appends the RDB version and a valid CRC64 to a payload body.
pub fn seal(body: &[u8], ver: [u8; 2]) -> Vec<u8> {
    let mut out = body.to_vec();
    out.extend_from_slice(&ver);
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Module value opcodes (`RDB_MODULE_OPCODE_*`).
pub const OP_EOF: u64 = 0;
pub const OP_SINT: u64 = 1;
pub const OP_UINT: u64 = 2;
pub const OP_FLOAT: u64 = 3;
pub const OP_DOUBLE: u64 = 4;
pub const OP_STRING: u64 = 5;
/// `RDB_TYPE_MODULE_2`: the type byte of a module value.
pub const RDB_TYPE_MODULE_2: u8 = 7;

const MODULE_ID_CHARS: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// One field of a module value.
#[derive(Debug, Clone, PartialEq)]
pub enum Field {
    /// The SINT opcode. Redis never writes it for module values
    /// (`RedisModule_SaveSigned` writes the UINT opcode with the two's-complement
    /// bits), so it only appears in forgeries.
    I(i64),
    /// `RedisModule_SaveUnsigned` and `RedisModule_SaveSigned`.
    U(u64),
    /// `RedisModule_SaveFloat`.
    F(f32),
    /// `RedisModule_SaveDouble`.
    D(f64),
    /// `RedisModule_SaveStringBuffer`.
    S(Vec<u8>),
    /// Bytes written as they are (forgeries of the framing itself).
    Raw(Vec<u8>),
}

/// A parsed (or forged) DUMP payload of a module value.
#[derive(Debug, Clone)]
pub struct Dump {
    pub type_byte: u8,
    pub module_id: u64,
    pub fields: Vec<Field>,
    pub eof: bool,
    pub ver: [u8; 2],
}

impl Dump {
    /// The encoding version in the module id's low 10 bits.
    pub fn encver(&self) -> u64 {
        self.module_id & 1023
    }

    /// Field `i`, which must be an unsigned integer.
    pub fn uint(&self, i: usize) -> u64 {
        match self.fields[i] {
            Field::U(v) => v,
            ref other => panic!("field {i}: {other:?}"),
        }
    }

    /// The 9-character type name in the module id's high 54 bits.
    pub fn type_name(&self) -> String {
        (0..9)
            .map(|i| {
                let six = (self.module_id >> (64 - 6 * (i + 1))) & 63;
                MODULE_ID_CHARS[six as usize] as char
            })
            .collect()
    }
}

struct Reader<'a> {
    b: &'a [u8],
    p: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let end = self.p.checked_add(n)?;
        let s = self.b.get(self.p..end)?;
        self.p = end;
        Some(s)
    }

    fn byte(&mut self) -> Option<u8> {
        self.take(1).map(|s| s[0])
    }

    /// An RDB length; `(value, encoded)` where encoded marks a special string encoding.
    fn len(&mut self) -> Option<(u64, bool)> {
        let first = self.byte()?;
        match first >> 6 {
            0 => Some((u64::from(first & 0x3f), false)),
            1 => Some((
                (u64::from(first & 0x3f) << 8) | u64::from(self.byte()?),
                false,
            )),
            2 => match first {
                0x80 => Some((
                    u64::from(u32::from_be_bytes(self.take(4)?.try_into().ok()?)),
                    false,
                )),
                0x81 => Some((u64::from_be_bytes(self.take(8)?.try_into().ok()?), false)),
                _ => None,
            },
            _ => Some((u64::from(first & 0x3f), true)),
        }
    }

    fn string(&mut self) -> Option<Vec<u8>> {
        let (l, encoded) = self.len()?;
        if !encoded {
            return self.take(usize::try_from(l).ok()?).map(<[u8]>::to_vec);
        }
        match l {
            0 => Some((self.byte()? as i8).to_string().into_bytes()),
            1 => Some(
                i16::from_le_bytes(self.take(2)?.try_into().ok()?)
                    .to_string()
                    .into_bytes(),
            ),
            2 => Some(
                i32::from_le_bytes(self.take(4)?.try_into().ok()?)
                    .to_string()
                    .into_bytes(),
            ),
            3 => {
                let (clen, _) = self.len()?;
                let (ulen, _) = self.len()?;
                let data = self.take(usize::try_from(clen).ok()?)?;
                lzf_decompress(data, usize::try_from(ulen).ok()?)
            }
            _ => None,
        }
    }
}

/// LZF decompression as Redis's lzf_d.c does it; `None` on malformed input.
pub fn lzf_decompress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    let mut out: Vec<u8> = Vec::with_capacity(out_len);
    let mut i = 0;
    while i < input.len() {
        let ctrl = input[i] as usize;
        i += 1;
        if ctrl < 32 {
            let n = ctrl + 1;
            out.extend_from_slice(input.get(i..i + n)?);
            i += n;
        } else {
            let mut n = ctrl >> 5;
            if n == 7 {
                n += *input.get(i)? as usize;
                i += 1;
            }
            let back = ((ctrl & 0x1f) << 8) + *input.get(i)? as usize + 1;
            i += 1;
            let start = out.len().checked_sub(back)?;
            for k in 0..n + 2 {
                let b = out[start + k];
                out.push(b);
            }
        }
    }
    (out.len() == out_len).then_some(out)
}

/// Parses a real DUMP payload of a module value (panics when it is not one, or when
/// its CRC64 does not match, which would mean `crc64` is wrong).
pub fn parse_dump(payload: &[u8]) -> Dump {
    assert!(payload.len() > 10, "short DUMP payload");
    let body_len = payload.len() - 10;
    assert_eq!(
        crc64(&payload[..payload.len() - 8]).to_le_bytes(),
        payload[payload.len() - 8..],
        "CRC64 of a real DUMP does not match: crc64 implementation is wrong"
    );
    let ver = [payload[body_len], payload[body_len + 1]];
    let mut r = Reader {
        b: &payload[..body_len],
        p: 0,
    };
    let type_byte = r.byte().expect("type");
    assert_eq!(type_byte, RDB_TYPE_MODULE_2, "a module value");
    let (module_id, _) = r.len().expect("module id");
    let mut fields = Vec::new();
    loop {
        let (op, _) = r.len().expect("opcode");
        match op {
            OP_EOF => break,
            OP_SINT => fields.push(Field::I(r.len().expect("sint").0 as i64)),
            OP_UINT => fields.push(Field::U(r.len().expect("uint").0)),
            OP_FLOAT => fields.push(Field::F(f32::from_le_bytes(
                r.take(4).expect("float").try_into().expect("4 bytes"),
            ))),
            OP_DOUBLE => fields.push(Field::D(f64::from_le_bytes(
                r.take(8).expect("double").try_into().expect("8 bytes"),
            ))),
            OP_STRING => fields.push(Field::S(r.string().expect("string"))),
            other => panic!("unexpected module opcode {other}"),
        }
    }
    assert_eq!(r.p, body_len, "trailing bytes in the DUMP body");
    Dump {
        type_byte,
        module_id,
        fields,
        eof: true,
        ver,
    }
}

/// Appends an RDB length.
pub fn enc_len(out: &mut Vec<u8>, v: u64) {
    if v < 64 {
        out.push(v as u8);
    } else if v < 16_384 {
        out.push(0x40 | (v >> 8) as u8);
        out.push((v & 0xff) as u8);
    } else if v <= u64::from(u32::MAX) {
        out.push(0x80);
        out.extend_from_slice(&(v as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// Appends one field with its opcode.
pub fn enc_field(out: &mut Vec<u8>, f: &Field) {
    match f {
        Field::I(v) => {
            enc_len(out, OP_SINT);
            enc_len(out, *v as u64);
        }
        Field::U(v) => {
            enc_len(out, OP_UINT);
            enc_len(out, *v);
        }
        Field::F(x) => {
            enc_len(out, OP_FLOAT);
            out.extend_from_slice(&x.to_le_bytes());
        }
        Field::D(x) => {
            enc_len(out, OP_DOUBLE);
            out.extend_from_slice(&x.to_le_bytes());
        }
        Field::S(s) => {
            enc_len(out, OP_STRING);
            enc_len(out, s.len() as u64);
            out.extend_from_slice(s);
        }
        Field::Raw(b) => out.extend_from_slice(b),
    }
}

/// The payload body (type byte, module id, fields, EOF) without version and CRC.
pub fn encode_body(d: &Dump) -> Vec<u8> {
    let mut out = vec![d.type_byte];
    enc_len(&mut out, d.module_id);
    for f in &d.fields {
        enc_field(&mut out, f);
    }
    if d.eof {
        enc_len(&mut out, OP_EOF);
    }
    out
}

/// A whole payload with a valid CRC64, so RESTORE reaches the module's rdb_load.
pub fn encode(d: &Dump) -> Vec<u8> {
    seal(&encode_body(d), d.ver)
}

/// Body of a real payload (without version and CRC).
pub fn body_of(payload: &[u8]) -> &[u8] {
    &payload[..payload.len() - 10]
}

/// A deterministic PRNG (splitmix64).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when n is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next() % den < num
    }

    pub fn pick<T: Clone>(&mut self, v: &[T]) -> T {
        v[self.below(v.len())].clone()
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }

    /// Random bytes, `min + below(spread)` of them.
    pub fn some_bytes(&mut self, min: usize, spread: usize) -> Vec<u8> {
        let n = min + self.below(spread);
        self.bytes(n)
    }
}

/// An odd unsigned value near or far from `orig`.
pub fn odd_uint(rng: &mut Rng, orig: u64) -> u64 {
    let r = rng.next();
    rng.pick(&[
        0,
        1,
        2,
        3,
        4,
        5,
        7,
        63,
        64,
        65,
        1023,
        32_768,
        32_769,
        u64::from(u32::MAX),
        u64::from(u32::MAX) + 1,
        1 << 40,
        1 << 62,
        1 << 63,
        i64::MAX as u64,
        u64::MAX,
        u64::MAX - 1,
        orig.wrapping_add(1),
        orig.wrapping_sub(1),
        orig.wrapping_mul(2),
        orig / 2,
        r,
    ])
}

/// An odd signed value near or far from `orig`.
pub fn odd_int(rng: &mut Rng, orig: i64) -> i64 {
    let r = rng.next() as i64;
    rng.pick(&[
        0,
        1,
        -1,
        2,
        i64::MAX,
        i64::MAX - 1,
        i64::MIN,
        i64::MIN + 1,
        i32::MAX as i64,
        1 << 53,
        -(1 << 53),
        1_000_000_000_000_000,
        orig.wrapping_add(1),
        orig.wrapping_sub(1),
        orig.wrapping_mul(1000),
        orig.wrapping_neg(),
        orig / 1000,
        r,
    ])
}

/// A window (ms) a forged sketch may claim: none, the range's ends (100 ms to 10
/// years) and just past them, common ones.
pub fn odd_window(rng: &mut Rng) -> u64 {
    const MAX: u64 = 10 * 365 * 86_400_000;
    rng.pick(&[0, 1, 99, 100, 1000, 3_600_000, MAX, MAX + 1, u64::MAX])
}

/// The start of the newest slot a forged sketch over `window` ms (a quarter of it a
/// slot) whose start is `head` may claim: the slots next to it, one inside a slot,
/// now's and a later one, 0, the latest a signed 64-bit ms holds and the one past it.
pub fn odd_head(rng: &mut Rng, window: u64, head: u64) -> u64 {
    let slot = window.div_ceil(4).max(1);
    let start = |t: u64| t - t % slot;
    let now = start(super::now_ms() as u64);
    let latest = start(i64::MAX as u64);
    rng.pick(&[
        0,
        head.wrapping_add(slot),
        head.wrapping_sub(slot),
        head.wrapping_add(1),
        now,
        now.wrapping_add(slot.wrapping_mul(1000)),
        latest,
        latest.wrapping_add(slot),
        u64::MAX,
    ])
}

/// An odd double near or far from `orig`.
pub fn odd_double(rng: &mut Rng, orig: f64) -> f64 {
    let r = rng.next();
    rng.pick(&[
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        0.999_999,
        1e-300,
        5e-324,
        f64::MIN_POSITIVE,
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MAX,
        orig * 2.0,
        orig / 2.0,
        f64::from_bits(orig.to_bits().wrapping_add(1)),
        f64::from_bits(r),
    ])
}

/// A string derived from `orig`: emptied, cut, grown, or replaced.
pub fn odd_string(rng: &mut Rng, orig: &[u8]) -> Vec<u8> {
    let mut s = orig.to_vec();
    match rng.below(9) {
        0 => s.clear(),
        1 => {
            s.pop();
        }
        2 => s.truncate(s.len().saturating_sub(8)),
        3 => s.extend_from_slice(&[0; 8]),
        4 => s.push(0xff),
        5 => s.iter_mut().for_each(|b| *b = 0xff),
        6 => s = [orig, orig].concat(),
        7 => s = rng.some_bytes(1, 300),
        _ => s = vec![0xab; 8 * (1 + rng.below(64))],
    }
    s
}

/// A field of another kind than `f` (an opcode the loader does not expect there).
pub fn other_kind(rng: &mut Rng, f: &Field) -> Field {
    let choices = match f {
        Field::I(v) => vec![
            Field::U(*v as u64),
            Field::D(*v as f64),
            Field::S(v.to_string().into_bytes()),
        ],
        Field::U(v) => vec![
            Field::I(*v as i64),
            Field::D(*v as f64),
            Field::F(*v as f32),
            Field::S(v.to_le_bytes().to_vec()),
        ],
        Field::F(x) => vec![Field::D(f64::from(*x)), Field::U(x.to_bits().into())],
        Field::D(x) => vec![
            Field::U(x.to_bits()),
            Field::F(*x as f32),
            Field::S(x.to_string().into_bytes()),
        ],
        Field::S(s) => vec![
            Field::U(s.len() as u64),
            Field::I(-1),
            Field::D(0.01),
            Field::F(1.0),
        ],
        Field::Raw(_) => vec![Field::U(1)],
    };
    rng.pick(&choices)
}

/// Raw bytes of a string field whose declared length or encoding does not match its
/// data: lengths far beyond the payload, forged LZF lengths and back references,
/// unknown special encodings.
pub fn forged_string_header(rng: &mut Rng, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    enc_len(&mut out, OP_STRING);
    match rng.below(5) {
        0 => {
            let l = rng.pick(&[1u64 << 20, 1 << 33, 1 << 40, 1 << 62, u64::MAX]);
            enc_len(&mut out, l);
            out.extend_from_slice(data);
        }
        1 => {
            // LZF with a forged uncompressed length (data as literal runs).
            out.push(0xc3);
            let mut comp = Vec::new();
            for chunk in data.chunks(32) {
                comp.push((chunk.len() - 1) as u8);
                comp.extend_from_slice(chunk);
            }
            enc_len(&mut out, comp.len() as u64);
            let ulen = rng.pick(&[
                data.len() as u64 + 1,
                (data.len() as u64).saturating_sub(1),
                0,
                1 << 40,
                u64::MAX,
            ]);
            enc_len(&mut out, ulen);
            out.extend_from_slice(&comp);
        }
        2 => {
            // LZF with a back reference before the start of the output.
            out.push(0xc3);
            let comp = [0x00, 0x41, 0xe0, 0x10, 0xff];
            enc_len(&mut out, comp.len() as u64);
            enc_len(&mut out, 300);
            out.extend_from_slice(&comp);
        }
        3 => {
            // An integer-encoded string (what Redis writes for "123"), as the module's
            // string.
            out.push(rng.pick(&[0xc0u8, 0xc1, 0xc2]));
            out.extend_from_slice(&rng.bytes(4));
        }
        _ => {
            // Unknown special encoding / bad length prefix.
            out.push(rng.pick(&[0xc4u8, 0xff, 0x82, 0xbf]));
            out.extend_from_slice(data);
        }
    }
    out
}

/// `d` with encoding version `v` in its module id.
pub fn with_encver(d: &Dump, v: u64) -> Dump {
    let mut out = d.clone();
    out.module_id = (out.module_id & !1023) | v;
    out
}

/// Byte-level corruption of a real payload (truncation, random bytes, bit flips),
/// with the CRC64 recomputed. The type byte is left alone.
pub fn corrupt_bytes(rng: &mut Rng, payload: &[u8], kind: usize) -> Vec<u8> {
    let body = body_of(payload);
    let ver = [payload[body.len()], payload[body.len() + 1]];
    let mut b = body.to_vec();
    match kind {
        0 => b.truncate(1 + rng.below(b.len() - 1)),
        1 => {
            for _ in 0..1 + rng.below(4) {
                let i = 1 + rng.below(b.len() - 1);
                b[i] = rng.next() as u8;
            }
        }
        _ => {
            for _ in 0..1 + rng.below(3) {
                let i = 1 + rng.below(b.len() - 1);
                b[i] ^= 1 << rng.below(8);
            }
        }
    }
    seal(&b, ver)
}

/// Bytes as lower-case hex.
pub fn hex(b: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * b.len());
    for &c in b {
        s.push(DIGITS[usize::from(c >> 4)] as char);
        s.push(DIGITS[usize::from(c & 15)] as char);
    }
    s
}
