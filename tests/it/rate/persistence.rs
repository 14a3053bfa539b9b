//! Integration tests for rate limiters across persistence and replication: DEBUG
//! RELOAD, RDB restart, AOF rewrite with and without the RDB preamble, DUMP/RESTORE and
//! COPY keep every limiter; AOF load does not replay time-dependent commands on a later
//! clock; the replication stream carries absolute state and replicas end with the same
//! digest.

use crate::common::*;
use crate::rate::support::*;

use std::collections::BTreeMap;
use std::time::Duration;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn active_expire_off(con: &mut Connection) {
    let _: () = query!(con, "DEBUG", "SET-ACTIVE-EXPIRE", 0);
}

/// Limiters of every kind in varied states (fresh, partly used, exhausted, in debt,
/// never refilling), all with long periods so none expires during a test.
/// Returns the keys written.
fn populate(con: &mut Connection) -> Vec<&'static str> {
    let calls: &[&[&str]] = &[
        &["RL.TOKEN", "p:tok", "1/h", "5"],
        &["RL.TOKEN", "p:tok", "1/h", "5", "COST", "2"],
        &["RL.TOKEN", "p:debt", "1/m", "2", "COST", "2"],
        &["RL.TOKEN", "p:debt", "1/m", "2", "MAXWAIT", "600000"],
        &[
            "RL.TOKEN", "p:debt", "1/m", "2", "COST", "2", "MAXWAIT", "600000",
        ],
        &["RL.TOKEN", "p:zero", "0", "3"],
        &["RL.LEAKY", "p:leaky", "1/h", "10", "COST", "7"],
        &["RL.LEAKY", "p:leaky", "1/h", "10", "COST", "2"],
        &["RL.WINDOW", "p:win", "10", "3600000", "COST", "4"],
        &["RL.WINDOW", "p:win", "10", "3600000", "COST", "3"],
        &["RL.GCRA", "p:gcra", "3", "1", "600"],
        &["RL.GCRA", "p:gcra", "3", "1", "600", "QUANTITY", "2"],
        &["RL.GCRA", "p:lim", "0", "1", "600"],
        // Several limits in one key: 3 of 5 per hour used, 3 of 4 per day.
        &["RL.TOKEN", "p:limits", "1/h", "5", "1/d", "4", "COST", "3"],
        &windows_call("3"),
    ];
    for r in rl_pipe(con, calls) {
        assert_eq!(r[0], if r.len() == 4 { 1 } else { 0 }, "setup call allowed");
    }
    vec![
        "p:tok",
        "p:debt",
        "p:zero",
        "p:leaky",
        "p:win",
        "p:gcra",
        "p:lim",
        "p:limits",
        "p:windows",
    ]
}

type Snapshot = BTreeMap<&'static str, (String, i64)>;

