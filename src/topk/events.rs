//! The top-k family's keyspace events (module class `d`), one per write that changed a key.

use std::ffi::CStr;

/// `topk.reserve`.
pub const RESERVE: &CStr = c"topk.reserve";

/// `topk.add`.
pub const ADD: &CStr = c"topk.add";

/// `topk.incrby`.
pub const INCRBY: &CStr = c"topk.incrby";

/// `topk.rotate`.
pub const ROTATE: &CStr = c"topk.rotate";

/// `topk.load`.
pub const LOAD: &CStr = c"topk.load";

/// Every event of the family, for its declaration.
pub static ALL: [&CStr; 5] = [RESERVE, ADD, INCRBY, ROTATE, LOAD];
