//! `DLOCK.ACQUIRE … SHARED | LIMIT n` (issue #15, SPEC "Shared (read/write) locks",
//! "Limited locks (semaphores)"): several holders, each with its own lease and token;
//! FIFO waiting with no writer starvation and consecutive shared waiters granted
//! together; the kind of a key fixed while it exists; DLOCK.INFO's `mode` and
//! `holders`; every holder kept by replication, RDB, AOF and DUMP/RESTORE.

mod common;
use common::dlock::*;
use common::server_ops::assert_same_dataset;
use common::*;

use redis::{cmd, Connection, Value};
use std::time::{Duration, Instant};

const KIND: &str = "ERR key holds a lock of another kind";

fn acquire(
    con: &mut Connection,
    key: &str,
    owner: &str,
    ttl: i64,
    opts: &[&str],
) -> redis::RedisResult<Option<i64>> {
    let mut c = cmd("DLOCK.ACQUIRE");
    c.arg(key).arg(owner).arg(ttl);
    for o in opts {
        c.arg(*o);
    }
    c.query(con)
}

/// One holder as DLOCK.INFO lists it: owner, token, holds.
type Holder = (String, i64, i64);

/// DLOCK.INFO of a set: its fields (but `holders`) and its holders.
type SetInfo = (Vec<(String, Value)>, Vec<Holder>);

/// DLOCK.INFO as field → value, with `holders` apart.
fn info(con: &mut Connection, key: &str) -> Option<SetInfo> {
    let v: Value = cmd("DLOCK.INFO").arg(key).query(con).unwrap();
    let Value::Array(flat) = v else {
        return None;
    };
    let mut fields = Vec::new();
    let mut holders = Vec::new();
    for pair in flat.chunks(2) {
        let name = text(&pair[0]);
        if name == "holders" {
            let Value::Array(hs) = &pair[1] else {
                panic!("holders: {pair:?}")
            };
            for h in hs {
                let Value::Array(hf) = h else {
                    panic!("holder: {h:?}")
                };
                let get = |k: &str| {
                    hf.chunks(2)
                        .find(|p| text(&p[0]) == k)
                        .map(|p| p[1].clone())
                };
                let int = |v: Option<Value>| match v {
                    Some(Value::Int(i)) => i,
                    other => panic!("{other:?}"),
                };
                holders.push((
                    text(&get("owner").unwrap()),
                    int(get("token")),
                    int(get("holds")),
                ));
            }
        } else {
            fields.push((name, pair[1].clone()));
        }
    }
    Some((fields, holders))
}

fn text(v: &Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        other => panic!("not text: {other:?}"),
    }
}

#[test]
fn shared_holders_share_and_a_writer_waits_for_all_of_them() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let r1 = acquire(&mut con, "rw", "r1", 30_000, &["SHARED"])
        .unwrap()
        .expect("r1");
    let r2 = acquire(&mut con, "rw", "r2", 30_000, &["shared"])
        .unwrap()
        .expect("r2");
    assert!(r2 > r1, "each shared grant its own, larger token");
    assert_eq!(
        acquire(&mut con, "rw", "w", 30_000, &[]).unwrap(),
        None,
        "a writer waits"
    );
    let e = acquire(&mut con, "rw", "x", 30_000, &["LIMIT", "3"]).unwrap_err();
    assert_eq!(err_text(&e), KIND);
    let (fields, holders) = info(&mut con, "rw").expect("held");
    assert!(
        fields.contains(&("mode".into(), Value::BulkString(b"shared".to_vec()))),
        "{fields:?}"
    );
    assert_eq!(holders, [("r1".into(), r1, 1), ("r2".into(), r2, 1)]);
    // A repeat by a holder keeps its token; REENTRANT adds a hold.
    assert_eq!(
        acquire(&mut con, "rw", "r1", 30_000, &["SHARED"]).unwrap(),
        Some(r1)
    );
    assert_eq!(
        acquire(&mut con, "rw", "r1", 30_000, &["SHARED", "REENTRANT"]).unwrap(),
        Some(r1)
    );
    assert_eq!(info(&mut con, "rw").unwrap().1[0], ("r1".into(), r1, 2));

    // A writer waits; a reader that comes after it waits behind it (no starvation).
    let (_, w) = spawn_waiter(&server, b"rw", b"w", 30_000, 10_000);
    wait_waiting(&mut con, 1);
    assert_eq!(
        acquire(&mut con, "rw", "r3", 30_000, &["SHARED"]).unwrap(),
        None
    );
    assert_eq!(release(&mut con, "rw", "r2"), 1);
    assert_eq!(release(&mut con, "rw", "r1"), 1, "one of r1's two holds");
    assert_eq!(waiting(&mut con), 1, "r1 still holds");
    assert_eq!(release(&mut con, "rw", "r1"), 1);
    let (tw, _) = granted(w, "the writer");
    assert!(tw > r2);
    assert_eq!(
        lock_info(&mut con, "rw").map(|i| i.owner),
        Some(b"w".to_vec())
    );
    assert_eq!(release(&mut con, "rw", "w"), 1);
    assert!(!exists(&mut con, "rw"));
}

