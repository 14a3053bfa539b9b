//! Corrupt-payload fuzzer for every data type of every family, as the families'
//! kits list them (`common::kit`: `FAMILY_KITS`, each family's
//! `tests/it/<family>/kit.rs`); the test fails when the module makes a type
//! (`module_types`) that none of them has.
//!
//! Real DUMPs of several shapes per type are truncated, bit-flipped, byte-replaced and
//! forged field by field (huge counts and lengths, negative numbers, wrong opcodes,
//! unknown opcodes, other module ids and encoding versions, other types' fields, the
//! type's own forgeries), and sealed with a valid CRC64 so that Redis hands them to the
//! module's `rdb_load`. Every RESTORE must answer OK or an error; an accepted value must
//! answer its type's read commands (which change nothing), survive the other commands,
//! DUMP and RESTORE to the same value (before and after those commands), and
//! replicate: a replica (`--propagation-error-behavior panic`) follows the whole run
//! and must end with the master's digest. INFO's gauges of the types that have them
//! must add up their keys at the end (summed over the types that share a gauge; on
//! the replica too), also after `DEBUG RELOAD`, fall by each type's keys when they are
//! deleted type by type, and so to 0. Both servers load the module with
//! `aliases redisbloom` (`kit::MODULE_ARGS`), so the foreign types are fuzzed too.
//!
//! `WARDEN_PAYLOAD_FUZZ` (default 1000) is the number of payloads per type. Each type's
//! bases, forgeries, reads and writes are in its family's kit; the shared forgeries in
//! `tests/it/common/payload_forgeries.rs`, the checks of accepted values in
//! `tests/it/common/payload_checks.rs`; the controls (forgeries that must be refused)
//! are in `tests/it/module/payload_forged.rs`.

use crate::common::kit::*;
use crate::common::module_types::assert_covers;
use crate::common::payload::*;
use crate::common::payload_bases::*;
use crate::common::payload_checks::*;
use crate::common::payload_forgeries::*;
use crate::common::*;

use std::time::Instant;

const DEFAULT_PER_TYPE: usize = 1_000;

