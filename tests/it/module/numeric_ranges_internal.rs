//! The internal commands (`DLOCK._SET`, `RL._SET`, `BF._LOADX`): refused from ordinary
//! clients — directly, in MULTI/EXEC and from scripts — and still applied from the
//! master link and on AOF replay.

use crate::bloom::support::bf_info;
use crate::common::ranges::*;
use crate::common::waiter::*;
use crate::common::*;
use crate::lock::support::*;

use std::collections::BTreeSet;

// ---------------------------------------------------------------------------------------
// Internal commands
// ---------------------------------------------------------------------------------------

/// The commands in the server's base AOF files (RESP arrays of bulk strings).
fn base_aof_commands(server: &Server) -> Vec<Vec<Vec<u8>>> {
    let dir = server.dir.join("appendonlydir");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("appendonlydir") {
        let path = entry.expect("dir entry").path();
        if !path.to_string_lossy().ends_with(".base.aof") {
            continue;
        }
        let data = std::fs::read(&path).expect("read AOF");
        let mut at = 0;
        let line = |at: &mut usize| -> Option<&[u8]> {
            let end = data[*at..].windows(2).position(|w| w == b"\r\n")? + *at;
            let l = &data[*at..end];
            *at = end + 2;
            Some(l)
        };
        while at < data.len() {
            let header = line(&mut at).expect("AOF line");
            let count: usize = std::str::from_utf8(header.strip_prefix(b"*").expect("array"))
                .expect("utf8")
                .parse()
                .expect("count");
            let mut parts = Vec::with_capacity(count);
            for _ in 0..count {
                let len: usize = std::str::from_utf8(
                    line(&mut at).expect("bulk").strip_prefix(b"$").expect("$"),
                )
                .expect("utf8")
                .parse()
                .expect("len");
                parts.push(data[at..at + len].to_vec());
                at += len + 2;
            }
            out.push(parts);
        }
    }
    out
}

fn name_of(c: &[Vec<u8>]) -> String {
    String::from_utf8_lossy(&c[0]).to_ascii_lowercase()
}

fn is_internal(c: &[Vec<u8>]) -> bool {
    matches!(name_of(c).as_str(), "dlock._set" | "rl._set" | "bf._loadx")
}

fn bytes_command(parts: &[Vec<u8>]) -> redis::Cmd {
    let mut c = redis::Cmd::new();
    for p in parts {
        c.arg(p.as_slice());
    }
    c
}

/// The keys `populate` makes, sorted.
const POPULATED: [&str; 11] = [
    "bf:fixed",
    "bf:insert",
    "bf:plain",
    "lock:handed",
    "lock:long",
    "lock:plain",
    "rl:debt",
    "rl:gcra",
    "rl:leaky",
    "rl:token",
    "rl:window",
];

/// Locks, limiters and filters in every form the module knows, with extreme values
/// inside the ranges (a 10-year lease, a 1e15 burst, a two-layer filter, a hand-off).
fn populate(server: &Server) {
    let mut con = conn_t(server);
    let ten_years = TEN_YEARS_MS as i64;
    try_acquire(&mut con, "lock:long", "a", ten_years).expect("10-year lock");
    try_acquire(&mut con, "lock:plain", "b", 600_000).expect("lock");
    assert_eq!(extend(&mut con, "lock:plain", "b", 900_000), 1);
    // A hand-off: its state is written by the module, not by a client's command.
    try_acquire(&mut con, "lock:handed", "first", 600_000).expect("lock");
    let waiter = Waiter::lock(server, "lock:handed", "second", 600_000, 10_000);
    wait_waiting(&mut con, 1);
    assert_eq!(release(&mut con, "lock:handed", "first"), 1);
    waiter.granted("hand-off");
    let max = MAX_COUNT.to_string();
    for c in [
        words(&["RL.TOKEN", "rl:token", "1/h", &max, "COST", "7"]),
        words(&["RL.TOKEN", "rl:debt", "1/h", "1", "COST", "1"]),
        words(&[
            "RL.TOKEN",
            "rl:debt",
            "1/h",
            "1",
            "MAXWAIT",
            &TEN_YEARS_MS.to_string(),
        ]),
        words(&["RL.LEAKY", "rl:leaky", "1/h", "100", "COST", "40"]),
        words(&[
            "RL.WINDOW",
            "rl:window",
            "1000",
            &TEN_YEARS_MS.to_string(),
            "COST",
            "3",
        ]),
        words(&["RL.GCRA", "rl:gcra", "15", "30", "3600", "QUANTITY", "2"]),
        words(&["BF.RESERVEX", "bf:plain", "0.01", "100"]),
        words(&["BF.RESERVEX", "bf:fixed", "0.001", "50", "NONSCALING"]),
        words(&[
            "BF.INSERTX",
            "bf:insert",
            "CAPACITY",
            "10",
            "ERROR",
            "0.1",
            "EXPANSION",
            "3",
            "ITEMS",
            "x",
            "y",
        ]),
    ] {
        let c = command(&c);
        if let Some(e) = err_of(&raw(&mut con, &c)) {
            panic!("{}: {e}", show(&c));
        }
    }
    // Enough items to grow a second layer.
    let mut c = cmd("BF.MADDX");
    c.arg("bf:plain");
    for i in 0..250 {
        c.arg(format!("item{i}"));
    }
    let added: Vec<i64> = c.query(&mut con).expect("BF.MADDX");
    assert_eq!(added.len(), 250);
    assert!(
        bf_info(&mut con, "bf:plain").filters >= 2,
        "bf:plain has grown"
    );
}

