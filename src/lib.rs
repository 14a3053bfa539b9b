//! warden: distributed locks, Bloom and cuckoo filters, rate limiters and
//! cache reads as native Redis commands. This file lists the families
//! (one `pub mod` line each) and registers them. A family is a folder holding its pure
//! core (`core`) beside its glue (commands, data types, wire formats);
//! `common` is the pure code the families share and `glue` the Redis-facing
//! code they share.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod common;
pub mod glue;

use redis_module::{redis_module, Context, RedisString, Status};

use crate::glue::config::Config;
use crate::glue::family::Family;
use crate::glue::{commands, config, host, info};

// The families, one line each (registered in this order): each is a
// folder (`src/<family>/`) whose `FAMILY` says what it adds to the server.
// `build.rs` lists them in `FAMILIES`.
pub mod bloom;
pub mod cache;
pub mod cms;
pub mod cuckoo;
pub mod lock;
pub mod rate;
pub mod topk;

include!(concat!(env!("OUT_DIR"), "/families.rs"));

/// Registers everything warden adds to the server, stopping at the first failure.
fn setup(ctx: &Context, args: &[RedisString]) -> Result<(), String> {
    // SAFETY: `OnLoad`'s context, which the crate's `RedisModule_OnLoad`
    // passes in `ctx`; used only while it runs.
    let load = unsafe { host::Ctx::from_raw(ctx.ctx) };
    host::check_api().map_err(|missing| format!("this server lacks {missing}"))?;
    for family in FAMILIES {
        for data_type in family.types {
            data_type
                .create_data_type(ctx.ctx)
                .map_err(|e| format!("{}: {e}", family.name))?;
        }
    }
    let configs: Vec<Config> = FAMILIES
        .iter()
        .flat_map(|f| f.configs.iter().copied())
        .collect();
    let aliases = config::register(load, args, &configs).map_err(|e| e.to_string())?;
    let chosen = |f: &'static Family| {
        f.foreign
            .iter()
            .filter(move |foreign| aliases.contains(foreign.set))
    };
    let groups: Vec<commands::Group> = FAMILIES
        .iter()
        .flat_map(|f| {
            let own = (f.commands, f.acl_category, None);
            let foreign = chosen(f).map(|x| (x.commands, f.acl_category, Some(x.set)));
            std::iter::once(own).chain(foreign)
        })
        .collect();
    commands::register(load, &groups, aliases)?;
    // Another module's data types after its commands: a name that module
    // already holds is refused by the first command, as an alias's is.
    for foreign in FAMILIES.iter().flat_map(|f| chosen(f)) {
        for data_type in foreign.types {
            data_type.create_data_type(ctx.ctx).map_err(|e| {
                format!(
                    "cannot register {}'s data types (module argument 'aliases {}'): {e}",
                    foreign.set.module(),
                    foreign.set.name()
                )
            })?;
        }
    }
    if !info::register(load, FAMILIES) {
        return Err("cannot register the INFO section".to_string());
    }
    // The shared parts start first: the families' hooks use what they set up.
    for family in FAMILIES.iter().rev() {
        (family.start)(load).map_err(|e| format!("{}: {e}", family.name))?;
    }
    let features = host::detect_server();
    host::set_module_options(load, features);
    Ok(())
}

fn init(ctx: &Context, args: &[RedisString]) -> Status {
    match setup(ctx, args) {
        Ok(()) => Status::Ok,
        Err(e) => {
            ctx.log_warning(&format!("warden: {e}"));
            Status::Err
        }
    }
}

#[cfg(not(test))]
type Allocator = glue::alloc::WardenAlloc;
#[cfg(test)]
type Allocator = std::alloc::System;

#[cfg(not(test))]
const ALLOCATOR: Allocator = glue::alloc::WardenAlloc;
#[cfg(test)]
const ALLOCATOR: Allocator = std::alloc::System;

/// The package version as `MODULE LIST` shows it: major×10000 + minor×100
/// + patch (RedisBloom's convention), so 0.2.0 is 200.
pub const MODULE_VERSION: i32 = version_number(env!("CARGO_PKG_VERSION"));

/// `"M.m.p"` as M×10000 + m×100 + p, at compile time.
const fn version_number(text: &str) -> i32 {
    let bytes = text.as_bytes();
    let (mut parts, mut current, mut i) = ([0i32; 3], 0, 0);
    while i < bytes.len() && current < 3 {
        match bytes[i] {
            b'.' => current += 1,
            d @ b'0'..=b'9' if current < 3 => {
                parts[current] = parts[current] * 10 + (d - b'0') as i32
            }
            _ => break, // a pre-release suffix
        }
        i += 1;
    }
    parts[0] * 10_000 + parts[1] * 100 + parts[2]
}

redis_module! {
    name: "warden",
    version: MODULE_VERSION,
    allocator: (Allocator, ALLOCATOR),
    data_types: [],
    init: init,
}

#[cfg(test)]
mod tests {
    use super::FAMILIES;

    /// RedisBloom's names are warden's without the X (what SPEC's X is for),
    /// redis-cell's only one is RL.GCRA's; no alias is also a command's name.
    #[test]
    fn aliases_are_the_other_modules_names() {
        use crate::glue::commands::AliasSet;
        let rows: Vec<_> = FAMILIES.iter().flat_map(|f| f.commands.iter()).collect();
        for row in &rows {
            let Some(alias) = &row.alias else { continue };
            match alias.set {
                AliasSet::RedisBloom => assert_eq!(format!("{}x", alias.name), row.name),
                AliasSet::RedisCell => {
                    assert_eq!((alias.name, row.name), ("cl.throttle", "rl.gcra"))
                }
            }
            assert!(rows.iter().all(|r| r.name != alias.name), "{}", alias.name);
        }
    }

    /// Each family's keyspace events are named in the namespace of its
    /// commands (`cf.` for `CF.ADDX`), no two families share one, and each
    /// is in the operations guide's list.
    #[test]
    fn every_event_is_its_familys_and_documented() {
        let guide = include_str!("../docs/operations.md");
        let mut seen = Vec::new();
        for family in FAMILIES {
            let namespaces: Vec<&str> = family
                .commands
                .iter()
                .filter_map(|c| c.name.split_once('.').map(|(n, _)| n))
                .collect();
            for event in family.events {
                let event = event.to_str().expect("an ASCII event");
                let (namespace, _) = event.split_once('.').expect("a namespaced event");
                assert!(namespaces.contains(&namespace), "{}: {event}", family.name);
                assert!(!seen.contains(&event), "{event} twice");
                assert!(
                    guide.contains(&format!("`{event}`")),
                    "{event} undocumented"
                );
                seen.push(event);
            }
        }
        assert!(seen.len() >= 25, "{seen:?}");
    }
}