#[test]
fn consecutive_shared_waiters_are_granted_together() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let x = try_acquire(&mut con, "rw", "x", 30_000).expect("x");
    let mut readers = Vec::new();
    for i in 0..3 {
        let mut c = conn_t(&server);
        let name = format!("r{i}");
        readers.push(std::thread::spawn(move || {
            acquire(&mut c, "rw", &name, 30_000, &["SHARED", "WAIT", "10000"])
        }));
        wait_waiting(&mut con, i + 1);
    }
    let (_, writer) = spawn_waiter(&server, b"rw", b"w", 30_000, 10_000);
    wait_waiting(&mut con, 4);
    let mut late = conn_t(&server);
    let late_reader = std::thread::spawn(move || {
        acquire(&mut late, "rw", "r9", 30_000, &["SHARED", "WAIT", "10000"])
    });
    wait_waiting(&mut con, 5);
    let released_at = Instant::now();
    assert_eq!(release(&mut con, "rw", "x"), 1);
    let tokens: Vec<i64> = readers
        .into_iter()
        .map(|h| h.join().unwrap().unwrap().expect("granted"))
        .collect();
    assert!(released_at.elapsed() < Duration::from_secs(2));
    assert!(
        tokens.windows(2).all(|w| w[0] < w[1]) && tokens[0] > x,
        "{tokens:?}"
    );
    assert_eq!(
        info(&mut con, "rw").unwrap().1.len(),
        3,
        "three readers at once"
    );
    assert_eq!(
        waiting(&mut con),
        2,
        "the writer and the reader behind it wait"
    );
    for i in 0..3 {
        assert_eq!(release(&mut con, "rw", format!("r{i}")), 1);
    }
    let (tw, _) = granted(writer, "the writer");
    assert!(tw > tokens[2]);
    assert_eq!(release(&mut con, "rw", "w"), 1);
    let r9 = late_reader
        .join()
        .unwrap()
        .unwrap()
        .expect("the late reader after the writer");
    assert!(r9 > tw);
}

#[test]
fn a_semaphore_admits_n_owners_in_fifo_order() {
    let server = Server::start();
    let mut con = conn_t(&server);
    let a = acquire(&mut con, "sem", "a", 30_000, &["LIMIT", "2"])
        .unwrap()
        .expect("a");
    let b = acquire(&mut con, "sem", "b", 30_000, &["LIMIT", "2"])
        .unwrap()
        .expect("b");
    assert_eq!(
        acquire(&mut con, "sem", "c", 30_000, &["LIMIT", "2"]).unwrap(),
        None
    );
    for opts in [&["LIMIT", "3"][..], &["SHARED"], &[]] {
        let e = acquire(&mut con, "sem", "c", 30_000, opts).unwrap_err();
        assert_eq!(err_text(&e), KIND, "{opts:?}");
    }
    let mut bad = Vec::new();
    for (opts, want) in [
        (&["LIMIT", "0"][..], "ERR limit must be a positive integer"),
        (&["LIMIT", "x"], "ERR limit must be a positive integer"),
        (&["LIMIT", "1048577"], "ERR limit is out of range"),
        (&["LIMIT"], "ERR syntax error"),
        (&["SHARED", "LIMIT", "2"], "ERR syntax error"),
        (&["SHARED", "SHARED"], "ERR syntax error"),
    ] {
        match acquire(&mut con, "sem", "c", 30_000, opts) {
            Err(e) if err_text(&e) == want => {}
            other => bad.push(format!("{opts:?}: want {want}, got {other:?}")),
        }
    }
    report("bad LIMIT/SHARED options", bad);
    let c = spawn_call_waiter(&server, "c");
    wait_waiting(&mut con, 1);
    let d = spawn_call_waiter(&server, "d");
    wait_waiting(&mut con, 2);
    // b's lease is shortened: its place goes to the oldest waiter within milliseconds.
    assert_eq!(extend(&mut con, "sem", "b", 50), 1);
    let tc = c.join().unwrap().unwrap().expect("c got b's place");
    assert!(tc > b && tc > a);
    assert_eq!(waiting(&mut con), 1);
    assert_eq!(
        cmd("DLOCK.RELEASE")
            .arg("sem")
            .arg("a")
            .arg("TOKEN")
            .arg(b)
            .query::<i64>(&mut con)
            .unwrap(),
        0
    );
    assert_eq!(
        cmd("DLOCK.RELEASE")
            .arg("sem")
            .arg("a")
            .arg("TOKEN")
            .arg(a)
            .query::<i64>(&mut con)
            .unwrap(),
        1
    );
    let td = d.join().unwrap().unwrap().expect("d got a's place");
    assert!(td > tc);
    let holders: Vec<String> = info(&mut con, "sem")
        .unwrap()
        .1
        .into_iter()
        .map(|h| h.0)
        .collect();
    assert_eq!(holders, ["c", "d"]);
}

