//! Bloom filters (`BF.*X`): the commands, the `warden-bf` data type, the
//! `warden-bl` type of a filter being loaded by `BF.LOADCHUNKX`, and the
//! `BF._LOADX` wire format. Sizing, hashing and the dump format are
//! `bloom::core::filter` and `bloom::core::dump`.

pub mod commands;
pub mod core;
pub mod data_type;
pub mod dump;
pub mod loading_type;
pub mod requests;
pub mod table;
pub mod wire;
