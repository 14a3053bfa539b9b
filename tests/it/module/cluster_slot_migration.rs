//! Valkey 9's atomic slot migration (`CLUSTER MIGRATESLOTS`) of a slot that
//! holds a lock with a client blocked in `DLOCK.ACQUIRE … WAIT`, a cache entry
//! being refreshed with a client blocked in `CACHE.GET … LEASE … WAIT`, a
//! scaling Bloom filter and rate limiters, while another client keeps writing
//! to it.
//!
//! The source streams the slot to the target as commands in AOF form (its
//! keys through warden's `aof_rewrite`: `DLOCK._SET`, `CACHE._SET`,
//! `BF._LOADX`, `RL._SET`),
//! then the writes made meanwhile, on a connection that Valkey 9.1 flags both
//! `SLOT_IMPORT_CLIENT` and `REPLICATED`, so warden applies it as it applies
//! its master's stream. After the hand-over the source deletes the slot's keys.
//!
//! What a waiter gets: it is connection state on the source and does not
//! travel. When the source no longer serves the slot it is answered
//! `MOVED <slot> <target>` (warden's slot check, as for `MIGRATE`); a client
//! that follows it queues again on the target and is granted there (the lock,
//! or the refreshed value).
//!
//! Runs only when the server is Valkey 9.0 or later (`make test-valkey` runs
//! it on 9.1); elsewhere it prints why it skips.

use crate::bloom::support::{cardx, madd_range, mexists_range};
use crate::cache::support::{cache_info, refresh_in_progress, wait_for_waiters};
use crate::common::cluster::*;
use crate::common::server_ops::assert_refresh_answers_a_waiter;
use crate::common::waiter::{assert_no_second_reply, Waiter};
use crate::common::*;
use crate::lock::support::{conn_t, lock_info, reenter, release, try_acquire, wait_waiting_for};
use crate::rate::support::rl;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Items in the migrated filter (it scales to several layers).
const ITEMS: u64 = 5000;

/// The server has `CLUSTER MIGRATESLOTS` (Valkey 9.0+); otherwise the reason.
fn skip_reason() -> Option<String> {
    let (name, major, minor) = server_version();
    (name != "valkey" || major < 9).then(|| {
        format!(
            "atomic slot migration (CLUSTER MIGRATESLOTS) needs Valkey 9.0 or later; \
             this server is {name} {major}.{minor}"
        )
    })
}

/// What the writer was answered before the source stopped serving the slot.
struct Written {
    /// `BF.ADDX stream stream-<i>` answered, for i in 0..adds.
    adds: u64,
    /// `RL.TOKEN spend 0.001 1000000` answered allowed (one token each).
    spends: i64,
    /// `DLOCK.ACQUIRE cycle writer 60000 REENTRANT` answered with the token.
    holds: i64,
    /// The error that stopped it (`stopped` if it was told to stop).
    last: String,
}

/// A client that keeps writing to three keys of the slot (a filter, a token
/// bucket that does not refill in practice, a re-entered lock) until the
/// source stops serving it, so some writes reach the target in the stream
/// that follows the snapshot.
fn spawn_writer(server: &Server, tag: String, stop: Arc<AtomicBool>) -> JoinHandle<Written> {
    let mut con = timed(server.conn(), Duration::from_secs(30));
    thread::spawn(move || {
        let mut w = Written {
            adds: 0,
            spends: 0,
            holds: 0,
            last: "stopped".to_string(),
        };
        let (bf, spend, cycle) = (
            format!("{tag}stream"),
            format!("{tag}spend"),
            format!("{tag}cycle"),
        );
        while !stop.load(Ordering::Relaxed) {
            let add: redis::RedisResult<i64> = cmd("BF.ADDX")
                .arg(&bf)
                .arg(format!("stream-{}", w.adds))
                .query(&mut con);
            if let Err(e) = add {
                w.last = err_text(&e);
                break;
            }
            w.adds += 1;
            let spent: redis::RedisResult<Vec<i64>> = cmd("RL.TOKEN")
                .arg(&spend)
                .arg("0.001")
                .arg(1_000_000)
                .query(&mut con);
            match spent {
                Ok(r) if r[0] == 1 => w.spends += 1,
                Ok(r) => panic!("RL.TOKEN {spend} denied: {r:?}"),
                Err(e) => {
                    w.last = err_text(&e);
                    break;
                }
            }
            let held: redis::RedisResult<i64> = cmd("DLOCK.ACQUIRE")
                .arg(&cycle)
                .arg("writer")
                .arg(60_000)
                .arg("REENTRANT")
                .query(&mut con);
            if let Err(e) = held {
                w.last = err_text(&e);
                break;
            }
            w.holds += 1;
        }
        w
    })
}

