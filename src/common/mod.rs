//! Pure code the families share: no Redis types, no clock reads. The error
//! type, argument parsing, the fencing clock, compact byte strings, the
//! cluster's key slots, the waiters' queue and the moving of heap blocks for
//! active defragmentation, what counting sketches share (and, for unit tests,
//! one seeded generator).

pub mod chunks;
pub mod cluster;
pub mod compact_bytes;
pub mod error;
pub mod fence_clock;
pub mod grammar;
pub mod le_words;
pub mod limit;
pub mod murmur3;
pub mod murmur64a;
pub mod parse;
pub mod printf;
pub mod relocate;
pub mod sketch;
#[cfg(test)]
pub mod test_rng;
pub mod varint;
pub mod wait_queue;
