//! The lock family's pure core: the plain lock's state machine (`plain`),
//! locks with several holders (`set`) and when their holders' leases
//! end early (`lapse`), what an ACQUIRE does (`acquire`), who gets a freed
//! lock among its waiters (`handover`) and which commands `DLOCK.GUARD` may
//! run (`guard`).
//! Times are passed in by the caller.

pub mod acquire;
pub mod errors;
pub mod guard;
pub mod handover;
pub mod keep;
pub mod lapse;
pub mod packed;
pub mod plain;
pub mod record;
pub mod set;

#[cfg(test)]
mod test_model;
