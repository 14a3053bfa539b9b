//! Forgeries of each warden type's payloads (`payload_types`): odd values of the
//! same kind, other opcodes, other types' fields and structural forgeries per type.

use super::payload::*;
use super::payload_checks::{exercise, read_checks, Findings};
use super::payload_cuckoo::forge_cuckoo;
use super::payload_types::*;
use super::*;
use crate::lock::record::*;

// ---------------------------------------------------------------------------------------
// Forgeries
// ---------------------------------------------------------------------------------------

/// A value of the same kind but odd.
pub fn odd_same(rng: &mut Rng, f: &Field) -> Field {
    match f {
        Field::I(v) => Field::I(odd_int(rng, *v)),
        // Signed fields are stored as UINT too: odd signed values as well.
        Field::U(v) if rng.chance(1, 2) => Field::U(odd_int(rng, *v as i64) as u64),
        Field::U(v) => Field::U(odd_uint(rng, *v)),
        Field::F(x) => Field::F(odd_double(rng, f64::from(*x)) as f32),
        Field::D(x) => Field::D(odd_double(rng, *x)),
        Field::S(s) => Field::S(odd_string(rng, s)),
        Field::Raw(r) => Field::Raw(r.clone()),
    }
}

/// Lock-specific forgeries, of the packed record (owner, token, holds) or
/// of the version 1 layout (owner, token, holds, deadline fields).
pub fn forge_lock(rng: &mut Rng, d: &mut Dump) {
    let now = now_ms();
    let Some(mut g) = Grant::read(d) else {
        return;
    };
    match rng.below(6) {
        0 => {
            g.owner = match rng.below(5) {
                0 => Vec::new(),
                1 => vec![0],
                2 => vec![b'o'; 64 * 1024],
                3 => rng.some_bytes(1, 40),
                _ => b"\xff".to_vec(),
            }
        }
        1 => {
            g.token = rng.pick(&[
                0,
                -1,
                1,
                i64::MIN,
                i64::MAX,
                i64::MAX - 1,
                (1 << 62) + 1,
                now * 1000,
                now * 1000 + 1_000_000_000,
            ])
        }
        2 => g.holds = rng.pick(&[0, -1, 1, 2, 7, 8, i64::MAX, i64::MIN, 1 << 40]),
        3 => {
            // The record's bytes cut, grown or a flag bit flipped.
            let mut b = g.lock_bytes();
            match rng.below(3) {
                0 => b.truncate(rng.below(b.len())),
                1 => b[0] ^= 1 << rng.below(8),
                _ => b.extend(rng.some_bytes(1, 10)),
            }
            d.fields = vec![Field::S(b)];
            return;
        }
        4 => {
            // Version 1 with a field out of range.
            g.deadline = now + 60_000;
            let mut old = g.v1_fields();
            let i = rng.below(4);
            old[i] = match i {
                0 => Field::S(rng.pick(&[Vec::new(), vec![0]])),
                3 => sig(rng.pick(&[0, -1, 1, i64::MAX, i64::MIN])),
                _ => sig(rng.pick(&[0, -1, i64::MAX, i64::MIN])),
            };
            *d = with_encver(d, 1);
            d.fields = old;
            return;
        }
        _ => {
            // The packed record under version 1, or version 1's fields under 2.
            if rng.chance(1, 2) {
                *d = with_encver(d, 1);
            } else {
                g.deadline = now + 60_000;
                d.fields = g.v1_fields();
            }
            return;
        }
    }
    g.put(d);
}

/// Layer counts a forged filter of `layers` layers may claim: none, one more or one
/// fewer, past the 64-layer limit, and huge (`1 << 62` too with `also_1_62`; the
/// order is the draws' of the seeded generators).
pub fn odd_layer_counts(layers: usize, also_1_62: bool) -> Vec<u64> {
    let l = layers as u64;
    let mut counts = vec![0, l + 1, l - 1, 64, 65, 1000, 1 << 32];
    if also_1_62 {
        counts.push(1 << 62);
    }
    counts.push(u64::MAX);
    counts
}

