//! Bloom filters (`BF.*X`): the commands, the `warden-bf` data type and the
//! `BF._LOADX` wire format. Sizing and hashing are `core::bloom`.

pub mod commands;
pub mod data_type;
pub mod wire;
