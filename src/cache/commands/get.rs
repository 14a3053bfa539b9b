//! `CACHE.GET`: a fresh value, a stale one with a lease to refresh it, or a
//! wait for the refresh.

use crate::cache::call::{lease_on_missing, lease_taken, reply_with_lease};
use crate::cache::config;
use crate::cache::core::{
    new_lease, CacheEntry, Hot, Read, HOT_EXTEND_MS, HOT_READS, HOT_WINDOW_MS, LEASE_MS, VERSION,
    WAIT_TIMEOUT_MS,
};
use crate::cache::errors;
use crate::cache::events;
use crate::cache::stats;
use crate::cache::waiters::{serve_waiters, CacheWaiter, CACHE};
use crate::cache::wire::{emit_meta, Expiry};
use crate::common::error::WardenError;
use crate::common::grammar::{
    arg, chosen, key, option, tokened_block, Arg, Grammar, Kind, Request,
};
use crate::glue::args::Args;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::fence::with_fence;
use crate::glue::host::{self, Ctx, Key, RStr, Sink};
use crate::glue::waiting::{self, WaitRequest};

/// `CACHE.GET key [MINVERSION v] [HOT reads window_ms EXTEND ttl_ms]
/// [LEASE lease_ms] [WAIT timeout_ms]` (WAIT only with LEASE).
pub struct Get {
    /// `MINVERSION v` (0 without).
    pub min_version: i64,
    /// `HOT reads window_ms EXTEND ttl_ms`.
    pub hot: Option<Hot>,
    /// `LEASE lease_ms`.
    pub lease_ms: Option<i64>,
    /// `WAIT timeout_ms`.
    pub wait_ms: Option<i64>,
}

impl<'a> Request<'a> for Get {
    const NAME: &'static str = "cache.get";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        option("MINVERSION", "version", Kind::Int),
        tokened_block(
            "HOT",
            "hot",
            &[
                arg("reads", Kind::Int),
                arg("window_ms", Kind::Int),
                chosen(option("EXTEND", "ttl_ms", Kind::Int)),
            ],
        ),
        option("LEASE", "lease_ms", Kind::Int),
        option("WAIT", "timeout_ms", Kind::Int),
    ]);

    fn empty() -> Self {
        Get {
            min_version: 0,
            hot: None,
            lease_ms: None,
            wait_ms: None,
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        let hot = || Hot {
            reads: 0,
            window_ms: 0,
            extend_ms: 0,
        };
        match arg.name {
            "version" => self.min_version = VERSION.parse(word)?,
            "reads" => {
                self.hot = Some(Hot {
                    reads: HOT_READS.parse(word)? as u32,
                    ..hot()
                })
            }
            "window_ms" => {
                self.hot.get_or_insert_with(hot).window_ms = HOT_WINDOW_MS.parse(word)?
            }
            "ttl_ms" => self.hot.get_or_insert_with(hot).extend_ms = HOT_EXTEND_MS.parse(word)?,
            "lease_ms" => self.lease_ms = Some(LEASE_MS.parse(word)?),
            "timeout_ms" => self.wait_ms = Some(WAIT_TIMEOUT_MS.parse(word)?),
            _ => {}
        }
        Ok(())
    }

    fn finish(&self) -> Result<(), WardenError> {
        if self.wait_ms.is_some() && self.lease_ms.is_none() {
            return Err(errors::WAIT_WITHOUT_LEASE);
        }
        Ok(())
    }
}

