//! The rate family's keyspace events (module class `d`), one per call that wrote a limiter.

use std::ffi::CStr;

/// `rl.gcra`.
pub const GCRA: &CStr = c"rl.gcra";

/// `rl.leaky`.
pub const LEAKY: &CStr = c"rl.leaky";

/// `rl.set`.
pub const SET: &CStr = c"rl.set";

/// `rl.token`.
pub const TOKEN: &CStr = c"rl.token";

/// `rl.window`.
pub const WINDOW: &CStr = c"rl.window";

/// Every event of the family, for its declaration.
pub static ALL: [&CStr; 5] = [GCRA, LEAKY, SET, TOKEN, WINDOW];
