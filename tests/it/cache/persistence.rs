//! Cache entries survive and travel: RDB restart, AOF rewrite and replay,
//! DUMP/RESTORE, COPY, a replica (digest-equal, same lease), a promoted
//! replica refusing a voided lease, and a replication stream that carries
//! absolute times only (a read that changes nothing sends nothing).

use crate::cache::support::*;
use crate::common::waiter::Waiter;
use crate::common::*;

use std::thread::sleep;
use std::time::Duration;

/// A workload touching every kind of entry: fresh with a version, stale
/// with a lease, lease-only (a miss), and hot-extended.
fn workload(con: &mut Connection) -> (i64, i64) {
    cache_set(
        con,
        "fresh",
        "v1",
        600_000,
        &["STALE", "60000", "VERSION", "7"],
    );
    cache_set(con, "stale", "old", 50, &["STALE", "600000"]);
    sleep(Duration::from_millis(80));
    let (_, stale_lease) = get_lease(con, "stale", 600_000, &[]);
    let (_, miss_lease) = get_lease(con, "miss", 600_000, &[]);
    cache_set(con, "hot", "h", 1_000, &[]);
    for _ in 0..3 {
        cache_get(con, "hot", &["HOT", "2", "10000", "EXTEND", "900000"]);
    }
    cache_set(con, "binary", "\u{0}\r\n\u{ff}", 600_000, &[]);
    (stale_lease, miss_lease)
}

/// What a client sees of the workload's keys.
fn snapshot(con: &mut Connection) -> Vec<String> {
    ["fresh", "stale", "miss", "hot", "binary"]
        .iter()
        .map(|k| {
            let info = cache_info(con, k).map(|mut i| {
                // Times left move with the clock: keep the nearest minute (past: -1).
                for f in ["fresh_ms", "stale_ms"] {
                    let v = i[f];
                    i.insert(f.into(), if v <= 0 { -1 } else { (v + 30_000) / 60_000 });
                }
                // HOT read counts are the master's working state: not persisted.
                i.remove("reads");
                let mut fields: Vec<_> = i.into_iter().collect();
                fields.sort();
                fields
            });
            format!("{k}: {:?} {info:?}", cache_get(con, k, &[]))
        })
        .collect()
}

#[test]
fn rdb_restart_keeps_every_entry() {
    let (mut s, mut con) = Server::start_conn();
    let (stale_lease, miss_lease) = workload(&mut con);
    let before = snapshot(&mut con);
    let digest_before = db_digest(&mut con);
    s.restart("SAVE");
    let mut con = s.conn();
    assert_eq!(snapshot(&mut con), before);
    assert_eq!(db_digest(&mut con), digest_before);
    assert_eq!(cache_info(&mut con, "stale").unwrap()["lease"], stale_lease);
    // The lease survived: only its token may set.
    assert_eq!(
        cache_set(
            &mut con,
            "miss",
            "x",
            1_000,
            &["LEASE", &(miss_lease + 1).to_string()]
        ),
        0
    );
    assert_eq!(refresh(&mut con, "miss", "x", 1_000, miss_lease), 1);
    // The fencing clock moved past the loaded tokens.
    let (_, next) = get_lease(&mut con, "new", 1_000, &[]);
    assert!(next > stale_lease.max(miss_lease));
}

#[test]
fn debug_reload_keeps_every_entry() {
    let (_s, mut con) = Server::start_conn();
    workload(&mut con);
    let before = snapshot(&mut con);
    let _: () = query!(&mut con, "DEBUG", "RELOAD");
    assert_eq!(snapshot(&mut con), before);
}

#[test]
fn aof_rewrite_and_replay_keep_every_entry_with_absolute_times() {
    let mut s = Server::start_with(&["--appendonly", "yes"], &[]);
    let mut con = s.conn();
    workload(&mut con);
    let before = snapshot(&mut con);
    let digest_before = db_digest(&mut con);
    let expiries: Vec<i64> = ["fresh", "stale", "miss", "hot"]
        .iter()
        .map(|k| pexpiretime(&mut con, *k))
        .collect();
    // Replayed from the AOF as written (effects), then from a rewrite.
    s.restart("NOSAVE");
    let mut con = s.conn();
    assert_eq!(snapshot(&mut con), before);
    assert_eq!(db_digest(&mut con), digest_before);
    s.bgrewriteaof();
    s.restart("NOSAVE");
    let mut con = s.conn();
    assert_eq!(snapshot(&mut con), before);
    assert_eq!(db_digest(&mut con), digest_before);
    let after: Vec<i64> = ["fresh", "stale", "miss", "hot"]
        .iter()
        .map(|k| pexpiretime(&mut con, *k))
        .collect();
    assert_eq!(after, expiries, "expiry times are absolute");
}

