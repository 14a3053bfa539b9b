//! A writable replica (`replica-read-only no`) never hands anything over: the
//! module writes only on a master. So a request with `WAIT` there is answered
//! at once as without `WAIT` (nothing could ever serve it: red team, a cache
//! waiter hung forever), and a release the replica applies from its master
//! grants nothing.

use crate::cache::support::{get_lease, get_wait};
use crate::common::*;

use std::time::{Duration, Instant};

#[test]
fn a_writable_replica_queues_no_waiter_and_grants_nothing() {
    let master = Server::start();
    let replica = master.start_replica(&["--replica-read-only", "no"], &[]);
    let mut m = master.conn();
    let _: i64 = query!(&mut m, "DLOCK.ACQUIRE", "hw", "a", 100_000);
    master.sync_replicas(1);
    let mut r = timed(replica.conn(), Duration::from_secs(10));

    // A lock held (from the master): WAIT 0 would wait forever.
    let asked = Instant::now();
    let got: Option<i64> = query!(&mut r, "DLOCK.ACQUIRE", "hw", "x", 100_000, "WAIT", 0);
    assert_eq!(got, None, "nothing to grant on a replica");
    // A cache key refreshed by a lease taken on the replica itself.
    assert!(get_lease(&mut r, "local", 200, &[]).1 > 0);
    assert_eq!(
        get_wait(&mut r, "local", 5_000, 0).unwrap(),
        (None, 0),
        "answered as without WAIT"
    );
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "the replica made its clients wait ({:?})",
        asked.elapsed()
    );
    assert_eq!(warden_stat(&mut r, "locks_waiting"), 0);
    assert_eq!(warden_stat(&mut r, "cache_waiting"), 0);
    let _: i64 = query!(&mut r, "DEL", "local");

    // A release applied from the master hands the lock to nobody.
    let released: i64 = query!(&mut m, "DLOCK.RELEASE", "hw", "a");
    assert_eq!(released, 1);
    master.sync_replicas(1);
    let info: Value = query!(&mut r, "DLOCK.INFO", "hw");
    assert_eq!(
        info,
        Value::Nil,
        "the replica granted a lock the master did not"
    );
    assert_eq!(db_digest(&mut r), db_digest(&mut m));
}
