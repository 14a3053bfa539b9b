//! Schedules whose work is master writes (kept grants, lapsing holders):
//! one module timer at the earliest due time, and one run of it.

use std::cell::Cell;
use std::thread::LocalKey;

use redis_module::Context;

use super::start_timer;
use crate::glue::host::{self, shield, Ctx};

/// The one module timer of a schedule (kept grants, lapsing holders): it
/// fires at the earliest due time. A sooner due time arms another timer;
/// the later one still fires and finds less to do.
#[derive(Default)]
pub struct EarliestTimer(Cell<Option<i64>>);

impl EarliestTimer {
    /// No timer pending.
    pub const fn new() -> EarliestTimer {
        EarliestTimer(Cell::new(None))
    }

    /// Makes sure `callback` runs by `due` (absolute ms; nothing for
    /// `None`), passed the time it was armed for.
    pub fn arm(&self, ctx: Ctx, due: Option<i64>, now: i64, callback: fn(&Context, i64)) {
        let Some(due) = due else {
            return;
        };
        if self.0.get().is_some_and(|at| at <= due) {
            return;
        }
        self.0.set(Some(due));
        start_timer(ctx, due.saturating_sub(now), callback, due);
    }

    /// The callback's first step: the timer armed for `at` fired.
    pub fn fired(&self, at: i64) {
        if self.0.get() == Some(at) {
            self.0.set(None);
        }
    }
}

/// The body of a callback of the `EarliestTimer` in `timer`, armed for
/// `at`: notes that it fired, then runs `run` with the context and the time
/// now, behind the panic guard.
pub fn on_earliest_timer(
    ctx: &Context,
    at: i64,
    timer: &'static LocalKey<EarliestTimer>,
    run: impl FnOnce(Ctx, i64),
) {
    // SAFETY: the context of this timer callback, used while it runs.
    let ctx = unsafe { Ctx::from_raw(ctx.ctx) };
    shield((), || {
        timer.with(|t| t.fired(at));
        run(ctx, host::now_ms());
    })
}

/// Most items one run of a schedule's timer does (`run_master_schedule`);
/// the rest follow at once in the next run, so a mass disconnect or a burst
/// of lease ends does not stall the server.
const SCHEDULE_BATCH: usize = 1000;

/// One run of the timer of a schedule whose work is master writes (kept
/// grants, lapsing holders): on a node that is no longer master,
/// `demoted`; while writes are held back (paused, failing over, loading),
/// `postpone` what is due; otherwise `step` (which does one due item and
/// says whether there was one) up to a batch.
pub fn run_master_schedule(
    ctx: Ctx,
    demoted: impl FnOnce(),
    postpone: impl FnOnce(),
    mut step: impl FnMut() -> bool,
) {
    if !host::is_master(ctx) {
        demoted();
    } else if !host::writes_allowed(ctx) {
        postpone();
    } else {
        for _ in 0..SCHEDULE_BATCH {
            if !step() {
                break;
            }
        }
    }
}
