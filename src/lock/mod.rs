//! Distributed locks (`DLOCK.*`): the pure core (`core`: the state machine,
//! lock sets, the guard's rule), the commands, the `warden-lk` and
//! `warden-ls` data types and the `DLOCK._SET` wire format. Tokens come from
//! `glue::fence`; waiting for a lock is `glue::waiting`.

pub mod bulk_loss;
pub mod commands;
pub mod core;
pub mod data_type;
pub mod guard;
pub mod info;
pub mod keep;
pub mod kept_grants;
pub mod lapse_watch;
pub mod lost;
pub mod replicas;
pub mod requests;
pub mod set_type;
pub mod set_wire;
pub mod table;
pub mod wire;
