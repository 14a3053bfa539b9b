//! `DLOCK.*` helpers shared by the lock tests: acquire/release/extend wrappers,
//! DLOCK.INFO parsing, the count of waiting clients, and worker clients on their own
//! threads. (Clients blocked in `DLOCK.ACQUIRE … WAIT` are `crate::common::waiter::Waiter`.)

use crate::common::waiter::{RawConn, Reply, Waiter};
use crate::common::*;

use std::thread::{self, JoinHandle};
use std::time::Duration;

/// A connection whose reads time out, so a module that blocks when it must not makes the
/// test fail instead of hanging forever.
pub fn conn_t(server: &Server) -> Connection {
    timed(server.conn(), Duration::from_secs(30))
}

/// A new server and a connection to it whose reads time out (`conn_t`).
pub fn lock_server() -> (Server, Connection) {
    let server = Server::start();
    let con = conn_t(&server);
    (server, con)
}

/// A new server on which `holder` holds `key` for `ttl` ms: the server, a
/// connection to it and the holder's token.
pub fn held(key: &str, ttl: i64) -> (Server, Connection, i64) {
    let (server, mut con) = lock_server();
    let t = try_acquire(&mut con, key, "holder", ttl).expect("granted");
    (server, con, t)
}

/// `DLOCK.ACQUIRE key owner ttl`: the token, or None when the lock is busy.
pub fn try_acquire<K: redis::ToRedisArgs, O: redis::ToRedisArgs>(
    con: &mut Connection,
    key: K,
    owner: O,
    ttl: i64,
) -> Option<i64> {
    acquire_opts(con, key, owner, ttl, &[])
}

/// `DLOCK.ACQUIRE key owner ttl REENTRANT`: a holder's repeat adds a hold.
pub fn reenter<K: redis::ToRedisArgs, O: redis::ToRedisArgs>(
    con: &mut Connection,
    key: K,
    owner: O,
    ttl: i64,
) -> Option<i64> {
    acquire_opts(con, key, owner, ttl, &["REENTRANT"])
}

/// `DLOCK.ACQUIRE key owner ttl <opts…>` (`SHARED`, `LIMIT n`, `REENTRANT`) without
/// waiting: the token, or None when the lock is busy; fails on an error reply.
pub fn acquire_opts<K: redis::ToRedisArgs, O: redis::ToRedisArgs>(
    con: &mut Connection,
    key: K,
    owner: O,
    ttl: i64,
    opts: &[&str],
) -> Option<i64> {
    query!(con, "DLOCK.ACQUIRE", key, owner, ttl, opts)
}

pub fn acquire_wait<K: redis::ToRedisArgs, O: redis::ToRedisArgs>(
    con: &mut Connection,
    key: K,
    owner: O,
    ttl: i64,
    wait: i64,
) -> redis::RedisResult<Option<i64>> {
    cmd("DLOCK.ACQUIRE")
        .arg(key)
        .arg(owner)
        .arg(ttl)
        .arg("WAIT")
        .arg(wait)
        .query(con)
}

/// `DLOCK.ACQUIRE key owner ttl WAIT wait` (`(ttl, wait)`) on `con` (a worker's own
/// connection): the token; fails on an error or on nil (the WAIT timed out).
pub fn wait_granted(con: &mut Connection, key: &str, owner: &str, (ttl, wait): (i64, i64)) -> i64 {
    acquire_wait(con, key, owner, ttl, wait)
        .unwrap_or_else(|e| panic!("DLOCK.ACQUIRE {key} {owner}: {e}"))
        .unwrap_or_else(|| panic!("{owner} not granted {key} before the WAIT timeout"))
}

pub fn release<K: redis::ToRedisArgs, O: redis::ToRedisArgs>(
    con: &mut Connection,
    key: K,
    owner: O,
) -> i64 {
    cmd("DLOCK.RELEASE")
        .arg(key)
        .arg(owner)
        .query(con)
        .expect("DLOCK.RELEASE")
}

pub fn extend<K: redis::ToRedisArgs, O: redis::ToRedisArgs>(
    con: &mut Connection,
    key: K,
    owner: O,
    ttl: i64,
) -> i64 {
    cmd("DLOCK.EXTEND")
        .arg(key)
        .arg(owner)
        .arg(ttl)
        .query(con)
        .expect("DLOCK.EXTEND")
}

