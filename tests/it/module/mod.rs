//! Checks that cross every family: ACL, aliases, cluster, command docs and key specs, the docs' redis-cli examples, keyspace events, defrag, effects, fuzzers, corrupt payloads, leaks, module arguments, versions.

mod acl;
mod aliases;
mod args;
mod cluster;
mod cluster_slot_migration;
mod command_docs;
mod command_keys;
mod compat;
mod defrag;
mod docs_examples;
mod effects;
mod fuzz;
mod fuzz_grammar;
mod keyspace_events;
mod leaks;
mod numeric_ranges_bf_rl;
mod numeric_ranges_internal;
mod payload_forged;
mod payload_fuzz;
mod version;
