//! The rate family's pure core: rates and GCRA (`rate`), token and leaky
//! buckets (`bucket`) and sliding windows (`window`), and its refusals (`errors`). Times are passed in
//! by the caller.

pub mod bucket;
pub mod errors;
pub mod packed;
pub mod params;
pub mod rate;
pub mod window;
