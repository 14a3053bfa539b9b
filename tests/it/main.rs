//! The integration tests, built once as one binary: each module is one
//! concern of one family or one server operation, and `common` is the harness
//! (real redis-server processes with the built module, free ports, own
//! directories, killed on drop). Run one module with
//! `cargo test --release --test it MODULE::`.

mod common;

mod acl;
mod aliases;
mod blocking_stress;
mod bloom;
mod bloom_aging;
mod bloom_config;
mod bloom_errors;
mod bloom_max_bytes;
mod bloom_memory;
mod bloom_payloads;
mod bloom_persistence;
mod bloom_redisbloom_import;
mod bloom_replication;
mod bloom_scandump;
mod bloom_scandump_persistence;
mod bloom_sizing;
mod bloom_tiny_rates;
mod cache;
mod cache_persistence;
mod cache_waiting;
mod cluster;
mod cluster_slot_migration;
mod command_docs;
mod command_keys;
mod compat;
mod cuckoo;
mod cuckoo_compat;
mod defrag;
mod dlock;
mod dlock_epoch;
mod dlock_errors;
mod dlock_failover;
mod dlock_guard;
mod dlock_keep;
mod dlock_keep_limits;
mod dlock_lost;
mod dlock_persistence;
mod dlock_replica_waiters;
mod dlock_shared;
mod dlock_waiting;
mod effects;
mod fuzz;
mod fuzz_grammar;
mod keyspace_events;
mod leaks;
mod memory_cache;
mod memory_limiters;
mod memory_locks;
mod module_args;
mod numeric_ranges_bf_rl;
mod numeric_ranges_dlock;
mod numeric_ranges_internal;
mod payload_forged;
mod payload_fuzz;
mod rate;
mod rate_errors;
mod rate_forms;
mod rate_gcra_cell;
mod rate_limits;
mod rate_persistence;
mod rate_token;
mod server_ops_cache;
mod server_ops_lease;
mod server_ops_oom;
mod server_ops_pause;
mod server_ops_roles;
mod server_ops_sets;
mod server_ops_shutdown;
mod version;
mod waiter_memory;
