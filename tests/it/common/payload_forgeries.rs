//! Forgeries of the module's payloads (`payload_bases`): odd values of the same
//! kind, other opcodes, other types' fields, and each type's own (its kit's
//! `forge`); the fuzzing of one type's payloads, the refusals of its loader, and
//! `Forged`, the named forgeries a kit's `refusals` builds.

use super::kit::{all_types, TypeKit, MODULE_ARGS};
use super::payload::*;
use super::payload_bases::*;
use super::payload_checks::{exercise, read_checks, Findings};
use super::*;

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
pub fn make_payload(
    rng: &mut Rng,
    ty: &TypeKit,
    b: &Base,
    others: &[&Base],
    kind: usize,
) -> Vec<u8> {
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
                // Another type's id on these fields.
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
                // No strings (some types have none): a string where a number belongs.
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
        9 => (ty.forge)(rng, &mut d),
        10 => {
            // Another type's fields under this type's id.
            let o = rng.pick(others);
            d.fields = o.dump.fields.clone();
            if rng.chance(1, 2) {
                (ty.forge)(rng, &mut d);
            }
        }
        _ => {
            for _ in 0..2 + rng.below(2) {
                if rng.chance(1, 2) {
                    (ty.forge)(rng, &mut d);
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
pub fn restore_forgeries(con: &mut Connection, ty: &TypeKit, keys: &[&str], seed: u64) {
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
            let ctx = format!("{} payload {}", ty.name, hex(&payload));
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

/// Controls of a type's loader, on a server of its own (with every type
/// registered: `MODULE_ARGS`): every one of the DUMPs
/// its `bases` makes, re-encoded from its parsed fields, RESTOREs to the same value
/// (so forged fields reach the loader), and every one of its `refusals` of them
/// is refused as bad data and leaves no key.
pub fn assert_refused(ty: &TypeKit) {
    let mut s = Server::start_with(&[], MODULE_ARGS);
    let mut con = s.conn();
    let con = &mut con;
    let bases = (ty.bases)(con);
    let others = first_bases(con, ty);
    let forgeries = (ty.refusals)(&bases, &others.iter().collect::<Vec<_>>()).0;
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
    println!("{}: {} forgeries refused", ty.name, forgeries.len());
    s.assert_alive();
}

/// The first base of every type but `ty`, made on `con` (for the forgeries of
/// type confusion of `ty`'s refusals).
pub fn first_bases(con: &mut Connection, ty: &TypeKit) -> Vec<Base> {
    let others = all_types().filter(|t| t.name != ty.name);
    others.map(|t| (t.bases)(con).swap_remove(0)).collect()
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
        self.confused(base, other);
    }

    /// `other`'s fields (another type's) under `base`'s id, and `base`'s
    /// under `other`'s.
    pub fn confused(&mut self, base: &Base, other: &Base) {
        let (theirs, ours) = (&other.dump.fields, &base.dump.fields);
        self.with(&format!("with the fields of {}", other.key), base, |d| {
            d.fields.clone_from(theirs)
        });
        let name = format!("with the fields of {}", base.key);
        self.with(&name, other, |d| d.fields.clone_from(ours));
    }
}