fn snapshot(con: &mut Connection, keys: &[&'static str]) -> Snapshot {
    keys.iter()
        .map(|k| {
            assert_eq!(key_type(con, *k), "warden-rl", "TYPE {k}");
            (*k, (digest(con, *k), pttl(con, *k)))
        })
        .collect()
}

/// Every key keeps its digest, and its PTTL is not longer than before (-1 stays -1).
fn assert_same_state(con: &mut Connection, before: &Snapshot, when: &str) {
    for (k, (d, p)) in before {
        assert_eq!(key_type(con, *k), "warden-rl", "{when}: TYPE {k}");
        assert_eq!(&digest(con, *k), d, "{when}: digest of {k}");
        let now = pttl(con, *k);
        if *p == -1 {
            assert_eq!(now, -1, "{when}: {k} had no expiry");
        } else {
            assert!(
                now > 0 && now <= *p,
                "{when}: PTTL of {k} was {p}, now {now}"
            );
        }
    }
}

/// The decisions a populated dataset must still make (long periods, so they do not
/// depend on how much time passed in a test).
fn assert_populated_decisions(con: &mut Connection, when: &str) {
    // p:lim is limited for about 600 s.
    let g = rl(con, &["RL.GCRA", "p:lim", "0", "1", "600"]);
    assert_eq!(g[0], 1, "{when}: p:lim still limited: {g:?}");
    assert!(g[3] > 500 && g[3] <= 600, "{when}: p:lim retry: {g:?}");
    // p:debt owes tokens: a plain call is denied.
    let t = rl(con, &["RL.TOKEN", "p:debt", "1/m", "2"]);
    assert_eq!(t[0], 0, "{when}: p:debt denied: {t:?}");
    assert!(t[2] > 60_000, "{when}: p:debt wait: {t:?}");
    // p:zero never refills: 2 tokens left, then nothing, forever.
    let z = rl(con, &["RL.TOKEN", "p:zero", "0", "3", "COST", "3"]);
    assert_eq!(z, vec![0, 2, -1, -1], "{when}: p:zero");
    // p:leaky holds 9 of 10.
    let l = rl(con, &["RL.LEAKY", "p:leaky", "1/h", "10", "COST", "2"]);
    assert_eq!(&l[..2], &[0, 1], "{when}: p:leaky: {l:?}");
    // p:win counted 7 of 10.
    let w = rl(con, &["RL.WINDOW", "p:win", "10", "3600000", "COST", "4"]);
    assert_eq!(&w[..2], &[0, 3], "{when}: p:win: {w:?}");
    // p:limits: the per-day limit is the tightest (1 left), and denies 2.
    let t = rl(
        con,
        &["RL.TOKEN", "p:limits", "1/h", "5", "1/d", "4", "COST", "2"],
    );
    assert_eq!(&t[..2], &[0, 1], "{when}: p:limits: {t:?}");
    assert!(
        t[2] > 23 * 3_600_000,
        "{when}: p:limits waits for the day: {t:?}"
    );
    // p:windows: 3 counted in both windows, 1 left in the second.
    let w = rl(con, &windows_call("0"));
    assert_eq!(&w[..2], &[1, 1], "{when}: p:windows: {w:?}");
}

// ---------------------------------------------------------------------------------------
// 5. Persistence
// ---------------------------------------------------------------------------------------

#[test]
fn persistence_debug_reload_rdb_restart_dump_restore_copy() {
    let (mut s, mut con) = Server::start_conn();
    active_expire_off(&mut con);
    let keys = populate(&mut con);
    let before = snapshot(&mut con, &keys);
    let all = db_digest(&mut con);

    let _: () = query!(&mut con, "DEBUG", "RELOAD");
    assert_same_state(&mut con, &before, "DEBUG RELOAD");
    assert_eq!(db_digest(&mut con), all, "DEBUG RELOAD: DEBUG DIGEST");

    s.restart("SAVE");
    let mut con = s.conn();
    active_expire_off(&mut con);
    assert_same_state(&mut con, &before, "RDB restart");
    assert_eq!(db_digest(&mut con), all, "RDB restart: DEBUG DIGEST");

    // DUMP / RESTORE (with the same absolute expiry) and COPY keep the state and the
    // expiry. DEBUG DIGEST-VALUE notes whether a key has an expiry, so the restored
    // key gets the original's.
    for k in &keys {
        let at = pexpiretime(&mut con, *k);
        let payload: Vec<u8> = query!(&mut con, "DUMP", *k);
        let restored = format!("{k}:restored");
        let mut restore = cmd("RESTORE");
        restore.arg(&restored).arg(at.max(0)).arg(&payload);
        if at > 0 {
            restore.arg("ABSTTL");
        }
        let _: () = restore.query(&mut con).expect("RESTORE");
        assert_eq!(key_type(&mut con, &restored), "warden-rl");
        assert_eq!(digest(&mut con, &restored), before[k].0, "RESTORE {k}");
        assert_eq!(pexpiretime(&mut con, &restored), at, "RESTORE {k} expiry");

        let copy = format!("{k}:copy");
        let n: i64 = query!(&mut con, "COPY", *k, &copy);
        assert_eq!(n, 1);
        assert_eq!(digest(&mut con, &copy), before[k].0, "COPY {k}");
        assert_eq!(pexpiretime(&mut con, &copy), at, "COPY {k} expiry");
    }

    // A call on the copy leaves the original alone.
    let r = rl(&mut con, &["RL.TOKEN", "p:tok:copy", "1/h", "5"]);
    assert_eq!(&r[..2], &[1, 1], "copy used: {r:?}");
    assert_eq!(digest(&mut con, "p:tok"), before["p:tok"].0);
    assert_ne!(digest(&mut con, "p:tok:copy"), before["p:tok"].0);
    let r = rl(&mut con, &["RL.TOKEN", "p:tok:restored", "1/h", "5"]);
    assert_eq!(&r[..2], &[1, 1], "restored used: {r:?}");

    assert_populated_decisions(&mut con, "after RDB restart");
    s.assert_alive();
}

fn aof_rewrite_round_trip(preamble: &str) {
    let mut s = Server::start_with(
        &["--appendonly", "yes", "--aof-use-rdb-preamble", preamble],
        &[],
    );
    let mut con = s.conn();
    active_expire_off(&mut con);
    s.wait_aof_rewrite_idle();
    let keys = populate(&mut con);
    let before = snapshot(&mut con, &keys);
    let all = db_digest(&mut con);

    s.bgrewriteaof();
    s.restart("NOSAVE");
    let mut con = s.conn();
    active_expire_off(&mut con);
    assert_same_state(&mut con, &before, &format!("AOF preamble {preamble}"));
    assert_eq!(
        db_digest(&mut con),
        all,
        "AOF preamble {preamble}: DEBUG DIGEST"
    );

    // Calls after the rewrite go to the new incremental file and also survive.
    let r = rl(&mut con, &["RL.TOKEN", "p:tok", "1/h", "5"]);
    assert_eq!(&r[..2], &[1, 1], "{r:?}");
    // Several limits replayed from the incremental file as one effect.
    let r = rl(
        &mut con,
        &["RL.TOKEN", "p:incr", "1/h", "5", "1/d", "2", "0", "3"],
    );
    assert_eq!(&r[..2], &[1, 1], "{r:?}");
    let r = rl(&mut con, &["RL.WINDOW", "p:incw", "5", "1h", "2", "1d"]);
    assert_eq!(&r[..2], &[1, 1], "{r:?}");
    let mut keys = keys;
    keys.extend(["p:incr", "p:incw"]);
    let mid = snapshot(&mut con, &keys);
    let all2 = db_digest(&mut con);
    s.restart("NOSAVE");
    let mut con = s.conn();
    active_expire_off(&mut con);
    assert_same_state(&mut con, &mid, &format!("AOF preamble {preamble}, incr"));
    assert_eq!(db_digest(&mut con), all2);
    assert_populated_decisions(&mut con, &format!("AOF preamble {preamble}"));
    s.assert_alive();
}

#[test]
fn persistence_aof_rewrite_with_rdb_preamble() {
    aof_rewrite_round_trip("yes");
}

#[test]
fn persistence_aof_rewrite_without_rdb_preamble() {
    aof_rewrite_round_trip("no");
}

// ---------------------------------------------------------------------------------------
// 6. No replay on a later clock
// ---------------------------------------------------------------------------------------

#[test]
fn aof_load_does_not_replay_on_a_later_clock() {
    let mut s = Server::start_plain_aof();
    let mut con = s.conn();
    active_expire_off(&mut con);
    s.wait_aof_rewrite_idle();
    let g: &[&str] = &["RL.GCRA", "g", "0", "1", "60"];
    let t: &[&str] = &["RL.TOKEN", "t", "1/m", "3"];
    let r = rl_pipe(&mut con, &[g, g, t, t, t, t]);
    assert_eq!(r[0], vec![0, 1, 0, -1, 60], "gcra first");
    assert_eq!(r[1], vec![1, 1, 0, 60, 60], "gcra limited");
    assert_eq!(&r[4][..3], &[1, 0, 0], "token last");
    assert_eq!(&r[5][..2], &[0, 0], "token denied");
    let before = snapshot(&mut con, &["g", "t"]);
    let all = db_digest(&mut con);

    std::thread::sleep(Duration::from_secs(2));
    s.restart("NOSAVE");
    let mut con = s.conn();
    active_expire_off(&mut con);
    assert_same_state(&mut con, &before, "AOF load 2 s later");
    assert_eq!(db_digest(&mut con), all, "AOF load: DEBUG DIGEST");

    // The decisions the master would have made now, not those of a replay at load.
    let r = rl(&mut con, g);
    assert_eq!(&r[..3], &[1, 1, 0], "gcra still limited: {r:?}");
    assert!(
        r[3] >= 50 && r[3] <= 58,
        "gcra retry_after {} should be about 58 s (60 = replayed at load)",
        r[3]
    );
    let r = rl(&mut con, t);
    assert_eq!(&r[..2], &[0, 0], "token still empty: {r:?}");
    assert!(
        r[2] >= 40_000 && r[2] <= 58_100,
        "token wait {} should be at most 58 s (about 60 s = replayed at load)",
        r[2]
    );

    // The AOF holds effects, not the time-dependent commands.
    let mut text = Vec::new();
    for e in std::fs::read_dir(s.dir.join("appendonlydir")).expect("appendonlydir") {
        let p = e.expect("entry").path();
        text.extend(std::fs::read(&p).expect("read AOF").to_ascii_uppercase());
    }
    // Each allowed call is there once: as `RL._SET`, or as the call itself
    // with its effect appended (`arg@state`); denied calls are not.
    let count = |needle: &[u8]| text.windows(needle.len()).filter(|w| w == &needle).count();
    let calls = count(b"RL.GCRA") + count(b"RL.TOKEN");
    assert_eq!(
        calls + count(b"RL._SET"),
        4,
        "allowed calls in the AOF (1 GCRA, 3 TOKEN)"
    );
    assert_eq!(
        count(b"@"),
        calls,
        "an RL call in the AOF without its effect"
    );
    s.assert_alive();
}

// ---------------------------------------------------------------------------------------
// 7. Replication
// ---------------------------------------------------------------------------------------

enum Expect {
    /// Allowed: exactly one RL._SET, its pxat = call time + reset.
    Set,
    /// Denied, a look, or an inf rate: nothing propagated.
    Nothing,
}

#[test]
fn replication_sends_absolute_state_and_replicas_match() {
    let (mut master, mut replica, mut con) = Server::start_replicated();
    active_expire_off(&mut con);
    let mut tap = master.replication_tap();

    use Expect::*;
    let steps: &[(&[&str], Expect)] = &[
        (&["RL.TOKEN", "rt", "1/m", "2"], Set),
        (&["RL.TOKEN", "rt", "1/m", "2"], Set),
        (&["RL.TOKEN", "rt", "1/m", "2"], Nothing),
        (&["RL.TOKEN", "rt", "1/m", "2", "COST", "0"], Nothing),
        (&["RL.TOKEN", "rt", "1/m", "2", "MAXWAIT", "120000"], Set),
        (&["RL.TOKEN", "rt", "1/m", "2", "MAXWAIT", "1000"], Nothing),
        (&["RL.TOKEN", "rz", "0", "3"], Set),
        (&["RL.TOKEN", "rinf", "inf", "1"], Nothing),
        (&["RL.LEAKY", "rl", "1/m", "2"], Set),
        (&["RL.LEAKY", "rl", "1/m", "2"], Set),
        (&["RL.LEAKY", "rl", "1/m", "2"], Nothing),
        (&["RL.LEAKY", "rl", "1/m", "2", "COST", "0"], Nothing),
        (&["RL.WINDOW", "rw", "2", "60000"], Set),
        (&["RL.WINDOW", "rw", "2", "60000"], Set),
        (&["RL.WINDOW", "rw", "2", "60000"], Nothing),
        (&["RL.WINDOW", "rw", "2", "60000", "COST", "0"], Nothing),
        (&["RL.GCRA", "rg", "1", "1", "60"], Set),
        (&["RL.GCRA", "rg", "1", "1", "60"], Set),
        (&["RL.GCRA", "rg", "1", "1", "60"], Nothing),
        (&["RL.GCRA", "rg", "1", "1", "60", "QUANTITY", "0"], Nothing),
        (&["RL.TOKEN", "rm", "1/m", "5", "1/h", "2"], Set),
        (&["RL.TOKEN", "rm", "1/m", "5", "1/h", "2"], Set),
        (&["RL.TOKEN", "rm", "1/m", "5", "1/h", "2"], Nothing),
        // A changed burst on a live key is stored even by a denied call.
        (
            &["RL.TOKEN", "rm", "1/m", "5", "1/h", "3", "COST", "2"],
            Set,
        ),
        (&["RL.TOKEN", "rm", "1/m", "5", "1/h", "3", "inf", "1"], Set),
        (&["RL.WINDOW", "rwm", "5", "60000", "2", "3600000"], Set),
        (&["RL.WINDOW", "rwm", "5", "60000", "2", "3600000"], Set),
        (&["RL.WINDOW", "rwm", "5", "60000", "2", "3600000"], Nothing),
    ];
    let mut kinds: BTreeMap<&str, String> = BTreeMap::new();
    let mut layout_violations: Vec<String> = Vec::new();
    for (args, expect) in steps {
        let t0 = server_time_ms(&mut con);
        let r = rl(&mut con, args);
        let t1 = server_time_ms(&mut con);
        let gcra = args[0] == "RL.GCRA";
        let allowed = if gcra { r[0] == 0 } else { r[0] == 1 };
        match expect {
            Set => {
                let change = args.contains(&"3");
                assert!(allowed || change, "{args:?} should be allowed: {r:?}");
                let c = tap
                    .next_command(Duration::from_secs(5))
                    .unwrap_or_else(|| panic!("{args:?}: nothing propagated"));
                let c = if c[0].eq_ignore_ascii_case("MULTI") {
                    tap.next_command(Duration::from_secs(5))
                        .expect("after MULTI")
                } else {
                    c
                };
                assert_eq!(c[1], args[1], "{c:?}");
                // The contract: `RL._SET key kind:n:limits…:pxat_ms` (one packed
                // state argument, cheap to build on the hot path), or the call
                // itself with that state appended to its first parameter.
                let state = if c[0].eq_ignore_ascii_case("RL._SET") {
                    if c.len() != 3 {
                        layout_violations.push(format!("{args:?} -> {c:?}"));
                    }
                    c[2..].join(":")
                } else {
                    assert!(c[0].eq_ignore_ascii_case(args[0]), "{args:?}: {c:?}");
                    assert_eq!(c.len(), args.len(), "{args:?}: {c:?}");
                    assert_eq!(c[3..], args[3..], "{args:?}: {c:?}");
                    let (first, state) = c[2]
                        .split_once('@')
                        .unwrap_or_else(|| panic!("{args:?} propagated without its effect: {c:?}"));
                    assert_eq!(first, args[2], "{c:?}");
                    state.to_string()
                };
                let fields: Vec<String> = state.split(':').map(String::from).collect();
                let n: usize = fields[1].parse().expect("count");
                let per = if args[0] == "RL.WINDOW" { 4 } else { 5 };
                assert_eq!(fields.len(), 3 + per * n, "kind n limits… pxat: {c:?}");
                let kind = kinds
                    .entry(args[0])
                    .or_insert_with(|| fields[0].clone())
                    .clone();
                assert_eq!(fields[0], kind, "{args:?}: kind changed: {c:?}");
                let pxat: i64 = fields[fields.len() - 1].parse().expect("pxat integer");
                let (reset, tol) = if gcra { (r[4] * 1000, 1000) } else { (r[3], 2) };
                if reset == -1 {
                    assert_eq!(pxat, -1, "{args:?}: never idle, no expiry: {c:?}");
                } else {
                    assert!(
                        pxat >= t0 + reset - tol && pxat <= t1 + reset + tol,
                        "{args:?}: pxat {pxat} not near {t0}..{t1} + reset {reset}: {c:?}"
                    );
                }
                // Only one command per call.
                {
                    let more = tap.drain(Duration::from_millis(50));
                    let more: Vec<_> = more
                        .into_iter()
                        .filter(|c| !c[0].eq_ignore_ascii_case("EXEC"))
                        .collect();
                    assert!(more.is_empty(), "{args:?} propagated more: {more:?}");
                }
            }
            Nothing => {
                let got = tap.drain(Duration::from_millis(300));
                assert!(got.is_empty(), "{args:?} ({r:?}) propagated {got:?}");
            }
        }
    }
    let distinct: std::collections::BTreeSet<&String> = kinds.values().collect();
    assert_eq!(distinct.len(), 4, "one kind per command: {kinds:?}");
    assert!(!exists(&mut con, "rinf"));

    // Waits on replication offsets (the tap never acknowledges one, so it is not counted).
    master.sync_replicas(1);
    let mut rcon = replica.conn();
    assert_eq!(
        db_digest(&mut rcon),
        db_digest(&mut con),
        "DEBUG DIGEST differs between master and replica"
    );
    for k in ["rt", "rz", "rl", "rw", "rg", "rm", "rwm"] {
        assert_eq!(key_type(&mut rcon, k), "warden-rl", "replica TYPE {k}");
        assert_eq!(digest(&mut rcon, k), digest(&mut con, k), "digest {k}");
    }
    assert_eq!(pttl(&mut rcon, "rz"), -1);
    replica.assert_alive();
    master.assert_alive();
    assert!(
        layout_violations.is_empty(),
        "RL._SET must be `RL._SET key kind:n:limits…:pxat_ms` (3 arguments); got:\n{}",
        layout_violations.join("\n")
    );
}

/// `RL.WINDOW p:windows` with two limits (10 an hour, 4 a day) and `COST cost`.
fn windows_call(cost: &'static str) -> [&'static str; 8] {
    [
        "RL.WINDOW",
        "p:windows",
        "10",
        "3600000",
        "4",
        "1d",
        "COST",
        cost,
    ]
}
