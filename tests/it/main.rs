//! The integration tests, built once as one binary: each folder is one family
//! (`lock`, `bloom`, `cuckoo`, `rate`, `cache`) or the checks that cross them
//! (`module`), each module in it one concern, and `common` is the harness
//! (real redis-server processes with the built module, free ports, own
//! directories, killed on drop). Run one module with
//! `cargo test --release --test it FOLDER::MODULE::`.

mod common;

mod bloom;
mod cache;
mod cms;
mod cuckoo;
mod lock;
mod module;
mod rate;
mod topk;
