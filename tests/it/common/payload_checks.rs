//! Checks of the values that corrupt or forged payloads left in the server, for the
//! payload fuzzer (`tests/it/module/payload_fuzz.rs`): each type's read commands answer in range
//! and change nothing, the other commands do not break the server, and whatever was
//! accepted DUMPs and RESTOREs to the same value. What goes wrong without taking the
//! server down is collected as `Findings`, reported at the end.

use super::fuzz_calls::is_int01;
use super::payload::hex;
use super::payload_types::*;
use super::*;

/// What went wrong without taking the server down (reported at the end).
#[derive(Default, Debug)]
pub struct Findings {
    pub internal: Vec<String>,
    pub read_failures: Vec<String>,
    pub reads_that_wrote: Vec<String>,
    pub round_trips: Vec<String>,
    pub odd_codes: Vec<String>,
}

impl Findings {
    /// Notes `s` in `list` (the first ten of each list are kept).
    pub fn push(list: &mut Vec<String>, s: String) {
        if list.len() < 10 {
            list.push(s);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.internal.is_empty()
            && self.read_failures.is_empty()
            && self.reads_that_wrote.is_empty()
            && self.round_trips.is_empty()
            && self.odd_codes.is_empty()
    }
}

/// Runs `c`, recording caught panics and odd error codes.
pub fn run(con: &mut Connection, c: &redis::Cmd, found: &mut Findings, ctx: &str) -> Value {
    let v = raw(con, c);
    if let Some(e) = err_of(&v) {
        if e.contains("internal error") {
            Findings::push(&mut found.internal, format!("{ctx}: {} -> {e}", show(c)));
        } else if !e.starts_with("ERR") && !e.starts_with("WRONGTYPE") {
            Findings::push(&mut found.odd_codes, format!("{ctx}: {} -> {e}", show(c)));
        }
    }
    v
}

/// DLOCK.INFO: nil, or owner, token > 0, ttl_ms >= -1 (-1: the key has no
/// expiry, as after a RESTORE with ttl 0), holds > 0, waiters >= 0.
/// DLOCK.INFO of a lock set: nil, or the plain fields, `mode` and `holders`.
pub fn lock_set_info_ok(v: &Value) -> bool {
    match v {
        Value::Nil => true,
        Value::Array(a) => {
            let names: Vec<&[u8]> = a
                .iter()
                .step_by(2)
                .filter_map(|n| match n {
                    Value::BulkString(b) => Some(b.as_slice()),
                    _ => None,
                })
                .collect();
            names.contains(&&b"mode"[..]) && names.contains(&&b"holders"[..])
        }
        _ => false,
    }
}

pub fn lock_info_ok(v: &Value) -> bool {
    match v {
        Value::Nil => true,
        Value::Array(a) if a.len() == 10 => {
            let n = |i: usize| match a[i] {
                Value::Int(n) => n,
                _ => i64::MIN,
            };
            matches!(a[1], Value::BulkString(ref o) if !o.is_empty())
                && n(3) > 0
                && n(5) >= -1
                && n(7) > 0
                && n(9) >= 0
        }
        _ => false,
    }
}

/// BF.INFOX: capacity, size, number of filters (>= 1), items (all >= 0), expansion
/// (>= 1 or nil) and an error rate in (0, 1).
pub fn filter_info_ok(v: &Value) -> bool {
    let Value::Array(a) = v else {
        return false;
    };
    if a.len() != 12 {
        return false;
    }
    let n = |i: usize| match a[i] {
        Value::Int(n) => n,
        _ => i64::MIN,
    };
    let rate = match &a[11] {
        Value::Double(d) => *d,
        Value::BulkString(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(f64::NAN),
        Value::SimpleString(s) => s.parse().unwrap_or(f64::NAN),
        _ => f64::NAN,
    };
    n(1) >= 0
        && n(3) >= 0
        && n(5) >= 1
        && n(7) >= 0
        && (matches!(a[9], Value::Nil) || n(9) >= 1)
        && rate > 0.0
        && rate < 1.0
}

/// RL.TOKEN / LEAKY / WINDOW: allowed 0/1, remaining >= 0, wait_ms >= -1, reset_ms >= 0.
pub fn decision_ok(v: &Value) -> bool {
    matches!(ints(v).as_deref(), Some([a, r, w, z]) if (0..=1).contains(a) && *r >= 0 && *w >= -1 && *z >= 0)
}

/// RL.GCRA: limited 0/1, limit, remaining >= 0, retry_after_s >= -1, reset_after_s >= 0.
pub fn gcra_ok(v: &Value) -> bool {
    matches!(ints(v).as_deref(), Some([l, lim, r, retry, reset]) if (0..=1).contains(l) && *lim >= 0 && *r >= 0 && *retry >= -1 && *reset >= 0)
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

/// A check of a reply.
pub type Check = fn(&Value) -> bool;

/// The values of a reply of label and value pairs (a flat array in RESP2) as
/// integers, -1 where one is not; `None` when it is not an array of pairs.
pub fn labelled_ints(v: &Value) -> Option<Vec<i64>> {
    let Value::Array(a) = v else {
        return None;
    };
    if !a.len().is_multiple_of(2) {
        return None;
    }
    let n = a.iter().skip(1).step_by(2).map(|v| int_of(v).unwrap_or(-1));
    Some(n.collect())
}

/// CF.INFOX: nine labelled integers, none negative; at least one sub-filter and
/// one bucket, a bucket size of 1..=255 and a fingerprint width of 1..=32.
pub fn cuckoo_info_ok(v: &Value) -> bool {
    let Some(n) = labelled_ints(v) else {
        return false;
    };
    n.len() == 9
        && n.iter().all(|v| *v >= 0)
        && n[1] >= 1
        && n[2] >= 1
        && (1..=255).contains(&n[5])
        && (1..=32).contains(&n[8])
}

/// The reads of a cuckoo filter (item reads name `item`).
fn cuckoo_reads(key: &str, item: &str) -> Vec<redis::Cmd> {
    vec![
        cmd("CF.INFOX").arg(key).clone(),
        cmd("CF.EXISTSX").arg(key).arg(item).clone(),
        cmd("CF.MEXISTSX")
            .arg(key)
            .arg(item)
            .arg("absent-item")
            .clone(),
        cmd("CF.COUNTX").arg(key).arg(item).clone(),
        cmd("CF.SCANDUMPX").arg(key).arg(0).clone(),
    ]
}

/// The error of a filter command on a key being loaded.
pub fn is_loading(v: &Value) -> bool {
    err_of(v).as_deref() == Some(crate::bloom::support::LOADING)
}

/// The type's read commands: must answer (not an error) and change nothing.
pub fn read_checks(con: &mut Connection, ty: Ty, key: &str, found: &mut Findings, ctx: &str) {
    let before = digest_value(con, key.as_bytes());
    let reads: Vec<(redis::Cmd, Check)> = match ty {
        Ty::Lock => vec![(cmd("DLOCK.INFO").arg(key).clone(), lock_info_ok)],
        Ty::LockSet => vec![(cmd("DLOCK.INFO").arg(key).clone(), lock_set_info_ok)],
        Ty::Filter => vec![
            (cmd("BF.INFOX").arg(key).clone(), filter_info_ok),
            (
                cmd("BF.EXISTSX").arg(key).arg("fb:small:1").clone(),
                is_int01,
            ),
            (
                cmd("BF.EXISTSX").arg(key).arg("absent-item").clone(),
                is_int01,
            ),
            (
                cmd("BF.CARDX").arg(key).clone(),
                |v| matches!(v, Value::Int(n) if *n >= 0),
            ),
            (
                cmd("BF.MEXISTSX").arg(key).arg("a").arg("fb:two:3").clone(),
                |v| matches!(v, Value::Array(a) if a.len() == 2 && a.iter().all(is_int01)),
            ),
        ],
        // Never readable as a filter: every read answers that it is being loaded.
        Ty::Loading => [
            cmd("BF.INFOX").arg(key).clone(),
            cmd("BF.EXISTSX").arg(key).arg("lb:two:1").clone(),
            cmd("BF.CARDX").arg(key).clone(),
            cmd("BF.MEXISTSX").arg(key).arg("a").arg("b").clone(),
            cmd("BF.SCANDUMPX").arg(key).arg(0).clone(),
        ]
        .into_iter()
        .map(|c| (c, is_loading as Check))
        .collect(),
        Ty::Limiter => Vec::new(),
        Ty::Cache => vec![(cmd("CACHE.INFO").arg(key).clone(), cache_info_ok)],
        // Being loaded: every read answers that; else each in range.
        Ty::Cuckoo if is_loading(&raw(con, cmd("CF.INFOX").arg(key))) => {
            cuckoo_reads(key, "cfb:grown:20")
                .into_iter()
                .map(|c| (c, is_loading as Check))
                .collect()
        }
        Ty::Cms => crate::cms::payload::reads(key),
        Ty::TopK => crate::topk::payload::reads(key),
        Ty::Cuckoo => {
            let checks: [Check; 5] = [
                cuckoo_info_ok,
                is_int01,
                |v| matches!(v, Value::Array(a) if a.len() == 2 && a.iter().all(is_int01)),
                |v| matches!(v, Value::Int(n) if *n >= 0),
                |v| matches!(v, Value::Array(a) if a.len() == 2 && a[0] == Value::Int(1)),
            ];
            cuckoo_reads(key, "cfb:grown:20")
                .into_iter()
                .zip(checks)
                .collect()
        }
    };
    for (c, ok) in &reads {
        let v = run(con, c, found, ctx);
        if !ok(&v) {
            Findings::push(
                &mut found.read_failures,
                format!("{ctx}: {} -> {v:?}", show(c)),
            );
        }
    }
    if ty == Ty::Limiter {
        // COST 0 only looks. Exactly the command of the stored kind answers; the
        // others say the key holds another kind (or arithmetic would overflow).
        let looks = [
            cmd_of!("RL.TOKEN", key, "10/s", 10, "COST", 0),
            cmd_of!("RL.LEAKY", key, "10/s", 10, "COST", 0),
            cmd_of!("RL.WINDOW", key, 10, 1000, "COST", 0),
            cmd_of!("RL.GCRA", key, 10, 10, 1, "QUANTITY", 0),
        ];
        let mut answered = 0;
        for (i, c) in looks.iter().enumerate() {
            let v = run(con, c, found, ctx);
            match &v {
                Value::ServerError(_) => {}
                v if (i < 3 && decision_ok(v)) || (i == 3 && gcra_ok(v)) => answered += 1,
                other => Findings::push(
                    &mut found.read_failures,
                    format!("{ctx}: {} -> {other:?}", show(c)),
                ),
            }
        }
        if answered > 1 {
            Findings::push(
                &mut found.read_failures,
                format!("{ctx}: {answered} RL commands of different kinds answered for {key}"),
            );
        }
    }
    let after = digest_value(con, key.as_bytes());
    if after != before {
        Findings::push(
            &mut found.reads_that_wrote,
            format!("{ctx}: read commands changed {key}: {before:?} -> {after:?}"),
        );
    }
}

/// Every other command on an accepted value; then DUMP / RESTORE must give it back.
pub fn exercise(
    con: &mut Connection,
    ty: Ty,
    key: &str,
    i: usize,
    found: &mut Findings,
    ctx: &str,
) {
    let generic = [
        cmd("TYPE").arg(key).clone(),
        cmd("PTTL").arg(key).clone(),
        cmd("MEMORY").arg("USAGE").arg(key).clone(),
        cmd("OBJECT").arg("ENCODING").arg(key).clone(),
    ];
    for c in &generic {
        run(con, c, found, ctx);
    }
    // Whatever was accepted DUMPs and RESTOREs to the same value.
    if let Value::BulkString(p) = raw(con, cmd("DUMP").arg(key)) {
        let again = format!("{key}:again");
        let restore = restore_like(con, key, &again, &p);
        let v = run(con, &restore, found, ctx);
        if err_of(&v).is_some() {
            Findings::push(
                &mut found.round_trips,
                format!(
                    "{ctx}: DUMP of the accepted value does not RESTORE: {v:?}; payload {}",
                    hex(&p)
                ),
            );
        } else {
            let (a, b) = (
                digest_value(con, key.as_bytes()),
                digest_value(con, again.as_bytes()),
            );
            if a != b {
                Findings::push(
                    &mut found.round_trips,
                    format!("{ctx}: DUMP/RESTORE changed the value: {a:?} -> {b:?}"),
                );
            }
        }
        raw(con, cmd("DEL").arg(&again));
    }
    let owner = format!("fz{}", i % 3);
    let writes: Vec<redis::Cmd> = match ty {
        Ty::Lock => vec![
            cmd_of!("DLOCK.ACQUIRE", key, &owner, LONG_TTL_MS),
            cmd_of!("DLOCK.EXTEND", key, &owner, LONG_TTL_MS),
            cmd("DLOCK.RELEASE").arg(key).arg("a").clone(),
            cmd("DLOCK.RELEASE").arg(key).arg("re-entrant").clone(),
            cmd_of!("DLOCK.ACQUIRE", key, "re-entrant", LONG_TTL_MS),
            cmd("DLOCK.INFO").arg(key).clone(),
        ],
        Ty::LockSet => vec![
            cmd_of!("DLOCK.ACQUIRE", key, &owner, LONG_TTL_MS, "SHARED"),
            cmd_of!("DLOCK.ACQUIRE", key, &owner, LONG_TTL_MS, "LIMIT", 3),
            cmd_of!("DLOCK.EXTEND", key, "r1", LONG_TTL_MS),
            cmd("DLOCK.RELEASE").arg(key).arg("a").clone(),
            cmd("DLOCK.RELEASE").arg(key).arg("r2").clone(),
            cmd_of!("DLOCK.ACQUIRE", key, "x", LONG_TTL_MS),
            cmd("DLOCK.INFO").arg(key).clone(),
        ],
        Ty::Filter => vec![
            cmd("BF.ADDX").arg(key).arg(format!("new{i}")).clone(),
            cmd_of!(
                "BF.MADDX",
                key,
                format!("m{i}a"),
                format!("m{i}b"),
                "fb:small:0"
            ),
            cmd_of!("BF.INSERTX", key, "NOCREATE", "ITEMS", format!("n{i}")),
            cmd("BF.EXISTSX").arg(key).arg(format!("new{i}")).clone(),
            cmd("BF.INFOX").arg(key).arg("SIZE").clone(),
            cmd("BF.RESERVEX").arg(key).arg(0.01).arg(10).clone(),
        ],
        // Chunks of each base's source in turn: taken, or refused as out of order or of
        // the wrong length; then the writes a filter takes, refused.
        Ty::Loading => {
            let mut w: Vec<redis::Cmd> = Vec::new();
            for (it, len) in [(9u64, 8usize), (17, 16), (25, 24), (161, 160), (1, 0)] {
                w.push(cmd_of!("BF.LOADCHUNKX", key, it, vec![0x5au8; len]));
            }
            w.push(cmd("BF.ADDX").arg(key).arg(format!("new{i}")).clone());
            w.push(cmd("BF.RESERVEX").arg(key).arg(0.01).arg(10).clone());
            w
        }
        Ty::Limiter => vec![
            cmd("RL.TOKEN").arg(key).arg("1/h").arg(10).clone(),
            cmd_of!("RL.TOKEN", key, "inf", 5, "COST", 2, "MAXWAIT", 1000),
            cmd("RL.LEAKY").arg(key).arg("1/h").arg(10).clone(),
            cmd("RL.WINDOW").arg(key).arg(100).arg(LONG_TTL_MS).clone(),
            cmd("RL.GCRA").arg(key).arg(10).arg(1).arg(3600).clone(),
            cmd("RL.TOKEN").arg(key).arg("1000000/ms").arg(0).clone(),
        ],
        Ty::Cache => vec![
            cmd("CACHE.GET").arg(key).clone(),
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
            cmd("CACHE.INFO").arg(key).clone(),
        ],
        // Adds that kick and grow, deletes, compaction; chunks for one being
        // loaded (taken, or refused as out of order or of the wrong length).
        Ty::Cuckoo => {
            let mut w = vec![
                cmd("CF.ADDNXX").arg(key).arg(format!("nx{i}")).clone(),
                cmd_of!("CF.INSERTNXX", key, "NOCREATE", "ITEMS", "cfb:small:1", "x"),
                cmd("CF.DELX").arg(key).arg("cfb:grown:30").clone(),
                cmd("CF.RESERVEX").arg(key).arg(100).clone(),
            ];
            let mut many = cmd_of!("CF.INSERTX", key, "NOCREATE", "ITEMS");
            for n in 0..40 {
                many.arg(format!("i{i}:{n}"));
            }
            w.push(many);
            w.push(cmd("CF.COMPACTX").arg(key).clone());
            for (it, len) in [(2u64, 8usize), (2, 64), (3, 8), (1, 0)] {
                w.push(cmd_of!("CF.LOADCHUNKX", key, it, vec![0u8; len]));
            }
            w
        }
        Ty::Cms => crate::cms::payload::writes(key, i),
        Ty::TopK => crate::topk::payload::writes(key, i),
    };
    for c in &writes {
        run(con, c, found, ctx);
    }
    match ty {
        Ty::Cuckoo => no_false_negative(con, key, i, found, ctx),
        Ty::Cms => crate::cms::payload::never_under(con, key, i, found, ctx),
        Ty::TopK => crate::topk::payload::lists_its_own(con, key, found, ctx),
        _ => {}
    }
    if rand_copy(i) {
        run(
            con,
            cmd("COPY")
                .arg(key)
                .arg(format!("{key}:copy"))
                .arg("REPLACE"),
            found,
            ctx,
        );
    }
}

/// An item a cuckoo filter took (CF.ADDX answered 1) is found and counted, and
/// gone again after its CF.DELX when it was alone.
fn no_false_negative(con: &mut Connection, key: &str, i: usize, found: &mut Findings, ctx: &str) {
    let item = format!("new{i}");
    let added = run(con, cmd("CF.ADDX").arg(key).arg(&item), found, ctx);
    if added != Value::Int(1) {
        return;
    }
    let e = run(con, cmd("CF.EXISTSX").arg(key).arg(&item), found, ctx);
    let n = run(con, cmd("CF.COUNTX").arg(key).arg(&item), found, ctx);
    if e != Value::Int(1) || !matches!(n, Value::Int(c) if c >= 1) {
        Findings::push(
            &mut found.read_failures,
            format!("{ctx}: {item} added to {key}, then CF.EXISTSX -> {e:?}, CF.COUNTX -> {n:?}"),
        );
    }
    let d = run(con, cmd("CF.DELX").arg(key).arg(&item), found, ctx);
    if d != Value::Int(1) {
        Findings::push(
            &mut found.read_failures,
            format!("{ctx}: {item} added to {key}, then CF.DELX -> {d:?}"),
        );
    }
}

/// Whether payload `i` is also COPYed.
pub fn rand_copy(i: usize) -> bool {
    i % 7 == 3
}
