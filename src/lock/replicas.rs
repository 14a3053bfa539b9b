//! The lock-only replica rule (`dlock-min-replicas`): a master refuses lock
//! grants, EXTEND and DLOCK.GUARD unless it sees that many replicas online
//! with a lag within `dlock-min-replicas-max-lag` seconds. Unlike Redis's
//! `min-replicas-to-write` it leaves every other write alone. The count is
//! read from `INFO replication` at most once per `REFRESH_MS`.

use std::cell::Cell;

use crate::common::error::WardenError;
use crate::glue::host::{self, Ctx};
use crate::lock::config::{DLOCK_MIN_REPLICAS, DLOCK_MIN_REPLICAS_MAX_LAG};
use crate::lock::core::errors;

/// How long a count of good replicas is reused (Redis itself recounts its
/// `min-replicas-to-write` replicas once a second).
const REFRESH_MS: i64 = 100;

thread_local! {
    /// When the replicas were last counted, the lag used, and the count.
    static COUNTED: Cell<(i64, i64, i64)> = const { Cell::new((i64::MIN, -1, 0)) };
}

/// Whether one `slave<i>` field of `INFO replication` describes a replica
/// that is online with a lag of at most `max_lag_s` seconds.
pub fn is_good_replica(field: &[u8], max_lag_s: i64) -> bool {
    let mut online = false;
    let mut lag = None;
    for part in field.split(|&b| b == b',') {
        if part == b"state=online" {
            online = true;
        } else if let Some(v) = part.strip_prefix(b"lag=") {
            lag = std::str::from_utf8(v)
                .ok()
                .and_then(|v| v.parse::<i64>().ok());
        }
    }
    online && lag.is_some_and(|l| (0..=max_lag_s).contains(&l))
}

/// Refuses (`NOREPLICAS …`) when the rule is on and this master sees too
/// few good replicas. Calls applied from the master link or the AOF pass.
/// The replay check (a context-flags call, two thirds of the rule's cost)
/// runs only on the way to a refusal.
pub fn require(ctx: Ctx, now_ms: i64) -> Result<(), WardenError> {
    let needed = DLOCK_MIN_REPLICAS.get();
    if needed == 0 {
        return Ok(());
    }
    let max_lag_s = DLOCK_MIN_REPLICAS_MAX_LAG.get();
    let seen = good_replicas(ctx, max_lag_s, now_ms);
    if seen >= needed || host::is_replay(ctx) {
        Ok(())
    } else {
        Err(errors::not_enough_replicas(needed, max_lag_s, seen))
    }
}

/// Replicas online within `max_lag_s`, counted at most once per `REFRESH_MS`.
fn good_replicas(ctx: Ctx, max_lag_s: i64, now_ms: i64) -> i64 {
    let (at, lag, count) = COUNTED.with(Cell::get);
    if lag == max_lag_s && (at..at.saturating_add(REFRESH_MS)).contains(&now_ms) {
        return count;
    }
    let count = host::replica_fields(ctx)
        .iter()
        .filter(|f| is_good_replica(f, max_lag_s))
        .count() as i64;
    COUNTED.with(|c| c.set((now_ms, max_lag_s, count)));
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_good_replica_is_online_and_recent() {
        let line = b"ip=10.0.0.2,port=6379,state=online,offset=1234,lag=1";
        assert!(is_good_replica(line, 1));
        assert!(is_good_replica(line, 10));
        assert!(!is_good_replica(line, 0));
        for bad in [
            &b"ip=10.0.0.2,port=6379,state=wait_bgsave,offset=0,lag=0"[..],
            b"ip=10.0.0.2,port=6379,state=send_bulk,offset=0,lag=0",
            b"ip=10.0.0.2,port=6379,state=online,offset=9",
            b"ip=10.0.0.2,port=6379,state=online,offset=9,lag=-1",
            b"ip=10.0.0.2,port=6379,state=online,offset=9,lag=x",
            b"",
        ] {
            assert!(
                !is_good_replica(bad, 10),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        // An address holding the text does not fool it.
        assert!(!is_good_replica(b"ip=state=online,port=1,lag=0", 10));
    }
}