/// Filter-specific forgeries: layer counts, capacities, hashes, items, error rates,
/// expansion and plausible multi-layer filters.
pub fn forge_filter(rng: &mut Rng, d: &mut Dump) {
    let layers = layer_count(d);
    if layers == 0 || !(d.fields.len() - FILTER_FIELDS).is_multiple_of(5) {
        return;
    }
    match rng.below(7) {
        0 => d.fields[2] = Field::U(rng.pick(&odd_layer_counts(layers, false))),
        1 => {
            let l = rng.below(layers);
            let c = rng.pick(&[0, 1, 1 << 32, 1 << 40, 1 << 62, i64::MAX as u64, u64::MAX]);
            d.fields[layer_field(l, 0)] = Field::U(c);
            if rng.chance(1, 2) {
                d.fields[layer_field(l, 3)] = Field::U(c);
            }
        }
        2 => {
            let l = rng.below(layers);
            let f = rng.pick(&[2usize, 3]);
            if let Field::U(v) = d.fields[layer_field(l, f)] {
                d.fields[layer_field(l, f)] = Field::U(odd_uint(rng, v));
            }
        }
        3 => {
            let i = if rng.chance(1, 2) {
                0
            } else {
                layer_field(rng.below(layers), 1)
            };
            if let Field::D(x) = d.fields[i] {
                d.fields[i] = Field::D(odd_double(rng, x));
            }
        }
        4 => {
            d.fields[1] =
                Field::U(rng.pick(&[0, 1, 2, 32_768, 32_769, u64::from(u32::MAX), u64::MAX]))
        }
        5 => {
            // Bits of one layer moved to another (sizes no longer match).
            if layers >= 2 {
                let (a, b) = (rng.below(layers), rng.below(layers));
                d.fields.swap(layer_field(a, 4), layer_field(b, 4));
            } else if let Field::S(s) = &mut d.fields[layer_field(0, 4)] {
                s.truncate(s.len() / 2);
            }
        }
        _ => {
            // Plausible filters of many (copied) layers, full or not.
            let want = rng.pick(&[2usize, 3, 10, 63, 64]);
            let mut fields = d.fields[..FILTER_FIELDS].to_vec();
            for k in 0..want {
                let src = k % layers;
                let mut layer = d.fields[layer_field(src, 0)..layer_field(src, 0) + 5].to_vec();
                if rng.chance(1, 2) {
                    layer[3] = layer[0].clone();
                }
                fields.extend(layer);
            }
            fields[2] = Field::U(want as u64);
            fields[1] = Field::U(rng.pick(&[0u64, 1, 2, 32_768, u64::from(u32::MAX)]));
            d.fields = fields;
        }
    }
}

/// Bytes of all bit arrays of a filter payload (being loaded or not).
pub fn bit_bytes(d: &Dump) -> u64 {
    d.fields
        .iter()
        .map(|f| match f {
            Field::S(s) => s.len() as u64,
            _ => 0,
        })
        .sum()
}

/// Forgeries of a filter being loaded: the bytes loaded so far (inside a chunk, at or
/// past the end, odd values), or the filter's own fields.
pub fn forge_loading(rng: &mut Rng, d: &mut Dump) {
    let Some(Field::U(loaded)) = d.fields.last().cloned() else {
        return;
    };
    if rng.chance(1, 2) {
        let total = bit_bytes(d);
        let odd = odd_uint(rng, loaded);
        let v = rng.pick(&[
            loaded + 8,
            loaded + 1,
            loaded.wrapping_sub(8),
            total,
            total + 8,
            u64::MAX,
            odd,
        ]);
        *d.fields.last_mut().expect("a field") = Field::U(v);
    } else {
        d.fields.pop();
        forge_filter(rng, d);
        d.fields.push(Field::U(loaded));
    }
}

