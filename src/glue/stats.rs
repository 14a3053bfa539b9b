//! The counters of the module's shared parts (replicated effects, active
//! defragmentation) and their INFO fields; each family keeps its own in its
//! folder (`<family>::stats`).

use std::sync::atomic::{AtomicI64, Ordering};

/// Lock and limiter effects replicated in the client's own call (`effect`).
pub static EFFECTS_IN_PLACE: AtomicI64 = AtomicI64::new(0);
/// Lock and limiter effects replicated as an internal command.
pub static EFFECTS_AS_COMMANDS: AtomicI64 = AtomicI64::new(0);
/// Time-dependent calls applied from a master or the AOF without their effect.
pub static REPLAYS_WITHOUT_EFFECT: AtomicI64 = AtomicI64::new(0);

/// Blocks of warden's values active defragmentation moved (values and
/// their inner allocations; Redis's own key objects not included).
pub static DEFRAG_MOVED: AtomicI64 = AtomicI64::new(0);
/// Defrag calls on a large value that stopped to resume at a later call.
pub static DEFRAG_PAUSED: AtomicI64 = AtomicI64::new(0);

/// Adds one to a counter.
pub fn count(counter: &AtomicI64) {
    counter.fetch_add(1, Ordering::Relaxed);
}
