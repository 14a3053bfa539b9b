//! The count-min family's keyspace events (module class `d`), one per write that changed a key.

use std::ffi::CStr;

/// `cms.initbydim`.
pub const INITBYDIM: &CStr = c"cms.initbydim";

/// `cms.initbyprob`.
pub const INITBYPROB: &CStr = c"cms.initbyprob";

/// `cms.incrby`.
pub const INCRBY: &CStr = c"cms.incrby";

/// `cms.merge`.
pub const MERGE: &CStr = c"cms.merge";

/// `cms.rotate`.
pub const ROTATE: &CStr = c"cms.rotate";

/// `cms.load`.
pub const LOAD: &CStr = c"cms.load";

/// Every event of the family, for its declaration.
pub static ALL: [&CStr; 6] = [INITBYDIM, INITBYPROB, INCRBY, MERGE, ROTATE, LOAD];
