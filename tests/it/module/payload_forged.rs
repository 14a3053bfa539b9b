//! Controls for the corrupt-payload fuzzer (`tests/it/module/payload_fuzz.rs`): Redis's
//! CRC64, re-encoded real payloads of every type of every family accepted as the same
//! value (so forged ones really reach `rdb_load`; the test fails on a type the module
//! makes that has none), a bad CRC refused by Redis itself, and forgeries that break a
//! documented invariant of each type (its kit's `refusals`) refused without moving
//! INFO's gauges. The server loads the module with `aliases redisbloom`
//! (`kit::MODULE_ARGS`), so the foreign types are controlled too. Each family's own
//! payload tests are in its folder.

use crate::common::kit::*;
use crate::common::module_types::assert_covers;
use crate::common::payload::*;
use crate::common::payload_bases::*;
use crate::common::*;

#[test]
fn crc64_matches_redis() {
    // The check value from Redis's crc64.c.
    assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
}

/// Controls: re-encoded real payloads are accepted as the same value (so forged ones
/// really reach `rdb_load`), a bad CRC is refused by Redis itself, and forgeries that
/// break a documented invariant of each type are refused.
#[test]
fn forged_payloads_reach_each_types_loader() {
    let mut s = Server::start_with(&[], MODULE_ARGS);
    let mut con = timed(s.conn(), PAYLOAD_READ_TIMEOUT);
    let types: Vec<&TypeKit> = all_types().collect();
    let all: Vec<Vec<Base>> = types.iter().map(|t| (t.bases)(&mut con)).collect();
    let mut controlled: Vec<String> = Vec::new();
    let mut restores = 0;
    for (ty, bases) in types.iter().zip(&all) {
        for b in bases {
            // As DUMPed, and in the type's other layouts.
            let layouts = [("re-encoded", b.dump.clone())]
                .into_iter()
                .chain((ty.layouts)(b));
            for (form, d) in layouts {
                let key = format!("{}:{form}", b.key);
                let restore = restore_like(&mut con, &b.key, &key, &encode(&d));
                let v = raw(&mut con, &restore);
                assert!(is_ok(&v), "{}: {form} payload refused: {v:?}", b.key);
                assert_eq!(
                    digest_value(&mut con, key.as_bytes()),
                    digest_value(&mut con, b.key.as_bytes()),
                    "{}: {form} payload",
                    b.key
                );
                restores += 1;
            }
            controlled.push(b.dump.type_name());
            let mut bad = b.payload.clone();
            let last = bad.len() - 1;
            bad[last] ^= 1;
            let v = raw(&mut con, cmd("RESTORE").arg("badcrc").arg(0).arg(&bad));
            assert!(err_of(&v).is_some(), "{}: bad CRC accepted", b.key);
        }
    }

    assert_covers(
        "the payload controls",
        &controlled.iter().map(String::as_str).collect::<Vec<_>>(),
    );

    // Each type's refusals, given the first base of every other type.
    let mut must_fail: Vec<(String, Dump)> = Vec::new();
    for (n, (ty, bases)) in types.iter().zip(&all).enumerate() {
        let others: Vec<&Base> = all
            .iter()
            .enumerate()
            .filter(|(o, _)| *o != n)
            .map(|(_, b)| &b[0])
            .collect();
        let refusals = (ty.refusals)(bases, &others).0;
        println!("{}: {} forgeries to refuse", ty.name, refusals.len());
        must_fail.extend(refusals);
    }
    println!(
        "payload controls: {} bases, {restores} restored, {} forgeries to refuse",
        controlled.len(),
        must_fail.len()
    );

    let counters: Vec<&str> = all_gauges().flat_map(|(_, g)| g.fields).collect();
    let stats = |con: &mut Connection| -> Vec<i64> {
        counters.iter().map(|f| warden_stat(con, f)).collect()
    };
    let before = stats(&mut con);
    let mut accepted = Vec::new();
    for (name, d) in &must_fail {
        let payload = encode(d);
        let v = raw(
            &mut con,
            cmd("RESTORE")
                .arg("forged")
                .arg(0)
                .arg(&payload)
                .arg("REPLACE"),
        );
        if err_of(&v).is_none() {
            accepted.push(format!("{name}: accepted; payload {}", hex(&payload)));
            raw(&mut con, cmd("DEL").arg("forged"));
        }
    }
    assert_eq!(
        stats(&mut con),
        before,
        "INFO warden {counters:?} after refused payloads"
    );
    s.assert_alive();
    assert!(
        accepted.is_empty(),
        "forged payloads that must be refused were accepted:\n{}",
        accepted.join("\n")
    );
}