/// `CACHE.GET key [MINVERSION v] [HOT reads window_ms EXTEND ttl_ms] [LEASE lease_ms [WAIT timeout_ms]]`
pub fn get(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    let mut options = Get::empty();
    args.parse_into(&mut options)?;
    let now = host::now_ms();
    let name = args.raw(1);
    let Some(lease_ms) = options.lease_ms else {
        return plain_get(ctx, name, &options, now);
    };
    let mut key = Key::writable(ctx, name);
    let min = options.min_version;
    let db = host::selected_db(ctx);
    let queued = waiting::count(db, args.bytes(1)) > 0;
    let read = match key.value::<CacheEntry>()? {
        Some(entry) => entry.read(min, now),
        None => Read::Vacant,
    };
    if queued && read == Read::Vacant {
        // First come, first served: a vacant lease goes to the queue first.
        serve_waiters(ctx, &mut key, name, db, now);
    }
    let Some(entry) = key.value::<CacheEntry>()? else {
        let lease = with_fence(|fence| new_lease(lease_ms, now, fence))?;
        lease_on_missing(ctx, &key, name, lease, now);
        stats::count(&stats::CACHE_MISSES);
        reply_with_lease(ctx, None, lease.token);
        return Ok(());
    };
    match entry.read(min, now) {
        Read::Fresh => {
            let extended = options.hot.is_some_and(|hot| entry.count_read(&hot, now));
            if extended {
                emit_meta(Sink::Replication(ctx), name, &entry.meta(), Expiry::AtEnd);
            }
            stats::count(&stats::CACHE_HITS);
            reply_with_lease(ctx, Some(entry.value_or_empty()), 0);
            if extended {
                let expires = entry.expires_at();
                key.set_abs_expire(expires);
                host::notify(ctx, events::EXTEND, name);
            }
        }
        Read::Refreshing => {
            stats::count(&stats::CACHE_MISSES);
            let lease_end = entry.live_lease(now).map_or(now, |l| l.until_ms);
            if let Some(stale) = entry.stale_value(min, now) {
                stats::count(&stats::CACHE_STALE_SERVED);
                reply_with_lease(ctx, Some(stale), 0);
                return Ok(());
            }
            match options.wait_ms {
                Some(timeout_ms) if host::may_block(ctx) => {
                    let request = WaitRequest {
                        family: &CACHE,
                        payload: Box::new(CacheWaiter {
                            min_version: min,
                            lease_ms,
                        }),
                        timeout_ms,
                        max_waiters: config::cache_max_waiters(),
                        look_at: Some(lease_end),
                    };
                    waiting::block(ctx, db, args.bytes(1), request, now)?;
                }
                _ => reply_with_lease(ctx, None, 0),
            }
        }
        Read::Vacant => {
            stats::count(&stats::CACHE_MISSES);
            let lease = with_fence(|fence| entry.take_lease(lease_ms, now, fence))?;
            let stale = entry.stale_value(min, now);
            if stale.is_some() {
                stats::count(&stats::CACHE_STALE_SERVED);
            }
            reply_with_lease(ctx, stale, lease.token);
            let (meta, expires) = (entry.meta(), entry.expires_at());
            lease_taken(ctx, &key, name, &meta, expires);
        }
    }
    Ok(())
}

/// `CACHE.GET` without `LEASE`: the value when fresh (counting a HOT read),
/// else nil. The key is opened for reading (half the cost of opening it for
/// writing), and again for writing only when a HOT extension is due.
fn plain_get(ctx: Ctx, name: RStr, options: &Get, now: i64) -> Result<(), WardenError> {
    let mut key = Key::readable(ctx, name);
    let Some(entry) = key.value::<CacheEntry>()? else {
        stats::count(&stats::CACHE_MISSES);
        host::reply_null(ctx);
        return Ok(());
    };
    if !entry.is_fresh(options.min_version, now) {
        stats::count(&stats::CACHE_MISSES);
        host::reply_null(ctx);
        return Ok(());
    }
    // The read count is the master's working state: counted in place.
    let extended = options.hot.is_some_and(|hot| entry.count_read(&hot, now));
    stats::count(&stats::CACHE_HITS);
    host::reply_bulk(ctx, entry.value_or_empty());
    if extended {
        let (meta, expires) = (entry.meta(), entry.expires_at());
        drop(key);
        emit_meta(Sink::Replication(ctx), name, &meta, Expiry::AtEnd);
        Key::writable(ctx, name).set_abs_expire(expires);
        host::notify(ctx, events::EXTEND, name);
    }
    Ok(())
}

/// The command's row in the module's command table.
pub const COMMAND: Command = Command {
    name: <Get as Request>::NAME,
    func: command_fn!(get),
    alias: None,
    flags: "write blocking",
    doc: Doc {
        summary: "The value when fresh (and at least MINVERSION), else nil. HOT keeps an often-read key fresh. LEASE turns a miss into one refresh: [value, 0] when fresh, [stale value or nil, token] for the caller who refreshes, [stale value or nil, 0] while another does; WAIT blocks for the refreshed value instead of nil.",
        complexity: "O(1)",
        grammar: <Get as Request>::GRAMMAR,
        since: "0.2.0",
    },
};
