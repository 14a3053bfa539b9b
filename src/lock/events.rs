//! The lock family's keyspace events (module class `d`): a grant, a release, a lease extended, a state written by replication, and news that a holder lost its lock.

use std::ffi::CStr;

/// `dlock.acquire`.
pub const ACQUIRE: &CStr = c"dlock.acquire";

/// `dlock.extend`.
pub const EXTEND: &CStr = c"dlock.extend";

/// `dlock.lost`.
pub const LOST: &CStr = c"dlock.lost";

/// `dlock.release`.
pub const RELEASE: &CStr = c"dlock.release";

/// `dlock.set`.
pub const SET: &CStr = c"dlock.set";

/// Every event of the family, for its declaration.
pub static ALL: [&CStr; 5] = [ACQUIRE, EXTEND, LOST, RELEASE, SET];
