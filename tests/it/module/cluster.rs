//! warden in Redis Cluster: routing of every command (MOVED, ASK), key
//! declarations (COMMAND INFO), MIGRATE of module values (clients waiting for a
//! cache refresh in the slot are sent to its new owner), and a manual failover
//! that must keep every lock and keep fencing tokens increasing.
//!
//! One cluster (3 masters, 1 replica each) serves all scenarios, run in order;
//! each scenario uses its own hash slots, and a failing one does not stop the
//! others: every failure is reported at the end.

use crate::cache::support::{cache_get, cache_info, cache_set, get_lease};
use crate::cache::support::{refresh_in_progress, wait_for_waiters};
use crate::common::cluster::*;
use crate::common::server_ops::assert_refresh_answers_a_waiter;
use crate::common::waiter::{assert_no_second_reply, join_all, Answer, Waiter};
use crate::common::*;
use crate::lock::support::{lock_info, parse_info, same_holder, set_holders, LockInfo};

use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn count_keys_in_slot(con: &mut Connection, slot: u16) -> i64 {
    cmd("CLUSTER")
        .arg("COUNTKEYSINSLOT")
        .arg(slot)
        .query(con)
        .expect("COUNTKEYSINSLOT")
}

/// Asserts `r` is the redirect `want`.
fn expect_redirect(r: redis::RedisResult<Value>, want: Redirect, what: &str) {
    match r {
        Ok(v) => panic!("{what}: expected {want:?}, got the reply {v:?}"),
        Err(e) => {
            let got = redirect_of(&e);
            assert_eq!(
                got,
                Some(want),
                "{what}: expected {want:?}, got the error {}",
                err_text(&e)
            );
        }
    }
}

/// One step of a command sequence: the command, whether it is read-only, and
/// a check of its reply.
struct Step {
    words: Vec<String>,
    readonly: bool,
    check: fn(&Value) -> bool,
    expect: &'static str,
}