#[derive(Debug, Clone, PartialEq)]
pub struct LockInfo {
    pub owner: Vec<u8>,
    pub token: i64,
    pub ttl_ms: i64,
    pub holds: i64,
    pub waiters: i64,
}

pub fn value_bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::BulkString(b) => Some(b.clone()),
        Value::SimpleString(s) => Some(s.as_bytes().to_vec()),
        Value::VerbatimString { text, .. } => Some(text.as_bytes().to_vec()),
        _ => None,
    }
}

/// Parses a DLOCK.INFO reply (RESP2 flat array or RESP3 map); None for nil.
pub fn parse_info(v: &Value) -> Option<LockInfo> {
    let pairs: Vec<(Value, Value)> = match v {
        Value::Nil => return None,
        Value::Array(items) => {
            assert_eq!(
                items.len(),
                10,
                "DLOCK.INFO must have 5 field/value pairs: {v:?}"
            );
            items
                .chunks(2)
                .map(|c| (c[0].clone(), c[1].clone()))
                .collect()
        }
        Value::Map(pairs) => {
            assert_eq!(pairs.len(), 5, "DLOCK.INFO must have 5 fields: {v:?}");
            pairs.clone()
        }
        other => panic!("unexpected DLOCK.INFO reply: {other:?}"),
    };
    let mut owner = None;
    let (mut token, mut ttl_ms, mut holds, mut waiters) = (None, None, None, None);
    for (k, val) in &pairs {
        let name = value_bytes(k).unwrap_or_else(|| panic!("field name is not a string: {v:?}"));
        let int = || match val {
            Value::Int(i) => *i,
            other => panic!(
                "field {:?} is not an integer: {other:?}",
                String::from_utf8_lossy(&name)
            ),
        };
        match name.as_slice() {
            b"owner" => owner = Some(value_bytes(val).expect("owner is a string")),
            b"token" => token = Some(int()),
            b"ttl_ms" => ttl_ms = Some(int()),
            b"holds" => holds = Some(int()),
            b"waiters" => waiters = Some(int()),
            other => panic!(
                "unknown DLOCK.INFO field {:?}",
                String::from_utf8_lossy(other)
            ),
        }
    }
    Some(LockInfo {
        owner: owner.expect("owner field"),
        token: token.expect("token field"),
        ttl_ms: ttl_ms.expect("ttl_ms field"),
        holds: holds.expect("holds field"),
        waiters: waiters.expect("waiters field"),
    })
}

/// Two DLOCK.INFO replies of one key (`before` and `after` a step, or master and
/// replica): both free, or the same holder (owner, token, holds); the pair when held,
/// for the caller's checks of the leases.
pub fn same_holder<'a>(
    before: &'a Option<LockInfo>,
    after: &'a Option<LockInfo>,
    what: &str,
) -> Option<(&'a LockInfo, &'a LockInfo)> {
    match (before, after) {
        (None, None) => None,
        (Some(b), Some(a)) => {
            let holder = |i: &'a LockInfo| (&i.owner, i.token, i.holds);
            assert_eq!(holder(a), holder(b), "{what}");
            Some((b, a))
        }
        _ => panic!("{what}: {before:?}, then {after:?}"),
    }
}

/// DLOCK.INFO of a plain lock as (owner, token, holds, waiters); None when free.
pub fn lock_view(con: &mut Connection, key: &str) -> Option<(String, i64, i64, i64)> {
    lock_info(con, key).map(|i| {
        let owner = String::from_utf8_lossy(&i.owner).into_owned();
        (owner, i.token, i.holds, i.waiters)
    })
}

pub fn lock_info<K: redis::ToRedisArgs>(con: &mut Connection, key: K) -> Option<LockInfo> {
    let v: Value = query!(con, "DLOCK.INFO", key);
    parse_info(&v)
}

/// One holder of a lock set as DLOCK.INFO lists it: owner, token, holds.
pub type Holder = (String, i64, i64);

/// DLOCK.INFO of a lock set (SHARED or LIMIT n): its fields but `holders`, and its
/// holders in grant order.
pub type SetInfo = (Vec<(String, Value)>, Vec<Holder>);

