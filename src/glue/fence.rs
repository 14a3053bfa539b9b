//! The module's fencing clock: the largest token issued or seen, shared by
//! every lock key and cache lease (only the main thread touches it), and its
//! failover epochs: a node that becomes master raises it by `EPOCH_JUMP`,
//! tells its replicas (with the internal command a family names in
//! `carried_by`) and keeps it in the RDB (aux data).

use std::ffi::CStr;
use std::ffi::{c_int, c_longlong, c_void};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::OnceLock;

use redis_module::{raw, Context};

use crate::common::error::WardenError;
use crate::common::fence_clock::{FenceClock, Headroom, MAX_TOKEN, TOKENS_PER_MS};
use crate::common::parse::parse_i64;
use crate::glue::host::{self, shield, Ctx, Io, Sink};

/// The state of the module's `FenceClock`.
static FENCE_LAST: AtomicI64 = AtomicI64::new(0);

/// The internal command that carries the floor to replicas and into AOF
/// files (`carried_by`); none, and the floor is not announced.
static FLOOR_COMMAND: OnceLock<&'static CStr> = OnceLock::new();

/// Names the internal command (`name floor`) that carries the floor to
/// replicas and into AOF files; its handler calls `raise_floor`.
pub fn carried_by(name: &'static CStr) {
    let _ = FLOOR_COMMAND.set(name);
}

/// How soon the floor's announcement is tried again while nothing may be
/// propagated (paused clients, loading).
const FENCE_RETRY_MS: u64 = 50;

/// An announcement of the floor is scheduled (`announce_later`).
static ANNOUNCE_PENDING: AtomicBool = AtomicBool::new(false);

/// Runs `op` on the module's fencing clock.
pub fn with_fence<R>(op: impl FnOnce(&mut FenceClock) -> R) -> R {
    let mut fence = FenceClock::starting_at(FENCE_LAST.load(Ordering::Relaxed));
    let out = op(&mut fence);
    FENCE_LAST.store(fence.last(), Ordering::Relaxed);
    out
}

/// Follows a token in an effect on a key the master link or the AOF sent
/// (a state, a grant carrying its effect, a lease), given the
/// key's last token before it (`key_floor`, 0 for a new key): one the
/// master issued, so the grants that follow a replay or a promotion go above
/// it, as the master recorded it (`FenceClock::follow`). (A client's
/// `RESTORE` reaches the AOF as itself, and is loaded as a value.)
pub fn follow_token(token: i64, key_floor: i64) {
    let now = host::now_ms();
    with_fence(|fence| fence.follow(token, key_floor, now));
}

/// Takes in the token of a value being loaded: from a file or a master it
/// raises the floor unless implausibly far ahead of the clock (a file's
/// floor, loaded before its keys, covers the tokens the node issued); from
/// a client on a serving master (`RESTORE`, a `MIGRATE` target) a token that
/// would push every key's floor past the plausible lead refuses the value
/// (false: `Bad data format`, nothing stored).
pub fn take_loaded_token(token: i64) -> bool {
    let now = host::now_ms();
    let admitted = with_fence(|fence| {
        let admitted = !host::is_serving_master() || fence.admits(token, now);
        if admitted {
            fence.observe(token, now);
        }
        admitted
    });
    if !admitted {
        if let Some(ctx) = host::detached_context() {
            host::log_warning(
                ctx,
                &format!("warden: refused a restored value: its fencing token {token} is implausibly far ahead of this server's clock and tokens"),
            );
        }
    }
    admitted
}

/// INFO's `fence_floor`: the largest token issued or seen.
pub fn floor() -> i64 {
    with_fence(|fence| fence.last())
}

/// INFO's `fence_tokens_left`.
pub fn tokens_left() -> i64 {
    headroom().tokens
}

/// INFO's `fence_promotions_left`.
pub fn promotions_left() -> i64 {
    headroom().promotions
}

/// The token space left now.
fn headroom() -> Headroom {
    let now = host::now_ms();
    with_fence(|fence| fence.headroom(now))
}

