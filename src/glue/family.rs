//! What a family of commands declares about itself, once, from its folder
//! (`<family>::FAMILY`): its commands, data types, ACL category,
//! configurations, INFO fields, keyspace events and what it starts at load.
//! `lib.rs` lists the families; the glue registers each from its
//! declaration and names none of them.

use std::ffi::CStr;
use std::sync::atomic::{AtomicI64, Ordering};

use redis_module::native_types::RedisType;

use crate::glue::commands::{AliasSet, Command};
use crate::glue::config::Config;
use crate::glue::host::Ctx;

/// A family's declaration.
pub struct Family {
    /// The family's name (its folder), as the log gives it.
    pub name: &'static str,
    /// Its ACL category, where the server lets modules add one (Redis 7.4+,
    /// Valkey 8+); `None` for the module's shared parts.
    pub acl_category: Option<&'static CStr>,
    /// Its command table.
    pub commands: &'static [Command],
    /// Its data types.
    pub types: &'static [&'static RedisType],
    /// Its configurations (`warden.<name>`).
    pub configs: &'static [Config],
    /// Its fields of INFO's `warden` section, in order.
    pub info: &'static [InfoField],
    /// The keyspace events it publishes (module class `d`), each named in
    /// the namespace of its commands.
    pub events: &'static [&'static CStr],
    /// What it starts once everything is registered (server-event hooks,
    /// timers): an error refuses the load.
    pub start: fn(Ctx) -> Result<(), String>,
    /// Another module's commands and data types it also answers, in that
    /// module's own layout (names, replies, files), registered only when
    /// `aliases` chooses their set.
    pub foreign: &'static [&'static Foreign],
}

/// Another module's commands and data types, as a family answers them.
pub struct Foreign {
    /// The `aliases` set that registers them.
    pub set: AliasSet,
    /// The commands, under that module's names (its ACL category is the family's).
    pub commands: &'static [Command],
    /// The data types, under that module's type names and encoding versions.
    pub types: &'static [&'static RedisType],
}

/// A field of INFO's `warden` section.
pub struct InfoField {
    /// Its name, without the `warden_` prefix INFO adds.
    pub name: &'static CStr,
    /// Where its value comes from.
    pub value: InfoValue,
}

/// Where an INFO field's value comes from.
pub enum InfoValue {
    /// A counter or gauge the family keeps.
    Counter(&'static AtomicI64),
    /// A value worked out when INFO asks.
    Computed(fn() -> i64),
}

impl InfoField {
    /// A field showing `counter`.
    pub const fn counter(name: &'static CStr, counter: &'static AtomicI64) -> InfoField {
        InfoField {
            name,
            value: InfoValue::Counter(counter),
        }
    }

    /// A field worked out by `value` when INFO asks.
    pub const fn computed(name: &'static CStr, value: fn() -> i64) -> InfoField {
        InfoField {
            name,
            value: InfoValue::Computed(value),
        }
    }

    /// Its value now.
    pub fn value(&self) -> i64 {
        match self.value {
            InfoValue::Counter(c) => c.load(Ordering::Relaxed),
            InfoValue::Computed(f) => f(),
        }
    }
}

/// A family that starts nothing at load.
pub fn starts_nothing(_: Ctx) -> Result<(), String> {
    Ok(())
}
