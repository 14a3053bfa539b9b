//! The cache family's keyspace events (module class `d`), one per write of an entry or its lease.

use std::ffi::CStr;

/// `cache.extend`.
pub const EXTEND: &CStr = c"cache.extend";

/// `cache.lease`.
pub const LEASE: &CStr = c"cache.lease";

/// `cache.set`.
pub const SET: &CStr = c"cache.set";

/// Every event of the family, for its declaration.
pub static ALL: [&CStr; 3] = [EXTEND, LEASE, SET];
