//! Distributed locks (`DLOCK.*`): the pure core (`core`: the state machine,
//! lock sets, the guard's rule), the commands, the `warden-lk` and
//! `warden-ls` data types and the `DLOCK._SET` wire format. Tokens come from
//! `glue::fence`; waiting for a lock is `glue::waiting`.

pub mod bulk_loss;
pub mod call;
pub mod commands;
pub mod config;
pub mod core;
pub mod data_type;
pub mod events;
pub mod keep;
pub mod kept_grants;
pub mod lapse_watch;
pub mod lost;
pub mod replicas;
pub mod set_type;
pub mod set_wire;
pub mod stats;
pub mod waiters;
pub mod wire;

use crate::glue::family::Family;
use crate::glue::host::Ctx;

/// The lock family's declaration.
pub static FAMILY: Family = Family {
    name: "lock",
    acl_category: Some(c"dlock"),
    commands: commands::COMMANDS,
    types: &[&data_type::LOCK_TYPE, &set_type::LOCK_SET_TYPE],
    configs: &config::CONFIGS,
    info: &stats::INFO,
    events: &events::ALL,
    start,
    foreign: &[],
};

/// Kept grants follow their connections, flushes and role changes tell
/// holders they lost their grants, sets are watched for early lapses, and
/// `DLOCK._FENCE` carries the shared fencing floor.
fn start(ctx: Ctx) -> Result<(), String> {
    crate::glue::fence::carried_by(commands::fence::NAME);
    if !keep::start(ctx, kept_grants::apply) {
        return Err("cannot subscribe to client connection events".to_string());
    }
    if !bulk_loss::start(ctx) || !lapse_watch::start(ctx, kept_grants::drop_lapsed) {
        return Err("cannot subscribe to flushes and replication role changes".to_string());
    }
    Ok(())
}