/// DLOCK.INFO of a lock set as field → value, with `holders` apart; None when free.
pub fn set_info(con: &mut Connection, key: &str) -> Option<SetInfo> {
    let v: Value = query!(con, "DLOCK.INFO", key);
    let Value::Array(flat) = v else {
        return None;
    };
    let text = |v: &Value| {
        String::from_utf8_lossy(&value_bytes(v).unwrap_or_else(|| panic!("not text: {v:?}")))
            .into_owned()
    };
    let mut fields = Vec::new();
    let mut holders = Vec::new();
    for pair in flat.chunks(2) {
        let name = text(&pair[0]);
        if name != "holders" {
            fields.push((name, pair[1].clone()));
            continue;
        }
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
                    .unwrap_or_else(|| panic!("holder without {k}: {h:?}"))
            };
            let int = |v: Value| match v {
                Value::Int(i) => i,
                other => panic!("not an integer: {other:?}"),
            };
            holders.push((text(&get("owner")), int(get("token")), int(get("holds"))));
        }
    }
    Some((fields, holders))
}

/// The holders of a lock set (empty when the key is free).
pub fn set_holders(con: &mut Connection, key: &str) -> Vec<Holder> {
    set_info(con, key).map_or_else(Vec::new, |(_, h)| h)
}

/// The number of clients waiting for a lock (INFO warden `locks_waiting`).
pub fn waiting(con: &mut Connection) -> i64 {
    warden_stat(con, "locks_waiting")
}

/// Waits up to 5 s until `n` clients wait for a lock.
pub fn wait_waiting(con: &mut Connection, n: i64) {
    wait_waiting_for(con, n, "waiters");
}

/// `wait_waiting`, with `what` naming the step in the failure.
pub fn wait_waiting_for(con: &mut Connection, n: i64, what: &str) {
    let ok = wait_until(Duration::from_secs(5), || waiting(con) == n);
    let now = waiting(con);
    assert!(ok, "{what}: locks_waiting never reached {n} (it is {now})");
}

/// A client blocked in `DLOCK.ACQUIRE key owner ttl WAIT wait`, queued: it returns
/// once the count of waiting clients has grown by one.
pub fn queued(
    server: &Server,
    con: &mut Connection,
    key: &str,
    owner: &str,
    (ttl, wait): (i64, i64),
) -> Waiter {
    let before = waiting(con);
    let w = Waiter::lock(server, key, owner, ttl, wait);
    wait_waiting(con, before + 1);
    w
}

/// Starts a worker client (own connection) running `f` in a thread: a client that
/// does more than wait for one answer (acquire, work, release, in a loop).
pub fn spawn_client<T: Send + 'static>(
    server: &Server,
    f: impl FnOnce(&mut Connection) -> T + Send + 'static,
) -> JoinHandle<T> {
    let mut con = conn_t(server);
    thread::spawn(move || f(&mut con))
}

pub fn assert_strictly_increasing(tokens: &[i64], what: &str) {
    for w in tokens.windows(2) {
        assert!(
            w[0] < w[1],
            "{what}: tokens not strictly increasing: {} then {} (all: {tokens:?})",
            w[0],
            w[1]
        );
    }
}

/// The error text of a reply that must be an error.
pub fn expect_err<T: std::fmt::Debug>(r: redis::RedisResult<T>, what: &str) -> String {
    match r {
        Ok(v) => panic!("{what}: expected an error reply, got {v:?}"),
        Err(e) => err_text(&e),
    }
}

/// Takes `key` for `owner` with `KEEP` (and `extra` options) on `conn`.
pub fn keep(conn: &mut RawConn, key: &str, owner: &str, ttl: i64, extra: &[&str]) -> i64 {
    let ttl = ttl.to_string();
    let mut args = vec!["DLOCK.ACQUIRE", key, owner, &ttl, "KEEP"];
    args.extend(extra);
    match conn.call(&args) {
        Reply::Int(token) => token,
        other => panic!("{args:?} answered {other:?}"),
    }
}

/// The owner and token `DLOCK.INFO` shows for `key` (None when free).
pub fn holder(con: &mut Connection, key: &str) -> Option<(String, i64)> {
    let info: Option<Vec<Value>> = query!(con, "DLOCK.INFO", key);
    let info = info?;
    let field = |name: &str| {
        let at = info
            .iter()
            .position(|v| matches!(v, Value::BulkString(b) if b == name.as_bytes()))?;
        Some(info[at + 1].clone())
    };
    let owner = match field("owner")? {
        Value::BulkString(b) => String::from_utf8_lossy(&b).into_owned(),
        other => panic!("owner {other:?}"),
    };
    let token = match field("token")? {
        Value::Int(t) => t,
        other => panic!("token {other:?}"),
    };
    Some((owner, token))
}
