//! The module's fencing clock: the largest token issued or seen, shared by
//! every lock key and cache lease (only the main thread touches it).

use std::sync::atomic::{AtomicI64, Ordering};

use crate::core::lock::FenceClock;
use crate::host;

/// The state of the module's `FenceClock`.
static FENCE_LAST: AtomicI64 = AtomicI64::new(0);

/// Runs `op` on the module's fencing clock.
pub fn with_fence<R>(op: impl FnOnce(&mut FenceClock) -> R) -> R {
    let mut fence = FenceClock::starting_at(FENCE_LAST.load(Ordering::Relaxed));
    let out = op(&mut fence);
    FENCE_LAST.store(fence.last(), Ordering::Relaxed);
    out
}

/// Raises the token floor to a token seen in storage or from a master
/// (unless it is implausibly far ahead of the clock: see `MAX_TOKEN_LEAD`).
pub fn observe_token(token: i64) {
    let now = host::now_ms();
    with_fence(|fence| fence.observe(token, now));
}