#[test]
fn dump_restore_and_copy_keep_an_entry() {
    let (_s, mut con) = Server::start_conn();
    workload(&mut con);
    for key in ["fresh", "stale", "miss", "binary"] {
        let payload = dump(&mut con, key);
        let copy = format!("{key}:restored");
        let at = pexpiretime(&mut con, key);
        let _: () = query!(&mut con, "RESTORE", &copy, at, &payload, "ABSTTL");
        assert_eq!(digest(&mut con, &copy), digest(&mut con, key), "{key}");
        let copied = format!("{key}:copied");
        let n: i64 = query!(&mut con, "COPY", key, &copied);
        assert_eq!(n, 1);
        assert_eq!(digest(&mut con, &copied), digest(&mut con, key), "{key}");
        assert_eq!(
            cache_get(&mut con, &copied, &[]),
            cache_get(&mut con, key, &[])
        );
    }
}

#[test]
fn a_replica_holds_the_same_entries_and_leases() {
    let (master, replica, mut m) = Server::start_replicated();
    let (stale_lease, _) = workload(&mut m);
    master.sync_replicas(1);
    let mut r = replica.conn();
    assert_eq!(db_digest(&mut r), db_digest(&mut m));
    assert_eq!(cache_info(&mut r, "stale").unwrap()["lease"], stale_lease);
    assert!(
        cache_info(&mut r, "hot").unwrap()["fresh_ms"] > 800_000,
        "the HOT extension replicated"
    );
    // CACHE.GET is a write command (it may take a lease): a read-only replica refuses it.
    let e = cmd("CACHE.GET")
        .arg("binary")
        .query::<Value>(&mut r)
        .unwrap_err();
    assert!(err_text(&e).starts_with("READONLY"), "{e}");
    // Reads that change nothing leave the replica's state alone.
    for _ in 0..10 {
        cache_get(&mut m, "fresh", &[]);
        get_lease(&mut m, "stale", 1_000, &[]);
    }
    master.sync_replicas(1);
    assert_eq!(db_digest(&mut r), db_digest(&mut m));
}

#[test]
fn a_promoted_replica_still_refuses_a_voided_lease() {
    let (master, replica, mut m) = Server::start_replicated();
    let (_, old) = get_lease(&mut m, "k", 600_000, &[]);
    cache_set(&mut m, "k", "invalidated", 600_000, &["VERSION", "3"]);
    let (_, current) = get_lease(&mut m, "k", 600_000, &["MINVERSION", "4"]);
    master.sync_replicas(1);
    let mut r = replica.conn();
    let _: () = query!(&mut r, "REPLICAOF", "NO", "ONE");
    assert_eq!(refresh(&mut r, "k", "stale write", 1_000, old), 0);
    assert_eq!(
        cache_set(
            &mut r,
            "k",
            "older",
            1_000,
            &["VERSION", "2", "LEASE", &current.to_string()]
        ),
        0
    );
    assert_eq!(
        cache_set(
            &mut r,
            "k",
            "v4",
            1_000,
            &["VERSION", "4", "LEASE", &current.to_string()]
        ),
        1
    );
    let (_, next) = get_lease(&mut r, "other", 1_000, &[]);
    assert!(next > current, "tokens keep increasing after promotion");
}

/// The commands propagated before the marker (MULTI/EXEC left out).
fn step(tap: &mut ReplicationTap, con: &mut Connection, label: &str) -> Vec<Vec<String>> {
    without_multi_exec(tap.until_marker(con, "__tap_mark__", label))
}

/// The `version:fresh_until:stale_until:lease:lease_until` fields of a
/// replicated cache effect.
fn meta_of(c: &[String]) -> Vec<i64> {
    let text = match c[0].to_ascii_uppercase().as_str() {
        "CACHE._SET" => c[3].clone(),
        "CACHE._META" => c[2].clone(),
        "CACHE.SET" => c[3].split_once('@').expect("ttl@meta").1.to_string(),
        other => panic!("not a cache effect: {other} {c:?}"),
    };
    text.split(':')
        .map(|f| f.parse().expect("integer field"))
        .collect()
}