/// Role-change hook: on becoming master, starts a failover epoch and
/// schedules telling the replicas.
unsafe extern "C" fn on_role_changed(
    ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    subevent: u64,
    _data: *mut c_void,
) {
    shield((), || {
        if subevent != raw::REDISMODULE_EVENT_REPLROLECHANGED_NOW_MASTER {
            return;
        }
        // SAFETY: the context Redis passed this event hook, used while it runs.
        let ctx = unsafe { Ctx::from_raw(ctx) };
        let now = host::now_ms();
        let floor = with_fence(|fence| fence.promote(now));
        ctx.context().log_notice(&format!(
            "warden: became master; fencing tokens now start above {floor} (failover epoch)"
        ));
        announce_later(ctx, 0);
    })
}

/// Whether the floor runs ahead of the clock (an epoch, or a burst of
/// grants): only then is it lost when no file holds it.
fn floor_ahead_of_clock() -> bool {
    FENCE_LAST.load(Ordering::Relaxed) > host::now_ms().saturating_mul(TOKENS_PER_MS)
}

/// This process is a fork child rewriting the AOF (set when its rewrite
/// starts).
static AOF_REWRITE_CHILD: AtomicBool = AtomicBool::new(false);

/// Persistence hook. In a fork child rewriting the AOF without the RDB
/// preamble (whose aux data would carry it), a floor ahead of the clock (an
/// epoch) is appended to the rewritten file once the server has written it
/// (the carrying command and the floor as the fork left it): the new base
/// holds commands for keys only, and nothing the server may write later
/// (paused, or stopped first) is needed for a restart to keep the epoch. If
/// it cannot be appended, the rewrite fails (the server keeps its files).
unsafe extern "C" fn on_persistence(
    ctx: *mut raw::RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    subevent: u64,
    _data: *mut c_void,
) {
    shield((), || match subevent {
        raw::REDISMODULE_SUBEVENT_PERSISTENCE_AOF_START => {
            AOF_REWRITE_CHILD.store(true, Ordering::Relaxed);
        }
        raw::REDISMODULE_SUBEVENT_PERSISTENCE_ENDED
            if AOF_REWRITE_CHILD.load(Ordering::Relaxed) && floor_ahead_of_clock() =>
        {
            if let Err(e) = append_floor_to_rewrite() {
                // SAFETY: the context Redis passed this event hook, used while it runs.
                let ctx = unsafe { Ctx::from_raw(ctx) };
                host::log_warning(
                    ctx,
                    &format!("warden: AOF rewrite failed: the fencing floor could not be added to it ({e})"),
                );
                // SAFETY: this is the fork child that wrote the rewrite; it
                // ends with an error, so the server keeps its current files.
                unsafe { libc::_exit(1) };
            }
        }
        _ => {}
    })
}

/// Appends the carrying command with the floor to this rewrite child's file (the
/// server's `temp-rewriteaof-bg-<pid>.aof`, in its directory), unless it
/// starts with an RDB preamble, and flushes it to disk.
fn append_floor_to_rewrite() -> std::io::Result<()> {
    use std::io::{Read, Write};
    let path = format!("temp-rewriteaof-bg-{}.aof", std::process::id());
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .open(&path)?;
    let mut head = [0u8; 5];
    let preamble = file.read(&mut head)? == 5 && &head == b"REDIS";
    if preamble {
        return Ok(());
    }
    let Some(name) = FLOOR_COMMAND.get() else {
        return Err(std::io::Error::other("no command carries the floor"));
    };
    let name = name.to_bytes();
    let floor = FENCE_LAST.load(Ordering::Relaxed).to_string();
    let mut command = format!("*2\r\n${}\r\n", name.len()).into_bytes();
    command.extend_from_slice(name);
    command.extend_from_slice(format!("\r\n${}\r\n{floor}\r\n", floor.len()).as_bytes());
    file.write_all(&command)?;
    file.sync_all()
}

/// Schedules `announce_floor` in `delay_ms`, unless one is pending (it
/// writes the floor as it is then).
fn announce_later(ctx: Ctx, delay_ms: u64) {
    if ANNOUNCE_PENDING.swap(true, Ordering::Relaxed) && delay_ms == 0 {
        return;
    }
    ctx.context().create_timer(
        std::time::Duration::from_millis(delay_ms),
        announce_floor,
        (),
    );
}

