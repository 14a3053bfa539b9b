//! Distributed locks (`DLOCK.*`): the commands, the `warden-lk` data type,
//! the `DLOCK._SET` wire format and the fencing clock. The state machine
//! itself is `core::lock`; waiting for a lock is `waiting`.

pub mod commands;
pub mod data_type;
pub mod fence;
pub mod wire;
