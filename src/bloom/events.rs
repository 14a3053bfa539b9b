//! The Bloom family's keyspace events (module class `d`), one per write that changed a filter.

use std::ffi::CStr;

/// `bf.add`.
pub const ADD: &CStr = c"bf.add";

/// `bf.insert`.
pub const INSERT: &CStr = c"bf.insert";

/// `bf.load`.
pub const LOAD: &CStr = c"bf.load";

/// `bf.loadchunk`.
pub const LOADCHUNK: &CStr = c"bf.loadchunk";

/// `bf.madd`.
pub const MADD: &CStr = c"bf.madd";

/// `bf.reserve`.
pub const RESERVE: &CStr = c"bf.reserve";

/// Every event of the family, for its declaration.
pub static ALL: [&CStr; 6] = [ADD, INSERT, LOAD, LOADCHUNK, MADD, RESERVE];