/// Every public warden command, in an order in which each one succeeds, on
/// keys that share the hash tag `tag` (all of them unused before).
fn command_steps(tag: &str) -> Vec<Step> {
    let lock = format!("{tag}lock");
    let bf = format!("{tag}bf");
    let k = |s: &str| format!("{tag}{s}");
    let step = |w: Vec<String>, readonly, check, expect| Step {
        words: w,
        readonly,
        check,
        expect,
    };
    vec![
        step(
            words(&["DLOCK.ACQUIRE", &lock, "owner-1", "30000"]),
            false,
            |v| int_of(v).is_some_and(|t| t > 0),
            "a token",
        ),
        step(
            words(&["DLOCK.EXTEND", &lock, "owner-1", "30000"]),
            false,
            |v| int_of(v) == Some(1),
            "1",
        ),
        step(
            words(&["DLOCK.INFO", &lock]),
            true,
            |v| matches!(v, Value::Array(a) if a.len() == 10),
            "a 10-element array",
        ),
        step(
            words(&["DLOCK.RELEASE", &lock, "owner-1"]),
            false,
            |v| int_of(v) == Some(1),
            "1",
        ),
        step(
            words(&["BF.RESERVEX", &bf, "0.01", "1000"]),
            false,
            |v| text_of(v).as_deref() == Some("OK"),
            "OK",
        ),
        step(
            words(&["BF.ADDX", &bf, "a"]),
            false,
            |v| int_of(v) == Some(1),
            "1",
        ),
        step(
            words(&["BF.MADDX", &bf, "b", "c"]),
            false,
            |v| ints(v) == Some(vec![1, 1]),
            "[1, 1]",
        ),
        step(
            words(&["BF.EXISTSX", &bf, "a"]),
            true,
            |v| int_of(v) == Some(1),
            "1",
        ),
        step(
            words(&["BF.MEXISTSX", &bf, "a", "b"]),
            true,
            |v| ints(v) == Some(vec![1, 1]),
            "[1, 1]",
        ),
        step(
            words(&["BF.INSERTX", &bf, "ITEMS", "d", "e"]),
            false,
            |v| ints(v) == Some(vec![1, 1]),
            "[1, 1]",
        ),
        step(
            words(&["BF.INFOX", &bf]),
            true,
            |v| matches!(v, Value::Array(a) if !a.is_empty()) || matches!(v, Value::Map(_)),
            "a non-empty array",
        ),
        step(
            words(&["BF.CARDX", &bf]),
            true,
            |v| int_of(v) == Some(5),
            "5",
        ),
        step(
            words(&["RL.TOKEN", &k("rl1"), "10", "5"]),
            false,
            |v| ints(v).is_some_and(|r| r.len() == 4 && r[0] == 1 && r[1] == 4),
            "[1, 4, 0, _]",
        ),
        step(
            words(&["RL.LEAKY", &k("rl2"), "10", "5"]),
            false,
            |v| ints(v).is_some_and(|r| r.len() == 4 && r[0] == 1),
            "[1, _, _, _]",
        ),
        step(
            words(&["RL.WINDOW", &k("rl3"), "10", "1000"]),
            false,
            |v| ints(v).is_some_and(|r| r.len() == 4 && r[0] == 1),
            "[1, _, _, _]",
        ),
        step(
            words(&["RL.GCRA", &k("rl4"), "5", "10", "60"]),
            false,
            |v| ints(v).is_some_and(|r| r.len() == 5 && r[0] == 0 && r[1] == 6 && r[2] == 5),
            "[0, 6, 5, _, _]",
        ),
        step(
            words(&["CACHE.SET", &k("cache"), "v", "30000", "VERSION", "2"]),
            false,
            |v| int_of(v) == Some(1),
            "1",
        ),
        step(
            words(&["CACHE.GET", &k("cache"), "MINVERSION", "2"]),
            false,
            |v| text_of(v).as_deref() == Some("v"),
            "v",
        ),
        step(
            words(&["CACHE.GET", &k("cache2"), "LEASE", "30000"]),
            false,
            |v| matches!(v, Value::Array(a) if a.len() == 2 && a[0] == Value::Nil && int_of(&a[1]).is_some_and(|t| t > 0)),
            "[nil, token]",
        ),
        step(
            words(&["CACHE.INFO", &k("cache")]),
            true,
            |v| matches!(v, Value::Array(a) if a.len() == 12) || matches!(v, Value::Map(_)),
            "a 12-element array",
        ),
    ]
}

// ---------------------------------------------------------------------------------------
// The cluster scenarios
// ---------------------------------------------------------------------------------------

#[test]
fn cluster_routing_migration_and_failover() {
    let started = Instant::now();
    let mut cluster = Cluster::start();
    eprintln!("cluster formed in {:?}", started.elapsed());
    let mut failures = Vec::new();
    scenario(&mut failures, "keyslot", || local_keyslot_matches(&cluster));
    scenario(&mut failures, "(a) MOVED routing", || {
        moved_routing(&cluster)
    });
    scenario(&mut failures, "(b) ASK during migration", || {
        ask_during_migration(&cluster)
    });
    scenario(&mut failures, "(c) MIGRATE keeps state", || {
        migrate_keeps_state(&cluster)
    });
    scenario(&mut failures, "(d) CLUSTER FAILOVER keeps locks", || {
        failover_keeps_locks(&cluster)
    });
    for (i, s) in cluster.servers.iter_mut().enumerate() {
        if !s.is_alive() {
            failures.push(format!("node {i} died; log:\n{}", s.log_tail(30)));
        }
    }
    eprintln!("all scenarios done in {:?}", started.elapsed());
    report("cluster scenarios", failures);
}

/// The harness's local slot computation agrees with `CLUSTER KEYSLOT`.
fn local_keyslot_matches(cluster: &Cluster) {
    for key in [
        "a",
        "lock:1",
        "{user1}:lock",
        "x{}y",
        "{}",
        "a{b}c{d}",
        "{{x}}",
    ] {
        assert_eq!(
            key_slot(key.as_bytes()),
            cluster.keyslot(key.as_bytes()),
            "slot of {key:?}"
        );
    }
}

