//! Schedules whose work is master writes (kept grants, lapsing holders):
//! one module timer at the earliest due time, and one run of it.

use std::cell::Cell;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::thread::LocalKey;

use redis_module::raw;

use super::{DEFERRED_RETRY_MS, MAX_TIMER_DELAY_MS};
use crate::glue::host::{self, api, shield, Ctx};

/// A schedule's timer callback, as Redis calls it (its data is unused).
pub type ScheduleTimerProc = unsafe extern "C" fn(*mut raw::RedisModuleCtx, *mut c_void);

/// The one module timer of a schedule (kept grants, lapsing holders): it
/// fires at the earliest due time. Arming a sooner time stops the later
/// timer, so at most one is ever pending, however often the earliest due
/// time moves.
#[derive(Default)]
pub struct EarliestTimer(Cell<Option<(i64, raw::RedisModuleTimerID)>>);

impl EarliestTimer {
    /// No timer pending.
    pub const fn new() -> EarliestTimer {
        EarliestTimer(Cell::new(None))
    }

    /// Makes sure `callback` runs by `due` (absolute ms; nothing for
    /// `None`).
    pub fn arm(&self, ctx: Ctx, due: Option<i64>, now: i64, callback: ScheduleTimerProc) {
        let Some(due) = due else {
            return;
        };
        if let Some((at, id)) = self.0.get() {
            if at <= due {
                return;
            }
            // SAFETY: `id` is this schedule's pending timer (cleared when it
            // fires); its data is null, so there is nothing to take back.
            unsafe { api!(RedisModule_StopTimer)(ctx.as_ptr(), id, null_mut()) };
        }
        let delay = due.saturating_sub(now).clamp(0, MAX_TIMER_DELAY_MS);
        // SAFETY: `ctx` is a live context; the callback has Redis's signature
        // and reads no data.
        let id = unsafe {
            api!(RedisModule_CreateTimer)(ctx.as_ptr(), delay, Some(callback), null_mut())
        };
        self.0.set(Some((due, id)));
    }
}

/// The body of the callback of the `EarliestTimer` in `timer`: notes that
/// it fired, then runs `run` with the context and the time now, behind the
/// panic guard.
///
/// # Safety
/// `ctx` is the context Redis passed the timer callback.
pub unsafe fn on_earliest_timer(
    ctx: *mut raw::RedisModuleCtx,
    timer: &'static LocalKey<EarliestTimer>,
    run: impl FnOnce(Ctx, i64),
) {
    shield((), || {
        timer.with(|t| t.0.set(None));
        // SAFETY: the caller's contract: the context of this timer callback.
        run(unsafe { Ctx::from_raw(ctx) }, host::now_ms());
    })
}

/// Most items one run of a schedule's timer does (`run_master_schedule`);
/// the rest follow at once in the next run, so a mass disconnect or a burst
/// of lease ends does not stall the server.
const SCHEDULE_BATCH: usize = 1000;

/// One run of the timer of a schedule whose work is master writes (kept
/// grants, lapsing holders): on a node that is no longer master,
/// `demoted`; while writes are held back (paused, failing over, loading),
/// nothing; otherwise `step` (which does one due item and says whether
/// there was one) up to a batch. Returns the earliest time the timer may
/// run again: `now`, or a few ms on while writes are held back (what is
/// due stays where it is, so waiting costs nothing per item).
pub fn run_master_schedule(
    ctx: Ctx,
    now: i64,
    demoted: impl FnOnce(),
    mut step: impl FnMut() -> bool,
) -> i64 {
    if !host::is_master(ctx) {
        demoted();
    } else if !host::writes_allowed(ctx) {
        return now + DEFERRED_RETRY_MS;
    } else {
        for _ in 0..SCHEDULE_BATCH {
            if !step() {
                break;
            }
        }
    }
    now
}
