//! Cache entries (`warden-ch`) in the checks that cross every family
//! (`tests/it/module/`): their payloads (real DUMPs of several shapes, the
//! family's forgeries, the refusals of the loader) and what an entry a payload
//! made must answer; the kind of key of the defrag churn; the family's calls of
//! the leak workload.

use crate::common::kit::*;
use crate::common::payload::*;
use crate::common::payload_bases::*;
use crate::common::payload_checks::*;
use crate::common::payload_forgeries::{odd_same, Forged};
use crate::common::*;

use std::time::Duration;

/// The family in the checks across families.
pub static KIT: FamilyKit = FamilyKit {
    types: &[ENTRY],
    churn: &[Churn {
        prefix: "ch",
        count: 30_000,
        ttl: true,
        make: |k, i| vec![cmd_of!("CACHE.SET", k, value(i), 3_600_000)],
        survivor: |con, k, i| {
            let v: Option<String> = query!(con, "CACHE.GET", k);
            assert_eq!(v, Some(value(i)), "{k}");
        },
    }],
    whole: None,
    leak: Leak {
        share: 5,
        keys: &[("ch", LEAK_KEYS)],
        errors: &[],
        setup: |_| Vec::new(),
        call: leak_call,
        round: None,
        idle: &[],
    },
};

/// Cache entries.
pub const ENTRY: TypeKit = TypeKit {
    name: "warden-ch",
    encver: 1,
    bases: cache_bases,
    layouts: no_layouts,
    forge: forge_cache,
    refusals,
    reads: |con, key, found, ctx| {
        run_reads(
            con,
            &[(cmd_of!("CACHE.INFO", key), cache_info_ok)],
            found,
            ctx,
        )
    },
    exercise: writes,
    gauges: None,
};

/// A churned entry's 40-byte value.
fn value(i: usize) -> String {
    format!("{i:08}-0123456789abcdefghijklmnopqrstu")
}

/// Cache entries: fresh with a version, stale with a lease, lease-only (a miss),
/// binary and empty values, a long compressible value.
pub fn cache_bases(con: &mut Connection) -> Vec<Base> {
    let ttl = LONG_TTL_MS.to_string();
    must(
        con,
        &cmd_of!(
            "CACHE.SET",
            "cb:fresh",
            "v",
            &ttl,
            "STALE",
            1000,
            "VERSION",
            7
        ),
    );
    must(
        con,
        &cmd_of!("CACHE.SET", "cb:stale", "old", 1, "STALE", &ttl),
    );
    std::thread::sleep(Duration::from_millis(5));
    must(con, cmd("CACHE.GET").arg("cb:stale").arg("LEASE").arg(&ttl));
    must(con, cmd("CACHE.GET").arg("cb:miss").arg("LEASE").arg(&ttl));
    must(
        con,
        &cmd_of!("CACHE.SET", "cb:binary", &b"\x00\xff\r\n"[..], &ttl),
    );
    must(con, cmd("CACHE.SET").arg("cb:empty").arg("").arg(&ttl));
    must(
        con,
        &cmd_of!("CACHE.SET", "cb:long", "cached ".repeat(200), &ttl),
    );
    let bases = bases_of(con, &CACHE_BASES, &ENTRY);
    for b in &bases {
        let kinds: Vec<&str> = b.dump.fields.iter().map(field_kind).collect();
        let want: &[&str] = if b.key == "cb:miss" {
            &["U", "U", "U", "U", "U", "U"]
        } else {
            &["U", "S", "U", "U", "U", "U", "U"]
        };
        assert_eq!(kinds, want, "{}: cache layout", b.key);
    }
    bases
}

/// The cache bases, in the order `cache_bases` returns them.
pub const CACHE_BASES: [&str; 6] = [
    "cb:fresh",
    "cb:stale",
    "cb:miss",
    "cb:binary",
    "cb:empty",
    "cb:long",
];

