//! The cuckoo family's values for the fuzzer (`grammar::VALUES`).

pub const CF_KEYS: &[&str] = &["cf:0", "cf:1", "cf:2"];

/// Cuckoo capacities, bucket sizes, walk lengths and expansions (0: never grows).
pub const CF_CAPACITIES: &[&str] = &["4", "10", "50", "1000", "20000"];
pub const CF_BUCKET_SIZES: &[&str] = &["1", "2", "4", "8", "255"];
pub const CF_ITERATIONS: &[&str] = &["1", "5", "20", "500"];
pub const CF_EXPANSIONS: &[&str] = &["0", "1", "2", "3"];