/// Limiter-specific forgeries: kinds, counts, clock, deficit, tick rates,
/// bursts, window fields, the layout of the other encoding version.
pub fn forge_limiter(rng: &mut Rng, d: &mut Dump) {
    let now = now_ms();
    if d.fields.len() < 2 {
        return;
    }
    let window = d.fields[0] == Field::U(4);
    let per = if window { 4 } else { 6 };
    let Field::U(n) = d.fields[1] else {
        d.fields[0] = Field::U(rng.pick(&[1, 2, 3, 4]));
        return;
    };
    let layout = usize::try_from(n)
        .ok()
        .and_then(|n| n.checked_mul(per))
        .and_then(|f| f.checked_add(2));
    if layout != Some(d.fields.len()) || n == 0 {
        // Not a limiter layout (another type's fields): only the kind.
        d.fields[0] = Field::U(rng.pick(&[1, 2, 3, 4]));
        return;
    }
    let limit = rng.below(n as usize);
    let at = 2 + per * limit;
    match rng.below(9) {
        0 => d.fields[0] = Field::U(rng.pick(&[0, 1, 2, 3, 4, 5, 255, 1 << 32, u64::MAX])),
        1 => d.fields[1] = Field::U(rng.pick(&[0, n - 1, n + 1, 8, 9, 1 << 32, u64::MAX])),
        2 => {
            // Limits added or removed without the count, or with it.
            if rng.chance(1, 2) {
                let l = d.fields[at..at + per].to_vec();
                d.fields.extend(l);
            } else {
                d.fields.truncate(d.fields.len() - per);
            }
            if rng.chance(1, 2) {
                d.fields[1] = Field::U((d.fields.len() as u64 - 2) / per as u64);
            }
        }
        3 => d.fields[at] = sig(rng.pick(&[-1, 0, 1, now + 1_000_000_000, i64::MAX, i64::MIN])),
        4 if !window => {
            // Deficit high / low words.
            let i = at + rng.pick(&[1usize, 2]);
            let r = rng.next();
            d.fields[i] = Field::U(rng.pick(&[0, 1, 1 << 63, u64::MAX, u64::MAX - 1, r]));
        }
        5 if !window => {
            // Ticks per token / per ms: 0 per token is a rate of inf (its
            // deficit's ticks per token then in the per-ms field), 0 per ms a
            // rate of 0.
            let i = at + rng.pick(&[3usize, 4]);
            d.fields[i] = Field::U(rng.pick(&[0, 1, 2, 1 << 32, 1 << 63, u64::MAX]));
        }
        6 if !window => {
            // The burst: RL.TOKEN's, unknown (u64::MAX), or any on the others.
            let b = rng.pick(&[
                0,
                1,
                1_000_000_000_000_000,
                1_000_000_000_000_001,
                u64::MAX - 1,
                u64::MAX,
            ]);
            d.fields[at + 5] = Field::U(b);
        }
        7 => {
            // The layout of the other encoding version under this one's id.
            if rng.chance(1, 2) {
                *d = limiter_v1(d);
                d.module_id = (d.module_id & !1023) | 2;
            } else {
                d.module_id = (d.module_id & !1023) | 1;
            }
        }
        _ if window => {
            let i = at + 1 + rng.below(3);
            d.fields[i] = if i == at + 1 {
                sig(rng.pick(&[0, -1, 1, i64::MAX, i64::MIN]))
            } else {
                Field::U(rng.pick(&[0, 1, 1 << 63, u64::MAX, i64::MAX as u64]))
            };
        }
        _ => {
            let i = 1 + rng.below(d.fields.len() - 1);
            d.fields[i] = odd_same(rng, &d.fields[i]);
        }
    }
}