/// (a) Each command sent to a master that does not own the key, or to the
/// owner's replica, gets `MOVED <slot> <owner>`; followed, it succeeds.
/// With `READONLY`, the replica serves the read-only commands and still
/// redirects the writes.
fn moved_routing(cluster: &Cluster) {
    let masters = cluster.masters();
    assert_eq!(masters.len(), 3, "{}", cluster.describe());
    for (n, &owner) in masters.iter().enumerate() {
        let wrong = masters[(n + 1) % masters.len()];
        let replica = cluster.replicas_of(owner)[0];
        let tag = cluster.tag_on("route", owner, &[]);
        let slot = key_slot(tag.as_bytes());
        let owner_port = cluster.servers[owner].port;
        let moved = Redirect::Moved {
            slot,
            port: owner_port,
        };
        let mut wrong_con = cluster.conn(wrong);
        let mut replica_con = cluster.conn(replica);
        let mut readonly_con = cluster.conn(replica);
        let _: () = query!(&mut readonly_con, "READONLY");
        for step in command_steps(&tag) {
            let c = command(&step.words);
            let what = step.words.join(" ");
            expect_redirect(
                c.query(&mut wrong_con),
                moved,
                &format!("{what} on another master"),
            );
            expect_redirect(
                c.query(&mut replica_con),
                moved,
                &format!("{what} on the owner's replica"),
            );
            let mut follow = cluster.following(wrong);
            let v: Value = follow
                .query(&c)
                .unwrap_or_else(|e| panic!("{what} followed: {}", err_text(&e)));
            assert_eq!(follow.redirects, vec![moved], "{what}: redirects followed");
            assert!(
                (step.check)(&v),
                "{what} (followed to the owner): expected {}, got {v:?}",
                step.expect
            );
            if step.readonly {
                // The replica has applied every earlier write: same answer.
                cluster.sync_replica(owner, replica);
            }
            let on_replica: redis::RedisResult<Value> = c.query(&mut readonly_con);
            if step.readonly {
                match on_replica {
                    Ok(v) => assert!(
                        (step.check)(&v),
                        "{what} on a READONLY replica: expected {}, got {v:?}",
                        step.expect
                    ),
                    Err(e) => panic!("{what} on a READONLY replica: {}", err_text(&e)),
                }
            } else {
                expect_redirect(
                    on_replica,
                    moved,
                    &format!("{what} (a write) on a READONLY replica"),
                );
            }
        }
    }
}

