//! The cuckoo family's keyspace events (module class `d`), one per write that changed a filter.

use std::ffi::CStr;

/// `cf.add`.
pub const ADD: &CStr = c"cf.add";

/// `cf.compact`.
pub const COMPACT: &CStr = c"cf.compact";

/// `cf.del`.
pub const DEL: &CStr = c"cf.del";

/// `cf.insert`.
pub const INSERT: &CStr = c"cf.insert";

/// `cf.load`.
pub const LOAD: &CStr = c"cf.load";

/// `cf.loadchunk`.
pub const LOADCHUNK: &CStr = c"cf.loadchunk";

/// `cf.reserve`.
pub const RESERVE: &CStr = c"cf.reserve";

/// Every event of the family, for its declaration.
pub static ALL: [&CStr; 7] = [ADD, COMPACT, DEL, INSERT, LOAD, LOADCHUNK, RESERVE];