/// Lock sets: a limit, floor or holder count out of line with the holders; a holder's
/// owner, token, holds or deadline out of range; the record cut or grown.
pub fn forge_lock_set(rng: &mut Rng, d: &mut Dump) {
    let now = now_ms();
    let Some(mut set) = SetRec::read(d) else {
        return;
    };
    let holders = set.holders.len();
    let mut claim = holders as u64;
    match rng.below(5) {
        0 => set.limit = rng.pick(&[0, 1, 2, 1 << 20, (1 << 20) + 1, u64::MAX]),
        1 => set.floor = rng.pick(&[0, -1, 1, i64::MAX, now * 1000 - 1]),
        2 => {
            claim = rng.pick(&[
                0,
                holders as u64 + 1,
                holders.saturating_sub(1) as u64,
                1 << 40,
                u64::MAX,
            ])
        }
        3 if holders > 0 => {
            let h = &mut set.holders[rng.below(holders)];
            match rng.below(4) {
                0 => h.owner = rng.pick(&[Vec::new(), b"r1".to_vec(), b"a".to_vec()]),
                1 => h.token = rng.pick(&[0, -1, i64::MAX, now * 1000 + 1_000_000_000_000]),
                2 => h.holds = rng.pick(&[0, -1, i64::MAX]),
                _ => h.deadline = rng.pick(&[0, -1, 1, now - 1, i64::MAX]),
            }
        }
        _ => {
            let mut b = set.bytes_claiming(claim);
            match rng.below(2) {
                0 => b.truncate(rng.below(b.len())),
                _ => b.extend(rng.some_bytes(1, 10)),
            }
            d.fields = vec![Field::S(b)];
            return;
        }
    }
    d.fields = vec![Field::S(set.bytes_claiming(claim))];
}

/// The forgeries of type `ty`.
pub fn forge_typed(rng: &mut Rng, ty: Ty, d: &mut Dump) {
    match ty {
        Ty::Lock => forge_lock(rng, d),
        Ty::LockSet => forge_lock_set(rng, d),
        Ty::Filter => forge_filter(rng, d),
        Ty::Loading => forge_loading(rng, d),
        Ty::Limiter => forge_limiter(rng, d),
        Ty::Cache => forge_cache(rng, d),
        Ty::Cuckoo => forge_cuckoo(rng, d),
        Ty::Cms => crate::cms::payload::forge(rng, d),
        Ty::TopK => crate::topk::payload::forge(rng, d),
    }
}

/// The field-level forgeries every type shares, on `d` (kinds 3 to 5 of
/// `make_payload`): 3, one field gets an odd value of its kind; 4, another
/// kind; 5, a field missing, repeated or extra, the EOF missing, or junk after.
pub fn forge_fields(rng: &mut Rng, d: &mut Dump, kind: usize) {
    let n = d.fields.len();
    match kind {
        3 => {
            let i = rng.below(n);
            d.fields[i] = odd_same(rng, &d.fields[i]);
        }
        4 => {
            let i = rng.below(n);
            d.fields[i] = other_kind(rng, &d.fields[i]);
        }
        _ => match rng.below(5) {
            0 => {
                d.fields.remove(rng.below(n));
            }
            1 => {
                let i = rng.below(n);
                let f = d.fields[i].clone();
                d.fields.insert(i, f);
            }
            2 => {
                let f = rng.pick(&[
                    Field::U(7),
                    Field::I(-7),
                    Field::D(0.5),
                    Field::F(0.5),
                    Field::S(vec![0; 8]),
                ]);
                d.fields.insert(rng.below(n + 1), f);
            }
            3 => d.eof = false,
            _ => {
                let junk = rng.some_bytes(1, 16);
                d.fields.push(Field::Raw(junk));
            }
        },
    }
}

/// The kinds of payload `make_payload` makes.
pub const KINDS: usize = 12;