/// A waiter for `LIMIT 2` on "sem", on its own connection.
fn spawn_call_waiter(
    server: &Server,
    owner: &str,
) -> std::thread::JoinHandle<redis::RedisResult<Option<i64>>> {
    let mut c = conn_t(server);
    let owner = owner.to_string();
    std::thread::spawn(move || {
        acquire(
            &mut c,
            "sem",
            &owner,
            30_000,
            &["LIMIT", "2", "WAIT", "10000"],
        )
    })
}

/// Every holder survives replication, DEBUG RELOAD, DUMP/RESTORE and an AOF rewrite
/// and replay; GUARD checks a set's holders.
#[test]
fn every_holder_survives_replicas_reloads_and_the_aof() {
    let mut server = Server::start_with(
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
        &[],
    );
    let replica = server.start_streaming_replica();
    let mut con = conn_t(&server);
    let r1 = acquire(&mut con, "rw", "r1", 600_000, &["SHARED"])
        .unwrap()
        .unwrap();
    let r2 = acquire(&mut con, "rw", "r\u{0}2", 300_000, &["SHARED", "REENTRANT"])
        .unwrap()
        .unwrap();
    let s1 = acquire(&mut con, "sem", "a", 600_000, &["LIMIT", "3"])
        .unwrap()
        .unwrap();
    acquire(&mut con, "sem", "b", 400_000, &["LIMIT", "3"])
        .unwrap()
        .unwrap();
    assert_eq!(release(&mut con, "sem", "b"), 1);
    let v: Value = cmd("DLOCK.GUARD")
        .arg("rw")
        .arg("r1")
        .arg(r1)
        .arg("INCR")
        .arg("n")
        .query(&mut con)
        .unwrap();
    assert_eq!(v, Value::Int(1));
    let e: redis::RedisResult<Value> = cmd("DLOCK.GUARD")
        .arg("rw")
        .arg("r1")
        .arg(r2)
        .arg("INCR")
        .arg("n")
        .query(&mut con);
    assert!(err_text(&e.unwrap_err()).starts_with("FENCED"));
    let before = info(&mut con, "rw").unwrap();
    let sem_before = info(&mut con, "sem").unwrap();
    let digest = db_digest(&mut con);
    assert_same_dataset(&server, &replica, &["rw", "sem"], "lock sets");
    debug_reload(&mut con);
    assert_eq!(db_digest(&mut con), digest, "DEBUG RELOAD");
    let dump = dump(&mut con, "sem");
    ok(&mut con, cmd("RESTORE").arg("sem2").arg(0).arg(dump));
    assert_eq!(info(&mut con, "sem2").unwrap().1, sem_before.1);
    server.bgrewriteaof();
    server.wait_aof_rewrite_idle();
    let digest = db_digest(&mut con);
    drop(replica);
    server.restart("NOSAVE");
    let mut con = server.conn();
    assert_eq!(db_digest(&mut con), digest, "AOF replay");
    assert_eq!(info(&mut con, "rw").unwrap().1, before.1);
    assert_eq!(info(&mut con, "sem").unwrap().1, sem_before.1);
    // New grants after the replay get larger tokens.
    let s2 = acquire(&mut con, "sem", "c", 1_000, &["LIMIT", "3"])
        .unwrap()
        .unwrap();
    assert!(s2 > s1 && s2 > r2);
    // A forged set is refused by the internal command's check and by RESTORE.
    let e: redis::RedisResult<Value> = cmd("DLOCK._SETS")
        .arg("x")
        .arg("0:1")
        .arg("")
        .query(&mut con);
    assert_eq!(
        err_text(&e.unwrap_err()),
        "ERR dlock._sets is an internal command"
    );
}