#[test]
fn the_stream_carries_absolute_times_and_nothing_for_plain_reads() {
    let master = Server::start();
    let mut tap = master.replication_tap();
    let mut m = master.conn();
    step(&mut tap, &mut m, "start");
    let t0 = server_time_ms(&mut m);
    cache_set(&mut m, "k", "v", 10_000, &["STALE", "5000", "VERSION", "2"]);
    let sent = step(&mut tap, &mut m, "set");
    assert_eq!(sent.len(), 1, "{sent:?}");
    let meta = meta_of(&sent[0]);
    assert_eq!(meta[0], 2);
    assert!(
        (t0 + 10_000..t0 + 10_500).contains(&meta[1]),
        "absolute fresh end: {meta:?}"
    );
    assert_eq!(meta[2] - meta[1], 5_000);
    assert_eq!(&meta[3..], [0, 0]);
    // Reads that change nothing send nothing.
    cache_get(&mut m, "k", &[]);
    cache_get(&mut m, "k", &["HOT", "100", "1000", "EXTEND", "60000"]);
    get_lease(&mut m, "k", 1_000, &[]);
    cache_get(&mut m, "missing", &[]);
    let _: Value = query!(&mut m, "CACHE.INFO", "k");
    assert_eq!(step(&mut tap, &mut m, "reads"), Vec::<Vec<String>>::new());
    // A lease on a miss: the lease-only entry with its absolute end.
    let (_, token) = get_lease(&mut m, "miss", 3_000, &[]);
    let sent = step(&mut tap, &mut m, "lease");
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0][0].to_ascii_uppercase(), "CACHE._META");
    let meta = meta_of(&sent[0]);
    assert_eq!(meta[3], token);
    assert!(meta[4] >= t0 + 3_000, "absolute lease end: {meta:?}");
    // A hot extension: once per window, however many reads follow it.
    for _ in 0..20 {
        cache_get(&mut m, "k", &["HOT", "2", "1000", "EXTEND", "600000"]);
        sleep(Duration::from_millis(2)); // reads on different milliseconds
    }
    let sent = step(&mut tap, &mut m, "hot");
    assert_eq!(sent.len(), 1, "{sent:?}");
    let meta = meta_of(&sent[0]);
    assert!(meta[1] >= t0 + 600_000, "{meta:?}");
    // A refused SET sends nothing.
    cache_set(&mut m, "k", "older", 10_000, &["VERSION", "1"]);
    assert_eq!(step(&mut tap, &mut m, "refused"), Vec::<Vec<String>>::new());
}

/// Red team: an AOF rewrite without the RDB preamble keeps a key without a
/// TTL without one (the rewrite form leaves the expiry to Redis's PEXPIREAT).
#[test]
fn aof_rewrite_without_preamble_keeps_keys_without_ttl_so() {
    let mut s = Server::start_plain_aof();
    let mut con = s.conn();
    cache_set(&mut con, "persisted", "v", 30_000, &["STALE", "30000"]);
    let _: i64 = query!(&mut con, "PERSIST", "persisted");
    cache_set(&mut con, "timed", "v", 30_000, &["STALE", "30000"]);
    get_lease(&mut con, "lease-only", 60_000, &[]);
    let timed_at = pexpiretime(&mut con, "timed");
    let lease_at = pexpiretime(&mut con, "lease-only");
    let before = db_digest(&mut con);
    s.bgrewriteaof();
    s.restart("NOSAVE");
    let mut con = s.conn();
    assert_eq!(pttl(&mut con, "persisted"), -1);
    assert_eq!(pexpiretime(&mut con, "timed"), timed_at);
    assert_eq!(pexpiretime(&mut con, "lease-only"), lease_at);
    assert_eq!(db_digest(&mut con), before);
}

/// Writes the module makes by itself replicate too: a lease that ends and is
/// handed to the oldest waiter (a timer), and a SET that answers one waiter and
/// gives the next lease to another whose MINVERSION it does not meet.
#[test]
fn hand_offs_reach_the_replica() {
    let (master, replica, mut m) = Server::start_replicated();
    let (_, first) = get_lease(&mut m, "k", 200, &[]);
    let (value, handed) = Waiter::cache(&master, "k", "k", 0, 60_000, 10_000)
        .join()
        .lease();
    assert_eq!(value, None);
    assert!(handed > first, "the timer handed the lease over");
    master.sync_replicas(1);
    let mut r = replica.conn();
    assert_eq!(cache_info(&mut r, "k").unwrap()["lease"], handed);
    assert_eq!(db_digest(&mut r), db_digest(&mut m));

    let wants_v9 = Waiter::cache(&master, "wants v9", "k", 9, 60_000, 10_000);
    wait_for_waiters(&mut m, "k", 1);
    let plain = Waiter::cache(&master, "plain", "k", 0, 60_000, 10_000);
    wait_for_waiters(&mut m, "k", 2);
    let t = handed.to_string();
    assert_eq!(
        cache_set(&mut m, "k", "v3", 60_000, &["VERSION", "3", "LEASE", &t]),
        1
    );
    assert_eq!(plain.join().lease(), (Some("v3".into()), 0));
    let (_, next) = wants_v9.join().lease();
    assert!(next > handed);
    master.sync_replicas(1);
    let info = cache_info(&mut r, "k").unwrap();
    assert_eq!((info["version"], info["lease"]), (3, next));
    assert_eq!(db_digest(&mut r), db_digest(&mut m));
}
