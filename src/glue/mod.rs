//! Redis-facing code the families share: the host API (`host`), the command
//! row type and its panic guard (`commands`), argument access (`args`),
//! data-type plumbing (`data_type`), waiting clients (`waiting`), replicated
//! effects (`effect`), the fencing clock's server side (`fence`), what a
//! family declares (`family`), configuration, INFO, counters and the
//! allocator; `SHARED` declares the shared parts as a family is declared.

pub mod alloc;
pub mod args;
pub mod commands;
pub mod config;
pub mod data_type;
pub mod effect;
pub mod family;
pub mod fence;
pub mod host;
pub mod info;
pub mod stats;
pub mod waiting;

use family::{Family, InfoField};
use host::Ctx;

/// The parts of the module the families share, declared as a family is:
/// `fast-replication`, the fencing clock's INFO fields and hooks, the
/// counters of replicated effects and of active defragmentation, and the
/// database events waiting clients follow.
pub static SHARED: Family = Family {
    name: "shared",
    acl_category: None,
    commands: &[],
    types: &[],
    configs: &config::SHARED,
    info: &SHARED_INFO,
    events: &[],
    start: start_shared,
    foreign: &[],
};

static SHARED_INFO: [InfoField; 8] = [
    InfoField::computed(c"fence_floor", fence::floor),
    InfoField::computed(c"fence_tokens_left", fence::tokens_left),
    InfoField::computed(c"fence_promotions_left", fence::promotions_left),
    InfoField::counter(c"effects_in_place", &stats::EFFECTS_IN_PLACE),
    InfoField::counter(c"effects_as_commands", &stats::EFFECTS_AS_COMMANDS),
    InfoField::counter(c"replays_without_effect", &stats::REPLAYS_WITHOUT_EFFECT),
    InfoField::counter(c"defrag_moved", &stats::DEFRAG_MOVED),
    InfoField::counter(c"defrag_paused", &stats::DEFRAG_PAUSED),
];

/// Subscribes the shared hooks and makes the module's detached context
/// (before any family starts: they use it).
fn start_shared(ctx: Ctx) -> Result<(), String> {
    if !waiting::subscribe_database_events(ctx) {
        return Err("cannot subscribe to flush and swapdb events".to_string());
    }
    if !host::make_detached_context(ctx) {
        return Err("cannot make the module's detached context".to_string());
    }
    if !fence::subscribe_server_events(ctx) {
        return Err("cannot subscribe to role changes, forks and persistence".to_string());
    }
    Ok(())
}
