//! `CACHE._SET` and `CACHE._META`: an entry (or its state but its value)
//! with absolute times, as replication and the AOF carry them. Internal.

use crate::cache::call::apply;
use crate::cache::wire::{emit_entry, emit_meta, parse_meta};
use crate::common::error::WardenError;
use crate::common::grammar::{arg, key, Arg, Grammar, Kind, Request};
use crate::glue::args::{internal_only, Args};
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::glue::host::{self, Ctx, Sink};

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

/// `CACHE._SET key value meta`: a whole entry with absolute times.
/// Internal: only from the master link or the AOF.
pub fn set_entry(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "cache._set")?;
    let request = args.parse::<SetWhole>()?;
    let parsed = parse_meta(request.meta)?;
    apply(
        ctx,
        args.raw(1),
        Some(request.value),
        parsed,
        |meta, expiry| {
            let sink = Sink::Replication(ctx);
            emit_entry(sink, args.raw(1), &[], Some(args.raw(2)), meta, expiry)
        },
    )?;
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// `CACHE._META key meta`: an entry's state but its value, with absolute
/// times. Internal: only from the master link or the AOF.
pub fn set_meta(ctx: Ctx, args: &Args) -> Result<(), WardenError> {
    internal_only(ctx, "cache._meta")?;
    let parsed = parse_meta(args.parse::<SetMeta>()?.meta)?;
    apply(ctx, args.raw(1), None, parsed, |meta, expiry| {
        emit_meta(Sink::Replication(ctx), args.raw(1), meta, expiry)
    })?;
    host::reply_status(ctx, c"OK");
    Ok(())
}

/// The command's row in the module's command table.
pub const SET_WHOLE_COMMAND: Command = Command {
    name: <SetWhole as Request>::NAME,
    func: command_fn!(set_entry),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Internal: sets a cache entry (value and version:fresh_until:stale_until:lease:lease_until) with absolute times (replication and AOF).",
        complexity: "O(N) where N is the value's length",
        grammar: <SetWhole as Request>::GRAMMAR,
        since: "0.2.0",
    },
};

/// The command's row in the module's command table.
pub const SET_META_COMMAND: Command = Command {
    name: <SetMeta as Request>::NAME,
    func: command_fn!(set_meta),
    alias: None,
    flags: "write deny-oom",
    doc: Doc {
        summary: "Internal: sets a cache entry's state but its value (version:fresh_until:stale_until:lease:lease_until) with absolute times (replication and AOF).",
        complexity: "O(1)",
        grammar: <SetMeta as Request>::GRAMMAR,
        since: "0.2.0",
    },
};
