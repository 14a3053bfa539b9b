//! Clients blocked in `DLOCK.ACQUIRE … WAIT 0` while the server changes under
//! them: FLUSHALL / FLUSHDB, SWAPDB, CLIENT UNBLOCK, CLIENT KILL, the master
//! becoming a replica, and (in a cluster) the lock's slot moving to another
//! node. Every waiter must get a reply — a token, nil, or a clear error — and
//! none may hang; `locks_waiting` must return to 0; and a waiter that is
//! granted the lock must really hold it where its key lives.

use crate::common::cluster::*;
use crate::common::waiter::{lock_args, Answer, RawConn, Reply, Steps, Waiter};
use crate::common::*;
use crate::lock::support::{release, wait_waiting_for, waiting};

use std::time::{Duration, Instant};

/// A waiter that has no reply after this long is hung.
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Lease of the lock the waiters queue behind: long enough that it never
/// ends during a test, so only the event under test can wake them.
const HOLDER_TTL: i64 = 60_000;
const WAITERS: usize = 5;

// ---------------------------------------------------------------------------------------
// Waiters
// ---------------------------------------------------------------------------------------

/// What a blocked `DLOCK.ACQUIRE` answered.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Granted(i64),
    Nil,
    /// An error reply (code and message).
    Error(String),
    /// The connection was closed without a reply.
    Closed(String),
    /// No reply within `READ_TIMEOUT`.
    Hung,
    /// Some other reply.
    Other(String),
}

#[derive(Debug)]
struct Report {
    owner: String,
    outcome: Outcome,
    /// After a grant: the owner `DLOCK.INFO` shows on the waiter's own
    /// connection (or the error it got), before releasing.
    info_owner: Option<Result<Option<String>, String>>,
    /// After a grant: the reply to `DLOCK.RELEASE` (or the error).
    release: Option<Result<i64, String>>,
    at: Instant,
}

/// The owner in a DLOCK.INFO reply read on a raw connection.
fn owner_in(r: &Reply) -> Option<String> {
    let Reply::Array(items) = r else {
        return None;
    };
    items.chunks(2).find_map(|c| match (&c[0], c.get(1)) {
        (Reply::Bulk(k), Some(Reply::Bulk(o))) if k == b"owner" => {
            Some(String::from_utf8_lossy(o).into_owned())
        }
        _ => None,
    })
}

/// A waiter's answer as a report.
fn report_of(a: Answer) -> Report {
    let outcome = match &a.reply {
        Reply::Int(t) => Outcome::Granted(*t),
        Reply::Nil => Outcome::Nil,
        Reply::Error(e) => Outcome::Error(e.clone()),
        Reply::Closed(e) => Outcome::Closed(e.clone()),
        Reply::Silent => Outcome::Hung,
        other => Outcome::Other(format!("{other:?}")),
    };
    let info_owner = a.then.first().map(|r| match r {
        Reply::Error(e) => Err(e.clone()),
        r => Ok(owner_in(r)),
    });
    let release = a.then.get(1).map(|r| match r {
        Reply::Int(n) => Ok(*n),
        other => Err(format!("{other:?}")),
    });
    Report {
        owner: a.name,
        outcome,
        info_owner,
        release,
        at: a.at,
    }
}

fn owner_of(v: &Value) -> Option<String> {
    let Value::Array(items) = v else {
        return None;
    };
    items.chunks(2).find_map(|c| match (&c[0], c.get(1)) {
        (Value::BulkString(k), Some(Value::BulkString(o))) if k == b"owner" => {
            Some(String::from_utf8_lossy(o).into_owned())
        }
        _ => None,
    })
}

