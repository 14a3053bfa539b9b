//! `DLOCK.ACQUIRE`: takes a lock (exclusive, `SHARED` or one place of a
//! `LIMIT n` semaphore) and returns its fencing token, or waits for it
//! (`WAIT`); `KEEP` binds the grant to the connection (`lock::keep`).

use crate::common::error::WardenError;
use crate::common::grammar::{arg, chosen, flag, key, one_of, option, Arg, Grammar, Kind, Request};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::fence::with_fence;
use crate::glue::host::{self, Ctx, Key, RStr};
use crate::glue::waiting::{self, WaitRequest};
use crate::lock::call::{
    apply_grant, apply_replayed, lock_of, look_again, owner, store_set_changes, TTL_AT,
};
use crate::lock::config;
use crate::lock::core::acquire::{decide, Ask, Plan, Queue};
use crate::lock::core::plain::{self as core_lock, TTL_MS, WAIT_TIMEOUT_MS};
use crate::lock::core::set::{Want, LIMIT};
use crate::lock::events;
use crate::lock::keep;
use crate::lock::replicas;
use crate::lock::stats;
use crate::lock::waiters::{serve_waiters, LockWaiter, LOCKS};

/// `DLOCK.ACQUIRE key owner ttl_ms [WAIT timeout_ms] [REENTRANT] [SHARED | LIMIT n] [KEEP]`
pub struct Acquire<'a> {
    /// Who takes the lock.
    pub owner: &'a [u8],
    /// The lease asked for.
    pub ttl_ms: i64,
    /// `WAIT timeout_ms`: block until granted (0 = forever).
    pub wait_ms: Option<i64>,
    /// `REENTRANT`: a holder's repeat adds a hold.
    pub reentrant: bool,
    /// `KEEP`: the grant lives as long as the connection that got it.
    pub keep: bool,
    /// Exclusive, `SHARED` or `LIMIT n`.
    pub want: Want,
}

impl<'a> Request<'a> for Acquire<'a> {
    const NAME: &'static str = "dlock.acquire";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        arg("owner", Kind::Str),
        arg("ttl_ms", Kind::Int),
        option("WAIT", "timeout_ms", Kind::Int),
        flag("REENTRANT"),
        one_of(
            "kind",
            &[
                chosen(flag("SHARED")),
                chosen(option("LIMIT", "n", Kind::Int)),
            ],
        ),
        flag("KEEP"),
    ]);

    fn empty() -> Self {
        Acquire {
            owner: &[],
            ttl_ms: 0,
            wait_ms: None,
            reentrant: false,
            keep: false,
            want: Want::Exclusive,
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "owner" => self.owner = owner(word)?,
            "ttl_ms" => self.ttl_ms = TTL_MS.parse(word)?,
            "timeout_ms" => self.wait_ms = Some(WAIT_TIMEOUT_MS.parse(word)?),
            "REENTRANT" => self.reentrant = true,
            "KEEP" => self.keep = true,
            "SHARED" => self.want = Want::Shared,
            "n" => self.want = Want::Limit(LIMIT.parse(word)? as u32),
            _ => {}
        }
        Ok(())
    }
}

