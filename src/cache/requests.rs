//! The cache family's typed requests: each command's grammar (what `COMMAND
//! DOCS` shows, its arity, and how a call is read) and the values a call
//! carries, checked as they are read.

use crate::cache::core::{
    Hot, SetRequest, HOT_EXTEND_MS, HOT_READS, HOT_WINDOW_MS, LEASE_MS, LEASE_TOKEN, STALE_MS,
    TTL_MS, VERSION, WAIT_TIMEOUT_MS,
};
use crate::cache::errors;
use crate::common::error::WardenError;
use crate::common::grammar::{
    arg, chosen, key, option, shape_only_request, tokened_block, Arg, Grammar, Kind, Request,
};

/// Where `CACHE.SET` carries its ttl: a replicated call may carry its effect
/// there instead (`ttl@meta`).
pub const TTL_AT: usize = 3;

/// `CACHE.SET key value ttl_ms [STALE stale_ms] [VERSION v] [LEASE token]`
pub struct Set<'a> {
    /// The value.
    pub value: &'a [u8],
    /// Periods, version and lease.
    pub request: SetRequest,
}

impl<'a> Request<'a> for Set<'a> {
    const NAME: &'static str = "cache.set";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        arg("value", Kind::Str),
        arg("ttl_ms", Kind::Int),
        option("STALE", "stale_ms", Kind::Int),
        option("VERSION", "version", Kind::Int),
        option("LEASE", "token", Kind::Int),
    ]);

    fn empty() -> Self {
        Set {
            value: &[],
            request: SetRequest {
                ttl_ms: 0,
                stale_ms: 0,
                version: 0,
                lease: None,
            },
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        let r = &mut self.request;
        match arg.name {
            "value" => self.value = word,
            "ttl_ms" => r.ttl_ms = TTL_MS.parse(word)?,
            "stale_ms" => r.stale_ms = STALE_MS.parse(word)?,
            "version" => r.version = VERSION.parse(word)?,
            "token" => r.lease = Some(LEASE_TOKEN.parse(word)?),
            _ => {}
        }
        Ok(())
    }
}

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

shape_only_request!(
    /// `CACHE.INFO key`
    Info,
    "cache.info",
    Grammar::new(&[key()])
);

/// `CACHE._SET key value meta` (`WITH_VALUE`) and `CACHE._META key meta`: an
/// entry (or its state but its value) with absolute times, in the wire
/// format of `wire::parse_meta`.
pub struct SetEntry<'a, const WITH_VALUE: bool> {
    /// The value (`CACHE._SET`).
    pub value: &'a [u8],
    /// The entry's state, unparsed.
    pub meta: &'a [u8],
}

/// `CACHE._SET key value meta`
pub type SetWhole<'a> = SetEntry<'a, true>;
/// `CACHE._META key meta`
pub type SetMeta<'a> = SetEntry<'a, false>;

/// The arguments of `CACHE._SET`.
const SET_WHOLE: &[Arg] = &[key(), arg("value", Kind::Str), arg("state", Kind::Str)];
/// The arguments of `CACHE._META`.
const SET_META: &[Arg] = &[key(), arg("state", Kind::Str)];

impl<'a, const WITH_VALUE: bool> Request<'a> for SetEntry<'a, WITH_VALUE> {
    const NAME: &'static str = if WITH_VALUE {
        "cache._set"
    } else {
        "cache._meta"
    };
    const GRAMMAR: Grammar = Grammar::new(if WITH_VALUE { SET_WHOLE } else { SET_META });

    fn empty() -> Self {
        SetEntry {
            value: &[],
            meta: &[],
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "value" => self.value = word,
            "state" => self.meta = word,
            _ => {}
        }
        Ok(())
    }
}