/// A client of database `db` on `port` blocked in `DLOCK.ACQUIRE key owner ttl WAIT
/// 0` (silent `READ_TIMEOUT` long, it is hung); once granted it reads `DLOCK.INFO`
/// and releases, so the next waiter can be served. Returns its CLIENT ID too.
fn spawn_db_waiter(port: u16, db: i64, key: &str, owner: &str, ttl: i64) -> (i64, Waiter) {
    let mut conn = RawConn::open(port);
    if db != 0 {
        let selected = conn.call(&["SELECT", &db.to_string()]);
        assert_eq!(selected, Reply::Status("OK".into()), "SELECT {db}");
    }
    let id = conn.client_id();
    let steps = Steps {
        timeout: READ_TIMEOUT,
        then: vec![
            words(&["DLOCK.INFO", key]),
            words(&["DLOCK.RELEASE", key, owner]),
        ],
    };
    let args = lock_args(key, owner, ttl, 0, &[]);
    (id, Waiter::send_steps(conn, owner, &args, steps))
}

/// `holder` takes `key` on `con`; then `WAITERS` waiters queue behind it, in
/// order (each one is blocked before the next is started).
fn queue_waiters(
    con: &mut Connection,
    port: u16,
    db: i64,
    key: &str,
    tag: &str,
) -> Vec<(i64, Waiter)> {
    let t: Option<i64> = query!(con, "DLOCK.ACQUIRE", key, "holder", HOLDER_TTL);
    assert!(t.is_some(), "{tag}: the holder got the lock");
    let base = waiting(con);
    (0..WAITERS)
        .map(|i| {
            let w = spawn_db_waiter(port, db, key, &format!("{tag}-w{i}"), 5000);
            wait_waiting_for(con, base + i as i64 + 1, tag);
            w
        })
        .collect()
}