/// (b) While a slot migrates, the source answers `ASK` for keys it does not
/// have (never created, or already migrated), serves the keys it still has, and
/// the target serves them after `ASKING` (and answers MOVED without it).
fn ask_during_migration(cluster: &Cluster) {
    let masters = cluster.masters();
    let (src, dst) = (masters[0], masters[1]);
    let tag = cluster.tag_on("ask", src, &[]);
    let slot = key_slot(tag.as_bytes());
    let (src_port, dst_port) = (cluster.servers[src].port, cluster.servers[dst].port);
    let stay = format!("{tag}stay");
    let moved_bf = format!("{tag}moved");
    let mut s = cluster.conn(src);
    let token: i64 = query!(&mut s, "DLOCK.ACQUIRE", &stay, "stayer", 60000);
    let _: i64 = query!(&mut s, "BF.ADDX", &moved_bf, "x");

    cluster.begin_slot_move(slot, src, dst);
    let r = cluster.migrate_keys(src, dst, &[moved_bf.as_bytes()]);
    assert!(r.is_ok(), "MIGRATE {moved_bf}: {r:?}");

    let ask = Redirect::Ask {
        slot,
        port: dst_port,
    };
    let back = Redirect::Moved {
        slot,
        port: src_port,
    };
    let mut d = cluster.conn(dst);
    let mut steps = command_steps(&tag);
    steps.push(Step {
        words: words(&["BF.EXISTSX", &moved_bf, "x"]),
        readonly: true,
        check: |v| int_of(v) == Some(1),
        expect: "1 (the migrated filter kept its item)",
    });
    for step in steps {
        let c = command(&step.words);
        let what = step.words.join(" ");
        expect_redirect(
            c.query(&mut s),
            ask,
            &format!("{what} on the migrating source"),
        );
        expect_redirect(
            c.query(&mut d),
            back,
            &format!("{what} on the importing target without ASKING"),
        );
        let mut follow = cluster.following(src);
        let v: Value = follow
            .query(&c)
            .unwrap_or_else(|e| panic!("{what} followed: {}", err_text(&e)));
        assert_eq!(follow.redirects, vec![ask], "{what}: redirects followed");
        assert!(
            (step.check)(&v),
            "{what} (after ASKING on the target): expected {}, got {v:?}",
            step.expect
        );
    }
    // A key the source still has is served there, without a redirect.
    let info = lock_info(&mut s, &stay).expect("the source still serves its own key");
    assert_eq!((info.owner.as_slice(), info.token), (&b"stayer"[..], token));

    // Finish the move; everything is then on the target.
    cluster.move_slot(slot, src, dst);
    assert_eq!(count_keys_in_slot(&mut s, slot), 0, "source slot empty");
    let mut follow = cluster.following(src);
    let v: Value = follow
        .query(cmd("DLOCK.INFO").arg(&stay))
        .expect("DLOCK.INFO");
    let info = parse_info(&v).expect("lock moved with the slot");
    assert_eq!((info.owner.as_slice(), info.token), (&b"stayer"[..], token));
    assert_eq!(
        follow.redirects,
        vec![Redirect::Moved {
            slot,
            port: dst_port
        }]
    );
}

