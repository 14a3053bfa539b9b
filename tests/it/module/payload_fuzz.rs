//! Corrupt-payload fuzzer for every warden data type: locks (`warden-lk`), filters
//! (`warden-bf`), filters being loaded by BF.LOADCHUNKX (`warden-bl`), rate limiters
//! (`warden-rl`), cache entries (`warden-ch`), cuckoo filters (`warden-cf`, whole
//! or being loaded by CF.LOADCHUNKX), count-min sketches (`warden-cm`) and top-k
//! (`warden-tk`); the test fails when the module makes a type (`module_types`) that
//! is not among them.
//!
//! Real DUMPs of several shapes per type are truncated, bit-flipped, byte-replaced and
//! forged field by field (huge counts and lengths, negative numbers, wrong opcodes,
//! unknown opcodes, other module ids and encoding versions, other types' fields), and
//! sealed with a valid CRC64 so that Redis hands them to the module's `rdb_load`.
//! Every RESTORE must answer OK or an error; an accepted value must answer its type's
//! read commands (which change nothing), survive the other commands, DUMP and RESTORE
//! to the same value, and replicate: a replica (`--propagation-error-behavior panic`)
//! follows the whole run and must end with the master's digest. INFO's counters of
//! filters, sketches and top-k must match their keys at the end, also after `DEBUG
//! RELOAD`, and fall to 0 when they are deleted.
//!
//! `WARDEN_PAYLOAD_FUZZ` (default 1000) is the number of payloads per type. The payloads
//! and their forgeries are in `tests/it/common/payload_types.rs` (a family's own in
//! `payload_cuckoo.rs` there, `tests/it/cms/payload.rs`, `tests/it/topk/payload.rs`),
//! the checks of accepted values in `tests/it/common/payload_checks.rs`; the controls
//! (forgeries that must be refused) are in `tests/it/module/payload_forged.rs`.

use crate::common::module_types::assert_covers;
use crate::common::payload::*;
use crate::common::payload_checks::*;
use crate::common::payload_cuckoo::cuckoo_bases;
use crate::common::payload_forgeries::*;
use crate::common::payload_types::*;
use crate::common::*;

use std::time::Instant;

const DEFAULT_PER_TYPE: usize = 1_000;

/// The types whose keys INFO warden counts, and the gauges of their keys and bytes.
const GAUGES: [(Ty, [&str; 2]); 3] = [
    (Ty::Cuckoo, ["cf_filters", "cf_bytes"]),
    (Ty::Cms, crate::cms::kit::GAUGES),
    (Ty::TopK, crate::topk::kit::GAUGES),
];

/// Each of `GAUGES`' key counts, and its keys of that type (whole or being loaded).
fn census(con: &mut Connection) -> Vec<(i64, i64)> {
    GAUGES
        .iter()
        .map(|(ty, [keys, _])| {
            let n = scan_keys(con, &["TYPE", ty.name()]).len() as i64;
            (warden_stat(con, keys), n)
        })
        .collect()
}

/// Fails where a gauge of `GAUGES` does not count its keys (`who` says when).
fn assert_census(con: &mut Connection, who: &str) {
    for ((ty, [keys, _]), (counted, n)) in GAUGES.iter().zip(census(con)) {
        assert_eq!(
            counted,
            n,
            "{who}: INFO warden {keys} vs {} keys",
            ty.name()
        );
    }
}