/// One corrupt or forged payload of kind `kind` from `b`. `others` are bases of the
/// other types (for type confusion).
pub fn make_payload(rng: &mut Rng, ty: Ty, b: &Base, others: &[&Base], kind: usize) -> Vec<u8> {
    let mut d = b.dump.clone();
    let n = d.fields.len();
    match kind {
        0..=2 => return corrupt_bytes(rng, &b.payload, kind),
        3..=5 => forge_fields(rng, &mut d, kind),
        6 => {
            // Unknown opcodes.
            let mut r = Vec::new();
            enc_len(&mut r, rng.pick(&[6u64, 7, 8, 63, 64, 1000, u64::MAX]));
            r.extend_from_slice(&rng.some_bytes(0, 9));
            d.fields.insert(rng.below(n + 1), Field::Raw(r));
        }
        7 => match rng.below(5) {
            0 => d.module_id = (d.module_id & !1023) | rng.pick(&[0u64, 2, 3, 1023]),
            1 => d.module_id ^= 1 << (10 + rng.below(54)),
            2 => d.type_byte = rng.pick(&[0u8, 2, 5, 6, 8, 14, 18, 21, 255]),
            3 => {
                // Another warden type's id on these fields.
                d.module_id = rng.pick(others).dump.module_id;
            }
            _ => {
                let v = u16::from_le_bytes(d.ver);
                let nv = rng.pick(&[0u16, 1, v.wrapping_sub(1), v + 1, 0xffff]);
                d.ver = nv.to_le_bytes();
            }
        },
        8 => {
            // String framing.
            let strings: Vec<usize> = (0..n)
                .filter(|i| matches!(d.fields[*i], Field::S(_)))
                .collect();
            if strings.is_empty() {
                // Limiters have no strings: a string where a number belongs.
                let i = rng.below(n);
                let data = rng.some_bytes(0, 40);
                d.fields[i] = Field::Raw(forged_string_header(rng, &data));
            } else {
                let i = rng.pick(&strings);
                let Field::S(s) = &d.fields[i] else {
                    unreachable!()
                };
                let s = s.clone();
                d.fields[i] = Field::Raw(forged_string_header(rng, &s));
            }
        }
        9 => forge_typed(rng, ty, &mut d),
        10 => {
            // Another type's fields under this type's id.
            let o = rng.pick(others);
            d.fields = o.dump.fields.clone();
            if rng.chance(1, 2) {
                forge_typed(rng, ty, &mut d);
            }
        }
        _ => {
            for _ in 0..2 + rng.below(2) {
                if rng.chance(1, 2) {
                    forge_typed(rng, ty, &mut d);
                } else if !d.fields.is_empty() {
                    let i = rng.below(d.fields.len());
                    d.fields[i] = odd_same(rng, &d.fields[i]);
                }
            }
        }
    }
    encode(&d)
}

/// RESTOREs 1,500 corrupt or forged payloads (drawn from `seed`) made from the
/// DUMPs of `keys`, of type `ty` (bytes flipped or cut, a field given an odd
/// value or another kind, a field missing, repeated or extra) under `forged`;
/// each one the module takes is checked as the payload fuzzer checks it: its
/// reads answer in range and change nothing, the type's other commands run on
/// it, and it DUMPs and RESTOREs to the same value (`read_checks`,
/// `exercise`). Some must be taken (else the loader refuses too much to be
/// fuzzed). The server must answer every call.
pub fn restore_forgeries(con: &mut Connection, ty: Ty, keys: &[&str], seed: u64) {
    let bases: Vec<Vec<u8>> = keys.iter().map(|k| dump(con, k)).collect();
    let (rng, key) = (&mut Rng(seed), "forged");
    let (mut taken, mut found) = (0, Findings::default());
    for _ in 0..1_500 {
        let base = &bases[rng.below(bases.len())];
        let kind = rng.below(6);
        let payload = match kind {
            0..=2 => corrupt_bytes(rng, base, kind),
            _ => {
                let mut d = parse_dump(base);
                forge_fields(rng, &mut d, kind);
                encode(&d)
            }
        };
        let c = cmd_of!("RESTORE", key, 0, &payload, "REPLACE");
        if err_of(&raw(con, &c)).is_none() {
            let ctx = format!("{} payload {}", ty.name(), hex(&payload));
            read_checks(con, ty, key, &mut found, &ctx);
            exercise(con, ty, key, taken, &mut found, &ctx);
            taken += 1;
        }
    }
    assert!(found.is_empty(), "taken payloads misbehaved: {found:#?}");
    assert!(
        taken > 0,
        "no forgery was taken: the controls are too strict"
    );
}

