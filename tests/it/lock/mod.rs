//! The lock family (`DLOCK.*`).

mod acquire;
mod blocking_stress;
mod epoch;
mod errors;
mod failover;
pub mod fuzz_values;
mod guard;
mod keep;
mod keep_limits;
pub mod kit;
mod lost;
mod memory;
mod numeric_ranges;
pub mod payload;
mod persistence;
pub mod record;
mod replica_waiters;
mod server_ops_lease;
mod server_ops_oom;
mod server_ops_pause;
mod server_ops_roles;
mod server_ops_sets;
mod server_ops_shutdown;
mod shared;
pub mod support;
mod waiter_memory;
mod waiting;
