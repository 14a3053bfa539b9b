//! `CACHE.*` helpers shared by the cache tests: SET/GET wrappers, the
//! `[value, lease]` reply of `CACHE.GET … LEASE`, CACHE.INFO as a map, and the
//! count of waiting clients. (Clients blocked in `CACHE.GET … WAIT` are
//! `crate::common::waiter::Waiter`.)

use crate::common::*;

use std::collections::HashMap;
use std::time::Duration;

/// `CACHE.SET key value ttl [opts...]`: 1 stored, 0 refused.
pub fn cache_set(con: &mut Connection, key: &str, value: &str, ttl: i64, opts: &[&str]) -> i64 {
    try_cache_set(con, key, value, ttl, opts).expect("CACHE.SET")
}

/// A refresher's `CACHE.SET key value ttl LEASE token`: 1 stored, 0 refused (the
/// lease is not current).
pub fn refresh(con: &mut Connection, key: &str, value: &str, ttl: i64, token: i64) -> i64 {
    cache_set(con, key, value, ttl, &["LEASE", &token.to_string()])
}

/// `CACHE.SET` whose error is the caller's to check.
pub fn try_cache_set(
    con: &mut Connection,
    key: &str,
    value: &str,
    ttl: i64,
    opts: &[&str],
) -> redis::RedisResult<i64> {
    cmd("CACHE.SET")
        .arg(key)
        .arg(value)
        .arg(ttl)
        .arg(opts)
        .query(con)
}

/// `CACHE.GET key [opts...]` without LEASE: the value or nil.
pub fn cache_get(con: &mut Connection, key: &str, opts: &[&str]) -> Option<String> {
    cmd("CACHE.GET")
        .arg(key)
        .arg(opts)
        .query(con)
        .expect("CACHE.GET")
}

/// The `[value or nil, lease]` reply of `CACHE.GET … LEASE`.
pub type Leased = (Option<String>, i64);

/// `CACHE.GET key [opts...] LEASE lease_ms`.
pub fn get_lease(con: &mut Connection, key: &str, lease_ms: i64, opts: &[&str]) -> Leased {
    cmd("CACHE.GET")
        .arg(key)
        .arg(opts)
        .arg("LEASE")
        .arg(lease_ms)
        .query(con)
        .expect("CACHE.GET LEASE")
}

/// `CACHE.GET key LEASE lease_ms WAIT timeout_ms`.
pub fn get_wait(
    con: &mut Connection,
    key: &str,
    lease_ms: i64,
    timeout_ms: i64,
) -> redis::RedisResult<Leased> {
    get_wait_min(con, key, 0, lease_ms, timeout_ms)
}

/// `CACHE.GET key [MINVERSION min] LEASE lease_ms WAIT timeout_ms` (no
/// MINVERSION when `min` is 0, its default).
pub fn get_wait_min(
    con: &mut Connection,
    key: &str,
    min: i64,
    lease_ms: i64,
    timeout_ms: i64,
) -> redis::RedisResult<Leased> {
    let mut c = cmd("CACHE.GET");
    c.arg(key);
    if min > 0 {
        c.arg("MINVERSION").arg(min);
    }
    c.arg("LEASE")
        .arg(lease_ms)
        .arg("WAIT")
        .arg(timeout_ms)
        .query(con)
}

/// CACHE.INFO as field → integer; `None` for a missing key.
pub fn cache_info(con: &mut Connection, key: &str) -> Option<HashMap<String, i64>> {
    let v: Value = query!(con, "CACHE.INFO", key);
    let items = match v {
        Value::Nil => return None,
        Value::Array(items) => items
            .chunks(2)
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect::<Vec<_>>(),
        Value::Map(pairs) => pairs,
        other => panic!("CACHE.INFO replied {other:?}"),
    };
    Some(
        items
            .into_iter()
            .map(|(k, v)| {
                let k: String = redis::from_redis_value(&k).expect("field name");
                let v: i64 = redis::from_redis_value(&v).expect("integer field");
                (k, v)
            })
            .collect(),
    )
}

/// A refresh in progress on `key`: a stale value of `version` (fresh for 1 ms,
/// stale for 600 s) and a live lease of `lease_ms` taken with `MINVERSION
/// version+1`, which the stale value does not meet (so clients waiting with
/// that MINVERSION block). Returns the lease token.
pub fn refresh_in_progress(con: &mut Connection, key: &str, version: i64, lease_ms: i64) -> i64 {
    let v = version.to_string();
    assert_eq!(
        cache_set(con, key, "old", 1, &["STALE", "600000", "VERSION", &v]),
        1
    );
    let stale = wait_until(Duration::from_secs(2), || {
        cache_info(con, key).is_some_and(|i| i["fresh_ms"] < 0)
    });
    assert!(stale, "{key} never went stale");
    let min = (version + 1).to_string();
    let (value, token) = get_lease(con, key, lease_ms, &["MINVERSION", &min]);
    assert_eq!(
        value, None,
        "{key}: a value older than MINVERSION is not served"
    );
    assert!(token > 0, "{key}: no lease");
    token
}

/// Waits until `n` clients wait on `key` (CACHE.INFO waiters).
pub fn wait_for_waiters(con: &mut Connection, key: &str, n: i64) {
    assert!(
        wait_until(Duration::from_secs(10), || {
            cache_info(con, key).is_some_and(|i| i["waiters"] == n)
        }),
        "{key}: {n} waiters never queued"
    );
}