/// The expected refusal of an internal command.
fn internal_error(c: &[Vec<u8>]) -> String {
    format!("ERR {} is an internal command", name_of(c))
}

/// The three internal commands from ordinary clients — hand-written forms
/// (`DLOCK._SET k m 5:1:99999999999999`, a forged top token, `RL._SET k <junk>`, a
/// `BF._LOADX k LAYER …`) and every internal command a real AOF rewrite wrote, both on
/// their own keys and on fresh keys — answer exactly `ERR <name> is an internal
/// command`, directly, inside MULTI/EXEC, from EVAL's `redis.pcall` (the same text) and
/// `redis.call` (that text, plus Redis's script suffix); `BF._LOADX k anything` (below
/// its declared arity) answers that or Redis's arity error. Afterwards no fresh key
/// exists, the dataset digest is the one before, and a lock on another key is still
/// granted.
/// The internal commands a rewritten AOF holds for the populated keys.
fn internal_names() -> BTreeSet<String> {
    ["bf._loadx", "dlock._set", "rl._set"]
        .map(String::from)
        .into()
}

#[test]
fn internal_commands_are_refused_from_clients() {
    let server = Server::start_plain_aof();
    populate(&server);
    server.bgrewriteaof();
    let from_aof: Vec<Vec<Vec<u8>>> = base_aof_commands(&server)
        .into_iter()
        .filter(|c| is_internal(c))
        .collect();
    let names: BTreeSet<String> = from_aof.iter().map(|c| name_of(c)).collect();
    assert_eq!(
        names,
        internal_names(),
        "internal commands in the rewritten AOF"
    );

    let b = |ws: &[&str]| ws.iter().map(|w| w.as_bytes().to_vec()).collect::<Vec<_>>();
    let mut forms: Vec<Vec<Vec<u8>>> = vec![
        b(&["DLOCK._SET", "k", "m", "5:1:99999999999999"]),
        b(&[
            "DLOCK._SET",
            "k",
            "m",
            "9223372036854775806:1:99999999999999",
        ]),
        b(&["RL._SET", "k", "anything"]),
        b(&["RL._SET", "k", "1:1:1:1:1:99999999999999"]),
        b(&[
            "BF._LOADX",
            "k",
            "LAYER",
            "0.01",
            "2",
            "0",
            "100",
            "0.005",
            "8",
            "0",
            "1024",
        ]),
    ];
    forms.extend(from_aof.iter().cloned());
    for (i, f) in from_aof.iter().enumerate() {
        let mut fresh = f.clone();
        fresh[1] = format!("forged:{i}").into_bytes();
        forms.push(fresh);
    }

    let mut con = conn_t(&server);
    let digest_before = db_digest(&mut con);
    let keys_before: i64 = query!(&mut con, "DBSIZE");
    let mut failures = Vec::new();
    for f in &forms {
        let want = internal_error(f);
        let c = bytes_command(f);
        let shown = show(&c);

        // Directly.
        match got(redis::ConnectionLike::req_command(&mut con, &c)) {
            Got::Error(e) if e == want => {}
            other => failures.push(format!("{shown}: expected `{want}`, got {other:?}")),
        }

        // Inside MULTI/EXEC.
        let _: () = query!(&mut con, "MULTI");
        match raw(&mut con, &c) {
            Value::SimpleString(s) if s == "QUEUED" => {}
            Value::Okay => {}
            other => failures.push(format!("{shown} in MULTI: not queued: {other:?}")),
        }
        match raw(&mut con, &cmd("EXEC")) {
            Value::Array(items)
                if items.len() == 1 && err_of(&items[0]).as_deref() == Some(want.as_str()) => {}
            other => failures.push(format!(
                "MULTI {shown} EXEC: expected [`{want}`], got {other:?}"
            )),
        }

        // From a script, with call and pcall.
        for (lua, exact) in [
            ("return redis.pcall(unpack(ARGV))", true),
            ("return redis.call(unpack(ARGV))", false),
        ] {
            let mut e = cmd("EVAL");
            e.arg(lua).arg(1).arg(f[1].as_slice());
            for p in f {
                e.arg(p.as_slice());
            }
            match got(redis::ConnectionLike::req_command(&mut con, &e)) {
                Got::Error(text)
                    if text == want
                        || (!exact
                            && text
                                .strip_prefix(want.as_str())
                                .is_some_and(|rest| rest.starts_with(" script:"))) => {}
                other => failures.push(format!(
                    "EVAL \"{lua}\" with {shown}: expected `{want}`, got {other:?}"
                )),
            }
        }
    }
    // `BF._LOADX k anything` has fewer arguments than the arity BF._LOADX declares
    // (-6), so Redis may answer its own arity error before the module sees the call;
    // either refusal is accepted (and nothing may change, checked below).
    let short = cmd("BF._LOADX").arg("k").arg("anything").clone();
    let arity = "ERR wrong number of arguments for 'bf._loadx' command";
    match got(redis::ConnectionLike::req_command(&mut con, &short)) {
        Got::Error(e) if e == "ERR bf._loadx is an internal command" || e == arity => {}
        other => failures.push(format!(
            "{}: expected `ERR bf._loadx is an internal command` (or the arity error), \
             got {other:?}",
            show(&short)
        )),
    }
    for i in 0..from_aof.len() {
        if exists(&mut con, format!("forged:{i}")) {
            failures.push(format!(
                "forged:{i} exists: a refused internal command created it"
            ));
        }
    }
    if exists(&mut con, "k") {
        failures.push("key k exists: a refused internal command created it".to_string());
    }
    let keys_after: i64 = query!(&mut con, "DBSIZE");
    if keys_after != keys_before || db_digest(&mut con) != digest_before {
        failures.push(format!(
            "the dataset changed ({keys_before} keys -> {keys_after}, digest differs: {})",
            db_digest(&mut con) != digest_before
        ));
    }
    match try_acquire(&mut con, "another", "me", 10_000) {
        Some(t) if t > 0 => {}
        other => failures.push(format!("a lock on another key afterwards: {other:?}")),
    }
    report("internal commands from clients", failures);
}