/// `DLOCK.ACQUIRE key owner ttl_ms [WAIT timeout_ms] [REENTRANT] [SHARED | LIMIT n] [KEEP]`
///
/// `lock::core::acquire::decide` decides on what was read (the key's lock,
/// its queue, the clock); this applies its plan: after serving the queued
/// waiters first, it reads and asks again, once.
pub fn acquire(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let request = match args.parse::<Acquire>() {
        Ok(request) => request,
        Err(r) if r.at == TTL_AT => return apply_replayed(ctx, args, r.error),
        Err(r) => return Err(r.error),
    };
    let ttl_ms = request.ttl_ms;
    let now = host::now_ms();
    let deadline = core_lock::lease_deadline(now, ttl_ms)?;
    replicas::require(ctx, now)?;
    let keeper = request
        .keep
        .then(|| keep::caller(ctx, ttl_ms))
        .transpose()?;
    let ask = Ask {
        owner: request.owner,
        want: request.want,
        reentrant: request.reentrant,
        deadline,
        wait: request.wait_ms.is_some() && host::may_block(ctx),
    };
    let (name, key_bytes) = (args.raw(1), args.bytes(1));
    let mut key = Key::writable(ctx, name);
    let kept_lease = |token| keep::check_lease(ctx, key_bytes, token, ttl_ms);
    let mut queue = queue_of(ctx, name);
    // Asked twice at most: `decide` serves only waiters not served yet.
    let plan = loop {
        let lock = lock_of(&mut key)?;
        let plan = with_fence(|fence| decide(lock.holding(), &ask, queue, now, fence, kept_lease))?;
        if plan != Plan::ServeFirst {
            break plan;
        }
        // First come, first served: queued waiters go before this caller.
        serve_waiters(ctx, &mut key, name, host::selected_db(ctx), now);
        let waiting = waiting::count_in(ctx, name) > 0;
        queue = Queue::Served { waiting };
    };
    let grant = match plan {
        Plan::Grant(grant) => grant,
        Plan::Wait { look_at } => return wait(ctx, args, &request, keeper, look_at, now),
        Plan::Nil => {
            stats::count(&stats::LOCKS_CONTENDED);
            host::reply_null(ctx);
            return Ok(());
        }
        Plan::ServeFirst => return Err(WardenError::Internal),
    };
    if apply_grant(ctx, &mut key, name, &ask, &grant, Some(args), now)? {
        store_set_changes(ctx, &mut key, name, now);
    }
    keep::granted(ctx, keeper, key_bytes, ask.owner, grant.token, ttl_ms, now);
    host::notify(ctx, events::ACQUIRE, name);
    if grant.new {
        stats::count(&stats::LOCKS_GRANTED);
    }
    // A holder's repeat may have shortened its lease.
    look_again(ctx, &mut key, host::selected_db(ctx), key_bytes, now);
    host::reply_integer(ctx, grant.token);
    Ok(())
}

/// The queue of the key `name` as `decide` reads it: the oldest waiter's
/// request is looked at only when some client waits.
fn queue_of(ctx: Ctx, name: RStr) -> Queue {
    if waiting::count_in(ctx, name) == 0 {
        return Queue::Empty;
    }
    let db = host::selected_db(ctx);
    let front = waiting::front::<LockWaiter, _>(db, name.bytes(), |w| w.want);
    Queue::Waiting { front }
}

/// An ACQUIRE … WAIT that cannot be granted now: the client blocks (the key
/// looked at again at `look_at`).
fn wait(
    ctx: Ctx,
    args: &Args,
    request: &Acquire,
    keeper: Option<u64>,
    look_at: i64,
    now: i64,
) -> Result<(), WardenError> {
    let Some(timeout_ms) = request.wait_ms else {
        return Err(WardenError::Internal);
    };
    stats::count(&stats::LOCKS_CONTENDED);
    let waiter = WaitRequest {
        family: &LOCKS,
        payload: Box::new(LockWaiter {
            owner: request.owner.to_vec(),
            ttl_ms: request.ttl_ms,
            want: request.want,
            reentrant: request.reentrant,
            keeper,
        }),
        timeout_ms,
        max_waiters: config::dlock_max_waiters(),
        look_at: Some(look_at),
    };
    waiting::block(ctx, host::selected_db(ctx), args.bytes(1), waiter, now)
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Acquire as Request>::NAME,
    func: command_fn!(acquire),
    alias: None,
    flags: "write deny-oom blocking",
    doc: Doc {
        summary: "Takes a lock for ttl_ms and returns its fencing token; nil when another owner holds it. WAIT blocks until it is handed over; REENTRANT lets the holder add a hold (a plain repeat only renews the lease); KEEP renews the lease while this connection is open and releases it when the connection closes; SHARED takes a read lock, LIMIT n one of n places of a semaphore.",
        complexity: "O(1) (O(N) in the holders of a SHARED or LIMIT key)",
        grammar: <Acquire as Request>::GRAMMAR,
        since: "0.1.0",
    },
};