/// (c) MIGRATE of a lock, a filter, limiters and cache entries keeps each value
/// (DEBUG DIGEST-VALUE), its TTL, the lock's owner, holds and fencing token, and
/// an entry's value, version and lease; the lock then works on the target, and a
/// new grant gets a larger token. Clients blocked in `CACHE.GET … LEASE … WAIT`
/// on the source are each answered once with a redirect to the target (`ASK`
/// while the slot migrates, `MOVED` after), and the source takes no lease for
/// them; one that follows it waits on the target for the refresher's SET.
fn migrate_keeps_state(cluster: &Cluster) {
    let masters = cluster.masters();
    let (src, dst) = (masters[1], masters[2]);
    let tag = cluster.tag_on("mig", src, &[]);
    let slot = key_slot(tag.as_bytes());
    let lock = format!("{tag}lock");
    let bf = format!("{tag}bf");
    let bf_no_ttl = format!("{tag}bf2");
    let limiters = [
        (format!("{tag}token"), "RL.TOKEN", ["10", "100"], 30),
        (format!("{tag}leaky"), "RL.LEAKY", ["10", "100"], 30),
        (format!("{tag}window"), "RL.WINDOW", ["100", "60000"], 30),
    ];
    let gcra = format!("{tag}gcra");
    let cache = format!("{tag}cache");
    let cache_lease = format!("{tag}cachelease");
    let mut s = cluster.conn(src);
    let opts = ["STALE", "30000", "VERSION", "3"];
    assert_eq!(cache_set(&mut s, &cache, "cached", 60_000, &opts), 1);
    let (_, lease) = get_lease(&mut s, &cache_lease, 60_000, &[]);
    assert!(lease > 0);
    // A refresh in progress (a stale value of version 4, a live lease) with clients
    // waiting for it (MINVERSION 5).
    let waited = format!("{tag}cachewait");
    let wait_lease = refresh_in_progress(&mut s, &waited, 4, 60_000);
    assert!(wait_lease > lease);
    let waiters: Vec<_> = [("w-forever", 0), ("w-30s", 30_000)]
        .into_iter()
        .enumerate()
        .map(|(i, (name, timeout))| {
            let w = Waiter::cache(&cluster.servers[src], name, &waited, 5, 5_000, timeout);
            wait_for_waiters(&mut s, &waited, i as i64 + 1);
            w
        })
        .collect();

    let token: i64 = query!(&mut s, "DLOCK.ACQUIRE", &lock, "mover", 60000);
    let again: i64 = query!(&mut s, "DLOCK.ACQUIRE", &lock, "mover", 60000, "REENTRANT");
    assert_eq!(again, token);
    // A read/write lock with two readers (one holding twice) and a semaphore
    // with two of its three places taken.
    let rw = format!("{tag}rw");
    let sem = format!("{tag}sem");
    for (key, owner, opts) in [
        (&rw, "r1", &["SHARED"][..]),
        (&rw, "r2", &["SHARED"]),
        (&rw, "r2", &["SHARED", "REENTRANT"]),
        (&sem, "a", &["LIMIT", "3"]),
        (&sem, "b", &["LIMIT", "3"]),
    ] {
        let t: Option<i64> = query!(&mut s, "DLOCK.ACQUIRE", key, owner, 60_000, opts);
        assert!(t.is_some(), "{key} {owner} granted");
    }
    let holders_before = [set_holders(&mut s, &rw), set_holders(&mut s, &sem)];
    assert_eq!(holders_before[0][1].2, 2, "r2 holds twice");
    let items: Vec<String> = (0..300).map(|i| format!("item-{i}")).collect();
    let _: Vec<i64> = query!(&mut s, "BF.MADDX", &bf, &items);
    let _: i64 = query!(&mut s, "PEXPIRE", &bf, 120_000);
    let _: Vec<i64> = query!(&mut s, "BF.MADDX", &bf_no_ttl, &items[..10]);
    for (key, name, args, cost) in &limiters {
        let r: Vec<i64> = cmd(name)
            .arg(key)
            .arg(&args[..])
            .arg("COST")
            .arg(*cost)
            .query(&mut s)
            .unwrap_or_else(|e| panic!("{name}: {}", err_text(&e)));
        assert_eq!(r[0], 1, "{name} allowed");
    }
    let r: Vec<i64> = query!(&mut s, "RL.GCRA", &gcra, 50, 10, 60, "QUANTITY", 20);
    assert_eq!(r[0], 0, "RL.GCRA not limited");

    let mut keys: Vec<String> = vec![
        lock.clone(),
        rw.clone(),
        sem.clone(),
        bf.clone(),
        bf_no_ttl.clone(),
        gcra,
        cache.clone(),
        cache_lease.clone(),
        waited.clone(),
    ];
    keys.extend(limiters.iter().map(|l| l.0.clone()));
    let before = digests_and_ttls(&mut s, &keys);
    let info_before = lock_info(&mut s, &lock).expect("lock held");
    let at = Instant::now();
    for (k, (_, t)) in keys.iter().zip(&before) {
        if k != &bf_no_ttl {
            assert!(*t > 0, "{k} has a TTL before the move ({t})");
        }
    }

    cluster.begin_slot_move(slot, src, dst);
    let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
    let r = cluster.migrate_keys(src, dst, &refs);
    assert!(r.is_ok(), "MIGRATE: {r:?}");
    assert_eq!(
        count_keys_in_slot(&mut s, slot),
        0,
        "MIGRATE moved every key"
    );
    cluster.finish_slot_move(slot, dst);
    let elapsed = at.elapsed().as_millis() as i64;

    let mut d = cluster.conn(dst);
    assert_keys_intact(&mut d, &keys, &before, (elapsed, 2), "after MIGRATE");
    // Each waiter was answered once, with a redirect to the target; the source
    // took no lease for them (it holds nothing of the slot).
    let dst_port = cluster.servers[dst].port;
    let mut answers: Vec<Answer> = join_all(waiters);
    for a in &answers {
        assert!(
            matches!(
                a.reply.redirect(),
                Some(Redirect::Ask { slot: at, port } | Redirect::Moved { slot: at, port })
                    if at == slot && port == dst_port
            ),
            "cache waiter {} on the source answered {:?}, expected ASK or MOVED {slot} to port {dst_port}",
            a.name,
            a.reply
        );
    }
    assert_no_second_reply(&mut answers, "MIGRATE with cache waiters");
    assert_eq!(
        count_keys_in_slot(&mut s, slot),
        0,
        "the source after its waiters"
    );
    assert_eq!(warden_stat(&mut s, "cache_waiting"), 0);
    let info = cache_info(&mut d, &waited).expect("the waited entry on the target");
    assert_eq!(
        (info["version"], info["lease"], info["waiters"]),
        (4, wait_lease, 0),
        "CACHE.INFO {waited} on the target"
    );
    let info = lock_info(&mut d, &lock).expect("lock on the target");
    assert_eq!(
        (&info.owner, info.token, info.holds),
        (&info_before.owner, info_before.token, info_before.holds),
        "DLOCK.INFO after MIGRATE"
    );
    assert!(info.ttl_ms <= info_before.ttl_ms && info.ttl_ms > 0);
    assert_eq!(
        [set_holders(&mut d, &rw), set_holders(&mut d, &sem)],
        holders_before,
        "every holder of the sets after MIGRATE"
    );
    let t3: Option<i64> = query!(&mut d, "DLOCK.ACQUIRE", &sem, "c", 10_000, "LIMIT", 3);
    let newest = holders_before
        .iter()
        .flatten()
        .map(|h| h.1)
        .max()
        .unwrap_or(0);
    assert!(t3.is_some_and(|t| t > newest), "token {t3:?} <= {newest}");
    let full: Option<i64> = query!(&mut d, "DLOCK.ACQUIRE", &sem, "d", 10_000, "LIMIT", 3);
    assert_eq!(full, None, "LIMIT 3 on the target");

    // The lock works on the target: two releases free it, a new grant is larger.
    for _ in 0..2 {
        let r: i64 = query!(&mut d, "DLOCK.RELEASE", &lock, "mover");
        assert_eq!(r, 1, "release on the target");
    }
    let t2: i64 = query!(&mut d, "DLOCK.ACQUIRE", &lock, "next", 10_000);
    assert!(t2 > token, "token after MIGRATE {t2} <= {token}");
    let found: Vec<i64> = query!(&mut d, "BF.MEXISTSX", &bf, &items);
    assert!(found.iter().all(|&f| f == 1), "filter lost items");
    // The cache entry and the lease moved: the refresher stores on the target, and
    // the target's leases are above the moved one.
    let v = cache_get(&mut d, &cache, &["MINVERSION", "3"]);
    assert_eq!(v.as_deref(), Some("cached"));
    let t = lease.to_string();
    let stored = cache_set(&mut d, &cache_lease, "refreshed", 10_000, &["LEASE", &t]);
    assert_eq!(stored, 1, "the moved lease is current on the target");
    // A waiter that followed its redirect waits on the target; the refresher's SET
    // with the moved lease answers it there.
    assert_refresh_answers_a_waiter(&cluster.servers[dst], &waited, 5, wait_lease, "new");
    let (_, next) = get_lease(&mut d, &format!("{tag}cachenew"), 1_000, &[]);
    assert!(
        next > wait_lease,
        "lease after MIGRATE {next} <= {wait_lease}"
    );
}

