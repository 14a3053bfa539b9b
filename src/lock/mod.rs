//! Distributed locks (`DLOCK.*`): the commands, the `warden-lk` data type,
//! and the `DLOCK._SET` wire format. The state machine itself is
//! `core::lock`; tokens come from `fence`; waiting for a lock is `waiting`.

pub mod commands;
pub mod data_type;
pub mod guard;
pub mod replicas;
pub mod set_type;
pub mod set_wire;
pub mod wire;