/// Cache-specific forgeries: the has-value flag, the value, the version,
/// fresh and stale ends out of order, lease tokens and ends.
pub fn forge_cache(rng: &mut Rng, d: &mut Dump) {
    let now = now_ms();
    let Some(Field::U(flag)) = d.fields.first().cloned() else {
        return;
    };
    let at = if flag == 1 { 2 } else { 1 };
    if d.fields.len() != at + 5 {
        d.fields[0] = Field::U(rng.pick(&[0, 1, 2, u64::MAX]));
        return;
    }
    match rng.below(7) {
        0 => {
            // The flag without its value, or a value without the flag.
            if flag == 1 {
                d.fields[0] = Field::U(rng.pick(&[0, 2, u64::MAX]));
            } else {
                d.fields[0] = Field::U(1);
                if rng.chance(1, 2) {
                    d.fields.insert(1, Field::S(b"v".to_vec()));
                }
            }
        }
        1 if flag == 1 => {
            d.fields[1] = Field::S(match rng.below(3) {
                0 => Vec::new(),
                1 => vec![b'x'; 64 * 1024],
                _ => rng.some_bytes(1, 40),
            })
        }
        2 => d.fields[at] = sig(rng.pick(&[-1, 0, 1, i64::MAX, i64::MIN])),
        3 => {
            let i = at + 1 + rng.below(2);
            d.fields[i] = sig(rng.pick(&[-1, 0, 1, now, now + LONG_TTL_MS, i64::MAX, i64::MIN]));
        }
        4 => {
            d.fields[at + 3] =
                sig(rng.pick(&[0, -1, 1, now * 1000, 1 << 62, (1 << 62) + 1, i64::MAX]))
        }
        5 => d.fields[at + 4] = sig(rng.pick(&[0, -1, 1, now, now + LONG_TTL_MS, i64::MAX])),
        _ => {
            let i = rng.below(d.fields.len());
            d.fields[i] = odd_same(rng, &d.fields[i]);
        }
    }
}

/// Forgeries of entries the loader must refuse: the has-value flag, a value
/// without it, a version or ends out of range or out of order, lease tokens
/// without their end or past 2^62, a lease-only entry without its lease or with
/// a version, the next encoding version.
fn refusals(bases: &[Base], _: &[&Base]) -> Forged {
    let now = now_ms();
    let (fresh, miss) = (&bases[0], &bases[2]);
    let mut f = Forged::default();
    f.uint("has-value flag 2", fresh, 0, 2);
    f.uint("a value without the flag", miss, 0, 1);
    f.set("negative version", fresh, 2, sig(-1));
    f.set("stale before fresh", fresh, 4, sig(now - 1_000_000_000));
    f.set("negative fresh end", fresh, 3, sig(-5));
    f.set("lease token 0 with an end", fresh, 6, sig(now));
    f.set("lease token above 2^62", miss, 4, sig((1 << 62) + 1));
    f.with("lease-only without a lease", miss, |d| {
        d.fields[4] = sig(0);
        d.fields[5] = sig(0);
    });
    f.set("lease-only with a version", miss, 1, sig(3));
    f.with("cache encoding version 2", fresh, |d| {
        *d = with_encver(d, 2)
    });
    f
}

/// CACHE.INFO: six fields (a flat array in RESP2), or nil.
pub fn cache_info_ok(v: &Value) -> bool {
    match v {
        Value::Nil => true,
        Value::Array(a) => a.len() == 12,
        Value::Map(m) => m.len() == 6,
        _ => false,
    }
}

/// The writes on an entry a payload made (call `i`): gets, hot and leased,
/// sets with a lease or a version.
fn writes(con: &mut Connection, key: &str, i: usize, found: &mut Findings, ctx: &str) {
    let writes = [
        cmd_of!("CACHE.GET", key),
        cmd_of!("CACHE.GET", key, "HOT", 1, 1000, "EXTEND", LONG_TTL_MS),
        cmd_of!("CACHE.GET", key, "LEASE", LONG_TTL_MS),
        cmd_of!("CACHE.SET", key, format!("v{i}"), LONG_TTL_MS, "LEASE", 1),
        cmd_of!(
            "CACHE.SET",
            key,
            format!("w{i}"),
            LONG_TTL_MS,
            "VERSION",
            i % 9
        ),
        cmd_of!("CACHE.INFO", key),
    ];
    run_all(con, &writes, found, ctx);
}

/// The leak workload's entries: `ch:0` to `ch:499`.
const LEAK_KEYS: usize = 500;

/// One call of the leak workload: sets (some with a stale time), gets (some
/// leasing), reads.
fn leak_call(r: &mut Rng, _: &[Args], buf: &mut Vec<u8>) {
    let key = format!("ch:{}", r.below(LEAK_KEYS));
    let k = key.as_bytes();
    let value = vec![b'v'; 1 + r.below(200)];
    let ttl = (1 + r.below(5_000)).to_string();
    match r.below(6) {
        0..=1 => pack(buf, &[b"CACHE.SET", k, &value[..], ttl.as_bytes()]),
        2 => pack(
            buf,
            &[
                b"CACHE.SET",
                k,
                &value[..],
                ttl.as_bytes(),
                b"STALE",
                b"1000",
            ],
        ),
        3 => pack(buf, &[b"CACHE.GET", k, b"LEASE", ttl.as_bytes()]),
        4 => pack(buf, &[b"CACHE.GET", k]),
        _ => pack(buf, &[b"CACHE.INFO", k]),
    }
}