/// One line per waiter: its outcome, and what it saw after a grant.
fn show_reports(reports: &[Report]) -> String {
    let first = reports.iter().map(|r| r.at).min();
    reports
        .iter()
        .map(|r| {
            let after = first.map_or(0, |f| r.at.duration_since(f).as_millis());
            let mut line = format!("  {}: {:?} (+{after} ms)", r.owner, r.outcome);
            if let Some(i) = &r.info_owner {
                line.push_str(&format!(", DLOCK.INFO owner {i:?}"));
            }
            if let Some(rel) = &r.release {
                line.push_str(&format!(", DLOCK.RELEASE {rel:?}"));
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Each waiter's report, in queue order.
fn join_waiters(waiters: Vec<(i64, Waiter)>) -> Vec<Report> {
    waiters
        .into_iter()
        .map(|(_, w)| report_of(w.join()))
        .collect()
}

/// Fails if any waiter hung; shows every outcome.
fn assert_none_hung(reports: &[Report], what: &str) {
    let hung: Vec<&str> = reports
        .iter()
        .filter(|r| r.outcome == Outcome::Hung)
        .map(|r| r.owner.as_str())
        .collect();
    assert!(
        hung.is_empty(),
        "{what}: waiters {hung:?} got no reply within {READ_TIMEOUT:?}; all:\n{}",
        show_reports(reports)
    );
}

/// A granted waiter saw itself as the owner in DLOCK.INFO and released it.
fn assert_grants_consistent(reports: &[Report], what: &str) {
    for r in reports {
        if let Outcome::Granted(t) = r.outcome {
            assert_eq!(
                r.info_owner,
                Some(Ok(Some(r.owner.clone()))),
                "{what}: {} was granted token {t} but DLOCK.INFO on its connection disagrees",
                r.owner
            );
            assert_eq!(
                r.release,
                Some(Ok(1)),
                "{what}: {} could not release the lock it was granted",
                r.owner
            );
        }
    }
}

/// Granted waiters were served in arrival order with increasing tokens.
fn assert_fifo(reports: &[Report], what: &str) {
    let granted: Vec<(i64, Instant)> = reports
        .iter()
        .filter_map(|r| match r.outcome {
            Outcome::Granted(t) => Some((t, r.at)),
            _ => None,
        })
        .collect();
    for w in granted.windows(2) {
        assert!(
            w[0].0 < w[1].0 && w[0].1 <= w[1].1,
            "{what}: grants out of order:\n{}",
            show_reports(reports)
        );
    }
}

fn lock_owner(con: &mut Connection, key: &str) -> Option<String> {
    let v: Value = query!(con, "DLOCK.INFO", key);
    owner_of(&v)
}

fn client_kill(con: &mut Connection, id: i64) {
    let n: i64 = query!(con, "CLIENT", "KILL", "ID", id);
    assert_eq!(n, 1, "CLIENT KILL ID {id}");
}

// ---------------------------------------------------------------------------------------
// Single server
// ---------------------------------------------------------------------------------------

/// FLUSHALL / FLUSHDB (sync and async) delete the held lock: every waiter is
/// then served, oldest first, each releasing in turn.
#[test]
fn flush_serves_every_waiter_in_order() {
    let (server, mut con) = Server::start_conn();
    for flush in [
        &["FLUSHALL"][..],
        &["FLUSHALL", "ASYNC"],
        &["FLUSHDB"],
        &["FLUSHDB", "ASYNC"],
    ] {
        let what = flush.join(" ");
        let key = "flush:lock";
        let waiters = queue_waiters(&mut con, server.port, 0, key, &what.replace(' ', "-"));
        let _: () = query!(&mut con, flush[0], &flush[1..]);
        let reports = join_waiters(waiters);
        assert_none_hung(&reports, &what);
        assert!(
            reports
                .iter()
                .all(|r| matches!(r.outcome, Outcome::Granted(_))),
            "{what}: every waiter must get the lock in turn:\n{}",
            show_reports(&reports)
        );
        assert_grants_consistent(&reports, &what);
        assert_fifo(&reports, &what);
        wait_waiting_for(&mut con, 0, &what);
        assert_eq!(
            lock_owner(&mut con, key),
            None,
            "{what}: lock free at the end"
        );
        assert_eq!(
            release(&mut con, key, "holder"),
            0,
            "{what}: holder lost it"
        );
    }
    let mut s = server;
    s.assert_alive();
}

/// SWAPDB 0 1 takes the held lock out of db 0 (it is now in db 1, still
/// held): the waiters in db 0 wait for a lock that is free now. Each must get
/// a reply; one that is granted must hold the lock in db 0; the holder keeps
/// its lock in db 1.
#[test]
fn swapdb_answers_every_waiter() {
    let (server, mut con) = Server::start_conn();
    let key = "swap:lock";
    let waiters = queue_waiters(&mut con, server.port, 0, key, "swapdb");
    let swapped_at = Instant::now();
    let _: () = query!(&mut con, "SWAPDB", 0, 1);
    let reports = join_waiters(waiters);
    let longest = reports
        .iter()
        .map(|r| r.at.saturating_duration_since(swapped_at))
        .max();
    assert_none_hung(&reports, "SWAPDB 0 1");
    assert_grants_consistent(&reports, "SWAPDB 0 1");
    assert_fifo(&reports, "SWAPDB 0 1");
    wait_waiting_for(&mut con, 0, "SWAPDB 0 1");
    let _: () = query!(&mut con, "SELECT", 1);
    assert_eq!(
        lock_owner(&mut con, key).as_deref(),
        Some("holder"),
        "the holder's lock moved to db 1 and is still held"
    );
    eprintln!("SWAPDB: last waiter answered {longest:?} after the swap");
    let mut s = server;
    s.assert_alive();
}

/// CLIENT UNBLOCK answers a waiter nil (as a timeout would), CLIENT UNBLOCK …
/// ERROR answers it -UNBLOCKED; both leave the queue, and the others are
/// served in order when the holder releases.
#[test]
fn client_unblock_answers_the_waiter() {
    let (server, mut con) = Server::start_conn();
    let key = "unblock:lock";
    let waiters = queue_waiters(&mut con, server.port, 0, key, "unblock");
    let (w1, w3) = (waiters[1].0, waiters[3].0);
    let n: i64 = query!(&mut con, "CLIENT", "UNBLOCK", w1);
    assert_eq!(n, 1, "CLIENT UNBLOCK of a blocked DLOCK.ACQUIRE");
    wait_waiting_for(&mut con, 4, "after CLIENT UNBLOCK");
    let n: i64 = query!(&mut con, "CLIENT", "UNBLOCK", w3, "ERROR");
    assert_eq!(n, 1, "CLIENT UNBLOCK ERROR of a blocked DLOCK.ACQUIRE");
    wait_waiting_for(&mut con, 3, "after CLIENT UNBLOCK ERROR");
    assert_eq!(release(&mut con, key, "holder"), 1);
    let reports = join_waiters(waiters);
    assert_none_hung(&reports, "CLIENT UNBLOCK");
    assert_eq!(reports[1].outcome, Outcome::Nil, "CLIENT UNBLOCK → nil");
    assert!(
        matches!(&reports[3].outcome, Outcome::Error(e) if e.starts_with("UNBLOCKED")),
        "CLIENT UNBLOCK ERROR → -UNBLOCKED, got {:?}",
        reports[3].outcome
    );
    for i in [0, 2, 4] {
        assert!(
            matches!(reports[i].outcome, Outcome::Granted(_)),
            "waiter {i} must be served after the release:\n{}",
            show_reports(&reports)
        );
    }
    assert_grants_consistent(&reports, "CLIENT UNBLOCK");
    assert_fifo(&reports, "CLIENT UNBLOCK");
    wait_waiting_for(&mut con, 0, "CLIENT UNBLOCK");
    assert_eq!(lock_owner(&mut con, key), None, "lock free at the end");
    let mut s = server;
    s.assert_alive();
}

/// CLIENT KILL of waiters (the oldest and one in the middle) removes them;
/// the lock is never handed to a killed client. Killing every waiter leaves
/// a released lock free.
#[test]
fn client_kill_of_waiters() {
    let (server, mut con) = Server::start_conn();
    let key = "kill:lock";
    let waiters = queue_waiters(&mut con, server.port, 0, key, "kill");
    client_kill(&mut con, waiters[0].0);
    client_kill(&mut con, waiters[3].0);
    wait_waiting_for(&mut con, 3, "after two CLIENT KILLs");
    assert_eq!(release(&mut con, key, "holder"), 1);
    let reports = join_waiters(waiters);
    assert_none_hung(&reports, "CLIENT KILL");
    for i in [0, 3] {
        assert!(
            matches!(reports[i].outcome, Outcome::Closed(_)),
            "killed waiter {i}: {:?}",
            reports[i].outcome
        );
    }
    for i in [1, 2, 4] {
        assert!(
            matches!(reports[i].outcome, Outcome::Granted(_)),
            "waiter {i} must be served:\n{}",
            show_reports(&reports)
        );
    }
    assert_grants_consistent(&reports, "CLIENT KILL");
    assert_fifo(&reports, "CLIENT KILL");
    wait_waiting_for(&mut con, 0, "CLIENT KILL");
    assert_eq!(lock_owner(&mut con, key), None);

    // Every waiter killed: the release leaves the lock free.
    let waiters = queue_waiters(&mut con, server.port, 0, key, "kill-all");
    for (id, _) in &waiters {
        client_kill(&mut con, *id);
    }
    wait_waiting_for(&mut con, 0, "after killing every waiter");
    assert_eq!(release(&mut con, key, "holder"), 1);
    assert_eq!(
        lock_owner(&mut con, key),
        None,
        "no grant to a killed waiter"
    );
    let reports = join_waiters(waiters);
    assert!(
        reports
            .iter()
            .all(|r| matches!(r.outcome, Outcome::Closed(_))),
        "\n{}",
        show_reports(&reports)
    );
    let mut s = server;
    s.assert_alive();
}

/// A master with waiters becomes a replica (REPLICAOF another server): each
/// waiter gets an -UNBLOCKED error, none is granted, and none stays queued.
#[test]
fn becoming_a_replica_unblocks_waiters() {
    let master = Server::start();
    let other = Server::start();
    let mut con = master.conn();
    let key = "role:lock";
    let waiters = queue_waiters(&mut con, master.port, 0, key, "role");
    let _: () = query!(&mut con, "REPLICAOF", "127.0.0.1", other.port);
    let reports = join_waiters(waiters);
    assert_none_hung(&reports, "REPLICAOF");
    for r in &reports {
        assert!(
            matches!(&r.outcome, Outcome::Error(e) if e.starts_with("UNBLOCKED")),
            "{}: expected -UNBLOCKED, got {:?}",
            r.owner,
            r.outcome
        );
    }
    wait_waiting_for(&mut con, 0, "REPLICAOF");
    let up = master_link_up(&mut con);
    assert!(up, "replica link never came up");
    assert_eq!(
        lock_owner(&mut con, key),
        None,
        "synced from an empty master"
    );
    let _: () = query!(&mut con, "REPLICAOF", "NO", "ONE");
    let t: Option<i64> = query!(&mut con, "DLOCK.ACQUIRE", key, "again", 1000);
    assert!(t.is_some());
    let mut m = master;
    m.assert_alive();
}

// ---------------------------------------------------------------------------------------
// Cluster: the lock's slot moves away while clients wait on it
// ---------------------------------------------------------------------------------------

/// A slot move done while waiters were blocked on the old owner.
struct SlotMove<'a> {
    what: &'a str,
    src: usize,
    dst: usize,
    key: &'a str,
    /// `CLUSTER SETSLOT … NODE` replies, by node.
    setslot: Vec<(usize, String)>,
    /// Whether the holder's lock moved with the key (MIGRATE).
    holder_kept: bool,
}

/// After the slot of `key` moved from `src` to `dst` while waiters were
/// blocked on `src`: every waiter answered, none was granted the lock by
/// `src`, redirects name `dst`, `src` keeps no key of the slot, and nobody is
/// queued on `src` any more.
fn check_after_slot_move(cluster: &Cluster, m: &SlotMove, reports: &[Report]) {
    let SlotMove {
        what,
        src,
        dst,
        key,
        ref setslot,
        holder_kept,
    } = *m;
    let slot = key_slot(key.as_bytes());
    eprintln!("{what}: outcomes:\n{}", show_reports(reports));
    assert_none_hung(reports, what);
    let mut owner_con = cluster.following(src);
    let owner_now: Value = owner_con
        .query(cmd("DLOCK.INFO").arg(key))
        .unwrap_or_else(|e| panic!("{what}: DLOCK.INFO via the owner: {}", err_text(&e)));
    let owner_now = owner_of(&owner_now);
    if holder_kept {
        assert_eq!(
            owner_now.as_deref(),
            Some("holder"),
            "{what}: the holder's lock moved with its key"
        );
    }
    let granted: Vec<String> = reports
        .iter()
        .filter_map(|r| match r.outcome {
            Outcome::Granted(t) => Some(format!(
                "{} got token {t} from node {src} (DLOCK.INFO there: {:?}, release: {:?})",
                r.owner, r.info_owner, r.release
            )),
            _ => None,
        })
        .collect();
    let why = if holder_kept {
        "the holder still holds it on the slot's new owner"
    } else {
        "that node dropped the slot's keys and cannot serve the key any more"
    };
    assert!(
        granted.is_empty(),
        "{what}: waiters were granted the lock by node {src}, which gave slot {slot} away; \
         {why} (DLOCK.INFO at the owner now: {owner_now:?}):\n{}\n\
         CLUSTER SETSLOT replies: {setslot:?}\nall outcomes:\n{}",
        granted.join("\n"),
        show_reports(reports)
    );
    // A redirect must send the waiter to the slot's new owner.
    let dst_port = cluster.servers[dst].port;
    for r in reports {
        if let Outcome::Error(e) = &r.outcome {
            if e.starts_with("MOVED ") || e.starts_with("ASK ") {
                let want = format!("{slot} 127.0.0.1:{dst_port}");
                assert!(
                    e.ends_with(&want),
                    "{what}: {} was redirected with {e:?}, expected … {want}",
                    r.owner
                );
            }
        }
    }
    let mut s = cluster.conn(src);
    let left: i64 = query!(&mut s, "CLUSTER", "COUNTKEYSINSLOT", slot);
    assert_eq!(
        left,
        0,
        "{what}: node {src} keeps {left} key(s) in slot {slot}, which it no longer owns \
         (CLUSTER SETSLOT replies: {setslot:?}; outcomes:\n{})",
        show_reports(reports)
    );
    let ok = wait_until(Duration::from_secs(5), || waiting(&mut s) == 0);
    assert!(
        ok,
        "{what}: node {src} still counts {} waiting client(s)",
        waiting(&mut s)
    );
    for (i, r) in setslot {
        assert!(
            r == "OK",
            "{what}: CLUSTER SETSLOT {slot} NODE on node {i}: {r}"
        );
    }
}

/// (1) Resharding: the lock key is MIGRATEd to another master and the slot
/// assigned to it (`SETSLOT … NODE` on every master). (2) Takeover: another
/// master claims the slot (`SETSLOT IMPORTING` + `SETSLOT NODE` on it only);
/// the old owner learns it by gossip and drops its keys. In both, the waiters
/// blocked on the old owner must get a reply and must not be granted a lock
/// there.
#[test]
fn slot_move_answers_waiters() {
    let cluster = Cluster::start();
    let masters = cluster.masters();
    let mut failures = Vec::new();

    scenario(&mut failures, "MIGRATE + SETSLOT NODE", || {
        let (src, dst) = (masters[0], masters[1]);
        let tag = cluster.tag_on("bmig", src, &[]);
        let key = format!("{tag}lock");
        let slot = key_slot(key.as_bytes());
        let mut con = cluster.conn(src);
        let waiters = queue_waiters(&mut con, cluster.servers[src].port, 0, &key, "mig");
        cluster.begin_slot_move(slot, src, dst);
        let r = cluster.migrate_keys(src, dst, &[key.as_bytes()]);
        assert!(r.is_ok(), "MIGRATE: {r:?}");
        let setslot: Vec<(usize, String)> = cluster
            .assign_slot(slot, dst)
            .into_iter()
            .map(|(i, r)| (i, r.map_or_else(|e| e.to_string(), |()| "OK".to_string())))
            .collect();
        let reports = join_waiters(waiters);
        let m = SlotMove {
            what: "MIGRATE",
            src,
            dst,
            key: &key,
            setslot,
            holder_kept: true,
        };
        check_after_slot_move(&cluster, &m, &reports);
    });

    scenario(&mut failures, "SETSLOT NODE takeover", || {
        let (src, dst) = (masters[2], masters[0]);
        let tag = cluster.tag_on("btake", src, &[]);
        let key = format!("{tag}lock");
        let slot = key_slot(key.as_bytes());
        let mut con = cluster.conn(src);
        let waiters = queue_waiters(&mut con, cluster.servers[src].port, 0, &key, "take");
        let src_id = cluster.node_id(src);
        let dst_id = cluster.node_id(dst);
        let mut d = cluster.conn(dst);
        let _: () = query!(&mut d, "CLUSTER", "SETSLOT", slot, "IMPORTING", &src_id);
        let r: redis::RedisResult<()> = cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg("NODE")
            .arg(&dst_id)
            .query(&mut d);
        let setslot = vec![(dst, r.map_or_else(|e| e.to_string(), |()| "OK".to_string()))];
        assert!(
            cluster.wait_slot_owner(slot, dst, Duration::from_secs(10)),
            "the takeover of slot {slot} never spread:\n{}",
            cluster.describe()
        );
        let reports = join_waiters(waiters);
        let m = SlotMove {
            what: "takeover",
            src,
            dst,
            key: &key,
            setslot,
            holder_kept: false,
        };
        check_after_slot_move(&cluster, &m, &reports);
    });

    report("blocking scenarios", failures);
}
