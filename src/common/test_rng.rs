//! A tiny deterministic generator (xorshift64) for the unit tests' random
//! schedules and cases: the same seed gives the same run on every machine.

/// The generator's state; seed it with any non-zero value.
pub struct Rng(pub u64);

impl Rng {
    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// The next value below `n` (not 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}
