//! Replicating a command's effect inside the command itself.
//!
//! A lock, limiter or cache write replicates its effect — the key's whole new
//! state with absolute times — never its time-dependent arguments. The general
//! way is the family's internal command (its `._SET`) through
//! `RedisModule_Replicate`, which looks the command up by name and builds a
//! new argument vector: a third of a lock grant's cost.
//!
//! The fast way appends the effect to one argument of the client's own call
//! (`RedisModule_StringAppendBuffer`, the API's way to change a string in
//! place) and replicates that call (`RedisModule_ReplicateVerbatim`, which
//! propagates the call's own argument strings): replicas and the AOF receive
//! the call with its effect appended (`… k owner 5000@12:1:1767225600000`). The marked argument is
//! never valid from a client (a number or a rate followed by `@`); applied
//! from a master or the AOF, the command finds the mark and stores the state
//! exactly as the internal command would, without reading its clock.
//!
//! The internal command is used instead where the rewrite is not known to be
//! what gets propagated: inside MULTI/EXEC and scripts, for a string Redis
//! refuses to change (referenced twice, e.g. passed by another module's
//! `RM_Call`), in timers and hand-offs (no client call to rewrite), and when
//! `warden.fast-replication` is 0 (replicas still running a warden that
//! predates the mark). A replica also checks the other side: a replayed call
//! without the mark means the master's rewrite was lost, and is counted in
//! `INFO warden` (`replays_without_effect`) and logged.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::glue::config;
use crate::glue::host::{self, CallSource, Ctx, RStr};
use crate::glue::stats;

/// Separates an argument from the effect appended to it.
pub const MARK: u8 = b'@';

/// Most bytes an effect passed to `replicate_in_place` may have (a lock's
/// fields fit; limiters build theirs led by the mark, `replicate_marked`).
const MAX_EFFECT: usize = 256;

/// Replicates the running call with `state` appended to its argument `arg`
/// as `<arg>@<state>`. False when it did nothing: the caller replicates the
/// effect as its internal command instead.
///
/// # Safety
/// `arg` is a live argument of the call on `ctx` whose bytes are not used
/// after this call (they may move); nothing else has been replicated by it.
pub unsafe fn replicate_in_place(ctx: Ctx, arg: RStr, state: &[u8]) -> bool {
    if !in_place_allowed(ctx) {
        return false;
    }
    let mut tail = [0u8; MAX_EFFECT + 1];
    let Some(text) = tail.get_mut(..state.len() + 1) else {
        return as_command();
    };
    text[0] = MARK;
    text[1..].copy_from_slice(state);
    // SAFETY: per this function's contract.
    unsafe { append_and_replicate(ctx, arg, text) }
}

/// `replicate_in_place` for an effect the caller built led by `MARK`
/// (`@state`, of any length): nothing to copy. False when it did nothing.
///
/// # Safety
/// As `replicate_in_place`.
pub unsafe fn replicate_marked(ctx: Ctx, arg: RStr, marked: &[u8]) -> bool {
    if !in_place_allowed(ctx) {
        return false;
    }
    if marked.first() != Some(&MARK) {
        return as_command();
    }
    // SAFETY: per this function's contract.
    unsafe { append_and_replicate(ctx, arg, marked) }
}

/// Whether the running call may carry its effect: a client's, with
/// `warden.fast-replication` on. Otherwise the effect is counted as a
/// command (and a call replayed without its effect is noted).
#[inline]
fn in_place_allowed(ctx: Ctx) -> bool {
    match host::call_source(ctx) {
        CallSource::Client if config::fast_replication() => true,
        CallSource::Replay => {
            note_unmarked_replay(ctx);
            as_command()
        }
        _ => as_command(),
    }
}

/// Appends `text` (led by the mark) to `arg` and replicates the call.
///
/// # Safety
/// As `replicate_in_place`.
#[inline]
unsafe fn append_and_replicate(ctx: Ctx, arg: RStr, text: &[u8]) -> bool {
    // SAFETY: per this function's contract.
    if !unsafe { host::append_to_argument(ctx, arg, text) } {
        return as_command();
    }
    // The argv now carries the absolute state; a replica that gets it
    // without the mark counts and logs it (`replayed`).
    host::replicate_verbatim(ctx);
    stats::count(&stats::EFFECTS_IN_PLACE);
    true
}

/// Counts an effect the caller replicates as its internal command (false:
/// not replicated in place).
pub fn as_command() -> bool {
    stats::count(&stats::EFFECTS_AS_COMMANDS);
    false
}

/// The effect a master or the AOF appended to `arg`, when this call is
/// applied from there; `None` for a client's call (which is then judged as
/// typed: a marked argument is invalid).
pub fn replayed(ctx: Ctx, arg: &[u8]) -> Option<&[u8]> {
    let at = arg.iter().rposition(|b| *b == MARK)?;
    host::is_replay(ctx).then(|| &arg[at + 1..])
}

/// Notes a time-dependent call applied from a master or the AOF without
/// the effect it should carry: the master's rewrite did not reach this
/// server, so the call ran on this server's clock. Logged once, counted.
fn note_unmarked_replay(ctx: Ctx) {
    static LOGGED: AtomicBool = AtomicBool::new(false);
    stats::count(&stats::REPLAYS_WITHOUT_EFFECT);
    if !LOGGED.swap(true, Ordering::Relaxed) {
        host::log_warning(
            ctx,
            "warden: a time-dependent write arrived from the master or the AOF without its \
             effect and was applied with this server's clock (INFO warden: replays_without_effect)",
        );
    }
}
