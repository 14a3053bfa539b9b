//! An integer argument's documented range, declared once by the family that
//! takes it: its parser, its configuration's bounds and its error text all
//! come from the one declaration (`parse.rs` reads and checks it).

/// The range `min..=max` of the integer argument named `arg` (as its error
/// text names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// The argument's name in the error text (`BUCKETSIZE`, `expansion`).
    pub arg: &'static str,
    /// The smallest value taken.
    pub min: u64,
    /// The largest value taken.
    pub max: u64,
}

impl Limit {
    /// The range `min..=max` of `arg`.
    pub const fn new(arg: &'static str, min: u64, max: u64) -> Limit {
        Limit { arg, min, max }
    }

    /// Whether `value` is in the range.
    pub fn contains(&self, value: u64) -> bool {
        (self.min..=self.max).contains(&value)
    }
}