/// Controls of a type's loader, on a server of its own: every one of the DUMPs
/// `bases` makes, re-encoded from its parsed fields, RESTOREs to the same value
/// (so forged fields reach the loader), and every one of `refusals` of them
/// (another type's DUMP a lock's) is refused as bad data and leaves no key.
pub fn assert_refused(
    bases: fn(&mut Connection) -> Vec<Base>,
    refusals: fn(&[Base], &Base) -> Forged,
) {
    let (mut s, mut con) = Server::start_conn();
    let con = &mut con;
    let bases = bases(con);
    let forgeries = refusals(&bases, &lock_bases(con)[0]).0;
    for b in &bases {
        let again = format!("{}:again", b.key);
        let restore = restore_like(con, &b.key, &again, &encode(&b.dump));
        must(con, &restore);
        let digests = [&b.key, &again].map(|k| digest_value(con, k.as_bytes()));
        assert_eq!(digests[0], digests[1], "{}: re-encoded", b.key);
    }
    for (what, d) in &forgeries {
        let e = raw(con, &cmd_of!("RESTORE", "forged", 0, encode(d), "REPLACE"));
        let text = err_of(&e).unwrap_or_else(|| panic!("{what}: accepted ({e:?})"));
        assert!(text.contains("Bad data format"), "{what}: {text}");
        assert!(!exists(con, "forged"), "{what}: a key left");
    }
    s.assert_alive();
}

/// Named forgeries of a type's real DUMPs, as its refusals are built.
#[derive(Default)]
pub struct Forged(pub Vec<(String, Dump)>);

impl Forged {
    /// `base` changed by `f`, named after `base`'s key and `name`.
    pub fn with(&mut self, name: &str, base: &Base, f: impl Fn(&mut Dump)) {
        let mut d = base.dump.clone();
        f(&mut d);
        self.0.push((format!("{} {name}", base.key), d));
    }

    /// `base` with field `i` set to `v`.
    pub fn set(&mut self, name: &str, base: &Base, i: usize, v: Field) {
        self.with(name, base, |d| d.fields[i] = v.clone());
    }

    /// `base` with field `i` set to the unsigned integer `v`.
    pub fn uint(&mut self, name: &str, base: &Base, i: usize, v: u64) {
        self.set(name, base, i, Field::U(v));
    }

    /// `base` with string field `i` changed by `f`.
    pub fn string(&mut self, name: &str, base: &Base, i: usize, f: fn(&mut Vec<u8>)) {
        self.with(name, base, |d| {
            if let Field::S(s) = &mut d.fields[i] {
                f(s)
            }
        });
    }

    /// The forgeries of a sketch's window (field `at`: 0 for none) and of the
    /// start of its newest slot (the field after) every sketch's loader
    /// refuses: a window under 100 ms or past 10 years, a window on `plain`
    /// (none) without the sub-sketches it takes, none on `win` (one of an hour)
    /// with them, a newest slot inside a slot, past a signed 64-bit ms, or on
    /// `plain`, which has no slots.
    pub fn window(&mut self, plain: &Base, win: &Base, at: usize) {
        self.uint("window 99 ms", win, at, 99);
        self.uint("window past 10 years", win, at, 10 * 365 * 86_400_000 + 1);
        self.uint("a window without its sub-sketches", plain, at, 1000);
        self.uint("sub-sketches without a window", win, at, 0);
        let (slot, head) = (win.dump.uint(at).div_ceil(4), win.dump.uint(at + 1));
        self.uint("a newest slot without a window", plain, at + 1, head);
        self.uint("newest slot inside a slot", win, at + 1, head + 1);
        let past = (1u64 << 63).next_multiple_of(slot);
        self.uint("newest slot past a signed ms", win, at + 1, past);
    }

    /// The forgeries of `base`'s framing every loader refuses: the next
    /// encoding version and version 0, no EOF, `other`'s fields (another
    /// type's) under `base`'s id, and `base`'s fields under `other`'s id.
    pub fn framing(&mut self, base: &Base, other: &Base) {
        let version = |v: u64| move |d: &mut Dump| d.module_id = (d.module_id & !1023) | v;
        self.with(
            "next encoding version",
            base,
            version(base.dump.encver() + 1),
        );
        self.with("encoding version 0", base, version(0));
        self.with("no EOF", base, |d| d.eof = false);
        let (theirs, ours) = (&other.dump.fields, &base.dump.fields);
        self.with(&format!("with the fields of {}", other.key), base, |d| {
            d.fields.clone_from(theirs)
        });
        let name = format!("with the fields of {}", base.key);
        self.with(&name, other, |d| d.fields.clone_from(ours));
    }
}