#[test]
fn corrupt_payloads_of_every_type_never_crash_the_server() {
    let per_type = std::env::var("WARDEN_PAYLOAD_FUZZ")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_PER_TYPE);
    let started = Instant::now();
    let mut m = Server::start();
    let mut r = m.start_replica(&[], &[]);
    let mut con = timed(m.conn(), PAYLOAD_READ_TIMEOUT);
    let lock = lock_bases(&mut con);
    let lock_set = lock_set_bases(&mut con);
    let filter = filter_bases(&mut con);
    let loading = loading_bases(&mut con);
    let limiter = limiter_bases(&mut con);
    let cache = cache_bases(&mut con);
    let cuckoo = cuckoo_bases(&mut con);
    let cms = crate::cms::payload::bases(&mut con);
    let topk = crate::topk::payload::bases(&mut con);
    let base_keys: Vec<String> = lock
        .iter()
        .chain(&lock_set)
        .chain(&filter)
        .chain(&loading)
        .chain(&limiter)
        .chain(&cache)
        .chain(&cuckoo)
        .chain(&cms)
        .chain(&topk)
        .map(|b| b.key.clone())
        .collect();
    let base_digests: Vec<Value> = base_keys
        .iter()
        .map(|k| digest_value(&mut con, k.as_bytes()))
        .collect();

    let mut rng = Rng(0x5eed_0fda_7a00_0001);
    let mut found = Findings::default();
    let (mut total, mut accepted, mut refused) = (0usize, 0usize, 0usize);
    let mut non_module = 0usize;
    let mut per_type_counts = Vec::new();
    for ty in Ty::ALL {
        let all = [
            &lock, &lock_set, &filter, &loading, &limiter, &cache, &cuckoo, &cms, &topk,
        ];
        let bases: &[Base] = match ty {
            Ty::Lock => &lock,
            Ty::LockSet => &lock_set,
            Ty::Filter => &filter,
            Ty::Loading => &loading,
            Ty::Limiter => &limiter,
            Ty::Cache => &cache,
            Ty::Cuckoo => &cuckoo,
            Ty::Cms => &cms,
            Ty::TopK => &topk,
        };
        let others: Vec<&Base> = all
            .iter()
            .filter(|b| !std::ptr::eq(b.as_slice(), bases))
            .flat_map(|b| b.iter())
            .collect();
        let mut per_kind = [[0usize; 2]; KINDS];
        let (mut acc, mut refu) = (0usize, 0usize);
        for i in 0..per_type {
            let kind = i % KINDS;
            let b = &bases[(i / KINDS) % bases.len()];
            let payload = make_payload(&mut rng, ty, b, &others, kind);
            let key = format!("scratch:{}:{}", ty.name(), i % 8);
            let ctx = format!(
                "{} payload {i} (kind {kind}, from {}) {}",
                ty.name(),
                b.key,
                hex(&payload)
            );
            total += 1;
            let v = run(
                &mut con,
                cmd("RESTORE").arg(&key).arg(0).arg(&payload).arg("REPLACE"),
                &mut found,
                &ctx,
            );
            if err_of(&v).is_some() {
                refused += 1;
                refu += 1;
                per_kind[kind][1] += 1;
                // A refused RESTORE with REPLACE leaves the old key alone or gone, never
                // a half-built value: whatever is there answers as before.
                continue;
            }
            assert!(is_ok(&v), "{ctx}: RESTORE answered {v:?}");
            accepted += 1;
            acc += 1;
            per_kind[kind][0] += 1;
            let t: Value = raw(&mut con, cmd("TYPE").arg(&key));
            let ty_name = match &t {
                Value::SimpleString(s) => s.clone(),
                Value::Okay => "OK".to_string(),
                other => format!("{other:?}"),
            };
            // An accepted payload may carry another warden type's id (forged on
            // purpose): check the type it became.
            let actual = match Ty::of(&ty_name) {
                Some(t) => t,
                None => {
                    // A forged type byte made it a native value: not the module's.
                    non_module += 1;
                    raw(&mut con, cmd("DEL").arg(&key));
                    continue;
                }
            };
            read_checks(&mut con, actual, &key, &mut found, &ctx);
            exercise(&mut con, actual, &key, i, &mut found, &ctx);
            if i % 100 == 99 {
                m.assert_alive();
                assert!(
                    r.is_alive(),
                    "replica died (an effect of an accepted payload was refused there?) after {ctx}; replica log:\n{}",
                    r.log_tail(20)
                );
                con = timed(m.conn(), PAYLOAD_READ_TIMEOUT);
            }
        }
        println!(
            "payload fuzz {}: {per_type} payloads, {acc} accepted, {refu} refused; per kind [accepted, refused]: {per_kind:?}",
            ty.name()
        );
        per_type_counts.push((ty, acc, refu));
        m.assert_alive();
    }
    m.assert_alive();
    r.assert_alive();

    // The bases are untouched.
    for (k, d) in base_keys.iter().zip(&base_digests) {
        assert_eq!(&digest_value(&mut con, k.as_bytes()), d, "base {k} changed");
    }
    // Filter accounting, then master and replica agree (long TTLs first, so nothing
    // expires while they are compared), then DEBUG RELOAD keeps everything.
    let (n, bytes) = filter_census(&mut con, &[0]);
    assert_eq!(
        filter_stats(&mut con),
        (n, bytes),
        "INFO warden (bf_filters, bf_bytes) vs filter keys and their sizes"
    );
    let counted = census(&mut con);
    assert_census(&mut con, "master");
    for k in scan_keys(&mut con, &[]) {
        let t: i64 = query!(&mut con, "PTTL", &k);
        if (0..LONG_TTL_MS).contains(&t) {
            let _: i64 = query!(&mut con, "PEXPIRE", &k, LONG_TTL_MS);
        }
    }
    m.sync_replicas(1);
    let mut rc = timed(r.conn(), PAYLOAD_READ_TIMEOUT);
    let md = db_digest(&mut con);
    assert_eq!(
        db_digest(&mut rc),
        md,
        "replica digest differs from the master's; replica log:\n{}",
        r.log_tail(20)
    );
    assert_eq!(
        (
            warden_stat(&mut rc, "bf_filters"),
            warden_stat(&mut rc, "bf_bytes")
        ),
        (n, bytes),
        "replica: INFO warden vs filter keys"
    );
    assert_eq!(
        census(&mut rc),
        counted,
        "replica: INFO warden vs the master's keys"
    );
    debug_reload(&mut con);
    assert_eq!(db_digest(&mut con), md, "DEBUG RELOAD changed the dataset");
    assert_eq!(
        filter_stats(&mut con),
        filter_census(&mut con, &[0]),
        "after DEBUG RELOAD: INFO warden vs filter keys"
    );
    assert_census(&mut con, "after DEBUG RELOAD");
    // Every filter, sketch and top-k deleted: the counters fall to 0 on both.
    for t in [
        "warden-bf",
        "warden-bl",
        "warden-cf",
        "warden-cm",
        "warden-tk",
    ] {
        for k in scan_keys(&mut con, &["TYPE", t]) {
            let _: i64 = query!(&mut con, "DEL", &k);
        }
    }
    m.sync_replicas(1);
    let mut rc = timed(r.conn(), PAYLOAD_READ_TIMEOUT);
    let gauges = [["bf_filters", "bf_bytes"]]
        .into_iter()
        .chain(GAUGES.map(|(_, g)| g));
    let gauges: Vec<&str> = gauges.flatten().collect();
    for (who, c) in [("master", &mut con), ("replica", &mut rc)] {
        let stats: Vec<i64> = gauges.iter().map(|f| warden_stat(c, f)).collect();
        assert_eq!(
            stats,
            vec![0; gauges.len()],
            "{who}: INFO warden {gauges:?} with no filter, sketch or top-k left"
        );
    }
    // Every type the module makes was forged.
    assert_covers("the payload fuzzer", &Ty::ALL.map(Ty::name));
    m.assert_alive();
    r.assert_alive();
    println!(
        "payload fuzz: {total} payloads, {accepted} accepted ({non_module} of them as native values), {refused} refused, 0 crashes ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    for (ty, acc, refu) in per_type_counts {
        assert!(
            refu > acc,
            "{}: most corrupt payloads must be refused ({acc} accepted, {refu} refused)",
            ty.name()
        );
    }
    assert!(
        found.is_empty(),
        "accepted payloads misbehaved:\ncaught panics: {:#?}\nread replies of the wrong shape or out of range: {:#?}\nreads that wrote: {:#?}\nDUMP/RESTORE round trips: {:#?}\nodd error codes: {:#?}",
        found.internal,
        found.read_failures,
        found.reads_that_wrote,
        found.round_trips,
        found.odd_codes
    );
}
