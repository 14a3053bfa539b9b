//! warden: distributed locks, Bloom filters and rate limiters as native Redis
//! commands. This file holds the module table; see `core` (pure algorithms),
//! `commands` (command glue) and `types` (data-type callbacks).

// Glue functions take the raw pointers Redis hands to module callbacks
// (contexts, strings, keys); they are valid for the duration of the call.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod commands;
pub mod config;
pub mod core;
pub mod host;
pub mod stats;
pub mod types;

use redis_module::configuration::ConfigurationFlags;
use redis_module::{redis_module, Context, RedisString, Status};

use crate::types::lock::LOCK_TYPE;

fn init(ctx: &Context, args: &[RedisString]) -> Status {
    let checks = [
        host::check_api().map_err(|missing| format!("this server lacks {missing}")),
        config::check_module_args(args).map_err(|e| e.to_string()),
        commands::register(ctx.ctx),
        stats::register(ctx.ctx)
            .then_some(())
            .ok_or_else(|| "cannot register INFO".to_string()),
        commands::lock_waiters::subscribe_flush(ctx.ctx)
            .then_some(())
            .ok_or_else(|| "cannot subscribe to flush events".to_string()),
    ];
    for check in checks {
        if let Err(e) = check {
            ctx.log_warning(&format!("warden: {e}"));
            return Status::Err;
        }
    }
    ctx.set_module_options(redis_module::raw::ModuleOptions::HANDLE_IO_ERRORS);
    Status::Ok
}

#[cfg(not(test))]
type Allocator = redis_module::alloc::RedisAlloc;
#[cfg(test)]
type Allocator = std::alloc::System;

#[cfg(not(test))]
const ALLOCATOR: Allocator = redis_module::alloc::RedisAlloc;
#[cfg(test)]
const ALLOCATOR: Allocator = std::alloc::System;

redis_module! {
    name: "warden",
    version: 1,
    allocator: (Allocator, ALLOCATOR),
    data_types: [LOCK_TYPE],
    init: init,
    event_handlers: [
        [@GENERIC @EXPIRED @EVICTED: commands::lock_waiters::on_key_event],
    ],
    configurations: [
        i64: [
            [
                "dlock-max-waiters",
                &config::DLOCK_MAX_WAITERS,
                config::DLOCK_MAX_WAITERS_DEFAULT,
                config::DLOCK_MAX_WAITERS_RANGE.0,
                config::DLOCK_MAX_WAITERS_RANGE.1,
                ConfigurationFlags::DEFAULT,
                None
            ],
        ],
        string: [],
        bool: [],
        enum: [],
        module_args_as_configuration: true,
    ]
}
