//! A client waiting on a writable replica (`replica-read-only no`) is never
//! handed a lock by a release the replica applies from its master: the
//! master granted nothing, so the replica must not either.

mod common;
use common::*;

use std::time::Duration;

#[test]
fn a_replayed_release_grants_nothing_on_a_writable_replica() {
    let master = Server::start();
    let replica = master.start_replica(&["--replica-read-only", "no"], &[]);
    let mut m = master.conn();
    let _: i64 = cmd("DLOCK.ACQUIRE")
        .arg("hw")
        .arg("a")
        .arg(100_000)
        .query(&mut m)
        .unwrap();
    master.sync_replicas(1);

    let port = replica.port;
    let waiter = std::thread::spawn(move || {
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap();
        let mut con = client.get_connection().unwrap();
        let r: Option<i64> = cmd("DLOCK.ACQUIRE")
            .arg("hw")
            .arg("x")
            .arg(100_000)
            .arg("WAIT")
            .arg(1500)
            .query(&mut con)
            .unwrap();
        r
    });
    let mut r = replica.conn();
    assert!(
        wait_until(Duration::from_secs(5), || warden_stat(
            &mut r,
            "locks_waiting"
        ) == 1),
        "the waiter never queued on the replica"
    );
    let released: i64 = cmd("DLOCK.RELEASE")
        .arg("hw")
        .arg("a")
        .query(&mut m)
        .unwrap();
    assert_eq!(released, 1);
    master.sync_replicas(1);
    let info: Value = cmd("DLOCK.INFO").arg("hw").query(&mut r).unwrap();
    assert_eq!(
        info,
        Value::Nil,
        "the replica granted a lock the master did not"
    );
    assert_eq!(
        waiter.join().unwrap(),
        None,
        "the replica's waiter was handed the lock"
    );
    assert_eq!(db_digest(&mut r), db_digest(&mut m));
}
