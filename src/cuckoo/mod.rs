//! Cuckoo filters (`CF.*X`): membership you can delete from. The commands,
//! the `warden-cf` data type and the internal commands' wire format; the
//! filter itself is `cuckoo::core::filter`.

pub mod commands;
pub mod core;
pub mod data_type;
pub mod requests;
pub mod table;
pub mod wire;