/// Timer: replicates the carrying command with the floor, so replicas and the AOF keep
/// the epoch even before any grant (a replica writes it to its own AOF
/// only). Waits while nothing may be propagated (paused, loading).
fn announce_floor(ctx: &Context, _: ()) {
    // SAFETY: the context of this timer callback, used while it runs.
    let ctx = unsafe { Ctx::from_raw(ctx.ctx) };
    shield((), || {
        if !host::propagation_allowed(ctx) {
            announce_later(ctx, FENCE_RETRY_MS);
            return;
        }
        ANNOUNCE_PENDING.store(false, Ordering::Relaxed);
        let floor = FENCE_LAST.load(Ordering::Relaxed) as c_longlong;
        if let Some(name) = FLOOR_COMMAND.get() {
            host::emit(Sink::Replication(ctx), name, (floor,));
        }
    })
}

/// Subscribes the role-change and persistence hooks.
pub fn subscribe_server_events(ctx: Ctx) -> bool {
    host::subscribe_server_event(
        ctx,
        raw::REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED,
        on_role_changed,
    ) && host::subscribe_server_event(ctx, raw::REDISMODULE_EVENT_PERSISTENCE, on_persistence)
}

/// Raises the token floor to `floor`, a master's failover epoch as the
/// family's internal command carries it (from the master link or the AOF).
pub fn raise_floor(floor: &[u8]) -> Result<(), WardenError> {
    let floor = match parse_i64(floor) {
        Some(t) if (0..=MAX_TOKEN).contains(&t) => t,
        _ => return Err(WardenError::InvalidState("fencing floor")),
    };
    with_fence(|fence| fence.raise_to(floor));
    Ok(())
}

/// RDB aux data (before the keys): the fencing floor, so a restart or a full
/// resync keeps a failover epoch even when no lock key carries it.
///
/// # Safety
/// Called by Redis with the live RDB IO of a save.
pub unsafe extern "C" fn aux_save(rdb: *mut raw::RedisModuleIO, when: c_int) {
    shield((), || {
        if when == raw::REDISMODULE_AUX_BEFORE_RDB as c_int {
            // SAFETY: the stream Redis passed this callback, used while it runs.
            let rdb = unsafe { Io::from_raw(rdb) };
            rdb.save_signed(FENCE_LAST.load(Ordering::Relaxed));
        }
    })
}

/// `aux_save` where the server asks through `aux_save2` (Redis 7.2+,
/// Valkey): the floor only while it runs ahead of the clock (an epoch), the
/// only time it is needed. An RDB that carries nothing of warden's but keys
/// of another module's types (`aliases`) then loads into that module alone.
///
/// # Safety
/// Called by Redis with the live RDB IO of a save.
pub unsafe extern "C" fn aux_save_when_ahead(rdb: *mut raw::RedisModuleIO, when: c_int) {
    if shield(false, floor_ahead_of_clock) {
        // SAFETY: this function's contract is `aux_save`'s.
        unsafe { aux_save(rdb, when) };
    }
}

/// Loads what `aux_save` wrote: a floor from 0 to `MAX_TOKEN`, this node's
/// own (or its master's) epoch, kept whatever its lead on the clock.
///
/// # Safety
/// Called by Redis with the live RDB IO of a load.
pub unsafe extern "C" fn aux_load(
    rdb: *mut raw::RedisModuleIO,
    encver: c_int,
    when: c_int,
) -> c_int {
    shield(raw::REDISMODULE_ERR as c_int, || {
        if encver < 1 || when != raw::REDISMODULE_AUX_BEFORE_RDB as c_int {
            return raw::REDISMODULE_ERR as c_int;
        }
        // SAFETY: the stream Redis passed this callback, used while it runs.
        let rdb = unsafe { Io::from_raw(rdb) };
        match rdb.load_signed() {
            Ok(floor) if (0..=MAX_TOKEN).contains(&floor) => {
                with_fence(|fence| fence.raise_to(floor));
                raw::REDISMODULE_OK as c_int
            }
            _ => raw::REDISMODULE_ERR as c_int,
        }
    })
}