/// Each gauge field of the types that have them (`kit::Gauges`; types may
/// share one, as a family's foreign type shares its own type's): the field,
/// what INFO warden reads, and what the keys of those types add up to (their
/// number, or their bytes where a command tells every one's; `None` when one
/// does not).
fn census(con: &mut Connection) -> Vec<(&'static str, i64, Option<i64>)> {
    let mut sums: Vec<(&'static str, Option<i64>)> = Vec::new();
    for (name, g) in all_gauges() {
        let keys = scan_keys(con, &["TYPE", name]);
        let [count, bytes] = g.fields;
        let size = g.size.map(|size| keys.iter().map(|k| size(con, k)).sum());
        for (field, v) in [(count, Some(keys.len() as i64)), (bytes, size)] {
            match sums.iter_mut().find(|s| s.0 == field) {
                Some((_, sum)) => *sum = sum.zip(v).map(|(a, b)| a + b),
                None => sums.push((field, v)),
            }
        }
    }
    sums.into_iter()
        .map(|(field, sum)| (field, warden_stat(con, field), sum))
        .collect()
}

/// Deletes every key of type `ty`: its gauges, if it has them, must fall by
/// their number and by their bytes where a command tells them (so a type's
/// part of a gauge it shares is checked alone).
fn delete_all(con: &mut Connection, ty: &TypeKit) {
    let keys = scan_keys(con, &["TYPE", ty.name]);
    let stats = |con: &mut Connection| {
        ty.gauges
            .as_ref()
            .map(|g| g.fields.map(|f| warden_stat(con, f)))
    };
    let before = stats(con);
    let sizes = ty.gauges.as_ref().and_then(|g| g.size);
    let bytes: Option<i64> = sizes.map(|size| keys.iter().map(|k| size(con, k)).sum());
    for k in &keys {
        let _: i64 = query!(con, "DEL", k);
    }
    let (Some(before), Some(after)) = (before, stats(con)) else {
        return;
    };
    let fields = ty.gauges.as_ref().map(|g| g.fields).unwrap_or_default();
    let fell = [before[0] - after[0], before[1] - after[1]];
    assert_eq!(
        fell[0],
        keys.len() as i64,
        "{}: {} fell by the keys deleted",
        ty.name,
        fields[0]
    );
    if let Some(bytes) = bytes {
        assert_eq!(
            fell[1], bytes,
            "{}: {} fell by the bytes deleted",
            ty.name, fields[1]
        );
    }
}

/// Fails where a gauge does not add up its keys (`who` says when).
fn assert_census(con: &mut Connection, who: &str) -> Vec<(&'static str, i64, Option<i64>)> {
    let counted = census(con);
    for (field, read, keys) in &counted {
        if let Some(keys) = keys {
            assert_eq!(read, keys, "{who}: INFO warden {field} vs its keys");
        }
    }
    counted
}

#[test]
fn corrupt_payloads_of_every_type_never_crash_the_server() {
    let per_type = std::env::var("WARDEN_PAYLOAD_FUZZ")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_PER_TYPE);
    let started = Instant::now();
    let mut m = Server::start_with(&[], MODULE_ARGS);
    let mut r = m.start_replica(&[], MODULE_ARGS);
    let mut con = timed(m.conn(), PAYLOAD_READ_TIMEOUT);
    let types: Vec<&TypeKit> = all_types().collect();
    let all: Vec<Vec<Base>> = types.iter().map(|t| (t.bases)(&mut con)).collect();
    let base_keys: Vec<String> = all.iter().flatten().map(|b| b.key.clone()).collect();
    let base_digests: Vec<Value> = base_keys
        .iter()
        .map(|k| digest_value(&mut con, k.as_bytes()))
        .collect();

    let mut rng = Rng(0x5eed_0fda_7a00_0001);
    let mut found = Findings::default();
    let (mut total, mut accepted, mut refused) = (0usize, 0usize, 0usize);
    let mut non_module = 0usize;
    let mut per_type_counts = Vec::new();
    for (n, (ty, bases)) in types.iter().zip(&all).enumerate() {
        let others: Vec<&Base> = all
            .iter()
            .enumerate()
            .filter(|(o, _)| *o != n)
            .flat_map(|(_, b)| b.iter())
            .collect();
        let mut per_kind = [[0usize; 2]; KINDS];
        let (mut acc, mut refu) = (0usize, 0usize);
        for i in 0..per_type {
            let kind = i % KINDS;
            let b = &bases[(i / KINDS) % bases.len()];
            let payload = make_payload(&mut rng, ty, b, &others, kind);
            let key = format!("scratch:{}:{}", ty.name, i % 8);
            let ctx = format!(
                "{} payload {i} (kind {kind}, from {}) {}",
                ty.name,
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
            // An accepted payload may carry another type's id (forged on
            // purpose): check the type it became.
            let Some(actual) = type_named(&ty_name) else {
                // A forged type byte made it a native value: not the module's.
                non_module += 1;
                raw(&mut con, cmd("DEL").arg(&key));
                continue;
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
            "payload fuzz {}: {} bases, {per_type} payloads, {acc} accepted, {refu} refused; per kind [accepted, refused]: {per_kind:?}",
            ty.name,
            bases.len()
        );
        per_type_counts.push((ty.name, acc, refu));
        m.assert_alive();
    }
    m.assert_alive();
    r.assert_alive();

    // The bases are untouched.
    for (k, d) in base_keys.iter().zip(&base_digests) {
        assert_eq!(&digest_value(&mut con, k.as_bytes()), d, "base {k} changed");
    }
    // The gauges add up their keys, then master and replica agree (long TTLs
    // first, so nothing expires while they are compared), then DEBUG RELOAD
    // keeps everything.
    let counted = assert_census(&mut con, "master");
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
        census(&mut rc),
        counted,
        "replica: INFO warden vs the master's keys"
    );
    debug_reload(&mut con);
    assert_eq!(db_digest(&mut con), md, "DEBUG RELOAD changed the dataset");
    assert_census(&mut con, "after DEBUG RELOAD");
    // Every value of the module's types deleted, type by type, each type's
    // gauges falling by its keys: the gauges fall to 0 on both.
    for ty in &types {
        delete_all(&mut con, ty);
    }
    m.sync_replicas(1);
    let mut rc = timed(r.conn(), PAYLOAD_READ_TIMEOUT);
    let gauges: Vec<&str> = all_gauges().flat_map(|(_, g)| g.fields).collect();
    assert!(!gauges.is_empty(), "no type has gauges");
    for (who, c) in [("master", &mut con), ("replica", &mut rc)] {
        let stats: Vec<i64> = gauges.iter().map(|f| warden_stat(c, f)).collect();
        assert_eq!(
            stats,
            vec![0; gauges.len()],
            "{who}: INFO warden {gauges:?} with no value of the module's types left"
        );
    }
    // Every type the module makes was forged.
    let names: Vec<&str> = types.iter().map(|t| t.name).collect();
    assert_covers("the payload fuzzer", &names);
    m.assert_alive();
    r.assert_alive();
    println!(
        "payload fuzz: {} types, {total} payloads, {accepted} accepted ({non_module} of them as native values), {refused} refused, 0 crashes ({:.1} s)",
        types.len(),
        started.elapsed().as_secs_f64()
    );
    for (name, acc, refu) in per_type_counts {
        assert!(
            refu > acc,
            "{name}: most corrupt payloads must be refused ({acc} accepted, {refu} refused)"
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