/// A replica of a master that took locks (a 10-year lease, an extension, a hand-off),
/// limited (every RL family, a 1e15 burst, a reservation in debt) and added to filters
/// (a two-layer one) applies every `DLOCK._SET` / `RL._SET` it gets from the master
/// link: it stays up (propagation errors panic it), and its DBSIZE and `DEBUG DIGEST`
/// equal the master's, key by key.
#[test]
fn internal_commands_apply_on_a_replica() {
    let master = Server::start();
    let mut replica = master.start_replica(&[], &[]);
    populate(&master);
    master.sync_replicas(1);
    replica.assert_alive();
    let mut m = master.conn();
    let mut r = replica.conn();
    let keys: Vec<String> = query!(&mut m, "KEYS", "*");
    let mut keys_seen = keys.clone();
    keys_seen.sort();
    assert_eq!(keys_seen, POPULATED, "keys on the master after populate");
    let mut differing = Vec::new();
    for k in &keys {
        let (dm, dr) = (digest(&mut m, k), digest(&mut r, k));
        if dm != dr {
            differing.push(format!("{k}: master {dm}, replica {dr}"));
        }
    }
    assert!(
        differing.is_empty(),
        "keys differ on the replica: {differing:?}"
    );
    let (sm, sr): (i64, i64) = (
        cmd("DBSIZE").query(&mut m).unwrap(),
        cmd("DBSIZE").query(&mut r).unwrap(),
    );
    assert_eq!(sm, sr, "DBSIZE master / replica");
    assert_eq!(
        db_digest(&mut m),
        db_digest(&mut r),
        "DEBUG DIGEST master / replica"
    );
}

/// With `appendonly yes` and `aof-use-rdb-preamble no`, the same dataset rewritten by
/// BGREWRITEAOF (as `DLOCK._SET`, `RL._SET` and `BF._LOADX`, which the base AOF must
/// contain), plus writes logged after the rewrite, comes back after a restart with the
/// same DBSIZE and `DEBUG DIGEST` (absolute lease and limiter times included).
#[test]
fn internal_commands_apply_on_aof_replay() {
    let mut server = Server::start_plain_aof();
    populate(&server);
    server.bgrewriteaof();
    let names: BTreeSet<String> = base_aof_commands(&server)
        .iter()
        .filter(|c| is_internal(c))
        .map(|c| name_of(c))
        .collect();
    assert_eq!(
        names,
        internal_names(),
        "internal commands in the rewritten AOF"
    );
    let mut con = conn_t(&server);
    // Writes after the rewrite go to the incremental AOF.
    try_acquire(&mut con, "lock:after", "c", TEN_YEARS_MS as i64).expect("lock");
    let _: Value = query!(
        &mut con,
        "RL.TOKEN",
        "rl:after",
        "5/s",
        MAX_COUNT.to_string()
    );
    let _: Value = query!(&mut con, "BF.ADDX", "bf:plain", "late");
    let before = db_digest(&mut con);
    let keys: i64 = query!(&mut con, "DBSIZE");
    server.restart("NOSAVE");
    let mut con = conn_t(&server);
    let keys_after: i64 = query!(&mut con, "DBSIZE");
    assert_eq!(keys_after, keys, "DBSIZE after the AOF restart");
    assert_eq!(
        db_digest(&mut con),
        before,
        "DEBUG DIGEST after the AOF restart"
    );
}