/// (d) `CLUSTER FAILOVER` on a replica: the promoted node has every lock with
/// the same owner, token and holds, and a TTL that is not longer; tokens it
/// grants afterwards are larger than every token granted before.
fn failover_keeps_locks(cluster: &Cluster) {
    let masters = cluster.masters();
    let master = masters[0];
    let replica = cluster.replicas_of(master)[0];
    let me = cluster.myself(master);
    let keys: Vec<String> = (0..100_000)
        .map(|n| format!("fo:lock:{n}"))
        .filter(|k| me.serves(key_slot(k.as_bytes())))
        .take(6)
        .collect();
    let mut m = cluster.conn(master);
    let mut max_before = 0;
    // Churn on one key: tokens granted and released before the failover.
    for i in 0..5 {
        let t: i64 = query!(
            &mut m,
            "DLOCK.ACQUIRE",
            &keys[0],
            format!("churn-{i}"),
            10_000
        );
        max_before = max_before.max(t);
        let _: i64 = query!(&mut m, "DLOCK.RELEASE", &keys[0], format!("churn-{i}"));
    }
    for (i, k) in keys.iter().enumerate().skip(1) {
        let holds = if i == 1 { 3 } else { 1 };
        for _ in 0..holds {
            let t: i64 = query!(
                &mut m,
                "DLOCK.ACQUIRE",
                k,
                format!("owner-{i}"),
                20_000 + 1000 * i as i64
            );
            max_before = max_before.max(t);
        }
    }
    // A read/write lock with two readers on the failing-over master.
    let rw = (0..100_000)
        .map(|n| format!("fo:rw:{n}"))
        .find(|k| me.serves(key_slot(k.as_bytes())))
        .expect("a key of the master");
    for owner in ["r1", "r2"] {
        let t: i64 = query!(&mut m, "DLOCK.ACQUIRE", &rw, owner, 30_000, "SHARED");
        max_before = max_before.max(t);
    }
    let rw_before = set_holders(&mut m, &rw);
    cluster.sync_replica(master, replica);
    let before: Vec<Option<LockInfo>> = keys.iter().map(|k| lock_info(&mut m, k)).collect();
    let at = Instant::now();

    let ok: String = query!(&mut cluster.conn(replica), "CLUSTER", "FAILOVER");
    assert_eq!(ok, "OK");
    let promoted = wait_until(Duration::from_secs(10), || {
        cluster.role_of(replica) == "master" && cluster.role_of(master) == "slave"
    });
    assert!(promoted, "failover did not happen:\n{}", cluster.describe());
    let slot = key_slot(keys[1].as_bytes());
    assert!(
        cluster.wait_slot_owner(slot, replica, Duration::from_secs(10)),
        "not every node sees the promoted replica:\n{}",
        cluster.describe()
    );
    assert!(cluster.wait_ok(Duration::from_secs(10)), "cluster not ok");
    let elapsed = at.elapsed().as_millis() as i64;

    let mut r = cluster.conn(replica);
    for (k, b) in keys.iter().zip(&before) {
        let after = lock_info(&mut r, k);
        let what = format!("DLOCK.INFO {k} before the failover and on the promoted node");
        if let Some((b, a)) = same_holder(b, &after, &what) {
            assert!(
                a.ttl_ms <= b.ttl_ms && a.ttl_ms >= b.ttl_ms - elapsed - 1000,
                "TTL of {k}: {} before, {} after, {elapsed} ms later",
                b.ttl_ms,
                a.ttl_ms
            );
        }
    }
    assert_eq!(
        set_holders(&mut r, &rw),
        rw_before,
        "the readers on the promoted node"
    );
    // Tokens granted by the promoted node are larger than every earlier one.
    let t: i64 = query!(&mut r, "DLOCK.ACQUIRE", &keys[0], "after-failover", 10_000);
    assert!(t > max_before, "token {t} after failover <= {max_before}");
    for n in 0..20 {
        let k = format!("fo:new:{n}");
        if !cluster.myself(replica).serves(key_slot(k.as_bytes())) {
            continue;
        }
        let t: i64 = query!(&mut r, "DLOCK.ACQUIRE", &k, "new", 10_000);
        assert!(
            t > max_before,
            "token {t} of {k} after failover <= {max_before}"
        );
    }
    // The demoted master keeps the same locks (read with READONLY).
    let mut old = cluster.conn(master);
    let _: () = query!(&mut old, "READONLY");
    cluster.sync_replica(replica, master);
    let info = lock_info(&mut old, &keys[1]).expect("lock on the demoted master");
    assert_eq!(Some(&info.owner), before[1].as_ref().map(|b| &b.owner));
}