#[test]
fn atomic_slot_migration_keeps_state_and_answers_waiters() {
    if let Some(why) = skip_reason() {
        eprintln!("skipped: {why}");
        return;
    }
    let started = Instant::now();
    let cluster = Cluster::start_with(3, 0);
    eprintln!("cluster formed in {:?}", started.elapsed());
    let masters = cluster.masters();
    let (src, dst) = (masters[0], masters[1]);
    let dst_port = cluster.servers[dst].port;
    let tag = cluster.tag_on("asm", src, &[]);
    let slot = key_slot(tag.as_bytes());
    let range = format!("{slot}-{slot}");
    let (lock, bf, stream) = (
        format!("{tag}lock"),
        format!("{tag}bf"),
        format!("{tag}stream"),
    );
    let cache = format!("{tag}cache");
    let (token_rl, window_rl, gcra) = (
        format!("{tag}token"),
        format!("{tag}window"),
        format!("{tag}gcra"),
    );
    let mut s = conn_t(&cluster.servers[src]);

    // A lock held twice (re-entered) and a client waiting for it, forever.
    let token = try_acquire(&mut s, &lock, "holder", 120_000).expect("lock granted");
    assert_eq!(reenter(&mut s, &lock, "holder", 120_000), Some(token));
    let waiter = Waiter::lock(&cluster.servers[src], &lock, "waiter", 30_000, 0);
    wait_waiting_for(&mut s, 1, "the waiter on the source");

    // A cache entry being refreshed (a stale value of version 4, a live lease)
    // and a client waiting for the refresh (MINVERSION 5).
    let lease = refresh_in_progress(&mut s, &cache, 4, 120_000);
    let cache_waiter = Waiter::cache(&cluster.servers[src], "cache", &cache, 5, 5_000, 0);
    wait_for_waiters(&mut s, &cache, 1);

    // A scaling filter with a TTL, and limiters part used.
    let _: () = query!(&mut s, "BF.RESERVEX", &bf, 0.001, 1000);
    // New items: all but the filter's false positives (rate 0.001).
    let new = madd_range(&mut s, bf.as_str(), "item-", 0..ITEMS);
    assert!(new > ITEMS - 50, "{new} of {ITEMS} items were new");
    let _: i64 = query!(&mut s, "PEXPIRE", &bf, 600_000);
    let token_reply = rl(&mut s, &["RL.TOKEN", &token_rl, "10", "100", "COST", "30"]);
    assert_eq!(token_reply[..2], [1, 70], "RL.TOKEN before the move");
    rl(
        &mut s,
        &["RL.WINDOW", &window_rl, "100", "60000", "COST", "10"],
    );
    let gcra_before = rl(
        &mut s,
        &["RL.GCRA", &gcra, "5", "10", "60", "QUANTITY", "3"],
    );
    assert_eq!(gcra_before[0], 0, "RL.GCRA not limited");

    let keys = [&lock, &cache, &bf, &token_rl, &window_rl, &gcra];
    let before = digests_and_ttls(&mut s, &keys);
    let info_before = lock_info(&mut s, &lock).expect("lock held");
    assert_eq!((info_before.holds, info_before.waiters), (2, 1));
    let cardinality = cardx(&mut s, bf.as_str());
    let at = Instant::now();

    // Writes keep coming while the slot moves.
    let stop = Arc::new(AtomicBool::new(false));
    let writer = spawn_writer(&cluster.servers[src], tag.clone(), stop.clone());
    thread::sleep(Duration::from_millis(50));
    cluster
        .migrate_slots(slot, slot, src, dst)
        .unwrap_or_else(|e| panic!("CLUSTER MIGRATESLOTS: {}", err_text(&e)));
    let job = cluster.wait_slot_migration(src, &range, Duration::from_secs(20));
    let migrated_at = Instant::now();
    let job = job.unwrap_or_else(|| {
        panic!(
            "the migration of slot {slot} did not end within 20 s: {:?}\n{}",
            cluster.slot_migrations(src),
            cluster.log_tails(15)
        )
    });
    assert_eq!(
        job.get("state").map(String::as_str),
        Some("success"),
        "slot migration job: {job:?}\n{}",
        cluster.log_tails(15)
    );
    eprintln!("slot {slot} migrated in {:?}", migrated_at - at);
    assert!(
        cluster.wait_slot_owner(slot, dst, Duration::from_secs(10)),
        "the cluster never agreed that node {dst} owns slot {slot}:\n{}",
        cluster.describe()
    );
    let elapsed = at.elapsed().as_millis() as i64;

    // The waiter is answered, not left hanging: MOVED to the target.
    let answer = waiter.join();
    let moved = Redirect::Moved {
        slot,
        port: dst_port,
    };
    assert_eq!(
        answer.reply.redirect(),
        Some(moved),
        "the waiter on the source got {:?}, expected MOVED to the target",
        answer.reply
    );
    answer.assert_within(migrated_at, Duration::from_secs(3), "the move");
    let mut answer = cache_waiter.join();
    let redirect = answer.reply.redirect();
    assert_eq!(
        redirect,
        Some(moved),
        "the cache waiter: {:?}",
        answer.reply
    );
    answer.assert_within(migrated_at, Duration::from_secs(3), "the move");
    assert_no_second_reply(std::slice::from_mut(&mut answer), "the cache waiter");

    // The writer stopped at the hand-over; every add it was answered is there.
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().expect("writer thread");
    eprintln!(
        "writer: {} adds, {} spends, {} holds answered, then {}",
        written.adds, written.spends, written.holds, written.last
    );
    assert!(
        written.last.starts_with("MOVED") || written.last == "stopped",
        "the writer's last reply: {}",
        written.last
    );

    // Every value arrived intact on the target, with its TTL.
    let mut d = conn_t(&cluster.servers[dst]);
    assert_keys_intact(&mut d, &keys, &before, (elapsed, 0), "on the target");
    let info = lock_info(&mut d, &lock).expect("the lock on the target");
    assert_eq!(
        (&info.owner, info.token, info.holds, info.waiters),
        (&info_before.owner, token, 2, 0),
        "DLOCK.INFO on the target"
    );
    assert!(info.ttl_ms <= info_before.ttl_ms && info.ttl_ms > info_before.ttl_ms - elapsed - 1000);
    let info = cache_info(&mut d, &cache).expect("the cache entry on the target");
    assert_eq!(
        (info["version"], info["lease"], info["waiters"]),
        (4, lease, 0),
        "CACHE.INFO {cache} on the target"
    );
    assert_eq!(
        mexists_range(&mut d, bf.as_str(), "item-", 0..ITEMS),
        ITEMS,
        "items on the target"
    );
    assert_eq!(
        cardx(&mut d, bf.as_str()),
        cardinality,
        "BF.CARDX on the target"
    );
    // Every write answered on the source during the move is on the target.
    let found = mexists_range(&mut d, stream.as_str(), "stream-", 0..written.adds);
    assert_eq!(found, written.adds, "adds answered during the move");
    let spend = format!("{tag}spend");
    let left = rl(
        &mut d,
        &["RL.TOKEN", &spend, "0.001", "1000000", "COST", "0"],
    )[1];
    let refill = elapsed / 1000 + 1;
    assert!(
        (1_000_000 - written.spends..=1_000_000 - written.spends + refill).contains(&left),
        "RL.TOKEN {spend}: {left} tokens left after {} spends",
        written.spends
    );
    let cycle = lock_info(&mut d, format!("{tag}cycle")).expect("the writer's lock");
    assert_eq!(cycle.holds, written.holds, "holds of the writer's lock");

    // The token bucket kept its 70 tokens (plus what refilled since, 10/s).
    let peek = rl(&mut d, &["RL.TOKEN", &token_rl, "10", "100", "COST", "0"]);
    assert!(
        peek[1] >= 70 && peek[1] <= 70 + 10 * (elapsed / 1000 + 1),
        "RL.TOKEN remaining on the target: {peek:?}"
    );
    assert_eq!(
        warden_stat(&mut d, "replays_without_effect"),
        0,
        "every imported write carried its effect"
    );

    // The source let the slot go; the target serves it for writes too.
    let mut s = conn_t(&cluster.servers[src]);
    let emptied = wait_until(Duration::from_secs(5), || {
        let n: i64 = query!(&mut s, "CLUSTER", "COUNTKEYSINSLOT", slot);
        n == 0
    });
    assert!(emptied, "the source still has keys of slot {slot}");
    let r: redis::RedisResult<Option<i64>> = cmd("DLOCK.ACQUIRE")
        .arg(&lock)
        .arg("late")
        .arg(1000)
        .query(&mut s);
    let e = r.expect_err("an acquire on the source after the move");
    assert_eq!(
        redirect_of(&e),
        Some(Redirect::Moved {
            slot,
            port: dst_port
        })
    );

    // The waiter follows MOVED and queues on the target; the holder's two
    // releases there hand it the lock, with a larger token.
    let requeued = Waiter::lock(&cluster.servers[dst], &lock, "waiter", 30_000, 10_000);
    wait_waiting_for(&mut d, 1, "the waiter queued again on the target");
    assert_eq!(release(&mut d, &lock, "holder"), 1);
    assert_eq!(release(&mut d, &lock, "holder"), 1);
    let (granted, _) = requeued.granted("the re-queued waiter");
    assert!(granted > token, "token on the target {granted} <= {token}");

    // The cache waiter follows MOVED too and waits on the target; the
    // refresher's SET with the moved lease answers it there.
    assert_refresh_answers_a_waiter(&cluster.servers[dst], &cache, 5, lease, "new");
}
